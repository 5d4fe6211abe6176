package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/workspace"
)

// diskQueries are the benchmark's queries (Queries, and the two the
// ripgrep comparison adds: no match, output-heavy) and the other modes.
var diskQueries = append(append([]Query{}, Queries...),
	Query{Name: "no-match", Args: `{"pattern":"qzxv_nomatch_jqk"}`},
	Query{Name: "output-heavy", Args: `{"pattern":"return nil","max_results":100000}`},
	Query{Name: "count", Args: `{"pattern":"xyzzy","output_mode":"count"}`},
	Query{Name: "files", Args: `{"pattern":"xyzzy","output_mode":"files_with_matches"}`},
	Query{Name: "context", Args: `{"pattern":"NewReader","context":1}`},
	Query{Name: "subdir", Args: `{"pattern":"xyzzy","path":"b"}`},
	Query{Name: "include-ignored", Args: `{"pattern":"xyzzy","include_ignored":true}`},
	Query{Name: "truncated", Args: `{"pattern":"return nil","max_results":2}`},
)

// diskTree adds to persistTree files that the benchmark's queries find
// (Go-like text), with old mtimes.
func diskTree(t *testing.T) (string, *workspace.Workspace) {
	t.Helper()
	root, ws := persistTree(t)
	old := time.Now().Add(-time.Hour)
	body := "package p\n\nimport (\n\t\"io\"\n)\n\n// NewReader xyzzy deadline exceeded UTF-8 sequence MAX_1234 ErrShortWrite\n" +
		"func (r *Reader) ReadByte() (byte, error) {\n\tif x, ok := v.(type); ok {\n\t\treturn nil, err\n\t}\n\tvar mu sync.Mutex\n\treturn nil\n}\n" +
		"func f() { c.SetDeadline(t); t.Fatalf(\"x\") } // 123456\n"
	for i, rel := range []string{"p/p.go", "p/p_test.go", "q/r/s.go", "q/t.txt", "u.go", "b/more.go", "keep.go"} {
		put(t, root, rel, strings.Repeat(body, i+1), old)
	}
	put(t, root, "bin.dat", "xyzzy return nil\x00binary", old)
	return root, ws
}

// builtCopy builds ws's index as a server does, with its copy in a new
// directory, and returns the directory and the copy's bytes.
func builtCopy(t *testing.T, ws *workspace.Workspace) (dir string, data []byte) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "agentls")
	c, _, _ := buildWith(t, ws, dir)
	c.Close()
	data, err := os.ReadFile(persistFile(dir, ws.Roots()[0]))
	if err != nil {
		t.Fatal(err)
	}
	return dir, data
}

// TestDiskIndexSameResults builds a copy of an index as a server does,
// then changes the tree (a file rewritten, one removed, one added, one
// ignored added, a hard link to a sensitive file made before the copy and
// one after, a file made sensitive under another name by the
// configuration): every query of the benchmark through the copy (a one-shot
// grep's Options.DiskIndex) returns exactly what a search without it
// does, and the copy let the searches skip files.
func TestDiskIndexSameResults(t *testing.T) {
	t.Parallel()
	root, ws := diskTree(t)
	// A hard link to a sensitive file before the copy: the build refuses
	// to read it (an identity check), so the copy has no trigrams of it.
	link(t, root, "keys/server.pem", "notes/before.txt")
	// And one to a file that a sensitive glob will cover later.
	link(t, root, "q/t.txt", "notes/twin.txt")
	dir, _ := builtCopy(t, ws)

	check := func(what string) {
		t.Helper()
		skipped := int64(0)
		for _, q := range diskQueries {
			p, o := queryOf(t, q.Args)
			want := run(t, ws, p, o)
			o.DiskIndex, o.diskDir = true, dir
			before := diskSkips.Load()
			got := run(t, ws, p, o)
			skipped += diskSkips.Load() - before
			sameResult(t, what+": "+q.Name, got, want)
		}
		if skipped == 0 {
			t.Errorf("%s: the copy skipped no file", what)
		}
	}
	check("unchanged")

	old := time.Now().Add(-30 * time.Minute)
	put(t, root, "a.go", "package a\n// alpha NewReader return nil\n", old) // rewritten
	os.Remove(filepath.Join(root, "d", "d.go"))                             // removed (had xyzzy)
	put(t, root, "e.go", "package e\n// epsilon xyzzy NewReader\n", old)    // added
	put(t, root, "ignored/new.go", "package x // xyzzy return nil\n", old)  // added, ignored
	put(t, root, "keys/id.pem", "xyzzy NewReader return nil\n", old)        // added, sensitive
	link(t, root, "keys/id.pem", "notes/after.txt")                         // its hard link
	put(t, root, ".agentls-later.txt", "xyzzy hidden later\n", old)         // added, hidden
	check("changed")

	// q/t.txt becomes sensitive: its twin's stamp is the copy's, yet its
	// read is refused (a sensitive file under another name), so it is not
	// skipped either (files_searched would tell).
	cfg := *ws.Config()
	cfg.Paths.Sensitive = append(append([]string{}, cfg.Paths.Sensitive...), "q/t.txt")
	ws.SetConfig(&cfg)
	check("more sensitive")
}

// link makes a hard link newRel to oldRel below root.
func link(t *testing.T, root, oldRel, newRel string) {
	t.Helper()
	n := filepath.Join(root, filepath.FromSlash(newRel))
	if err := os.MkdirAll(filepath.Dir(n), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, filepath.FromSlash(oldRel)), n); err != nil {
		t.Fatal(err) // a test's folder takes hard links
	}
}

// TestDiskIndexBadCopies spoils the copy in each of the badCopies ways, and
// makes it of another root or size cap: a search through it skips nothing
// and returns what a search without it does.
func TestDiskIndexBadCopies(t *testing.T) {
	t.Parallel()
	for _, tc := range badCopies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root, ws := diskTree(t)
			dir, data := builtCopy(t, ws)
			file := persistFile(dir, root)
			tc.spoil(t, dir, file, data)
			// What the copy holds is wrong now: trusted, it would skip
			// a.go.
			put(t, root, "a.go", "package a\n// alpha xyzzy qzxv_nomatch_jqk\n", time.Now().Add(-time.Hour))
			for _, q := range diskQueries {
				p, o := queryOf(t, q.Args)
				want := run(t, ws, p, o)
				o.DiskIndex, o.diskDir = true, dir
				if q := loadDiskQuery(ws, dir, root, mustCompile(t, p)); q != nil {
					t.Fatalf("%s: a query from a spoiled copy", tc.name)
				}
				sameResult(t, tc.name+": "+q.Name, run(t, ws, p, o), want)
			}
		})
	}
	for name, change := range map[string]func(*workspace.Config){
		"other size cap": func(cfg *workspace.Config) { cfg.Limits.MaxFileBytes++ },
		"persist off":    func(cfg *workspace.Config) { off := false; cfg.Search.Persist = &off },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, ws := diskTree(t)
			dir, _ := builtCopy(t, ws)
			cfg := *ws.Config()
			change(&cfg)
			ws.SetConfig(&cfg)
			if q := loadDiskQuery(ws, dir, root, mustCompile(t, Pattern{Expr: "xyzzy"})); q != nil {
				t.Fatal("a query from the copy")
			}
		})
	}
}

func mustCompile(t *testing.T, p Pattern) *matcher {
	t.Helper()
	m, err := compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestDiskQueryNeverPanics makes queries of every truncation of a copy
// and of copies with bytes changed (their checksum made right), decoded
// lazily as a one-shot search decodes them: each is refused, or its query
// is made without a panic and skips only files the copy names.
func TestDiskQueryNeverPanics(t *testing.T) {
	t.Parallel()
	root, ws := diskTree(t)
	_, data := builtCopy(t, ws)
	max := int64(ws.Config().Limits.MaxFileBytes)
	var lits [][][]uint32
	for _, expr := range []string{"xyzzy", "return nil", "NewReader|deadline", "package"} {
		l, ok := litTrigrams(mustCompile(t, Pattern{Expr: expr}))
		if !ok {
			t.Fatalf("%s: no trigrams", expr)
		}
		lits = append(lits, l)
	}
	query := func(b []byte) {
		ld, err := decodeCopy(b, root, max, true)
		if err != nil {
			return
		}
		for _, l := range lits {
			if q := newDiskQuery(root, ld, l); q != nil {
				for _, e := range ld.files {
					_ = q.cand[e.seg][e.local>>6] // in range
				}
			}
		}
	}
	spoiled(t, data, func(b []byte) error {
		_, err := decodeCopy(b, root, max, true)
		return err
	}, query)
	if q := newDiskQuery(root, mustDecode(t, data, root, max), lits[0]); q == nil {
		t.Fatal("no query from the good copy")
	}
}

func mustDecode(t *testing.T, data []byte, root string, max int64) *loaded {
	t.Helper()
	ld, err := decodeCopy(data, root, max, true)
	if err != nil {
		t.Fatal(err)
	}
	return ld
}

// TestDiskIndexPrefetch: a copy prefetched for the search's directory,
// root and size cap is taken by the search, which skips files by it and
// returns what a search without it does; one of another size cap or root
// is not taken (the search loads the copy itself); for a pattern the index
// cannot narrow none is loaded. A release unmaps what was not taken.
func TestDiskIndexPrefetch(t *testing.T) {
	root, ws := diskTree(t)
	dir, _ := builtCopy(t, ws)
	t.Setenv("XDG_CACHE_HOME", filepath.Dir(dir)) // PrefetchCopy's directory is dir
	max := int64(ws.Config().Limits.MaxFileBytes)
	tests := []struct {
		name    string
		root    string
		max     int64
		args    string
		loaded  bool // a copy loaded ahead
		taken   bool // by the search
		skipped bool // files skipped by a copy
	}{
		{"same", root, max, `{"pattern":"xyzzy"}`, true, true, true},
		{"another cap", root, max + 1, `{"pattern":"xyzzy"}`, true, false, true},
		{"another root", root + "-other", max, `{"pattern":"xyzzy"}`, true, false, true},
		{"not narrowed", root, max, `{"pattern":"[A-Z]{4,}_[0-9]+"}`, false, false, false},
	}
	for _, tt := range tests {
		p, o := queryOf(t, tt.args)
		want := run(t, ws, p, o)
		release := PrefetchCopy(tt.root, tt.max, p)
		pf := prefetched.Load()
		if (pf != nil) != tt.loaded {
			t.Fatalf("%s: a copy loaded ahead: %v, want %v", tt.name, pf != nil, tt.loaded)
		}
		o.DiskIndex, o.diskDir = true, dir
		before := diskSkips.Load()
		got := run(t, ws, p, o)
		skipped := diskSkips.Load() - before
		sameResult(t, tt.name, got, want)
		if taken := pf != nil && prefetched.Load() == nil; taken != tt.taken {
			t.Errorf("%s: the copy loaded ahead taken: %v, want %v", tt.name, taken, tt.taken)
		}
		if (skipped > 0) != tt.skipped {
			t.Errorf("%s: %d files skipped", tt.name, skipped)
		}
		release()
		if pf != nil && !pf.taken.Load() || prefetched.Load() != nil {
			t.Errorf("%s: the release left the copy loaded ahead", tt.name)
		}
	}
}
