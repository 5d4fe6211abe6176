package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRootNamesRoundTrip: with several roots every path Rel writes is
// one Resolve reads back to the same file, whichever root holds it.
func TestRootNamesRoundTrip(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	a, b, c := filepath.Join(base, "one", "app"), filepath.Join(base, "two", "app"), filepath.Join(base, "lib")
	for _, d := range []string{a, b, c} {
		os.MkdirAll(filepath.Join(d, "sub"), 0o755)
		os.WriteFile(filepath.Join(d, "sub", "f.go"), []byte("package sub\n"), 0o644)
	}
	// The first root also has a directory named like the third root.
	os.MkdirAll(filepath.Join(a, "lib"), 0o755)
	os.WriteFile(filepath.Join(a, "top.txt"), nil, 0o644)
	w, _ := New(a)
	if got := w.Rel(filepath.Join(a, "sub", "f.go")); got != "sub/f.go" {
		t.Errorf("one root: Rel = %q", got)
	}
	if err := w.SetFolders([]Folder{{Path: a, Name: "app"}, {Path: b, Name: "app"}, {Path: c, Name: "../evil"}}); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, f := range w.Folders() {
		names = append(names, f.Name)
	}
	if names[0] != "app" || names[1] != "app-2" || names[2] != "lib" {
		t.Fatalf("names = %v: want unique, usable names", names)
	}
	for _, root := range []string{a, b, c} {
		for _, p := range []string{root, filepath.Join(root, "sub"), filepath.Join(root, "sub", "f.go"), filepath.Join(root, "sub", "new.go")} {
			rel := w.Rel(p)
			if filepath.IsAbs(rel) {
				t.Errorf("Rel(%s) = %s, not relative", p, rel)
				continue
			}
			got, err := w.Resolve(rel)
			if err != nil || got != p {
				t.Errorf("Resolve(Rel(%s) = %q) = %s, %v", p, rel, got, err)
			}
		}
	}
	for _, tt := range []struct{ arg, want string }{
		{"app-2/sub/f.go", filepath.Join(b, "sub", "f.go")},
		{"lib/sub/f.go", filepath.Join(c, "sub", "f.go")}, // a root's name wins over the first root's lib/
		{"top.txt", filepath.Join(a, "top.txt")},          // not a root's name: the first root, as before
		{"sub/f.go", filepath.Join(a, "sub", "f.go")},
	} {
		if got, err := w.Resolve(tt.arg); err != nil || got != tt.want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", tt.arg, got, err, tt.want)
		}
	}
	for _, bad := range []string{"lib/../../etc/passwd", "app-2/..", "../lib/sub/f.go"} {
		if got, err := w.Resolve(bad); err == nil {
			t.Errorf("Resolve(%q) = %s, want refused", bad, got)
		}
	}
}

// TestSensitiveWithRootNames: a sensitive glob (relative to a root) matches
// a path written with the root's name first.
func TestSensitiveWithRootNames(t *testing.T) {
	t.Parallel()
	a, b := t.TempDir(), t.TempDir()
	w, _ := New()
	w.SetFolders([]Folder{{Path: a, Name: "app"}, {Path: b, Name: "api"}})
	cfg := DefaultConfig()
	cfg.Paths.Sensitive = []string{"secrets/**"}
	w.SetConfig(cfg)
	for _, rel := range []string{"secrets/k", "api/secrets/k", "app/secrets/k"} {
		if !w.IsSensitive(rel) {
			t.Errorf("IsSensitive(%q) = false", rel)
		}
	}
	if w.IsSensitive("api/public/k") {
		t.Error("api/public/k is not sensitive")
	}
}
