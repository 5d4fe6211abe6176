package codeindex

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiagnosticRanges: every diagnostic covers the code it is about,
// never an empty range (on an empty range editors mark nothing, or guess).
func TestDiagnosticRanges(t *testing.T) {
	t.Parallel()
	src := "package d\n\n" +
		"func F() int {\n" +
		"\tvar ünused = 1\n" + // declared and not used: the identifier (byte columns)
		"\treturn undefinedName + 1\n" + // undefined: the identifier only
		"}\n\n" +
		"var _ = map[string]int{\n\t\"a\": \"not an int\",\n}\n\n" + // a value of the wrong type: the literal
		"func G() {\n\tx := 1\n\tx = x\n}\n"
	ix, _, root := newTestIndex(t, map[string]string{"go.mod": "module m\n\ngo 1.22\n", "d/d.go": src,
		"p/p.go": "package p\n\nfunc H( {\n}\n"})
	ctx := context.Background()
	ds, _, err := ix.Diagnostics(ctx, filepath.Join(root, "d", "d.go"))
	if err != nil {
		t.Fatal(err)
	}
	pd, _, _ := ix.Diagnostics(ctx, filepath.Join(root, "p", "p.go"))
	ds = append(ds, pd...)
	want := map[string]string{
		"declared and not used": "ünused",
		"undefined":             "undefinedName",
		"cannot use":            `"not an int"`,
		"self-assignment":       "x",
		"expected":              "{", // a parse error: the token there
	}
	lines := map[string][]string{"d": strings.Split(src, "\n"), "p": strings.Split("package p\n\nfunc H( {\n}\n", "\n")}
	seen := map[string]bool{}
	for _, d := range ds {
		if d.EndLine == 0 || d.EndLine == d.Line && d.EndColumn <= d.Column {
			t.Errorf("%+v: empty range", d)
			continue
		}
		line := lines[filepath.Base(filepath.Dir(d.Path))][d.Line-1]
		got := line[d.Column-1 : d.EndColumn-1]
		for k, w := range want {
			if strings.Contains(d.Message, k) {
				seen[k] = true
				if got != w {
					t.Errorf("%s: range covers %q, want %q", d.Message, got, w)
				}
			}
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("no diagnostic %q in %+v", k, ds)
		}
	}
}
