package search

import (
	"bytes"
	"math/rand"
	"reflect"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

// randomPattern builds a small regular expression from a grammar that
// covers what the DFA must get right: classes, anchors, repetition,
// alternation, case folding.
func randomPattern(r *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "c", "A", "_", "1", " ", ".", "[a-c]", "[^a]", `\d`, `\w`, `\s`, "é", "k"}
	if depth > 2 {
		return atoms[r.Intn(len(atoms))]
	}
	switch r.Intn(7) {
	case 0:
		return randomPattern(r, depth+1) + randomPattern(r, depth+1)
	case 1:
		return "(" + randomPattern(r, depth+1) + "|" + randomPattern(r, depth+1) + ")"
	case 2:
		return "(?:" + randomPattern(r, depth+1) + ")" + []string{"*", "+", "?", "{2,3}", "{2}"}[r.Intn(5)]
	case 3:
		return "^" + randomPattern(r, depth+1)
	case 4:
		return randomPattern(r, depth+1) + "$"
	default:
		return atoms[r.Intn(len(atoms))] + randomPattern(r, depth+1)
	}
}

func TestDFAAgainstRegexp(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewSource(7))
	alphabet := []string{"a", "b", "c", "A", "B", "_", "1", "2", " ", "é", "K", "\u212a", "k", "\t"}
	for iter := 0; iter < 3000; iter++ {
		pat := randomPattern(r, 0)
		if r.Intn(3) == 0 {
			pat = "(?i)" + pat
		}
		tree, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			continue
		}
		d := newDFA(tree)
		if d == nil {
			t.Fatalf("no DFA for %q", pat)
		}
		re := regexp.MustCompile(pat)
		var buf strings.Builder
		for l := r.Intn(8); l >= 0; l-- {
			for n := r.Intn(10); n > 0; n-- {
				buf.WriteString(alphabet[r.Intn(len(alphabet))])
			}
			if l > 0 || r.Intn(2) == 0 {
				buf.WriteByte('\n')
			}
		}
		text := []byte(buf.String())
		var want, got []string
		for _, line := range bytes.Split(text, []byte{'\n'}) {
			if re.Match(line) {
				want = append(want, string(line))
			}
			if m, ok := d.matchLine(line); !ok || m != re.Match(line) {
				t.Fatalf("%q: matchLine(%q) = %v, %v", pat, line, m, ok)
			}
		}
		if len(text) == 0 {
			want = nil // no lines at all
		}
		if len(text) > 0 && text[len(text)-1] == '\n' && len(want) > 0 && re.Match(nil) {
			want = want[:len(want)-1] // the empty "line" after the last newline is not a line
		}
		if _, ok := d.lines(text, func(start, end int) bool {
			got = append(got, string(text[start:end]))
			return true
		}); !ok {
			t.Fatalf("%q: the DFA gave up", pat)
		}
		if len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q on %q: DFA lines %q, regexp lines %q", pat, text, got, want)
		}
	}
}

func TestDFAWordBoundary(t *testing.T) {
	t.Parallel()
	tree, _ := syntax.Parse(`\bfoo\b`, syntax.Perl)
	if newDFA(tree) != nil {
		t.Error(`a DFA for \b`)
	}
}
