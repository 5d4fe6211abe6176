package codeindex

import (
	"bytes"
	"go/token"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

// TestGoScanMatchesParser holds the fast reader of goscan.go to go/parser:
// on every Go file of the Go source tree (test data included, with its
// broken files), whole and cut short at a few places, it gives the outline
// parseGoSymbols gives, or gives up.
func TestGoScanMatchesParser(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("reads the whole Go source tree")
	}
	src := testenv.GoSrc(t)
	mutations := 2
	if s := os.Getenv("AGENTLS_GOSCAN_MUTATIONS"); s != "" {
		mutations, _ = strconv.Atoi(s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var files, cuts, gaveUp, gaveUpWhole, accepted int
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		files++
		if len(data) == 0 {
			return nil
		}
		// and changed: cut short, a byte removed, a byte of Go's syntax
		// put in, anywhere and in the lines that start declarations
		variants := [][]byte{data, data[:rng.IntN(len(data))]}
		var decl []int   // the offsets of declaration lines
		inGroup := false // in a type, var, const or import group, or a struct
		for off := 0; off < len(data); {
			line := data[off:]
			if i := bytes.IndexByte(line, '\n'); i >= 0 {
				line = line[:i+1]
			}
			t := bytes.TrimSpace(line)
			take := inGroup
			switch {
			case bytes.HasPrefix(line, []byte("func ")):
				take = true
			case bytes.HasPrefix(line, []byte("type ")), bytes.HasPrefix(line, []byte("var ")),
				bytes.HasPrefix(line, []byte("const ")), bytes.HasPrefix(line, []byte("import ")):
				take = true
				inGroup = bytes.HasSuffix(t, []byte("(")) || bytes.HasSuffix(t, []byte("{"))
			case len(line) > 0 && (line[0] == ')' || line[0] == '}'):
				inGroup = false
			}
			if take {
				for k := range line {
					decl = append(decl, off+k)
				}
			}
			off += len(line)
		}
		const syntax = "(){}[],;:=.*~|<-+!^&/\n\"'`x0_ \t\r\x00\xff"
		n := mutations
		if files%3 != 0 {
			// the whole file only, for two files in three: the test
			// stays near ten seconds
			variants, n = variants[:1], 0
		}
		for n := range n {
			at := rng.IntN(len(data))
			if n%2 == 1 && len(decl) > 0 {
				at = decl[rng.IntN(len(decl))]
			}
			variants = append(variants, slices.Delete(slices.Clone(data), at, at+1),
				slices.Insert(slices.Clone(data), at, syntax[rng.IntN(len(syntax))]))
		}
		for k, v := range variants {
			if k > 0 {
				cuts++
			}
			got, ok := scanGoSymbols(p, v)
			if !ok {
				gaveUp++
				if k == 0 {
					gaveUpWhole++
					if os.Getenv("GOSCAN_SHOW") != "" && !strings.Contains(p, "testdata") {
						t.Logf("gave up on %s", p)
					}
				}
				continue
			}
			if k > 0 {
				accepted++
			}
			want := parseGoSymbols(p, stripBodies(slices.Clone(v)))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s (%d of %d bytes): fast reader\n%+v\nparser\n%+v", p, len(v), len(data), got, want)
				return filepath.SkipAll
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files, %d cut short or changed; the fast reader gave up on %d (%d whole files), read %d of the changed ones", files, cuts, gaveUp, gaveUpWhole, accepted)
	if gaveUpWhole*10 > files {
		t.Errorf("the fast reader gave up on %d of %d whole files", gaveUpWhole, files)
	}
}

// TestGoScanOperators: the lexer takes each of Go's operators whole, as
// go/token spells them.
func TestGoScanOperators(t *testing.T) {
	for tok := token.ADD; tok <= token.TILDE; tok++ {
		op := tok.String()
		if !tok.IsOperator() || op == "" {
			continue
		}
		if _, n := opKind([]byte(op + " ")); n != len(op) {
			t.Errorf("opKind(%q) reads %d bytes, want %d", op, n, len(op))
		}
	}
}

// TestGoScanCases: declarations the fast reader reads as go/parser does,
// and ones it leaves to go/parser.
func TestGoScanCases(t *testing.T) {
	for _, tc := range []struct {
		src  string
		read bool
	}{
		{"package a\nfunc () F() {}\n", true},
		{"package a\ntype T[P any] struct{ a P; b, c []P `json:\"x\"`; *E; p.Q[int] }\n", true},
		{"package a\nvar x, _, y = 1, f(2), T{\n\t1,\n}\n", true},
		{"package a\nconst (\n\tA = iota\n\tB\n)\n", true},
		{"package a\ntype I interface{ ~int | string; M(a ...int) (n int); io.Reader; E }\n", true},
		{"package a\nfunc (r *T[K]) M(a, b int, c ...string) (x int, err error) { return }", true},
		{"package a\ntype A [N]int\ntype S []struct{ x int }\ntype F func(int) (bool, error)\n", true},
		{"package a\nfunc () F[T any]() {}\n", false},          // a method with type parameters
		{"package a\nfunc F(a ...int, b int) {}\n", false},     // ... not last
		{"package a\nfunc F(a, b) (c int, error) {}\n", false}, // named and unnamed results
		{"package a\nvar x = a[1::3]\n", false},                // 3-index slice without its middle
		{"package a\nconst s = \"\\q\"\n", false},              // an unknown escape
		{"package a\nvar x = 08\n", false},                     // an invalid octal literal
		{"package a\ntype T[P *C] struct{}\n", false},          // decided by the parser
		{"package a\nvar x = (T){}\n", false},                  // a parenthesized literal type
		{"package a\n// héllo\nvar s = \"日本\"\n", true},        // valid UTF-8
		{"package a\n// \xff\nvar x = 1\n", false},             // invalid UTF-8
		{"package a\nvar x = 1 // \uFEFF\n", false},            // a byte order mark within
		{"package a\nvar x = 1\n// \xc3", false},               // cut inside a character
	} {
		got, ok := scanGoSymbols("/a.go", []byte(tc.src))
		if ok != tc.read {
			t.Errorf("%q: read %v, want %v", tc.src, ok, tc.read)
		}
		if want := parseGoSymbols("/a.go", stripBodies([]byte(tc.src))); ok && !reflect.DeepEqual(got, want) {
			t.Errorf("%q: fast reader\n%+v\nparser\n%+v", tc.src, got, want)
		}
	}
}
