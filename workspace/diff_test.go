package workspace

import (
	"fmt"
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

// applyUnified applies a unified diff of one file (as UnifiedDiff prints
// it) to old, checking every context and removed line.
func applyUnified(t *testing.T, old, d string) string {
	t.Helper()
	if d == "" {
		return old
	}
	type line struct {
		op   byte
		text string
	}
	var lines []line
	var hunks []int // the old start line of each hunk, and its first line in lines
	var at []int
	for _, l := range strings.SplitAfter(d, "\n")[2:] {
		switch {
		case l == "":
		case strings.HasPrefix(l, "@@"):
			var os, ol, ns, nl int
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &os, &ol, &ns, &nl); err != nil {
				t.Fatalf("hunk header %q: %v", l, err)
			}
			if ol == 0 {
				os++
			}
			hunks, at = append(hunks, os-1), append(at, len(lines))
		case l == "\\ No newline at end of file\n":
			lines[len(lines)-1].text = strings.TrimSuffix(lines[len(lines)-1].text, "\n")
		default:
			lines = append(lines, line{l[0], l[1:]})
		}
	}
	at = append(at, len(lines))
	a := SplitLines(old)
	var out strings.Builder
	next := 0 // the next line of a not yet copied
	for i, start := range hunks {
		for ; next < start; next++ {
			out.WriteString(a[next])
		}
		for _, l := range lines[at[i]:at[i+1]] {
			switch l.op {
			case ' ', '-':
				if next >= len(a) || a[next] != l.text {
					t.Fatalf("line %d differs from the diff's %q\n%s", next+1, l.text, d)
				}
				if l.op == ' ' {
					out.WriteString(l.text)
				}
				next++
			case '+':
				out.WriteString(l.text)
			}
		}
	}
	for ; next < len(a); next++ {
		out.WriteString(a[next])
	}
	return out.String()
}

// TestUnifiedDiffApplies: the diff of random texts that share long
// prefixes and suffixes (what UnifiedDiff trims before splitting lines)
// applies to the old text and gives the new one.
func TestUnifiedDiffApplies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(2))
	words := []string{"a\n", "b\n", "c\n", "\n", "é\n", "x", "y"}
	gen := func(n int) string {
		var b strings.Builder
		for i := rng.Intn(n); i > 0; i-- {
			b.WriteString(words[rng.Intn(len(words))])
		}
		return b.String()
	}
	for i := 0; i < 3000; i++ {
		if i < 8 { // a text repeated: the prefix and suffix could overlap
			p := strings.Repeat("a\nb\n", 100*(i%4+1))
			old, new := p, p+p
			if i >= 4 {
				old, new = new, old
			}
			if got := applyUnified(t, old, UnifiedDiff("f", "f", old, new)); got != new {
				t.Fatalf("repeated text, case %d: got %q", i, got)
			}
			if got := applyReplacements(old, Replacements(old, new)); got != new {
				t.Fatalf("repeated text, case %d: replacements give %q", i, got)
			}
			continue
		}
		pre, suf := gen(20), gen(20)
		if i%4 == 0 { // past the chunks commonLines compares at once
			pre, suf = gen(1500), gen(1500)
		}
		old, new := pre+gen(8)+suf, pre+gen(8)+suf
		d := UnifiedDiff("f", "f", old, new)
		if got := applyUnified(t, old, d); got != new {
			t.Fatalf("case %d: %q → %q: diff\n%s\ngives %q", i, old, new, d, got)
		}
		if got := applyReplacements(old, Replacements(old, new)); got != new {
			t.Fatalf("case %d: replacements of %q → %q give %q", i, old, new, got)
		}
	}
}

// TestLocalEditOfLargeText: a one-line change in the middle of a large text
// is one replacement of that line, and its diff one hunk numbered where the
// line is.
func TestLocalEditOfLargeText(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	old := b.String()
	new := strings.Replace(old, "line 10000\n", "line 10000 edited\n", 1)
	rs := Replacements(old, new)
	if want := strings.Index(old, "line 10000\n"); len(rs) != 1 || rs[0].Start != want || rs[0].End != want+len("line 10000\n") || rs[0].Text != "line 10000 edited\n" {
		t.Errorf("replacements = %+v, want line 10000 only", rs)
	}
	want := "--- a/f\n+++ b/f\n@@ -9997,7 +9997,7 @@\n line 9997\n line 9998\n line 9999\n-line 10000\n+line 10000 edited\n line 10001\n line 10002\n line 10003\n"
	if got := UnifiedDiff("f", "f", old, new); got != want {
		t.Errorf("diff =\n%s\nwant\n%s", got, want)
	}
}
