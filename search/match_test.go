package search

import (
	"bytes"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// TestLiteralScan checks the prefilters against a plain search on
// random text.
func TestLiteralScan(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewSource(1))
	alphabet := []byte("abcdeABCDE xyz_\n")
	for iter := 0; iter < 2000; iter++ {
		buf := make([]byte, rnd.Intn(300))
		for i := range buf {
			buf[i] = alphabet[rnd.Intn(len(alphabet))]
		}
		lit := make([]byte, 1+rnd.Intn(3))
		for i := range lit {
			lit[i] = alphabet[rnd.Intn(len(alphabet)-1)]
		}
		for _, fold := range []bool{false, true} {
			l := newLiteral(string(lit), fold)
			for _, pair := range []bool{false, true} {
				if pair && len(lit) < 2 {
					continue
				}
				if pair && !l.pair {
					l = newLiteral(string(lit), fold)
					// Any two of its bytes will do.
					i := rnd.Intn(len(lit) - 1)
					j := i + 1 + rnd.Intn(len(lit)-1-i)
					l.pair, l.pairAt, l.pairDist = true, i, j-i
					var or byte
					if fold {
						or, l.pairOr = 0x20, 0x2020202020202020
					}
					l.p1 = uint64(l.s[i]|or) * 0x0101010101010101
					l.p2 = uint64(l.s[j]|or) * 0x0101010101010101
				}
				l.reset()
				for from := 0; from <= len(buf); from += 1 + rnd.Intn(7) {
					want := -1
					hay, needle := buf, lit
					if fold {
						hay, needle = bytes.ToLower(buf), bytes.ToLower(lit)
					}
					if i := bytes.Index(hay[from:], needle); i >= 0 {
						want = from + i
					}
					if got := l.next(buf, from); got != want {
						t.Fatalf("next(%q in %q from %d, fold %v, pair %v) = %d, want %d", lit, buf, from, fold, l.pair, got, want)
					}
				}
			}
		}
	}
}

func TestRequiredLiterals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		fold    bool
		want    []string
	}{
		{"hello", false, []string{"hello"}},
		{"foo.*bar", false, []string{"bar"}},
		{"[a-z]+Deadline\\(", false, []string{"Deadline("}},
		{"a|bc", false, []string{"a", "bc"}},
		{"(foo)+x?", false, []string{"foo"}},
		{"x*", false, nil},
		{"kelvin", true, []string{"elvin"}},
		{"secret", true, []string{"ecret"}},
		{"ks", true, nil},
	}
	for _, tt := range tests {
		m, err := compile(Pattern{Expr: tt.pattern, CaseInsensitive: tt.fold})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range m.lits {
			got = append(got, string(l.s))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q (fold %v): literals %q, want %q", tt.pattern, tt.fold, got, tt.want)
		}
	}
}

func TestBinaryCutoff(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x\n", 50000) // 100000 bytes
	tests := []struct {
		data string
		want int
	}{
		{"no nul\n", 7},
		{"a\x00b", 0},
		{long + "\x00", 65536},
		{strings.Repeat("y", 70000) + "\n" + "\x00", 0},
	}
	for _, tt := range tests {
		if got := binaryCutoff([]byte(tt.data)); got != tt.want {
			t.Errorf("binaryCutoff(%d bytes) = %d, want %d", len(tt.data), got, tt.want)
		}
	}
}

func TestGlobHelpers(t *testing.T) {
	t.Parallel()
	if got := expandBraces("*.{ts,tsx}"); !reflect.DeepEqual(got, []string{"*.ts", "*.tsx"}) {
		t.Errorf("expandBraces: %q", got)
	}
	if got := expandBraces("{a,b{c,d}}/x"); !reflect.DeepEqual(got, []string{"a/x", "bc/x", "bd/x"}) {
		t.Errorf("nested: %q", got)
	}
	if got := splitGlobs("*.go, *.{a,b} ,!x"); !reflect.DeepEqual(got, []string{"*.go", "*.{a,b}", "!x"}) {
		t.Errorf("splitGlobs: %q", got)
	}
	if got := unicodeClasses(`\w+[\w-]\\w\Q\w\E\d`); got != `[\p{L}\p{M}\p{Nd}\p{Pc}]+[\p{L}\p{M}\p{Nd}\p{Pc}-]\\w\Q\w\E\p{Nd}` {
		t.Errorf("unicodeClasses: %s", got)
	}
}

// TestPairIndex puts a pair at every position of buffers of many
// lengths, its bytes adjacent or further apart, so that every path of
// pairIndex (vector blocks, words, the tail) finds it, or finds nothing.
func TestPairIndex(t *testing.T) {
	t.Parallel()
	or := uint64(0x2020202020202020)
	p1, p2 := uint64('q')*0x0101010101010101, uint64('j')*0x0101010101010101
	for _, dist := range []int{1, 2, 7, 31, 32, 33, 40} {
		for n := 2; n < 140; n++ {
			empty := bytes.Repeat([]byte{'z'}, n)
			if got := pairIndex(empty, 0, dist, p1, p2, or); got != -1 {
				t.Fatalf("dist=%d n=%d: found %d in nothing", dist, n, got)
			}
			for pos := 0; pos+dist < n; pos++ {
				buf := bytes.Repeat([]byte{'z'}, n)
				buf[pos], buf[pos+dist] = 'Q', 'j'
				for _, at := range []int{0, pos / 2, pos} {
					if got := pairIndex(buf, at, dist, p1, p2, or); got != pos {
						t.Fatalf("dist=%d n=%d pos=%d at=%d: got %d", dist, n, pos, at, got)
					}
				}
				if got := pairIndex(buf, pos+1, dist, p1, p2, or); got != -1 {
					t.Fatalf("dist=%d n=%d pos=%d: found %d after it", dist, n, pos, got)
				}
				if got := pairIndex(buf, 0, dist, p1, p2, 0); got != -1 {
					t.Fatalf("dist=%d n=%d pos=%d: exact search found the folded pair at %d", dist, n, pos, got)
				}
				// One byte off: the other byte at another distance.
				buf[pos+dist] = 'z'
				if pos+dist+1 < n {
					buf[pos+dist+1] = 'j'
				}
				if got := pairIndex(buf, 0, dist, p1, p2, or); got != -1 {
					t.Fatalf("dist=%d n=%d pos=%d: found %d, the bytes %d apart", dist, n, pos, got, dist+1)
				}
			}
		}
	}
}
