package search

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
)

// searchTree makes a workspace of files, with a directory outside it that
// a symlink inside leads to.
func searchTree(t *testing.T, files map[string]string) (string, *workspace.Workspace) {
	t.Helper()
	testenv.IsolateGit(t) // the user's git excludes must not count
	return oldTree(t, files)
}

// TestRunErrors checks each kind of error Run promises, for the tool to
// turn into its codes.
func TestRunErrors(t *testing.T) {
	root, ws := searchTree(t, map[string]string{"a.txt": "needle\n"})
	outside := t.TempDir()
	put(t, outside, "secret.txt", "needle outside\n", time.Time{})
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		p    Pattern
		o    Options
		// check says what is wrong with err, or "".
		check func(err error) string
	}{
		{"bad regexp", nil, Pattern{Expr: "a("}, Options{}, argError("is not a valid RE2 regular expression")},
		{"line break without multiline", nil, Pattern{Expr: `a\nb`}, Options{}, argError("set multiline: true")},
		{"unknown type", nil, Pattern{Expr: "a"}, Options{Type: "nosuchtype"}, argError(`unknown file type "nosuchtype"; known types: asm,`)},
		{"unknown mode", nil, Pattern{Expr: "a"}, Options{Mode: "lines"}, argError(`unknown output mode "lines"`)},
		{"bad pattern before bad path", nil, Pattern{Expr: "a("}, Options{Path: "../x"}, argError("RE2")},
		{"path outside", nil, Pattern{Expr: "a"}, Options{Path: "../x"}, pathError},
		{"symlink leading outside", nil, Pattern{Expr: "needle"}, Options{Path: "out"}, pathError},
		{"missing path", nil, Pattern{Expr: "a"}, Options{Path: "nope"}, func(err error) string {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Rel != "nope" || !errors.Is(err, fs.ErrNotExist) {
				return "want a *FileError for nope wrapping fs.ErrNotExist"
			}
			return ""
		}},
		{"cancelled", cancelled, Pattern{Expr: "a"}, Options{}, func(err error) string {
			if !errors.Is(err, context.Canceled) {
				return "want context.Canceled"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			res, err := Run(ctx, ws, tt.p, tt.o)
			if err == nil {
				t.Fatalf("no error; result %+v", res)
			}
			if msg := tt.check(err); msg != "" {
				t.Errorf("%v (%T): %s", err, err, msg)
			}
		})
	}
}

func argError(want string) func(error) string {
	return func(err error) string {
		var ae *ArgError
		if !errors.As(err, &ae) || !strings.Contains(ae.Msg, want) {
			return "want an *ArgError saying " + want
		}
		return ""
	}
}

func pathError(err error) string {
	var pe *workspace.PathError
	if !errors.As(err, &pe) || pe.Code != "INVALID_PATH" {
		return "want a *workspace.PathError INVALID_PATH"
	}
	return ""
}

// TestRunConfined: a search of the whole workspace never reports what is
// behind a symlink leading out, nor a sensitive file, and a cache that
// searches fill never records the sensitive one.
func TestRunConfined(t *testing.T) {
	root, ws := searchTree(t, map[string]string{
		"a.txt": "needle\n", "keys/server.pem": "needle\n", ".env": "needle\n", "sub/b.txt": "needle\n",
	})
	outside := t.TempDir()
	put(t, outside, "secret.txt", "needle outside\n", time.Time{})
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	cache := newCache(t)
	cache.Warm(context.Background(), ws)
	cacheReady(t, cache)
	indexed := cache.indexed.Load()
	for _, o := range []Options{{}, {IncludeIgnored: true}, {Glob: "*.pem,*.env,.env,*.txt"}, {Mode: FilesWithMatches, Cache: cache}, {Cache: cache}, {Type: "txt", Cache: cache}} {
		res := run(t, ws, Pattern{Expr: "needle"}, o)
		var got []string
		for _, f := range res.Files {
			got = append(got, f.Path)
		}
		if want := []string{"a.txt", "sub/b.txt"}; !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: found in %q, want %q", o, got, want)
		}
	}
	if cache.indexed.Load() == indexed {
		t.Error("the index answered no search")
	}
	if got, want := indexedRels(cache, root), map[string]bool{"a.txt": true, "sub/b.txt": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("the index holds %v, want %v", got, want)
	}
}

// TestRunPartial streams a truncated search: the batches hold the first
// Limit units, each once; the result none of them, only the counts; a
// search that is not streamed returns the same units.
func TestRunPartial(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 120; i++ {
		files[filepath.Join("d", strings.Repeat("f", 1+i/26)+string(rune('a'+i%26))+".txt")] = "needle\nhay\nneedle\n"
	}
	_, ws := searchTree(t, files)
	for _, mode := range []Mode{Content, FilesWithMatches, Count} {
		var mu sync.Mutex
		var batches int
		var units []string
		o := Options{Mode: mode, Limit: 150, Partial: func(b Batch) {
			mu.Lock()
			defer mu.Unlock()
			batches++
			for _, m := range b.Matches {
				units = append(units, m.Path+":"+string(rune('0'+m.Line)))
			}
			units = append(units, b.Files...)
			for p := range b.Counts {
				units = append(units, p)
			}
		}}
		res := run(t, ws, Pattern{Expr: "needle"}, o)
		wantUnits := map[Mode]int{Content: 150, FilesWithMatches: 120, Count: 120}[mode]
		if !res.Streamed || len(res.Files) != 0 || res.StreamedUnits != wantUnits || len(units) != wantUnits {
			t.Errorf("%s: streamed %v, %d files in the result, %d units counted, %d received; want %d", mode, res.Streamed, len(res.Files), res.StreamedUnits, len(units), wantUnits)
		}
		if res.Truncated != (mode == Content) {
			t.Errorf("%s: truncated %v", mode, res.Truncated)
		}
		if batches < 2 {
			t.Errorf("%s: %d batches", mode, batches)
		}
		sort.Strings(units)
		for i := 1; i < len(units); i++ {
			if units[i] == units[i-1] {
				t.Errorf("%s: %s streamed twice", mode, units[i])
			}
		}
	}
}

// TestRunUnsaved searches open documents: a buffer of a file on disk is
// searched as the editor has it; a new file not on disk is found by a walk
// and searched alone when it is the path.
func TestRunUnsaved(t *testing.T) {
	root, ws := searchTree(t, map[string]string{"a.go": "package a\n"})
	open := func(rel, text string) {
		p := filepath.Join(root, rel)
		ws.Overlays.Open(workspace.Document{URI: workspace.PathToURI(p), Path: p, LanguageID: "go", Version: 1, Text: text})
	}
	open("a.go", "package a\n// needle in the buffer\n")
	open("new.go", "package a\n// needle, not saved\n")
	res := run(t, ws, Pattern{Expr: "needle"}, Options{})
	var got []string
	for _, f := range res.Files {
		got = append(got, f.Path)
	}
	if !reflect.DeepEqual(got, []string{"a.go", "new.go"}) || !res.Walked {
		t.Errorf("walk: %q, walked %v", got, res.Walked)
	}
	res = run(t, ws, Pattern{Expr: "needle"}, Options{Path: "new.go"})
	if len(res.Files) != 1 || res.Files[0].Matches[0] != (Match{Path: "new.go", Line: 2, Column: 4, Text: "// needle, not saved"}) || res.Walked {
		t.Errorf("buffer: %+v", res)
	}
}

// TestMatchRuns holds MatchRuns' Len, All, Chunks and JSON to the flat
// list of its matches, for runs of uneven lengths, empty ones among them.
func TestMatchRuns(t *testing.T) {
	t.Parallel()
	var flat []Match
	for i := range 23 {
		flat = append(flat, Match{Path: "f", Line: i + 1, Text: strings.Repeat("x", i)})
	}
	tests := []struct {
		name string
		runs MatchRuns
	}{
		{"none", MatchRuns{}},
		{"nil", nil},
		{"one", MatchRuns{flat}},
		{"uneven", MatchRuns{flat[:1], flat[1:1], flat[1:8], nil, flat[8:9], flat[9:]}},
		{"singles", func() (r MatchRuns) {
			for i := range flat {
				r = append(r, flat[i:i+1])
			}
			return r
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []Match
			for _, run := range tt.runs {
				want = append(want, run...)
			}
			if tt.runs.Len() != len(want) {
				t.Errorf("Len = %d, want %d", tt.runs.Len(), len(want))
			}
			var all []Match
			for m := range tt.runs.All() {
				all = append(all, *m)
			}
			if !reflect.DeepEqual(all, want) {
				t.Errorf("All = %v, want %v", all, want)
			}
			for _, n := range []int{1, 2, 5, 23, 100} {
				var got []Match
				chunks := 0
				for c := range tt.runs.Chunks(n) {
					chunks++
					if l := c.Len(); l == 0 || l > n || l < n && chunks*n < len(want) {
						t.Errorf("Chunks(%d): chunk %d holds %d", n, chunks, l)
					}
					for m := range c.All() {
						got = append(got, *m)
					}
				}
				if !reflect.DeepEqual(got, want) || chunks != (len(want)+n-1)/n {
					t.Errorf("Chunks(%d): %d chunks of %v, want %v", n, chunks, got, want)
				}
			}
			data, err := json.Marshal(tt.runs)
			wantData, _ := json.Marshal(append([]Match{}, want...))
			if err != nil || string(data) != string(wantData) {
				t.Errorf("JSON = %s, %v; want %s", data, err, wantData)
			}
		})
	}
}
