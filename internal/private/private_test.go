package private

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChecks: only a regular file (or a directory) of the user's, reached
// without a symlink and closed to others, passes; each refusal says why.
func TestChecks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x"), mode)
		os.Chmod(p, mode)
		return p
	}
	folder := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		os.Mkdir(p, mode)
		os.Chmod(p, mode)
		return p
	}
	ok := file("ok", 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(ok, link)
	okDir := folder("d", 0o700)
	dirLink := filepath.Join(dir, "dlink")
	os.Symlink(okDir, dirLink)
	tests := []struct {
		name string
		err  error
		want string // "" for no error
	}{
		{"private file", open(ok), ""},
		{"group may read", open(file("g", 0o640)), "mode 640"},
		{"others may read", open(file("o", 0o604)), "mode 604"},
		{"symlink to a private file", open(link), "symbolic links"},
		{"directory as a file", open(okDir), "not a regular file"},
		{"missing", open(filepath.Join(dir, "none")), "no such file"},
		{"private directory", Dir(okDir, 0o077), ""},
		{"others may enter", Dir(folder("e", 0o755), 0o077), "mode 755"},
		{"others may enter, only writing forbidden", Dir(folder("r", 0o755), 0o022), ""},
		{"others may write", Dir(folder("w", 0o777), 0o022), "mode 777"},
		{"symlink to a private directory", Dir(dirLink, 0o077), "not a directory"},
		{"file as a directory", Dir(ok, 0o077), "not a directory"},
		{"made", MakeDir(filepath.Join(dir, "new"), 0o077), ""},
		{"made, parent missing", MakeDir(filepath.Join(dir, "no", "new"), 0o077), "no such file"},
	}
	for _, tt := range tests {
		switch {
		case tt.want == "" && tt.err != nil:
			t.Errorf("%s: %v", tt.name, tt.err)
		case tt.want != "" && (tt.err == nil || !strings.Contains(tt.err.Error(), tt.want)):
			t.Errorf("%s: %v, want it to say %q", tt.name, tt.err, tt.want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "new")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("MakeDir made %v (%v), want mode 700", fi, err)
	}
	if os.Getuid() == 0 {
		theirs := file("theirs", 0o600)
		os.Chown(theirs, 65534, 65534)
		if err := open(theirs); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("another user's file: %v", err)
		}
	}
}

// open is Open's error, the file closed.
func open(path string) error {
	f, err := Open(path)
	if f != nil {
		f.Close()
	}
	return err
}
