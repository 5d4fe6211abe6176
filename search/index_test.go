package search

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// TestSegment builds segments of random files and checks that their
// candidates are exactly the text files that hold every trigram of a
// literal (a brute-force scan says which), and at least the binary files
// (NUL bytes: Bloom filters) that do.
func TestSegment(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{1, 7, 64, 65, 500} {
		for _, alphabet := range []string{"abcdeABCDE \n\xff", "abcdeABCDE \n\x00\xff"} {
			var ts triSet
			var b segBuilder
			texts := make([]string, n)
			bins := 0
			for i := range texts {
				var sb strings.Builder
				for range rng.Intn(300) {
					sb.WriteByte(alphabet[rng.Intn(len(alphabet))])
				}
				texts[i] = sb.String()
				bin := strings.IndexByte(texts[i], 0) >= 0
				if bin {
					bins++
				}
				b.add(&entry{rel: fmt.Sprint(i)}, ts.of([]byte(texts[i])), bin)
			}
			s := b.build()
			if len(s.bins) != bins {
				t.Fatalf("%d binary files, %d filters", bins, len(s.bins))
			}
			for range 200 {
				var lit strings.Builder
				for range 3 + rng.Intn(4) {
					lit.WriteByte(alphabet[rng.Intn(len(alphabet))])
				}
				l := asciiLower(lit.String())
				var lits [][]uint32
				var tris []uint32
				for i := 2; i < len(l); i++ {
					tris = append(tris, uint32(lowerASCII[l[i-2]])<<16|uint32(lowerASCII[l[i-1]])<<8|uint32(lowerASCII[l[i]]))
				}
				lits = append(lits, tris)
				got := map[string]bool{}
				s.candidates(lits, func(e *entry) { got[e.rel] = true })
				for i, text := range texts {
					low := asciiLower(text)
					want := true
					for j := 2; j < len(l); j++ {
						if !strings.Contains(low, l[j-2:j+1]) {
							want = false
							break
						}
					}
					bin := strings.IndexByte(text, 0) >= 0
					if want && !got[fmt.Sprint(i)] || !want && got[fmt.Sprint(i)] && !bin {
						t.Fatalf("%d files, literal %q: file %d (binary %v) a candidate: %v, want %v", n, l, i, bin, got[fmt.Sprint(i)], want)
					}
				}
			}
		}
	}
}

// TestIndexFollowsDisk changes a tree behind the editor's back (no
// notification: the watcher alone sees it) between searches, and checks
// that each search answers from the index (without a walk) exactly what a
// fresh search does: files created, rewritten (same size and mtime),
// deleted, renamed, directories created, renamed and removed, a file
// swapped for a symlink, symlinked directories, a changed ignore file,
// sensitive and hidden files.
func TestIndexFollowsDisk(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	old := time.Now().Add(-time.Hour)
	put(t, outside, "secret.go", "package s // needle outside\n", old)
	for i := range 12 {
		put(t, root, fmt.Sprintf("d%d/f%d.go", i%3, i), fmt.Sprintf("package d\n\nfunc F%d() {}\n", i), old)
	}
	put(t, root, "a/a.go", "package a // needle\n", old)
	put(t, root, ".ignore", "*.log\nbuild/\n", old)
	put(t, root, "d1/x.log", "needle in an ignored file\n", old)
	put(t, root, "build/out.go", "package build // needle\n", old)
	put(t, root, ".h/h.go", "package h // needle\n", old)
	ws, cache := watchedIndex(t, root)
	queries := []string{
		`{"pattern":"needle"}`,
		`{"pattern":"NEEDLE","case_insensitive":true,"output_mode":"count"}`,
		`{"pattern":"needle","type":"go"}`,
		`{"pattern":"func F\\d+","output_mode":"files_with_matches"}`,
		`{"pattern":"needle","path":"d1"}`,
		`{"pattern":"[a-z]+"}`,
		`{"pattern":"needle","glob":"*.log"}`,
		`{"pattern":"needle","glob":"*.go,!d2/**"}`,
		`{"pattern":"needle","glob":"build"}`, // keeps an ignored directory: walks
		`{"pattern":"needle","glob":".h"}`,    // keeps a hidden directory: walks
	}
	check := func(step string, fromIndex bool) {
		t.Helper()
		for _, q := range queries {
			p, o := queryOf(t, q)
			want := run(t, ws, p, o)
			o.Cache = cache
			n := cache.indexed.Load()
			sameResult(t, step+": "+q, run(t, ws, p, o), want)
			// A glob that keeps a pruned directory walks; so does a search
			// of a subdirectory below the root's .ignore outside a git
			// repository (its walk reads no ignore file above it).
			walks := strings.Contains(q, `"build"`) || strings.Contains(q, `".h"`) || strings.Contains(q, `"path"`)
			if answered := cache.indexed.Load() > n; fromIndex && answered == walks {
				t.Errorf("%s: %s: the index answered: %v", step, q, answered)
			}
		}
	}
	mustDo := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check("start", true)
	put(t, root, "a/a.go", "package a // NEEDLE\n", old)
	check("rewritten, same size and mtime", true)
	for i := range 10 { // racy: rewritten within the same clock tick
		now := time.Now()
		put(t, root, "d0/f0.go", fmt.Sprintf("package d // needle %d\n", i), now)
		check("racy write", true)
		put(t, root, "d0/f0.go", fmt.Sprintf("package d // hay    %d\n", i), now)
		check("racy rewrite", true)
	}
	put(t, root, "d1/new.go", "package d // needle new\n", time.Time{})
	check("created", true)
	put(t, root, "n/m/deep.go", "package m // needle deep\n", old)
	check("directory created", true)
	mustDo(os.Rename(filepath.Join(root, "n"), filepath.Join(root, "n2")))
	check("directory renamed", true)
	mustDo(os.Rename(filepath.Join(root, "d1/new.go"), filepath.Join(root, "d2/moved.go")))
	check("file renamed", true)
	mustDo(os.Remove(filepath.Join(root, "d2/f2.go")))
	check("deleted", true)
	mustDo(os.RemoveAll(filepath.Join(root, "n2")))
	check("directory removed", true)
	mustDo(os.Remove(filepath.Join(root, "a/a.go")))
	mustDo(os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(root, "a/a.go")))
	check("file swapped for a symlink", true)
	mustDo(os.Symlink(outside, filepath.Join(root, "out")))
	mustDo(os.Symlink(filepath.Join(root, "d0"), filepath.Join(root, "d0link")))
	check("symlinked directories", true)
	put(t, root, "keys/server.pem", "needle secret\n", old)
	put(t, root, "d0/.hidden.go", "package d // needle hidden\n", old)
	check("sensitive and hidden files", true)
	put(t, root, "d2/y.log", "needle, ignored too\n", old)
	check("ignored file created", true)
	put(t, root, ".gitignore", "d0/\n", time.Time{})
	check("ignore file written", false)
	cacheReady(t, cache)
	check("ignore file written, built again", true)
	mustDo(os.Remove(filepath.Join(root, ".gitignore")))
	check("ignore file removed", false)
	cacheReady(t, cache)
	check("ignore file removed, built again", true)

	got := indexedRels(cache, root)
	for rel := range got {
		if strings.HasPrefix(rel, "keys/") || strings.HasPrefix(rel, "out/") || strings.HasPrefix(rel, "d0link/") || rel == "a/a.go" {
			t.Errorf("the index holds %s", rel)
		}
	}
	for _, rel := range []string{"d0/.hidden.go", "d2/moved.go", "d1/x.log", "d2/y.log"} {
		if !got[rel] {
			t.Errorf("the index lacks %s: %v", rel, got)
		}
	}
	for _, rel := range []string{"build/out.go", ".h/h.go"} {
		if got[rel] {
			t.Errorf("the index holds %s, below a directory the walk does not enter", rel)
		}
	}
}

// TestIndexWhileBuilding searches while the index of GOROOT/src builds:
// every answer is what a fresh search gives.
func TestIndexWhileBuilding(t *testing.T) {
	t.Parallel()
	ws, cache := goSrcCache(t)
	var progress []int
	cache.SetProgress(func(root string, files int, done bool) { progress = append(progress, files) })
	p, o := queryOf(t, `{"pattern":"NewReader","output_mode":"count"}`)
	want := run(t, ws, p, o)
	o.Cache = cache
	cache.Warm(context.Background(), ws)
	for i := 0; i < 3 && !cache.Status().Ready; i++ {
		sameResult(t, "while building", run(t, ws, p, o), want)
	}
	cacheReady(t, cache)
	sameResult(t, "built", run(t, ws, p, o), want)
	if len(progress) < 2 || progress[len(progress)-1] != cache.Len() {
		t.Errorf("progress %v, index of %d files", progress, cache.Len())
	}
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerASCII[c]
	}
	return string(b)
}

// TestIndexIgnoreInputs: the files outside a root that decide what its walk
// ignores (a .gitignore above it, .git/info/exclude, the global excludes
// file), which the watcher does not watch, are followed too: after each
// changes, an indexed search answers what a fresh one does.
func TestIndexIgnoreInputs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	repo := t.TempDir()
	root := filepath.Join(repo, "sub")
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"a.go", "b.go", "c.go", "d.go"} {
		put(t, root, name, "package p // needle\n", old)
	}
	if err := os.MkdirAll(filepath.Join(repo, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, cache := watchedIndex(t, root)
	for _, step := range []struct {
		name, dir, file, content, gone string
	}{
		{"start", "", "", "", ""},
		{".git/info/exclude", repo, ".git/info/exclude", "b.go\n", "b.go"},
		{"global excludes", home, ".config/git/ignore", "c.go\n", "c.go"},
		{".gitignore above the root", repo, ".gitignore", "d.go\n", "d.go"},
	} {
		if step.file != "" {
			put(t, step.dir, step.file, step.content, time.Now())
		}
		p, o := queryOf(t, `{"pattern":"needle","output_mode":"files_with_matches"}`)
		want := run(t, ws, p, o)
		o.Cache = cache
		got := run(t, ws, p, o)
		sameResult(t, step.name, got, want)
		if step.gone != "" && strings.Contains(fmt.Sprint(want), step.gone) {
			t.Errorf("%s: a fresh search still finds %s: %v", step.name, step.gone, want)
		}
		cacheReady(t, cache) // built again: the next step starts from the index
	}
}

// watchedIndex returns a workspace of root and a cache whose index of it is
// built and followed by a watcher; the cache closes with the test. Linux
// always has inotify, so a missing watcher there fails the test, unless the
// user's inotify instances or watches ran out (a limit the person's editors
// and other tests share, which the cache reports as degraded); elsewhere
// the test is skipped, since the watcher may not be built for that system.
func watchedIndex(t *testing.T, root string) (*workspace.Workspace, *Cache) {
	t.Helper()
	ws := workspacetest.New(t, root)
	cache := newCache(t)
	cache.Warm(context.Background(), ws)
	cacheReady(t, cache)
	if st := cache.Status(); !st.Watching {
		cache.mu.Lock()
		err := cache.watchErr
		cache.mu.Unlock()
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, workspace.ErrWatchLimit) {
			t.Skipf("the user's inotify limits ran out: %v", err)
		}
		if runtime.GOOS == "linux" {
			t.Fatalf("no watcher follows the index on Linux: %s", st.Degraded)
		}
		t.Skipf("no watcher on %s: %s", runtime.GOOS, st.Degraded)
	}
	return ws, cache
}

// TestCompactKeepsFilters merges small segments of text and binary files,
// some of them dead, and checks that the merged segment, and its copy
// read back (persist.go), holds the live files only, each a candidate of
// the literals it holds: the text files' posting lists and the binary
// files' Bloom filters carried over.
func TestCompactKeepsFilters(t *testing.T) {
	ri := &rootIndex{files: map[string]*entry{}}
	texts := map[string]string{}
	var ts triSet
	for i := range 12 {
		var b segBuilder
		for j := range 5 {
			rel := fmt.Sprintf("f%d-%d", i, j)
			text := fmt.Sprintf("file %s says hello%d", rel, j)
			if j%2 == 1 {
				text += "\x00binary\x00"
			}
			e := &entry{rel: rel}
			b.add(e, ts.of([]byte(text)), strings.IndexByte(text, 0) >= 0)
			if (i+j)%3 == 0 {
				e.dead = true
				continue
			}
			ri.files[rel] = e
			texts[rel] = text
		}
		s := b.build()
		ri.segs = append(ri.segs, s)
		ri.bytes += s.size()
	}
	ri.compactLocked()
	if len(ri.segs) != 1 || len(ri.segs[0].docs) != len(texts) {
		t.Fatalf("%d segments, %d files; want 1 of %d", len(ri.segs), len(ri.segs[0].docs), len(texts))
	}
	data := encodeIndex("/r", 1<<20, ri.snapshotLocked())
	ld, err := decodeIndex(data, "/r", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*segment{ri.segs[0], ld.segs[0]} {
		for rel, text := range texts {
			for _, lit := range []string{rel, "binary", "hello" + rel[len(rel)-1:]} {
				want := strings.Contains(text, lit)
				got := false
				s.candidates([][]uint32{ts.of([]byte(lit))}, func(e *entry) { got = got || e.rel == rel })
				if want && !got || !want && got && strings.IndexByte(text, 0) < 0 {
					t.Errorf("%s (%q), literal %q: a candidate %v, want %v", rel, text, lit, got, want)
				}
			}
		}
	}
}

// TestTriSet checks triSet.of against a map: the distinct folded trigrams
// of random texts (ASCII, high bytes, NULs, upper case, runs of one byte
// or of one folded byte, every byte value), of lengths around the chunks'
// bounds, in the order they first occur, call after call on the same set.
func TestTriSet(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	every := make([]byte, 256) // each byte value, folded or not
	for c := range every {
		every[c] = byte(c)
	}
	var ts triSet
	for _, alphabet := range []string{"abcABC \n", "aZ\x00\x7f\x80\xc3\xa9\xff", "\x80\x81\xfe\xffA", "\x00", "aA", "\t\t\t\t\t\t\t \x00\x00\x00\x00\x00ab", string(every)} {
		for _, size := range []int{0, 1, 2, 3, 4, 9, 100, 5000, triChunk - 1, triChunk, triChunk + 1, triChunk + 2, triChunk + 3, triChunk + 7, 2*triChunk + 2, 3*triChunk + 5} {
			data := make([]byte, size)
			for i := range data {
				data[i] = alphabet[rng.Intn(len(alphabet))]
			}
			var want []uint32
			seen := map[uint32]bool{}
			for i := 2; i < len(data); i++ {
				tri := uint32(lowerASCII[data[i-2]])<<16 | uint32(lowerASCII[data[i-1]])<<8 | uint32(lowerASCII[data[i]])
				if !seen[tri] {
					seen[tri] = true
					want = append(want, tri)
				}
			}
			got := ts.of(data)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("alphabet %q, %d bytes: %d trigrams, want %d", alphabet, size, len(got), len(want))
			}
		}
	}
}
