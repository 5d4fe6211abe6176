package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/workspace"
)

// TestMain keeps the tests' on-disk index copies out of the user's cache.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentls-search-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// persistTree is a tree of files with old mtimes (so that their stat
// vouches for them) and its workspace.
func persistTree(t *testing.T) (string, *workspace.Workspace) {
	t.Helper()
	_, ws := oldTree(t, map[string]string{
		"a.go": "package a\n// alpha xyzzy\n", "b/b.go": "package b\n// beta\n", "c/c.txt": "gamma text\n",
		"d/d.go": "package d\n// delta xyzzy\n", ".hidden.txt": "hidden xyzzy\n",
		"keys/server.pem": "xyzzy secret\n", "ignored/x.go": "package x // xyzzy\n", ".ignore": "ignored/\n",
	})
	return ws.Roots()[0], ws
}

// buildWith builds ws's index with the copies in dir and returns the cache
// (ready) and the files its build read and took from the copy.
func buildWith(t *testing.T, ws *workspace.Workspace, dir string) (c *Cache, read, loaded int) {
	t.Helper()
	c = newCache(t)
	c.SetPersistDir(dir)
	c.Warm(context.Background(), ws)
	cacheReady(t, c)
	// The index answers before its copy is written.
	for deadline := time.Now().Add(time.Minute); c.finished.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the build did not finish")
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ri := range c.roots {
		read += ri.read
		loaded += ri.loaded
	}
	return c, read, loaded
}

// sameSearches checks that searches through c return what fresh ones do.
func sameSearches(t *testing.T, what string, ws *workspace.Workspace, c *Cache) {
	t.Helper()
	for _, expr := range []string{"xyzzy", "alpha", "beta", "epsilon", "package"} {
		p := Pattern{Expr: expr}
		want := run(t, ws, p, Options{})
		sameResult(t, what+": "+expr, run(t, ws, p, Options{Cache: c}), want)
	}
}

// TestPersistRestart builds an index, "restarts" (a new cache) after files
// changed, were removed and added while no server ran: the second build
// takes the unchanged files' trigrams from the copy, reads only the
// changed and new files, and its searches are those of a fresh search.
func TestPersistRestart(t *testing.T) {
	t.Parallel()
	root, ws := persistTree(t)
	dir := filepath.Join(t.TempDir(), "agentls")
	c1, read, loaded := buildWith(t, ws, dir)
	if loaded != 0 || read != 6 {
		t.Fatalf("first build: read %d, loaded %d; want 6 read", read, loaded)
	}
	c1.Close()
	copyPath := persistFile(dir, root)
	for p, want := range map[string]os.FileMode{dir: 0o700, copyPath: 0o600} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}

	old := time.Now().Add(-30 * time.Minute)
	put(t, root, "b/b.go", "package b\n// beta epsilon xyzzy\n", old) // changed
	os.Remove(filepath.Join(root, "d", "d.go"))                       // removed
	put(t, root, "e.go", "package e\n// epsilon\n", old)              // new
	c2, read, loaded := buildWith(t, ws, dir)
	if loaded != 4 || read != 2 {
		t.Errorf("restart: read %d, loaded %d; want 2 read (b/b.go, e.go), 4 loaded", read, loaded)
	}
	if st := c2.Status(); st.Loaded != 4 {
		t.Errorf("Status().Loaded = %d, want 4", st.Loaded)
	}
	sameSearches(t, "restart", ws, c2)
	if c2.indexed.Load() == 0 {
		t.Error("no search answered from the index")
	}
	c2.Close()

	// The second build wrote its copy: a third build reads nothing.
	_, read, loaded = buildWith(t, ws, dir)
	if loaded != 6 || read != 0 {
		t.Errorf("third build: read %d, loaded %d; want 6 loaded", read, loaded)
	}
}

// TestPersistBadCopies spoils the copy (or its directory) in each of the
// badCopies ways: each time the next build ignores it, reads every file
// and searches as a fresh search does.
func TestPersistBadCopies(t *testing.T) {
	t.Parallel()
	for _, tc := range badCopies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, ws := persistTree(t)
			dir, data := builtCopy(t, ws)
			file := persistFile(dir, root)
			if _, err := decodeIndex(data, root, int64(ws.Config().Limits.MaxFileBytes)); err != nil {
				t.Fatalf("the good copy: %v", err)
			}
			tc.spoil(t, dir, file, data)
			put(t, root, "a.go", "package a\n// alpha\n", time.Now().Add(-time.Hour)) // no xyzzy now
			c2, read, loaded := buildWith(t, ws, dir)
			if loaded != 0 || read != 6 {
				t.Errorf("read %d, loaded %d; want the copy ignored and 6 files read", read, loaded)
			}
			sameSearches(t, tc.name, ws, c2)
		})
	}
}

// badCopies are the ways a copy (file, in the directory dir; data is what it
// held) is spoiled: gone, cut, its bytes or version changed, naming a file
// outside the root, with loose permissions, or a symlink. Every reader of
// copies refuses each of them.
var badCopies = []struct {
	name  string
	spoil func(t *testing.T, dir, file string, data []byte)
}{
	{"missing", func(t *testing.T, dir, file string, data []byte) { os.Remove(file) }},
	{"truncated", func(t *testing.T, dir, file string, data []byte) {
		writeCopy(t, file, data[:len(data)*2/3])
	}},
	{"garbage", func(t *testing.T, dir, file string, data []byte) {
		writeCopy(t, file, []byte(strings.Repeat("agentls-trigrams", 100)))
	}},
	{"flipped byte", func(t *testing.T, dir, file string, data []byte) {
		data[len(data)/2] ^= 0x40
		writeCopy(t, file, data)
	}},
	{"other version", func(t *testing.T, dir, file string, data []byte) {
		data[len(persistMagic)]++
		writeCopy(t, file, resum(data))
	}},
	{"parent path", func(t *testing.T, dir, file string, data []byte) {
		writeCopy(t, file, renamePath(t, data, "a.go", "../a.go"))
	}},
	{"absolute path", func(t *testing.T, dir, file string, data []byte) {
		writeCopy(t, file, renamePath(t, data, "a.go", "/a.go"))
	}},
	{"dir mode", func(t *testing.T, dir, file string, data []byte) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}},
	{"file mode", func(t *testing.T, dir, file string, data []byte) {
		if err := os.Chmod(file, 0o644); err != nil {
			t.Fatal(err)
		}
	}},
	{"symlink", func(t *testing.T, dir, file string, data []byte) {
		other := filepath.Join(dir, "other")
		if err := os.Rename(file, other); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(other, file); err != nil {
			t.Fatal(err)
		}
	}},
	{"symlink elsewhere", func(t *testing.T, dir, file string, data []byte) {
		other := filepath.Join(t.TempDir(), "other")
		writeCopy(t, other, data)
		os.Remove(file)
		if err := os.Symlink(other, file); err != nil {
			t.Fatal(err)
		}
	}},
}

// writeCopy replaces a copy's content, keeping it private.
func writeCopy(t *testing.T, file string, data []byte) {
	t.Helper()
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// resum recomputes a copy's checksum.
func resum(data []byte) []byte {
	return encodeChecksum(data[:len(data)-4])
}

// renamePath rewrites a valid copy with the path from renamed to, and a
// valid checksum.
func renamePath(t *testing.T, data []byte, from, to string) []byte {
	t.Helper()
	d := decoder{b: data[len(persistMagic)+4 : len(data)-4]}
	root := string(d.bytes(4096))
	max := int64(d.uvarint(1 << 62))
	ld, err := decodeIndex(data, root, max)
	if err != nil {
		t.Fatal(err)
	}
	var segs []persistSeg
	found := false
	for _, s := range ld.segs {
		ps := persistSeg{s: s}
		for _, e := range s.docs {
			doc := persistDoc{rel: e.rel, st: e.st, flags: e.flags, dead: e.dead}
			if e.rel == from {
				doc.rel, found = to, true
			}
			ps.docs = append(ps.docs, doc)
		}
		segs = append(segs, ps)
	}
	if !found {
		t.Fatalf("the copy has no %s", from)
	}
	out := encodeIndex(root, max, segs)
	if _, err := decodeIndex(encodeIndex(root, max, segs[:0]), root, max); err != nil {
		t.Fatalf("an empty copy is refused: %v", err)
	}
	if _, err := decodeIndex(out, root, max); err == nil || !strings.Contains(err.Error(), "not below the root") {
		t.Fatalf("a copy naming %s: %v", to, err)
	}
	return out
}

// TestDecodeIndexNeverPanics decodes every truncation of a copy and copies
// with bytes changed (their checksum made right): each is refused or
// decodes to segments whose every posting list and Bloom filter is in
// range. The copies are of a built tree, and of a segment of text and
// binary files (Bloom filters, bitmaps).
func TestDecodeIndexNeverPanics(t *testing.T) {
	t.Parallel()
	root, ws := persistTree(t)
	_, data := builtCopy(t, ws)
	max := int64(ws.Config().Limits.MaxFileBytes)
	var b segBuilder
	var ts triSet
	for i := range 40 {
		text := strings.Repeat("common text ", 3) + fmt.Sprint(i)
		if i%4 == 0 {
			text += "\x00"
		}
		b.add(&entry{rel: fmt.Sprint("f", i)}, ts.of([]byte(text)), i%4 == 0)
	}
	s := b.build()
	bitmaps := 0
	s.each(func(tri uint32, post posting) {
		if post.bitmap {
			bitmaps++
		}
	})
	if len(s.bins) == 0 || bitmaps == 0 {
		t.Fatalf("%d bloom filters, %d bitmaps: want some of each", len(s.bins), bitmaps)
	}
	ps := persistSeg{s: s}
	for _, e := range s.docs {
		ps.docs = append(ps.docs, persistDoc{rel: e.rel})
	}
	mixed := encodeIndex("/r", 1<<20, []persistSeg{ps})
	if _, err := decodeIndex(mixed, "/r", 1<<20); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		data []byte
		root string
		max  int64
	}{{data, root, max}, {mixed, "/r", 1 << 20}} {
		spoiled(t, tt.data, func(b []byte) error {
			_, err := decodeIndex(b, tt.root, tt.max)
			return err
		}, func(bad []byte) {
			ld, err := decodeIndex(bad, tt.root, tt.max)
			if err != nil {
				return
			}
			for _, s := range ld.segs {
				s.each(func(tri uint32, post posting) {
					b := newBitset(len(s.docs))
					b.setPosting(post) // panics when out of range
				})
				for _, bd := range s.bins {
					s.mayHold(bd, []uint32{1, 1 << 23}) // panics when out of range
					_ = s.docs[bd.local]
				}
			}
		})
	}
}

// spoiled fails the test when decode accepts a truncation of the copy
// data, then calls bad with every copy of data with one byte of its body
// changed (xor 0x01, 0x80, 0xFF) and its checksum made right again, so
// that the decoder's own checks, not the checksum, meet the change.
func spoiled(t *testing.T, data []byte, decode func([]byte) error, bad func([]byte)) {
	t.Helper()
	for n := range len(data) {
		if decode(data[:n]) == nil {
			t.Fatalf("a copy cut at %d bytes was accepted", n)
		}
	}
	for i := len(persistMagic) + 4; i < len(data)-4; i++ {
		for _, x := range []byte{0x01, 0x80, 0xFF} {
			b := append([]byte(nil), data...)
			b[i] ^= x
			bad(resum(b))
		}
	}
}

// TestPersistOff: with search.persist false the build neither writes nor
// reads a copy.
func TestPersistOff(t *testing.T) {
	t.Parallel()
	root, ws := persistTree(t)
	dir := filepath.Join(t.TempDir(), "agentls")
	c1, _, _ := buildWith(t, ws, dir) // a copy to ignore
	c1.Close()
	if err := os.Remove(persistFile(dir, root)); err != nil {
		t.Fatal(err)
	}
	off := false
	cfg := *ws.Config()
	cfg.Search.Persist = &off
	ws.SetConfig(&cfg)
	c2, read, loaded := buildWith(t, ws, dir)
	c2.Close()
	if loaded != 0 || read != 6 {
		t.Errorf("read %d, loaded %d; want 6 read", read, loaded)
	}
	if _, err := os.Stat(persistFile(dir, root)); !os.IsNotExist(err) {
		t.Errorf("search.persist false, yet a copy was written: %v", err)
	}
}
