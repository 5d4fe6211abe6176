package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/agentls/agentls/internal/testenv"
)

// TestUnescapeMount: the mount table's octal escapes are undone, and
// nothing else is changed.
func TestUnescapeMount(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`/plain`:             "/plain",
		`/a\040b`:            "/a b",
		`/tab\011x\012y`:     "/tab\tx\ny",
		`/back\134slash`:     `/back\slash`,
		`/short\04`:          `/short\04`,
		`/not\999octal`:      `/not\999octal`,
		`/end\`:              `/end\`,
		`/two\040\040spaces`: "/two  spaces",
	} {
		if got := unescapeMount([]byte(in)); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMountsBelowSeesChanges: the mount table is kept between calls, and a
// mount or unmount below a folder is seen by the next call. It needs the
// right to mount (root); it is skipped without.
func TestMountsBelowSeesChanges(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	below := filepath.Join(root, "a b") // a name the table escapes
	if err := os.Mkdir(below, 0o755); err != nil {
		t.Fatal(err)
	}
	if mountsBelow(root) {
		t.Fatalf("a mount point below %s before any mount", root)
	}
	if err := unix.Mount("tmpfs", below, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount here: %v", err)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			unix.Unmount(below, unix.MNT_DETACH)
		}
	})
	for range 2 { // the change, then the table kept
		if !mountsBelow(root) {
			t.Fatalf("the tmpfs mounted at %s is not seen", below)
		}
	}
	if err := unix.Unmount(below, 0); err != nil {
		t.Fatal(err)
	}
	mounted = false
	if mountsBelow(root) {
		t.Errorf("the unmounted %s is still seen", below)
	}
}

// TestSensitiveBindMount: a folder of keys mounted a second time below the
// root (a bind mount keeps the identities) is refused under its other
// name by every confined read and by a walk from the root, which answers
// with the identities. It needs the right to mount (root); it is skipped
// without.
func TestSensitiveBindMount(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{"home/.ssh/id_x": "KEY", "plain.txt": "p"})
	public := filepath.Join(root, "public")
	if err := os.Mkdir(public, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(filepath.Join(root, "home", ".ssh"), public, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind mount here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(public, unix.MNT_DETACH) })
	w, _ := New(root)
	if _, _, ok := w.soleTree(nil); ok {
		t.Errorf("soleTree: no mount point seen below %s", root)
	}
	got := readAll(w, filepath.Join(public, "id_x"))
	delete(got, "Walk") // the walk of public itself is refused:
	if _, err := w.Walk(context.Background(), public, WalkOptions{}, func(*File) error { return nil }); sensitiveCode(err) != "SENSITIVE_PATH" {
		t.Errorf("walk of public: %v", err)
	}
	wantAll(t, "public/id_x", got, "SENSITIVE_PATH")
	got = walkCodes(t, w, root)
	if got["public/id_x"] != "SENSITIVE_PATH SENSITIVE_PATH" || got["plain.txt"] != " " {
		t.Errorf("walk from the root: public/id_x %q, plain.txt %q", got["public/id_x"], got["plain.txt"])
	}
}
