package codeindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexConfined attacks the promise of doc.go that the index reads
// files only through the workspace's confined operations: symlinks inside
// a root that lead outside it (to a file, to a directory) are never read,
// not by the build, not when the editor reports them changed (Update), not
// by Outline, and not by the queries at a position in them. A regular file
// written after the build is the control: the same calls do read it.
func TestIndexConfined(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secrets := map[string]string{
		"secret.go": "package s\n\n// OutsideDoc is private.\nfunc OutsideSecret() int { return 42 }\n",
		"secret.py": "def outside_secret():\n    pass\n",
	}
	for name, text := range secrets {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	links := map[string]string{
		"leak.go":  filepath.Join(outside, "secret.go"),
		"leak.py":  filepath.Join(outside, "secret.py"),
		"leakdir":  outside,
		"p/dep.go": filepath.Join(outside, "secret.go"),
	}
	os.MkdirAll(filepath.Join(root, "p"), 0o755)
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Fatal(err) // a test's folder takes symlinks
		}
	}
	ix, _, root := newTestIndexIn(t, root, map[string]string{
		"go.mod":  "module m\n\ngo 1.22\n",
		"p/in.go": "package p\n\nfunc Inside() int { return 1 }\n",
	})
	ctx := context.Background()
	leaked := func(t *testing.T, what string, v any) {
		t.Helper()
		s := fmt.Sprintf("%+v", v)
		for _, w := range []string{"OutsideSecret", "outside_secret", "OutsideDoc", outside} {
			if strings.Contains(s, w) {
				t.Errorf("%s reveals %q: %s", what, w, s)
			}
		}
	}
	for _, q := range []string{"OutsideSecret", "outside_secret", "Inside"} {
		syms, _ := ix.Search(q, 10)
		leaked(t, "search "+q+" after the build", syms)
	}
	if syms, _ := ix.Search("Inside", 10); len(syms) != 1 {
		t.Fatalf("search Inside = %+v, want the file of the root (the index works)", syms)
	}

	// The control: a regular file written after the build is read by the
	// same calls, so the checks below can see a file when they may.
	control := filepath.Join(root, "p", "later.go")
	os.WriteFile(control, []byte("package p\n\nfunc Later() int { return Inside() }\n"), 0o644)

	tests := []struct {
		path   string
		leak   bool // a symlink leading outside the root
		symbol string
	}{
		{path: "leak.go", leak: true, symbol: "OutsideSecret"},
		{path: "leak.py", leak: true, symbol: "outside_secret"},
		{path: "leakdir/secret.go", leak: true, symbol: "OutsideSecret"},
		{path: "p/dep.go", leak: true, symbol: "OutsideSecret"},
		{path: "p/later.go", symbol: "Later"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p := filepath.Join(root, filepath.FromSlash(tt.path))
			ix.Changed(p)
			ix.Flush()
			syms, _ := ix.Search(tt.symbol, 10)
			outline, oerr := ix.Outline(p)
			if !tt.leak {
				if len(syms) != 1 || oerr != nil || len(outline) != 1 {
					t.Fatalf("control: search = %+v, outline = %+v, %v; want the file read", syms, outline, oerr)
				}
				return
			}
			leaked(t, "search after Update", syms)
			if oerr == nil {
				t.Errorf("outline = %+v, want an error (the file is outside the roots)", outline)
			}
			leaked(t, "outline", outline)
			line, col := 4, 6 // the name OutsideSecret
			if strings.HasSuffix(tt.path, ".py") {
				line, col = 1, 5
			}
			for name, q := range map[string]func() (*Answer, error){
				"definition": func() (*Answer, error) { return ix.Definition(ctx, p, line, col) },
				"references": func() (*Answer, error) { return ix.References(ctx, p, line, col, true) },
				"hover":      func() (*Answer, error) { return ix.Hover(ctx, p, line, col) },
			} {
				a, err := q()
				leaked(t, name, a)
				if err == nil && a != nil && len(a.Locations) > 0 {
					t.Errorf("%s = %+v, want no location (the file cannot be read)", name, a)
				}
			}
			ds, _, _ := ix.Diagnostics(ctx, p)
			leaked(t, "diagnostics", ds)
		})
	}
	// The package whose file p/dep.go leads outside: its check sees only
	// the files it may read.
	ds, _, err := ix.Diagnostics(ctx, filepath.Join(root, "p", "in.go"))
	leaked(t, "diagnostics of the package", ds)
	if err != nil {
		t.Logf("diagnostics of p: %v", err)
	}
}
