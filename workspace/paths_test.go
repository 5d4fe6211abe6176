package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink(filepath.Join(root, "a"), filepath.Join(root, "in"))
	os.Symlink(filepath.Join(outside, "nofile"), filepath.Join(root, "dangling"))
	os.Symlink(filepath.Join(root, ".env"), filepath.Join(root, "innocent"))
	w, _ := New(root)
	tests := []struct {
		arg, want, code string
	}{
		{"a/b/c.txt", filepath.Join(root, "a/b/c.txt"), ""},
		{"./a/../x", filepath.Join(root, "x"), ""},
		{filepath.Join(root, "a"), filepath.Join(root, "a"), ""},
		{PathToURI(filepath.Join(root, "a", "é 1.txt")), filepath.Join(root, "a", "é 1.txt"), ""},
		{"in/new.txt", filepath.Join(root, "in/new.txt"), ""},
		{".", root, ""},
		{"", "", "INVALID_PATH"},
		{"../x", "", "INVALID_PATH"},
		{"a/../../x", "", "INVALID_PATH"},
		{"/etc/passwd", "", "INVALID_PATH"},
		{"file:///etc/passwd", "", "INVALID_PATH"},
		{"~/x", "", "INVALID_PATH"},
		{"a\x00b", "", "INVALID_PATH"},
		{"out/x", "", "INVALID_PATH"},
		{"out", "", "INVALID_PATH"},
		{"dangling", "", "INVALID_PATH"},
		{".env", "", "SENSITIVE_PATH"},
		{"a/.env.local", "", "SENSITIVE_PATH"},
		{"a/.ssh/config", "", "SENSITIVE_PATH"},
		{"a/.ssh", "", "SENSITIVE_PATH"},
		{"k.pem", "", "SENSITIVE_PATH"},
		{"innocent", "", "SENSITIVE_PATH"},
	}
	for _, tt := range tests {
		got, err := w.Resolve(tt.arg)
		if tt.code == "" {
			if err != nil || got != tt.want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", tt.arg, got, err, tt.want)
			}
			continue
		}
		pe, ok := err.(*PathError)
		if !ok || pe.Code != tt.code {
			t.Errorf("Resolve(%q) = %q, %v; want %s", tt.arg, got, err, tt.code)
		}
	}
	// paths.allow adds a root.
	cfg := DefaultConfig()
	cfg.Paths.Allow = []string{outside}
	w.SetConfig(cfg)
	if _, err := w.Resolve(filepath.Join(outside, "x")); err != nil {
		t.Errorf("paths.allow root refused: %v", err)
	}
	if _, err := w.Resolve("out/x"); err != nil {
		t.Errorf("symlink into an allowed root refused: %v", err)
	}
}

func TestWriteFileAtomicKeepsMode(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("old"), 0o600)
	if err := WriteFileAtomic(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(b) != "new" || fi.Mode().Perm() != 0o600 {
		t.Errorf("got %q %v", b, fi.Mode())
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}
