//go:build unix

package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
)

// sensitiveCode returns the PathError code of err, or "" (err nil) or
// "other".
func sensitiveCode(err error) string {
	if err == nil {
		return ""
	}
	var pe *PathError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return "other: " + err.Error()
}

// readAll tries every confined way to read p (absolute) and returns the
// code of each ("" when it read).
func readAll(w *Workspace, p string) map[string]string {
	got := map[string]string{}
	_, err := w.Resolve(p)
	got["Resolve"] = sensitiveCode(err)
	_, err = w.ReadDisk(p)
	got["ReadDisk"] = sensitiveCode(err)
	_, err = w.ReadLimited(p, nil, 0)
	got["ReadLimited"] = sensitiveCode(err)
	if f, err := w.Open(p); err == nil {
		f.Close()
		got["Open"] = ""
	} else {
		got["Open"] = sensitiveCode(err)
	}
	got["IsSensitive"] = ""
	if w.IsSensitive(w.Rel(p)) {
		got["IsSensitive"] = "SENSITIVE_PATH"
	}
	// The walk of the file's folder reads it.
	got["Walk"] = "not seen"
	var buf []byte
	w.Walk(context.Background(), filepath.Dir(p), WalkOptions{ReadContent: true, IncludeHidden: true, IncludeIgnored: true, MaxDepth: 1}, func(f *File) error {
		if f.Path == p {
			_, err := f.Read(buf)
			got["Walk"] = sensitiveCode(err)
		}
		return nil
	})
	return got
}

func wantAll(t *testing.T, what string, got map[string]string, want string) {
	t.Helper()
	for k, v := range got {
		if v != want {
			t.Errorf("%s: %s gave %q, want %q", what, k, v, want)
		}
	}
}

// TestSensitiveHardLink: a hard link to .env (or to a key in .ssh) is
// refused by every confined read, like .env itself; a plain file is not.
// A link made after the identities were collected, without any news of it,
// is refused too, and so is a link to a .env that replaced the old one.
func TestSensitiveHardLink(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{".env": "TOKEN=secret\n", "deep/.ssh/id_x": "KEY", "plain.txt": "hello", "sub/keep.txt": "k"})
	for link, target := range map[string]string{"notes.txt": ".env", "sub/copy.go": ".env", "key.txt": "deep/.ssh/id_x"} {
		if err := os.Link(filepath.Join(root, target), filepath.Join(root, link)); err != nil {
			t.Fatal(err) // a test's folder takes hard links
		}
	}
	w, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	wantAll(t, "plain.txt", readAll(w, filepath.Join(root, "plain.txt")), "")
	for _, p := range []string{".env", "notes.txt", "sub/copy.go", "key.txt"} {
		wantAll(t, p, readAll(w, filepath.Join(root, p)), "SENSITIVE_PATH")
	}

	// By the collected identities alone: the walk is dated an hour ahead,
	// so no link looks newer than it.
	w.sensitiveSet().start = time.Now().Add(time.Hour)
	late := filepath.Join(root, "sub", "late.txt")
	if err := os.Link(filepath.Join(root, ".env"), late); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"notes.txt", "key.txt", "sub/late.txt"} {
		wantAll(t, p+" by identity", readAll(w, filepath.Join(root, p)), "SENSITIVE_PATH")
	}
	wantAll(t, "plain.txt", readAll(w, filepath.Join(root, "plain.txt")), "")

	// A sensitive file made after the walk, nobody announcing it, and a
	// link to it: the link's ctime is newer than the walk (dated an hour
	// back now), so the identities are collected again.
	w.sensitiveSet().start = time.Now().Add(-time.Hour)
	testenv.WriteFiles(t, root, map[string]string{"sub/.env.prod": "TOKEN=prod\n"})
	prod := filepath.Join(root, "prod.txt")
	if err := os.Link(filepath.Join(root, "sub/.env.prod"), prod); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "link to a new .env.prod", readAll(w, prod), "SENSITIVE_PATH")

	// .env replaced (a new inode), announced like the editor's watcher does:
	// the announcement alone (the walk is dated ahead again) makes the
	// identities be collected again.
	w.sensitiveSet().start = time.Now().Add(time.Hour)
	os.Remove(filepath.Join(root, ".env"))
	testenv.WriteFiles(t, root, map[string]string{".env": "TOKEN=new\n"})
	w.Changed(filepath.Join(root, ".env"))
	fresh := filepath.Join(root, "fresh.txt")
	if err := os.Link(filepath.Join(root, ".env"), fresh); err != nil {
		t.Fatal(err)
	}
	wantAll(t, "link to the new .env", readAll(w, fresh), "SENSITIVE_PATH")
	// The old links now name a file no rule covers any more.
	wantAll(t, "link to the old .env", readAll(w, filepath.Join(root, "notes.txt")), "")
	wantAll(t, "plain.txt", readAll(w, filepath.Join(root, "plain.txt")), "")
}

// TestSensitiveOtherNames: a symlink to .env, a symlink to a folder of
// keys and the names /proc gives a file reach nothing, paths.allow /proc
// or not.
func TestSensitiveOtherNames(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{".env": "TOKEN=secret\n", "deep/.ssh/id_x": "KEY", "plain.txt": "hello"})
	os.Symlink(".env", filepath.Join(root, "link"))
	os.Symlink("deep/.ssh", filepath.Join(root, "keys"))
	os.Symlink(filepath.Join(root, ".env"), filepath.Join(root, "abs-link"))
	w, _ := New(root)
	for _, p := range []string{"link", "keys/id_x", "abs-link"} {
		got := readAll(w, filepath.Join(root, p))
		delete(got, "Walk") // a walk does not follow links unless asked
		delete(got, "IsSensitive")
		wantAll(t, p, got, "SENSITIVE_PATH")
	}
	f, err := os.Open(filepath.Join(root, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := []string{
		"/proc/self/root" + root + "/.env",
		fmt.Sprintf("/proc/self/fd/%d", f.Fd()),
		fmt.Sprintf("/dev/fd/%d", f.Fd()),
		fmt.Sprintf("/proc/%d/root%s/.env", os.Getpid(), root),
	}
	for _, allow := range []bool{false, true} {
		if allow {
			cfg := *w.Config()
			cfg.Paths.Allow = []string{"/proc", "/dev"}
			w.SetConfig(&cfg)
		}
		for _, n := range names {
			if _, err := os.Stat(n); err != nil {
				continue // no /proc here
			}
			_, rerr := w.Resolve(n)
			data, derr := w.ReadDisk(n)
			if rerr == nil || derr == nil || strings.Contains(string(data), "secret") {
				t.Errorf("paths.allow /proc %v: %s: resolve %v, read %q %v", allow, n, rerr, data, derr)
			}
		}
	}
}

// TestSensitiveCaseFold: on a root whose file system ignores case, the
// globs match in any case; on one that does not, .ENV is another file.
// The file system here may not ignore case: the root is flagged, and a
// real case-insensitive folder is tried when AGENTLS_CASEFOLD_DIR names
// one (an ext4 casefold folder, a macOS volume).
func TestSensitiveCaseFold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rel  string
		fold bool
		want string
	}{
		{".ENV", true, "SENSITIVE_PATH"},
		{"sub/.Env.Local", true, "SENSITIVE_PATH"},
		{"sub/.SSH/config", true, "SENSITIVE_PATH"},
		{"KEY.PEM", true, "SENSITIVE_PATH"},
		{"readme.md", true, ""},
		{".ENV", false, ""},
		{"KEY.PEM", false, ""},
		{".env", false, "SENSITIVE_PATH"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s fold %v", tt.rel, tt.fold), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			w, _ := New(root)
			w.setCaseFold(root, tt.fold)
			_, err := w.Resolve(tt.rel)
			if got := sensitiveCode(err); got != tt.want {
				t.Errorf("Resolve(%s) = %q, want %q", tt.rel, got, tt.want)
			}
			if got := w.IsSensitive(tt.rel); got != (tt.want != "") {
				t.Errorf("IsSensitive(%s) = %v", tt.rel, got)
			}
		})
	}

	t.Run("detection", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		testenv.WriteFiles(t, dir, map[string]string{"probe": "x"})
		_, err := os.Stat(filepath.Join(dir, "PROBE"))
		if got, want := detectCaseFold(dir), err == nil; got != want {
			t.Errorf("detectCaseFold(%s) = %v, but PROBE is found: %v", dir, got, want)
		}
	})

	t.Run("real", func(t *testing.T) {
		base := os.Getenv("AGENTLS_CASEFOLD_DIR")
		if base == "" {
			t.Skip("AGENTLS_CASEFOLD_DIR names no case-insensitive folder: the real file system case cannot run here")
		}
		root, err := os.MkdirTemp(base, "agentls-test-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(root)
		testenv.WriteFiles(t, root, map[string]string{".env": "TOKEN=secret\n"})
		w, _ := New(root)
		if !w.caseFold(root) {
			t.Fatalf("%s does not ignore case", root)
		}
		for _, p := range []string{".ENV", ".Env"} {
			wantAll(t, p, readAll(w, filepath.Join(root, p)), "SENSITIVE_PATH")
		}
	})
}

// TestSensitiveIdentityNeedsRules: without sensitive globs nothing is
// walked or refused.
func TestSensitiveIdentityNeedsRules(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{".env": "x"})
	os.Link(filepath.Join(root, ".env"), filepath.Join(root, "notes.txt"))
	w, _ := New(root)
	cfg := *w.Config()
	cfg.Paths.Sensitive = nil
	w.SetConfig(&cfg)
	wantAll(t, "notes.txt", readAll(w, filepath.Join(root, "notes.txt")), "")
	wantAll(t, ".env", readAll(w, filepath.Join(root, ".env")), "")
}

// walkCodes walks root as a search does (hidden and ignored files too) and
// returns, for each regular file, the code of its Stamp and of its Read
// ("" when allowed), as "stamp read".
func walkCodes(t *testing.T, w *Workspace, root string) map[string]string {
	t.Helper()
	var mu sync.Mutex
	got := map[string]string{}
	_, err := w.Walk(context.Background(), root, WalkOptions{IncludeHidden: true, IncludeIgnored: true, ReadContent: true}, func(f *File) error {
		if !f.IsRegular() {
			return nil
		}
		_, _, serr := f.Stamp()
		_, rerr := f.Read(nil)
		mu.Lock()
		got[f.Rel] = sensitiveCode(serr) + " " + sensitiveCode(rerr)
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestSensitiveWalkWithoutSet: a walk from the root of a tree with no mount
// point in it refuses a file with one link by its own name, with the case
// rule of the root, without collecting the identities, and its answers are
// the identities' answers; a file with another link (a hard link made
// after the walk began included) is checked against the identities, which
// are collected for it.
func TestSensitiveWalkWithoutSet(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".env": "TOKEN=x", "sub/.ENV": "TOKEN=x", "sub/.Env.Local": "TOKEN=x", "deep/.ssh/id_x": "KEY", "deep/.SSH/config": "KEY",
		"KEY.PEM": "KEY", "a/b/server.pem": "KEY", "Credentials.JSON": "{}", "plain.txt": "p", "sub/keep.go": "package sub",
	}
	for _, fold := range []bool{false, true} {
		t.Run(fmt.Sprintf("fold %v", fold), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			testenv.WriteFiles(t, root, files)
			w, err := New(root)
			if err != nil {
				t.Fatal(err)
			}
			w.setCaseFold(root, fold)
			if _, _, ok := w.soleTree(nil); !ok {
				t.Skipf("%s has a mount point below it, or no mount table", root)
			}
			got := walkCodes(t, w, root)
			if w.sens.set.Load() != nil {
				t.Errorf("the walk collected the identities")
			}
			refused := 0
			for rel := range files {
				st, _ := lstatID(filepath.Join(root, rel))
				want := ""
				if w.sensitiveByStat(st) { // collects the identities
					want = "SENSITIVE_PATH"
					refused++
				}
				if got[rel] != want+" "+want {
					t.Errorf("%s: the walk gave %q, the identities %q", rel, got[rel], want)
				}
			}
			if refused < 3 {
				t.Errorf("only %d files refused: the test checks little", refused)
			}

			// A hard link to .env, even one made after the identities
			// were collected: the link is checked against them.
			if err := os.Link(filepath.Join(root, ".env"), filepath.Join(root, "notes.txt")); err != nil {
				t.Fatal(err) // a test's folder takes hard links
			}
			w.dropSensitive(false)
			got = walkCodes(t, w, root)
			if got["notes.txt"] != "SENSITIVE_PATH SENSITIVE_PATH" || got["plain.txt"] != " " {
				t.Errorf("with a hard link to .env: notes.txt %q, plain.txt %q", got["notes.txt"], got["plain.txt"])
			}
			if w.sens.set.Load() == nil {
				t.Errorf("the hard link was answered without the identities")
			}
		})
	}
}

// TestSensitiveRootWithoutSet: resolving and opening the root of a tree
// with no mount point in it collect no identities; a folder below it does.
func TestSensitiveRootWithoutSet(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{".env": "x", "sub/a.txt": "a"})
	w, _ := New(root)
	if _, _, ok := w.soleTree(nil); !ok {
		t.Skipf("%s has a mount point below it, or no mount table", root)
	}
	if _, err := w.Resolve("."); err != nil {
		t.Fatal(err)
	}
	f, err := w.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if w.sens.set.Load() != nil {
		t.Errorf("the root's checks collected the identities")
	}
	if _, err := w.Resolve("sub"); err != nil {
		t.Fatal(err)
	}
	if w.sens.set.Load() == nil {
		t.Errorf("a folder below the root was answered without the identities")
	}
}
