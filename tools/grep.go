package tools

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentls/agentls/workspace"
	"github.com/bmatcuk/doublestar/v4"
)

// Grep is grep: ripgrep's search, with ripgrep's defaults (ignore files,
// hidden files and binary files skipped), run in process.
var Grep = builtin(Def[grepArgs]{
	Name:  "grep",
	Title: "Search file contents",
	Description: "Searches the contents of the workspace's files for a regular expression (RE2 syntax, as Go and ripgrep read it), " +
		"like ripgrep: files listed in .gitignore/.ignore, hidden files and binary files are skipped. Reads the editor's unsaved buffers for open files. " +
		"output_mode \"content\" (default) gives `path:line:text` lines (with context lines `path-line-text` when context/before/after are set), " +
		"\"files_with_matches\" the paths of matching files, \"count\" `path:count` lines. Paths are relative to the workspace root, sorted. " +
		"Narrow with path (a directory or file), glob (file name globs such as \"*.go\" or \"*.{ts,tsx}\", \"!\" to exclude, comma-separated), " +
		"type (ripgrep type names: go, py, js, ts, rust, java, c, cpp, sh, md, json, yaml, html, css, ...). " +
		"fixed_strings searches the pattern literally; word matches whole words only; multiline lets the pattern match across lines " +
		"(\\n, [\\s\\S]). At most max_results lines (or files, or counts) are returned; truncated says when there were more.",
	Annotations: Annotations{ReadOnly: true, Approval: "auto"},
	InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["pattern"],"properties":{
		"pattern":{"type":"string","description":"RE2 regular expression (or a literal string with fixed_strings)"},
		"path":{"type":"string","default":".","description":"directory or file to search, relative to the workspace root"},
		"glob":{"type":"string","description":"file globs, comma-separated: \"*.go\", \"*.{ts,tsx}\", \"src/**/*.js\", \"!*_test.go\" (a glob without a slash matches the file name at any depth)"},
		"type":{"type":"string","description":"ripgrep file type: go, py, js, ts, rust, java, c, cpp, sh, md, json, yaml, html, css, ..."},
		"case_insensitive":{"type":"boolean","default":false},
		"fixed_strings":{"type":"boolean","default":false,"description":"treat the pattern as a literal string"},
		"word":{"type":"boolean","default":false,"description":"match whole words only"},
		"context":{"type":"integer","minimum":0,"maximum":50,"description":"lines of context before and after each match (content mode)"},
		"before":{"type":"integer","minimum":0,"maximum":50,"description":"lines of context before each match"},
		"after":{"type":"integer","minimum":0,"maximum":50,"description":"lines of context after each match"},
		"output_mode":{"enum":["content","files_with_matches","count"],"default":"content"},
		"max_results":{"type":"integer","minimum":1,"maximum":100000,"description":"maximum matching lines (content), files or counts returned (default: limits.grepMaxResults)"},
		"include_ignored":{"type":"boolean","default":false,"description":"also search files the ignore files exclude"},
		"multiline":{"type":"boolean","default":false,"description":"let the pattern match across lines"}}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["truncated"],"properties":{
		"matches":{"type":"array","items":{"type":"object","required":["path","line","column","text"],"properties":{
			"path":{"type":"string"},"line":{"type":"integer"},"column":{"type":"integer"},"text":{"type":"string"}}}},
		"files":{"type":"array","items":{"type":"string"}},
		"counts":{"type":"object","additionalProperties":{"type":"integer"}},
		"truncated":{"type":"boolean"},
		"streamed":{"type":"integer","description":"results sent as partial results (then not repeated here)"},
		"streamed_files":{"type":"integer"},
		"files_searched":{"type":"integer"},
		"skipped_too_large":{"type":"integer"},
		"skipped_binary":{"type":"integer"}}}`),
	Execute: grep,
})

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Glob            string `json:"glob"`
	Type            string `json:"type"`
	CaseInsensitive bool   `json:"case_insensitive"`
	FixedStrings    bool   `json:"fixed_strings"`
	Word            bool   `json:"word"`
	Context         *int   `json:"context"`
	Before          *int   `json:"before"`
	After           *int   `json:"after"`
	OutputMode      string `json:"output_mode"`
	MaxResults      int    `json:"max_results"`
	IncludeIgnored  bool   `json:"include_ignored"`
	Multiline       bool   `json:"multiline"`
}

// GrepMatch is one element of grep's structured matches.
type GrepMatch struct {
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Text   string `json:"text"`
}

const (
	modeContent = "content"
	modeFiles   = "files_with_matches"
	modeCount   = "count"
)

func grep(c *Call, a grepArgs) (*Result, error) {
	if a.Path == "" {
		a.Path = "."
	}
	if a.OutputMode == "" {
		a.OutputMode = modeContent
	}
	m, err := compileMatcher(&a)
	if err != nil {
		return nil, err
	}
	root, err := c.Workspace.Resolve(a.Path)
	if err != nil {
		return nil, err
	}
	rootRel := c.Workspace.Rel(root)
	fi, err := c.Workspace.Stat(root)
	if err != nil {
		if d, ok := c.Workspace.Overlays.Get(root); ok {
			return grepBuffer(c, &a, m, rootRel, d.Text)
		}
		return nil, fileError(rootRel, err)
	}
	prefix := ""
	if fi.IsDir() && rootRel != "." {
		prefix = rootRel + "/"
	}
	cfg := c.Workspace.Config()
	filter, err := searchFilter(a.Glob, a.Type, prefix)
	if err != nil {
		return nil, err
	}
	// Files the config calls sensitive are never read. The globs are
	// relative to a root: with several roots the result paths' prefix has
	// the root's name, so the path without it is checked too.
	if sens := newSensitive(cfg.Paths.Sensitive); !sens.empty() {
		inner := filter
		rootPrefix := ""
		if fi.IsDir() {
			if rr := c.Workspace.RootRel(root); rr != "." {
				rootPrefix = rr + "/"
			}
		}
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
	for _, p := range c.Workspace.Overlays.Paths() {
		overlays[p] = true
	}
	workers := runtime.GOMAXPROCS(0)
	s := newGrepSearch(c, &a, workers)
	for i := range s.matchers {
		s.matchers[i] = m.clone()
	}
	opts := workspace.WalkOptions{
		IncludeIgnored: a.IncludeIgnored, MaxFileBytes: int64(cfg.Limits.MaxFileBytes),
		ReadContent: true, Filter: filter, Workers: workers,
	}
	cq := newCacheQuery(searchCacheOf(c.Session), m, int64(cfg.Limits.MaxFileBytes))
	s.takeBuffers()
	defer s.returnBuffers()
	stats, err := c.Workspace.Walk(c.Ctx, root, opts, func(f *workspace.File) error {
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
			if d, ok := c.Workspace.Overlays.Get(f.Path); ok {
				data = []byte(d.Text)
			}
		}
		if data == nil {
			// The session's search cache (a server's) may vouch that the
			// file cannot match, or record it (grep_cache.go).
			var stamp fileStamp
			record := false
			if cq != nil && !overlays[f.Path] {
				var skip bool
				if skip, stamp, record = cq.visit(f.Path); skip {
					s.searched.Add(1)
					return nil
				}
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
			if record {
				cq.store(f.Path, stamp, data)
			}
		}
		s.searched.Add(1)
		if r := s.searchFile(s.matchers[f.Worker], data, rel); r != nil {
			s.add(r)
		}
		return nil
	})
	if err != nil {
		if c.Ctx.Err() != nil {
			return nil, c.Ctx.Err()
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Errorf(FileNotFound, "%s does not exist", rootRel)
		}
		return nil, fileError(rootRel, err)
	}
	if fi.IsDir() && len(overlays) > 0 {
		s.searchUnsaved(c, root, prefix, filter, a.IncludeIgnored, overlays)
	}
	s.flush()
	res := s.result()
	res.Structured.(map[string]any)["files_searched"] = s.searched.Load()
	res.Structured.(map[string]any)["skipped_too_large"] = stats.TooLarge.Load()
	res.Structured.(map[string]any)["skipped_binary"] = s.binary.Load()
	return res, nil
}

// grepBuffer searches one open document that is not on disk.
func grepBuffer(c *Call, a *grepArgs, m *matcher, rel, text string) (*Result, error) {
	s := newGrepSearch(c, a, 1)
	s.matchers[0] = m
	s.searched.Add(1)
	if r := s.searchFile(m, []byte(text), rel); r != nil {
		s.add(r)
	}
	s.flush()
	res := s.result()
	res.Structured.(map[string]any)["files_searched"] = s.searched.Load()
	return res, nil
}

// newGrepSearch returns the state of one call with workers workers.
func newGrepSearch(c *Call, a *grepArgs, workers int) *grepSearch {
	cfg := c.Workspace.Config()
	limit := a.MaxResults
	if limit <= 0 {
		limit = cfg.Limits.GrepMaxResults
	}
	before, after := 0, 0
	if a.Context != nil {
		before, after = *a.Context, *a.Context
	}
	if a.Before != nil {
		before = *a.Before
	}
	if a.After != nil {
		after = *a.After
	}
	if a.OutputMode != modeContent {
		before, after = 0, 0
	}
	stream := false
	if ps, ok := c.Progress.(PartialStreamer); ok {
		stream = ps.StreamsPartial()
	}
	return &grepSearch{
		mode: a.OutputMode, limit: limit, before: before, after: after,
		maxLine: cfg.Limits.MaxLineLength, progress: c.Progress, stream: stream,
		matchers: make([]*matcher, workers), bufs: make([][]byte, workers),
	}
}

// PartialStreamer is a Progress that says whether its Partial batches reach
// a client (the call has a partialResultToken). Then, as LSP 3.17 asks of
// partial results, grep streams its results as it finds them (at most
// max_results units, in no order, without context lines) and its final
// result carries none of them: only the summary (truncated, the counts of
// what was streamed and searched).
type PartialStreamer interface {
	StreamsPartial() bool
}

// readBufs keeps the workers' read buffers between calls, so that a warm
// server does not allocate them again for every search.
var readBufs sync.Pool

func (s *grepSearch) takeBuffers() {
	for i := range s.bufs {
		if b, ok := readBufs.Get().(*[]byte); ok {
			s.bufs[i] = (*b)[:0]
		}
	}
}

func (s *grepSearch) returnBuffers() {
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
func (s *grepSearch) searchUnsaved(c *Call, root, prefix string, filter func(string, bool) workspace.Verdict, includeIgnored bool, overlays map[string]bool) {
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
		if _, err := c.Workspace.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
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
		d, ok := c.Workspace.Overlays.Get(p)
		if !ok {
			continue
		}
		s.searched.Add(1)
		if r := s.searchFile(s.matchers[0], []byte(d.Text), prefix+rel); r != nil {
			s.add(r)
		}
	}
}

// searchFilter builds the walk's filter from grep's glob and type
// arguments, with ripgrep's precedence: a glob that matches keeps the file
// even if it is ignored or hidden, a "!" glob leaves it out, a file no glob
// matches is left out when there are globs to match; then a file must be of
// the type (which keeps it even if hidden). Globs match the path relative
// to the workspace root (prefix is the walked directory's).
func searchFilter(globArg, typeArg, prefix string) (func(string, bool) workspace.Verdict, error) {
	var globs *workspace.IgnoreRules
	whitelists := 0
	if strings.TrimSpace(globArg) != "" {
		var lines []string
		for _, g := range splitGlobs(globArg) {
			for _, e := range expandBraces(g) {
				lines = append(lines, e)
				if !strings.HasPrefix(e, "!") {
					whitelists++
				}
			}
		}
		globs = workspace.ParseIgnore([]byte(strings.Join(lines, "\n") + "\n"))
	}
	var types *workspace.IgnoreRules
	if strings.TrimSpace(typeArg) != "" {
		g, ok := lookupType(typeArg)
		if !ok {
			return nil, Errorf(InvalidParams, "unknown file type %q; known types: %s", typeArg, strings.Join(typeNames(), ", "))
		}
		types = workspace.ParseIgnore([]byte(strings.Join(g, "\n") + "\n"))
	}
	if globs == nil && types == nil {
		return nil, nil
	}
	return func(rel string, isDir bool) workspace.Verdict {
		full := prefix + rel
		var v workspace.Verdict
		if globs != nil {
			matched, white := globs.Match(full, isDir)
			switch {
			case matched && !white:
				return workspace.Skip
			case matched:
				v = workspace.KeepIgnored | workspace.KeepHidden
			case !isDir && whitelists > 0:
				return workspace.Skip
			}
		}
		if types != nil && !isDir {
			if matched, _ := types.Match(full, false); !matched {
				return workspace.Skip
			}
			v |= workspace.KeepHidden
		}
		return v
	}, nil
}

// splitGlobs splits comma-separated globs, leaving commas inside braces.
func splitGlobs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	out = append(out, s[start:])
	var globs []string
	for _, g := range out {
		if g = strings.TrimSpace(g); g != "" {
			globs = append(globs, g)
		}
	}
	return globs
}

// expandBraces expands the first {a,b} group of a glob, recursively.
func expandBraces(g string) []string {
	depth, open := 0, -1
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			var alts []string
			d, start := 0, open+1
			for j := open + 1; j < i; j++ {
				switch g[j] {
				case '\\':
					j++
				case '{':
					d++
				case '}':
					d--
				case ',':
					if d == 0 {
						alts = append(alts, g[start:j])
						start = j + 1
					}
				}
			}
			alts = append(alts, g[start:i])
			var out []string
			for _, a := range alts {
				out = append(out, expandBraces(g[:open]+a+g[i+1:])...)
			}
			return out
		}
	}
	return []string{g}
}

// grepSearch is one grep call's state, shared by the walk's workers.
type grepSearch struct {
	mode          string
	limit         int
	before, after int
	maxLine       int
	progress      Progress
	stream        bool       // results go out as partial results (PartialStreamer)
	matchers      []*matcher // one per worker
	bufs          [][]byte   // one per worker

	searched, binary, unreadable atomic.Int64

	mu        sync.Mutex
	kept      fileHeap // the files that may be in the result, largest path on top
	units     int      // the result units (lines, files or counts) in kept
	truncated bool
	// anyTruncated mirrors truncated for the lock-free fast path of skip.
	anyTruncated atomic.Bool
	pending      []any // the partial batch
	// streamed and streamedFiles count the units and files sent as
	// partial results.
	streamed, streamedFiles int
}

// fileResult is what one file contributes.
type fileResult struct {
	path    string
	count   int // matching lines (all of them in count mode)
	matches []GrepMatch
	lines   []outLine // content mode: matches and context, in order
}

type outLine struct {
	n     int
	text  string
	match bool
	m     int  // the index in matches of the match this line starts, or -1
	gap   bool // lines were skipped before this one
}

func (r *fileResult) units(mode string) int {
	if mode == modeContent {
		return len(r.matches)
	}
	return 1
}

// skip reports whether a file cannot make it into the result: the result
// is already truncated and the file sorts after everything kept.
func (s *grepSearch) skip(path string) bool {
	if !s.anyTruncated.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.truncated && len(s.kept) > 0 && workspace.ComparePaths(path, s.kept[0].path) > 0
}

// add keeps a file's result, dropping the files that sort after the first
// limit units.
func (s *grepSearch) add(r *fileResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.truncated && len(s.kept) > 0 && workspace.ComparePaths(r.path, s.kept[0].path) > 0 {
		return
	}
	heap.Push(&s.kept, r)
	s.units += r.units(s.mode)
	for len(s.kept) > 0 {
		top := s.kept[0]
		if s.units-top.units(s.mode) < s.limit {
			break
		}
		heap.Pop(&s.kept)
		s.units -= top.units(s.mode)
		s.truncated = true
	}
	if s.units > s.limit {
		s.truncated = true
	}
	if s.truncated {
		s.anyTruncated.Store(true)
	}
	if !s.stream {
		return
	}
	// The streamed results are the first max_results units found: the
	// union of the batches is the whole result.
	room := s.limit - s.streamed
	if room <= 0 {
		return
	}
	switch s.mode {
	case modeContent:
		n := min(room, len(r.matches))
		for _, m := range r.matches[:n] {
			s.pending = append(s.pending, m)
		}
		s.streamed += n
	case modeFiles:
		s.pending = append(s.pending, r.path)
		s.streamed++
	case modeCount:
		s.pending = append(s.pending, map[string]int{r.path: r.count})
		s.streamed++
	}
	s.streamedFiles++
	if len(s.pending) >= 100 {
		s.flushLocked()
	}
}

func (s *grepSearch) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked()
}

// flushLocked sends the pending batch on the partial result stream, in the
// shape of the structured result: {"matches": [...]}, {"files": [...]} or
// {"counts": {...}}. Batches come as files are searched, in no order.
func (s *grepSearch) flushLocked() {
	if len(s.pending) == 0 || s.progress == nil {
		s.pending = nil
		return
	}
	var batch map[string]any
	switch s.mode {
	case modeContent:
		batch = map[string]any{"matches": s.pending}
	case modeFiles:
		batch = map[string]any{"files": s.pending}
	default:
		counts := map[string]int{}
		for _, p := range s.pending {
			for k, v := range p.(map[string]int) {
				counts[k] = v
			}
		}
		batch = map[string]any{"counts": counts}
	}
	s.progress.Partial(batch)
	s.pending = nil
}

// searchFile searches one file's bytes.
func (s *grepSearch) searchFile(m *matcher, data []byte, path string) *fileResult {
	var hits []hit
	cutoff := -1 // where ripgrep would stop reading (binary data), computed at the first hit
	maxHits := s.limit + 1
	m.search(data, func(h hit) bool {
		if cutoff < 0 {
			cutoff = binaryCutoff(data)
			if cutoff < len(data) {
				s.binary.Add(1)
			}
		}
		if h.start >= cutoff {
			return false
		}
		hits = append(hits, h)
		switch s.mode {
		case modeFiles:
			return false
		case modeContent:
			return len(hits) < maxHits
		}
		return true
	})
	if len(hits) == 0 {
		return nil
	}
	r := &fileResult{path: path, count: len(hits)}
	if s.mode != modeContent {
		return r
	}
	r.matches = make([]GrepMatch, len(hits))
	lastOut := 0 // the last line written
	for i, h := range hits {
		r.matches[i] = GrepMatch{Path: path, Line: h.line, Column: h.col, Text: s.text(data[h.start:h.spanEnd])}
		// Lines before, back to the last line written.
		var pre []outLine
		for n, start := h.line-1, h.start; n >= max(h.line-s.before, lastOut+1); n-- {
			end := start - 1
			start = bytes.LastIndexByte(data[:end], '\n') + 1
			pre = append(pre, outLine{n: n, text: s.text(data[start:end]), m: -1})
		}
		for j := len(pre) - 1; j >= 0; j-- {
			r.lines = append(r.lines, pre[j])
		}
		// The match's own lines (several for a multiline match).
		m := i
		for n, start := h.line, h.start; ; n++ {
			end := bytes.IndexByte(data[start:h.spanEnd], '\n')
			if end < 0 {
				r.lines = append(r.lines, outLine{n: n, text: s.text(data[start:h.spanEnd]), match: true, m: m})
				break
			}
			r.lines = append(r.lines, outLine{n: n, text: s.text(data[start : start+end]), match: true, m: m})
			start += end + 1
			m = -1
		}
		lastOut = h.endLine
		// Lines after, up to the next match.
		limit := h.endLine + s.after
		if i+1 < len(hits) {
			limit = min(limit, hits[i+1].line-1)
		}
		for n, start := h.endLine+1, h.spanEnd+1; n <= limit && start < len(data); n++ {
			end := bytes.IndexByte(data[start:], '\n')
			if end < 0 {
				end = len(data)
			} else {
				end += start
			}
			r.lines = append(r.lines, outLine{n: n, text: s.text(data[start:end]), m: -1})
			lastOut = n
			start = end + 1
		}
	}
	prev := 0
	for i := range r.lines {
		r.lines[i].gap = prev > 0 && r.lines[i].n > prev+1
		prev = r.lines[i].n
	}
	return r
}

// text makes a line printable: no trailing CR, long lines cut.
func (s *grepSearch) text(b []byte) string {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	t := string(b)
	if s.maxLine > 0 && len(t) > s.maxLine {
		t = cutLine(t, s.maxLine)
	}
	return t
}

// binaryCutoff returns where ripgrep stops searching a file because of
// binary data: len(data) when it has no NUL byte. ripgrep reads 64 KiB
// buffers (after the incomplete last line of the one before) and, when a
// buffer it reads holds a NUL byte, drops that buffer and stops; a NUL in
// the first buffer hides the whole file.
func binaryCutoff(data []byte) int {
	nul := bytes.IndexByte(data, 0)
	if nul < 0 {
		return len(data)
	}
	const capacity = 64 << 10
	start, size := 0, capacity
	end := min(len(data), capacity)
	for {
		if nul < end {
			return start
		}
		last := bytes.LastIndexByte(data[start:end], '\n')
		if last < 0 {
			// A line longer than the buffer: ripgrep grows the buffer.
			size *= 2
			end = min(len(data), start+size)
			continue
		}
		start += last + 1
		end = min(len(data), start+size)
	}
}

// result sorts what was kept and builds the ToolResult; after streaming,
// the summary only.
func (s *grepSearch) result() *Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream {
		return s.streamSummary()
	}
	files := []*fileResult(s.kept)
	sort.Slice(files, func(i, j int) bool { return workspace.ComparePaths(files[i].path, files[j].path) < 0 })
	var b strings.Builder
	st := map[string]any{"truncated": s.truncated}
	n := 0
	switch s.mode {
	case modeFiles:
		paths := []string{}
		for _, f := range files {
			if n == s.limit {
				break
			}
			paths = append(paths, f.path)
			b.WriteString(f.path)
			b.WriteByte('\n')
			n++
		}
		st["files"] = paths
	case modeCount:
		counts := map[string]int{}
		for _, f := range files {
			if n == s.limit {
				break
			}
			counts[f.path] = f.count
			b.WriteString(f.path + ":" + strconv.Itoa(f.count) + "\n")
			n++
		}
		st["counts"] = counts
	default:
		matches := []GrepMatch{}
		withContext := s.before > 0 || s.after > 0
	files:
		for fi, f := range files {
			for li, l := range f.lines {
				if l.m >= 0 {
					if n == s.limit {
						break files
					}
					matches = append(matches, f.matches[l.m])
					n++
				}
				if withContext && (l.gap || (li == 0 && fi > 0)) {
					b.WriteString("--\n")
				}
				sep := "-"
				if l.match {
					sep = ":"
				}
				b.WriteString(f.path + sep + strconv.Itoa(l.n) + sep + l.text + "\n")
			}
		}
		st["matches"] = matches
	}
	content := b.String()
	if content == "" {
		content = "No matches found.\n"
	}
	if s.truncated {
		content += fmt.Sprintf("[results truncated at %d; narrow the pattern, path, glob or type, or raise max_results]\n", s.limit)
	}
	return Success(content, st)
}

// streamSummary is the final result of a streamed search: no results (the
// partial batches had them all), the counts and truncation.
func (s *grepSearch) streamSummary() *Result {
	st := map[string]any{"truncated": s.truncated, "streamed": s.streamed, "streamed_files": s.streamedFiles}
	unit := "matching lines"
	switch s.mode {
	case modeFiles:
		st["files"], unit = []string{}, "files"
	case modeCount:
		st["counts"], unit = map[string]int{}, "file counts"
	default:
		st["matches"] = []GrepMatch{}
	}
	content := fmt.Sprintf("%d %s in %d files, sent as partial results (on the call's partialResultToken), not repeated here.\n", s.streamed, unit, s.streamedFiles)
	if s.streamed == 0 {
		content = "No matches found.\n"
	}
	if s.truncated {
		content += fmt.Sprintf("[results truncated at %d; narrow the pattern, path, glob or type, or raise max_results]\n", s.limit)
	}
	return Success(content, st)
}

// clone returns a matcher with its own scan state for one worker.
func (m *matcher) clone() *matcher {
	c := *m
	c.dfa = m.dfa.clone()
	if m.lits == nil {
		return &c
	}
	c.lits = make([]*literal, len(m.lits))
	for i, l := range m.lits {
		cp := *l
		c.lits[i] = &cp
	}
	return &c
}

// fileHeap is a max-heap of file results by path.
type fileHeap []*fileResult

func (h fileHeap) Len() int { return len(h) }
func (h fileHeap) Less(i, j int) bool {
	return workspace.ComparePaths(h[i].path, h[j].path) > 0
}
func (h fileHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *fileHeap) Push(x any)   { *h = append(*h, x.(*fileResult)) }
func (h *fileHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sensitive matches paths against the paths.sensitive globs, fast enough to
// ask about every entry of a walk: a glob without a slash, or "**/" and a
// name, matches the base name; "**/name/**" a directory's name; any other
// glob the whole path (doublestar). Directories are asked first, so what is
// below a matching directory is never reached.
type sensitive struct {
	names []namePattern // base names of files and directories
	dirs  []namePattern // directory names
	paths []string      // whole relative paths
}

// namePattern is a glob on one name, with fast paths for "x*", "*x", "x".
type namePattern struct {
	glob           string
	prefix, suffix string
	kind           byte // '=' exact, '<' prefix, '>' suffix, '*' glob
}

func newNamePattern(g string) namePattern {
	p := namePattern{glob: g, kind: '*'}
	meta := func(s string) bool { return strings.ContainsAny(s, `*?[\`) }
	switch {
	case !meta(g):
		p.kind, p.prefix = '=', g
	case strings.HasSuffix(g, "*") && !meta(g[:len(g)-1]):
		p.kind, p.prefix = '<', g[:len(g)-1]
	case strings.HasPrefix(g, "*") && !meta(g[1:]):
		p.kind, p.suffix = '>', g[1:]
	}
	return p
}

func (p namePattern) match(name string) bool {
	switch p.kind {
	case '=':
		return name == p.prefix
	case '<':
		return strings.HasPrefix(name, p.prefix)
	case '>':
		return strings.HasSuffix(name, p.suffix)
	}
	ok, _ := path.Match(p.glob, name)
	return ok
}

func newSensitive(globs []string) *sensitive {
	s := &sensitive{}
	for _, g := range globs {
		g = strings.TrimPrefix(g, "/")
		rest, deep := strings.CutPrefix(g, "**/")
		switch {
		case !strings.Contains(g, "/"):
			s.names = append(s.names, newNamePattern(g))
		case deep && !strings.Contains(rest, "/"):
			s.names = append(s.names, newNamePattern(rest))
		case deep && strings.HasSuffix(rest, "/**") && !strings.Contains(strings.TrimSuffix(rest, "/**"), "/"):
			s.dirs = append(s.dirs, newNamePattern(strings.TrimSuffix(rest, "/**")))
		default:
			s.paths = append(s.paths, g)
		}
	}
	return s
}

func (s *sensitive) empty() bool { return len(s.names)+len(s.dirs)+len(s.paths) == 0 }

func (s *sensitive) match(rel string, isDir bool) bool {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for _, p := range s.names {
		if p.match(name) {
			return true
		}
	}
	if isDir {
		for _, p := range s.dirs {
			if p.match(name) {
				return true
			}
		}
	}
	for _, g := range s.paths {
		if ok, _ := doublestar.Match(g, rel); ok {
			return true
		}
		if isDir && strings.HasSuffix(g, "/**") {
			if ok, _ := doublestar.Match(g, rel+"/x"); ok {
				return true
			}
		}
	}
	return false
}
