package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzTree makes a root with the shapes path resolution must get right: a
// sensitive file and folder, links inside and outside (relative, absolute,
// dangling), a link loop, and an allowed extra root (paths.allow) that a
// link leads into. It returns the workspace and the outside folder.
func fuzzTree(t testing.TB) (*Workspace, string) {
	t.Helper()
	base := t.TempDir()
	root, outside, extra := filepath.Join(base, "root"), filepath.Join(base, "outside"), filepath.Join(base, "extra")
	for _, d := range []string{root + "/a/b", root + "/.ssh", outside + "/o", extra + "/e"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{root + "/a/b/c.txt", root + "/.env", root + "/.ssh/id_rsa", root + "/x.pem", outside + "/o/secret.txt", extra + "/e/f.txt"} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"in":        "a/b",
		"inabs":     root + "/a",
		"out":       outside,
		"outrel":    "../outside/o",
		"dangleout": outside + "/new",
		"dangle":    "a/new",
		"loop":      "loop",
		"loop1":     "loop2",
		"loop2":     "loop1",
		"toenv":     ".env",
		"tossh":     ".ssh",
		"toextra":   extra + "/e",
		"a/up":      "..",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	cfg := *ws.Config()
	cfg.Paths.Allow = []string{extra}
	ws.SetConfig(&cfg)
	return ws, outside
}

// FuzzResolve: for any argument, Resolve either refuses it or returns a
// path that is inside an allowed root both as written and once its
// symlinks are resolved, and that matches no sensitive glob either way.
// It must also end (a link loop once made it recurse without end).
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"a/b/c.txt", "../x", "/etc/passwd", "in/c.txt", "out/o/secret.txt", "outrel/secret.txt",
		"dangleout", "dangle/x", "loop/x", "loop1", "toenv", "tossh/id_rsa", ".env", ".ENV",
		"a/up/a/up/.env", "toextra/f.txt", "file:///etc/passwd", "file://localhost/x", "~/x",
		"a/./b/../../..", "x\x00y", "a//b", "%2e%2e/x", "file:///%2e%2e/etc", "",
	} {
		f.Add(s)
	}
	ws, _ := fuzzTree(f)
	roots := ws.allowedRoots()
	var realRoots []string
	for _, r := range roots {
		rr, err := filepath.EvalSymlinks(r)
		if err != nil {
			f.Fatal(err)
		}
		realRoots = append(realRoots, rr)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		if len(arg) > 4096 {
			return
		}
		p, err := ws.Resolve(arg)
		if err != nil {
			if _, ok := err.(*PathError); !ok {
				t.Fatalf("Resolve(%q): error %T %v is not a *PathError", arg, err, err)
			}
			return
		}
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			t.Fatalf("Resolve(%q) = %q: not a clean absolute path", arg, p)
		}
		_, rel, ok := containing(roots, p)
		if !ok {
			t.Fatalf("Resolve(%q) = %q: outside the allowed roots %v", arg, p, roots)
		}
		if rel != "." && ws.IsSensitive(rel) {
			t.Fatalf("Resolve(%q) = %q: sensitive (%s)", arg, p, rel)
		}
		real, err := realPath(p)
		if err != nil {
			return // gone or changed since; nothing to check
		}
		_, realRel, ok := containing(realRoots, real)
		if !ok {
			t.Fatalf("Resolve(%q) = %q, which resolves to %q outside the allowed roots", arg, p, real)
		}
		if realRel != "." && ws.IsSensitive(realRel) {
			t.Fatalf("Resolve(%q) = %q, which resolves to the sensitive %q", arg, p, real)
		}
		// The confined operations agree: a read never lands outside.
		if fi, err := ws.Lstat(p); err == nil && fi.Mode().IsRegular() {
			if _, err := ws.ReadDisk(p); err != nil && !strings.Contains(err.Error(), "permission") {
				t.Fatalf("ReadDisk(%q) after Resolve(%q): %v", p, arg, err)
			}
		}
	})
}

// TestResolveLinkLoops: a loop of links is refused at once, not followed
// until the stack runs out.
func TestResolveLinkLoops(t *testing.T) {
	t.Parallel()
	ws, _ := fuzzTree(t)
	for _, arg := range []string{"loop", "loop/x", "loop1", "loop2/new.txt"} {
		if _, err := ws.Resolve(arg); err == nil {
			t.Errorf("Resolve(%q) accepted a link loop", arg)
		} else if pe, ok := err.(*PathError); !ok || pe.Code != "INVALID_PATH" {
			t.Errorf("Resolve(%q) = %v, want INVALID_PATH", arg, err)
		}
	}
}

// TestConfinedOpsRefuseOutside: the confined operations refuse, on their
// own, paths that lead outside or to a sensitive file, whatever Resolve
// said before (a race may have changed the tree since).
func TestConfinedOpsRefuseOutside(t *testing.T) {
	t.Parallel()
	ws, outside := fuzzTree(t)
	root := ws.Root()
	for _, tc := range []struct {
		p string
		// linkOnly: p is itself a link to a sensitive file, and an atomic
		// write replaces the link, not the file it pointed to; so the write
		// may succeed (the contents are checked below).
		linkOnly bool
	}{
		{"out/o/secret.txt", false},
		{"outrel/secret.txt", false},
		{"toenv", true},
		{"tossh/id_rsa", false},
		{".env", false},
		{"../outside/o/secret.txt", false},
	} {
		abs := filepath.Join(root, tc.p)
		if b, err := ws.ReadDisk(abs); err == nil {
			t.Errorf("ReadDisk(%s) = %q, want a refusal", tc.p, b)
		}
		if err := ws.WriteFileAtomic(abs, []byte("y"), 0o644); err == nil && !tc.linkOnly {
			t.Errorf("WriteFileAtomic(%s) succeeded", tc.p)
		}
	}
	for _, f := range []string{filepath.Join(outside, "o", "secret.txt"), filepath.Join(root, ".env"), filepath.Join(root, ".ssh", "id_rsa")} {
		if b, err := os.ReadFile(f); err != nil || string(b) != "x" {
			t.Errorf("%s changed: %q %v", f, b, err)
		}
	}
	// Links inside, and into an allowed root, still work.
	for _, p := range []string{"in/c.txt", "inabs/b/c.txt", "toextra/f.txt", "a/up/a/b/c.txt"} {
		if b, err := ws.ReadDisk(filepath.Join(root, p)); err != nil || string(b) != "x" {
			t.Errorf("ReadDisk(%s) = %q, %v", p, b, err)
		}
	}
	if err := ws.MkdirAll(filepath.Join(root, "in", "new", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFileAtomic(filepath.Join(root, "in", "new", "deeper", "n.txt"), []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a", "b", "new", "deeper", "n.txt")); err != nil || string(b) != "n" {
		t.Fatalf("write through an inside link: %q %v", b, err)
	}
	if err := ws.Rename(filepath.Join(root, "in", "new"), filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := ws.RemoveAll(filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "moved")); !os.IsNotExist(err) {
		t.Fatalf("RemoveAll left moved: %v", err)
	}
	// Removing a link to an outside folder removes the link only.
	if err := ws.RemoveAll(filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "o", "secret.txt")); err != nil {
		t.Fatalf("RemoveAll of a link removed what it points to: %v", err)
	}
}
