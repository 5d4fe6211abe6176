package workspace

import (
	"math/rand"
	"strings"
	"testing"
)

func applyReplacements(old string, rs []Replacement) string {
	var b strings.Builder
	pos := 0
	for _, r := range rs {
		b.WriteString(old[pos:r.Start])
		b.WriteString(r.Text)
		pos = r.End
	}
	b.WriteString(old[pos:])
	return b.String()
}

func TestReplacementsRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	words := []string{"a\n", "b\n", "c\n", "d\n", "é\n", "😀\n", "x"}
	gen := func() string {
		var b strings.Builder
		for i := rng.Intn(30); i > 0; i-- {
			b.WriteString(words[rng.Intn(len(words)-1)])
		}
		if rng.Intn(3) == 0 {
			b.WriteString("x")
		}
		return b.String()
	}
	for i := 0; i < 3000; i++ {
		a, b := gen(), gen()
		rs := Replacements(a, b)
		if got := applyReplacements(a, rs); got != b {
			t.Fatalf("case %d: %q → %q: applying %v gave %q", i, a, b, rs, got)
		}
		for j := 1; j < len(rs); j++ {
			if rs[j].Start < rs[j-1].End {
				t.Fatalf("overlapping replacements %v", rs)
			}
		}
	}
}

func TestReplacementsAreMinimal(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n")
	}
	old := b.String()
	lines := SplitLines(old)
	lines[100] = "changed\n"
	lines[15000] = "changed too\n"
	rs := Replacements(old, strings.Join(lines, ""))
	if len(rs) != 2 || rs[0].Text != "changed\n" || rs[1].Text != "changed too\n" {
		t.Fatalf("replacements = %+v, want the two changed lines only", rs)
	}
}

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, old, new, want string }{
		{"modify", "a\nb\nc\n", "a\nB\nc\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"create", "", "x\n", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n"},
		{"no final newline", "a\nb", "a\nc", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"same", "a\n", "a\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := "f"
			if tt.old == "" {
				op = ""
			}
			if got := UnifiedDiff(op, "f", tt.old, tt.new); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
