package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/agentls/agentls/workspace"
)

// Pattern is what a search looks for. Its JSON names are the grep tool's
// arguments (tools/grep.go), and Queries spell their patterns with them.
type Pattern struct {
	// Expr is an RE2 regular expression (as Go and ripgrep read it), or a
	// literal string with FixedStrings.
	Expr            string `json:"pattern"`
	FixedStrings    bool   `json:"fixed_strings"`
	CaseInsensitive bool   `json:"case_insensitive"`
	// Word matches whole words only (ripgrep's -w).
	Word bool `json:"word"`
	// Multiline lets the pattern match across lines; without it a pattern
	// that holds a line break is an ArgError.
	Multiline bool `json:"multiline"`
}

// Mode says what a search returns.
type Mode string

const (
	// Content: the matching lines (and context lines).
	Content Mode = "content"
	// FilesWithMatches: the paths of the files with a match.
	FilesWithMatches Mode = "files_with_matches"
	// Count: the number of matching lines of each file.
	Count Mode = "count"
)

// Options say where a search looks and what it returns.
type Options struct {
	// Path is the directory or file to search, a path argument as the
	// workspace resolves it ("" is ".").
	Path string
	// Glob are comma-separated file globs ("*.go", "*.{ts,tsx}",
	// "!*_test.go"); Type ripgrep file type names ("go", "py,js"; types.go).
	Glob, Type string
	// IncludeIgnored also searches the files the ignore files exclude.
	IncludeIgnored bool
	// Mode is what the result holds ("" is Content).
	Mode Mode
	// Limit is the most result units (matching lines, files or counts)
	// returned; <= 0 is the workspace's limits.grepMaxResults.
	Limit int
	// Before and After are the context lines around each match (Content
	// only).
	Before, After int
	// Partial, when set, receives the results as they are found (at most
	// Limit units, in no order, without context lines), and the Result
	// then holds none of them: only the counts. It is called from the
	// search's workers, one call at a time.
	Partial func(Batch)
	// Cache, when set, answers the search from its trigram index: the
	// files that may match are read, the others never (cache.go).
	Cache *Cache
	// DiskIndex, without a Cache, lets the search skip the files that the
	// on-disk copy of its root's index, left by a server, vouches cannot
	// match (diskindex.go); the copy is only read.
	DiskIndex bool
	// diskDir is the directory of the copies DiskIndex looks at ("": the
	// servers', $XDG_CACHE_HOME/agentls); tests set it.
	diskDir string
}

// Match is one matching line.
type Match struct {
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Text   string `json:"text"`
}

// MatchRuns are matches in order, held as runs of consecutive ones, each
// run a part of a File's Matches: a result's list of matches made without
// copying them out of their files (an output-heavy search has tens of
// thousands). Its JSON is one array of them all.
type MatchRuns [][]Match

// Len is the number of matches in r.
func (r MatchRuns) Len() int {
	n := 0
	for _, run := range r {
		n += len(run)
	}
	return n
}

// All yields the matches of r in order.
func (r MatchRuns) All() iter.Seq[*Match] {
	return func(yield func(*Match) bool) {
		for _, run := range r {
			for i := range run {
				if !yield(&run[i]) {
					return
				}
			}
		}
	}
}

// Chunks yields the matches of r in order, n at a time (the last chunk
// may hold fewer), each chunk as runs.
func (r MatchRuns) Chunks(n int) iter.Seq[MatchRuns] {
	return func(yield func(MatchRuns) bool) {
		var chunk MatchRuns
		room := n
		for _, run := range r {
			for len(run) > 0 {
				k := min(room, len(run))
				chunk = append(chunk, run[:k])
				run, room = run[k:], room-k
				if room == 0 {
					if !yield(chunk) {
						return
					}
					chunk, room = nil, n
				}
			}
		}
		if len(chunk) > 0 {
			yield(chunk)
		}
	}
}

// MarshalJSON encodes r as one array of its matches (empty, not null, when
// there are none).
func (r MatchRuns) MarshalJSON() ([]byte, error) {
	all := make([]Match, 0, r.Len())
	for _, run := range r {
		all = append(all, run...)
	}
	return json.Marshal(all)
}

// Batch is one batch of streamed results (Options.Partial): Matches in
// Content mode, Files in FilesWithMatches mode, Counts in Count mode.
type Batch struct {
	Matches []Match
	Files   []string
	Counts  map[string]int
}

// ArgError is an error in a search's pattern or options (a pattern that
// does not compile, an unknown file type): the caller's to fix.
type ArgError struct{ Msg string }

func (e *ArgError) Error() string { return e.Msg }

func argErrorf(format string, args ...any) *ArgError {
	return &ArgError{Msg: fmt.Sprintf(format, args...)}
}

// FileError is a failure to read the searched path or to walk below it:
// Rel is the path relative to the workspace root, Err the cause as the file
// system gave it (fs.ErrNotExist, fs.ErrPermission, syscall.ELOOP...).
type FileError struct {
	Rel string
	Err error
}

func (e *FileError) Error() string { return e.Rel + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Run searches the workspace for p, as ripgrep does with its defaults:
// files listed in ignore files, hidden files and binary files are skipped;
// files the workspace calls sensitive (paths.sensitive) are never read; an
// open document is searched as the editor has it (unsaved buffers, new
// files included). Paths in the result are relative to the workspace root.
//
// Errors: an *ArgError for a bad pattern, mode or type; the workspace's error
// (a *workspace.PathError) for a path that does not resolve; a *FileError
// when the path cannot be read or walked; ctx.Err() when ctx ended.
func Run(ctx context.Context, ws *workspace.Workspace, p Pattern, o Options) (*Result, error) {
	if o.Path == "" {
		o.Path = "."
	}
	if o.Mode == "" {
		o.Mode = Content
	}
	m, err := compile(p)
	if err != nil {
		return nil, err
	}
	if o.Mode != Content && o.Mode != FilesWithMatches && o.Mode != Count {
		return nil, argErrorf("unknown output mode %q", o.Mode)
	}
	var dq *diskWait
	if o.Cache == nil && o.DiskIndex {
		dq = startDiskQuery(ws, m, o.diskDir) // diskindex.go
	}
	root, err := ws.Resolve(o.Path)
	if err != nil {
		return nil, err
	}
	rootRel := ws.Rel(root)
	fi, err := ws.Stat(root)
	if err != nil {
		if d, ok := ws.Overlays.Get(root); ok {
			return searchBuffer(ws, &o, m, rootRel, d.Text), nil
		}
		return nil, &FileError{Rel: rootRel, Err: err}
	}
	prefix := ""
	if fi.IsDir() && rootRel != "." {
		prefix = rootRel + "/"
	}
	cfg := ws.Config()
	filter, err := searchFilter(o.Glob, o.Type, prefix)
	if err != nil {
		return nil, err
	}
	// filterKey names filter's verdicts for the index's views (indexed.go):
	// all that filter is made of.
	filterKey := fmt.Sprintf("%q %q %q", o.Glob, o.Type, prefix)
	// Files the config calls sensitive are never read. The globs are
	// relative to a root: with several roots the result paths' prefix has
	// the root's name, so the path without it is checked too.
	if sens := newSensitive(cfg.Paths.Sensitive); !sens.empty() {
		inner := filter
		rootPrefix := ""
		if fi.IsDir() {
			if rr := ws.RootRel(root); rr != "." {
				rootPrefix = rr + "/"
			}
		}
		filterKey += fmt.Sprintf(" %q %q", rootPrefix, cfg.Paths.Sensitive)
		filter = func(rel string, isDir bool) workspace.Verdict {
			if sens.match(prefix+rel, isDir) || rootPrefix != prefix && sens.match(rootPrefix+rel, isDir) {
				return workspace.Skip
			}
			if inner == nil {
				return 0
			}
			return inner(rel, isDir)
		}
	}
	overlays := map[string]bool{}
	for _, p := range ws.Overlays.Paths() {
		overlays[p] = true
	}
	workers := runtime.GOMAXPROCS(0)
	s := newState(ws, &o, workers)
	for i := range s.matchers {
		s.matchers[i] = m.clone()
	}
	maxBytes := int64(cfg.Limits.MaxFileBytes)
	s.takeBuffers()
	defer s.returnBuffers()
	// The index answers without a walk when it can (indexed.go).
	if o.Cache != nil {
		o.Cache.ensure(ws)
	}
	if fi.IsDir() && !o.IncludeIgnored {
		if pl := o.Cache.plan(ws, root, prefix, o.Glob, filter, filterKey, m, overlays); pl != nil {
			if err := s.runPlan(ctx, ws, pl, maxBytes); err != nil {
				return nil, err
			}
			return s.finish(ws, root, prefix, filter, o.IncludeIgnored, overlays, s.tooLarge.Load()), nil
		}
	}
	opts := workspace.WalkOptions{
		IncludeIgnored: o.IncludeIgnored, MaxFileBytes: maxBytes,
		ReadContent: true, Filter: filter, Workers: workers,
	}
	var sq *statQuery
	if fi.IsDir() {
		sq = o.Cache.statQuery(ws, root, m)
	}
	stats, err := ws.Walk(ctx, root, opts, func(f *workspace.File) error {
		if !f.IsRegular() {
			return nil
		}
		rel := prefix + f.Rel
		if !fi.IsDir() {
			rel = rootRel
		}
		if s.skip(rel) {
			return nil
		}
		var data []byte
		if overlays[f.Path] {
			if d, ok := ws.Overlays.Get(f.Path); ok {
				data = []byte(d.Text)
			}
		}
		if data == nil {
			// The index may vouch that the file cannot match
			// (indexed.go).
			if sq != nil && sq.skip(f.Path) || dq != nil && dq.skip(f) {
				s.searched.Add(1)
				return nil
			}
			var err error
			data, err = f.Read(s.bufs[f.Worker])
			if err != nil {
				if !errors.Is(err, workspace.ErrTooLarge) {
					s.unreadable.Add(1)
				}
				return nil
			}
			s.bufs[f.Worker] = data[:0]
		}
		s.searched.Add(1)
		if r := s.searchFile(s.matchers[f.Worker], data, rel); r != nil {
			s.add(r)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &FileError{Rel: rootRel, Err: err}
	}
	if !fi.IsDir() {
		overlays = nil
	}
	return s.finish(ws, root, prefix, filter, o.IncludeIgnored, overlays, stats.TooLarge.Load()), nil
}

// finish searches the unsaved buffers below root (a directory) and
// returns the result of a search that looked at the files on disk.
func (s *state) finish(ws *workspace.Workspace, root, prefix string, filter func(string, bool) workspace.Verdict, includeIgnored bool, overlays map[string]bool, tooLarge int64) *Result {
	if len(overlays) > 0 {
		s.searchUnsaved(ws, root, prefix, filter, includeIgnored, overlays)
	}
	s.flush()
	res := s.result()
	res.Walked = true
	res.TooLarge = tooLarge
	return res
}

// searchBuffer searches one open document that is not on disk.
func searchBuffer(ws *workspace.Workspace, o *Options, m *matcher, rel, text string) *Result {
	s := newState(ws, o, 1)
	s.matchers[0] = m
	s.searched.Add(1)
	if r := s.searchFile(m, []byte(text), rel); r != nil {
		s.add(r)
	}
	s.flush()
	return s.result()
}

// readBufs keeps the workers' read buffers between calls, so that a warm
// server does not allocate them again for every search.
var readBufs sync.Pool

func (s *state) takeBuffers() {
	for i := range s.bufs {
		if b, ok := readBufs.Get().(*[]byte); ok {
			s.bufs[i] = (*b)[:0]
		}
	}
}

func (s *state) returnBuffers() {
	for i, b := range s.bufs {
		if b != nil && cap(b) <= 16<<20 {
			readBufs.Put(&b)
		}
		s.bufs[i] = nil
	}
}

// searchUnsaved searches the open documents below root that are not on
// disk (new files the editor has not saved), under the same rules as the
// walk: filter, hidden and ignored paths.
func (s *state) searchUnsaved(ws *workspace.Workspace, root, prefix string, filter func(string, bool) workspace.Verdict, includeIgnored bool, overlays map[string]bool) {
	var ig *workspace.Ignorer
	top := workspace.FindRepo(root)
	if top == "" {
		top = root
	}
	for p := range overlays {
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		if _, err := ws.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			continue // on disk: the walk saw it, or skipped it on purpose
		}
		rel = filepath.ToSlash(rel)
		var v workspace.Verdict
		if filter != nil {
			if v = filter(rel, false); v&workspace.Skip != 0 {
				continue
			}
		}
		dir, name := path.Split(rel)
		if strings.HasPrefix(dir, ".") || strings.Contains(dir, "/.") || (v&workspace.KeepHidden == 0 && strings.HasPrefix(name, ".")) {
			continue
		}
		if !includeIgnored && v&workspace.KeepIgnored == 0 {
			if ig == nil {
				ig = workspace.NewIgnorer(top)
			}
			if topRel, err := filepath.Rel(top, p); err == nil && ig.Excluded(filepath.ToSlash(topRel), false) {
				continue
			}
		}
		d, ok := ws.Overlays.Get(p)
		if !ok {
			continue
		}
		s.searched.Add(1)
		if r := s.searchFile(s.matchers[0], []byte(d.Text), prefix+rel); r != nil {
			s.add(r)
		}
	}
}
