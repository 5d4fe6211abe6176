package search

import (
	"bytes"
	"container/heap"
	"iter"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentls/agentls/workspace"
)

// Result is what a search found.
type Result struct {
	Mode Mode
	// Limit is the most result units the search kept (Options.Limit, or
	// its default).
	Limit int
	// Files are the files with matches, sorted by path (ComparePaths):
	// enough of them for Limit units, the last one possibly with more.
	// Empty when the results were streamed.
	Files []*File
	// Truncated: there were more than Limit units.
	Truncated bool
	// Streamed: the results went to Options.Partial; StreamedUnits units
	// from StreamedFiles files.
	Streamed                     bool
	StreamedUnits, StreamedFiles int
	// Searched counts the files searched (or skipped by the cache as
	// unable to match).
	Searched int64
	// Walked: the search walked the file system (false when the path was
	// an open document not on disk: then TooLarge and Binary are not
	// counted).
	Walked bool
	// TooLarge counts the files skipped as larger than limits.maxFileBytes,
	// Binary the files whose search stopped at binary data after a match,
	// as ripgrep warns of them (binaryCutoff: a file with a NUL byte in
	// its first 64 KiB shows nothing and does not count).
	TooLarge, Binary int64
}

// File is what one file contributes to a result.
type File struct {
	Path string
	// Count is the number of matching lines (all of them in Count mode).
	Count int
	// Matches are set in Content mode, in order.
	Matches []Match
	// lines are the matches' lines and the context lines, in order (see
	// Lines); nil when they are the matches' own, one a match.
	lines []Line
	// seq is the file's place in the index's plan, from 1, which is path
	// order (0: found by a walk): results are ordered by it rather than
	// by comparing paths.
	seq int
}

// after reports whether a sorts after b in a result.
func (a *File) after(b *File) bool {
	if a.seq != 0 && b.seq != 0 {
		return a.seq > b.seq
	}
	return workspace.ComparePaths(a.Path, b.Path) > 0
}

// Lines yields the lines of a Content result's file in order: the
// matches' lines and the context lines. Without context, and with no
// match over several lines, they are made from the Matches as they are
// yielded (an output-heavy search's lines are not kept twice).
func (f *File) Lines() iter.Seq[Line] {
	return func(yield func(Line) bool) {
		if f.lines != nil {
			for _, l := range f.lines {
				if !yield(l) {
					return
				}
			}
			return
		}
		prev := 0
		for i := range f.Matches {
			m := &f.Matches[i]
			if !yield(Line{N: m.Line, Text: m.Text, Starts: i, Match: true, Gap: prev > 0 && m.Line > prev+1}) {
				return
			}
			prev = m.Line
		}
	}
}

// Line is one line of a Content result: a matching line or a context line.
type Line struct {
	N    int
	Text string
	// Starts is the index in Matches of the match this line starts, or -1.
	Starts int
	// Match: the line is (part of) a match; else a context line.
	Match bool
	// Gap: lines were skipped before this one.
	Gap bool
}

// state is one search's state, shared by the walk's workers.
type state struct {
	mode          Mode
	limit         int
	before, after int
	maxLine       int
	partial       func(Batch) // results go out as they are found
	matchers      []*matcher  // one per worker
	bufs          [][]byte    // one per worker

	searched, binary, unreadable, tooLarge atomic.Int64

	mu        sync.Mutex
	kept      fileHeap // the files that may be in the result; a heap, largest path on top, once heaped
	heaped    bool
	units     int // the result units (lines, files or counts) in kept
	truncated bool
	// anyTruncated mirrors truncated for the lock-free fast path of skip.
	anyTruncated atomic.Bool
	pending      Batch // the partial batch
	pendingN     int   // the units in pending
	// streamed and streamedFiles count the units and files sent as
	// partial results.
	streamed, streamedFiles int
}

// newState returns the state of one search with workers workers.
func newState(ws *workspace.Workspace, o *Options, workers int) *state {
	cfg := ws.Config()
	limit := o.Limit
	if limit <= 0 {
		limit = cfg.Limits.GrepMaxResults
	}
	before, after := o.Before, o.After
	if o.Mode != Content {
		before, after = 0, 0
	}
	return &state{
		mode: o.Mode, limit: limit, before: before, after: after,
		maxLine: cfg.Limits.MaxLineLength, partial: o.Partial,
		matchers: make([]*matcher, workers), bufs: make([][]byte, workers),
	}
}

func (r *File) units(mode Mode) int {
	if mode == Content {
		return len(r.Matches)
	}
	return 1
}

// skip reports whether a file cannot make it into the result: the result
// is already truncated and the file sorts after everything kept.
func (s *state) skip(path string) bool {
	if !s.anyTruncated.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.truncated && len(s.kept) > 0 && workspace.ComparePaths(path, s.kept[0].Path) > 0
}

// add keeps a file's result, dropping the files that sort after the first
// limit units.
func (s *state) add(r *File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.truncated && len(s.kept) > 0 && r.after(s.kept[0]) {
		return
	}
	s.units += r.units(s.mode)
	if s.heaped {
		heap.Push(&s.kept, r)
	} else {
		// Nothing is dropped before the limit is reached: until then
		// kept is a list, made a heap once it is.
		s.kept = append(s.kept, r)
		if s.units >= s.limit {
			heap.Init(&s.kept)
			s.heaped = true
		}
	}
	for s.heaped && len(s.kept) > 0 {
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
	if s.partial == nil {
		return
	}
	// The streamed results are the first limit units found: the union of
	// the batches is the whole result.
	room := s.limit - s.streamed
	if room <= 0 {
		return
	}
	switch s.mode {
	case Content:
		n := min(room, len(r.Matches))
		s.pending.Matches = append(s.pending.Matches, r.Matches[:n]...)
		s.pendingN += n
		s.streamed += n
	case FilesWithMatches:
		s.pending.Files = append(s.pending.Files, r.Path)
		s.pendingN++
		s.streamed++
	case Count:
		if s.pending.Counts == nil {
			s.pending.Counts = map[string]int{}
		}
		s.pending.Counts[r.Path] = r.Count
		s.pendingN++
		s.streamed++
	}
	s.streamedFiles++
	if s.pendingN >= 100 {
		s.flushLocked()
	}
}

func (s *state) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked()
}

// flushLocked sends the pending batch to Options.Partial. Batches come as
// files are searched, in no order.
func (s *state) flushLocked() {
	if s.pendingN > 0 && s.partial != nil {
		s.partial(s.pending)
	}
	s.pending, s.pendingN = Batch{}, 0
}

// searchFile searches one file's bytes.
func (s *state) searchFile(m *matcher, data []byte, path string) *File {
	hits := m.hits[:0]
	defer func() { m.hits = hits[:0] }()
	cutoff := -1 // where ripgrep would stop reading (binary data), computed at the first hit
	// One more than the limit says there were more; the matches within the
	// after-context of the last one kept are shown as matches (ripgrep's way).
	maxHits := s.limit + 1 + s.after
	m.search(data, func(h hit) bool {
		if cutoff < 0 {
			cutoff = binaryCutoff(data)
			if h.start < cutoff && cutoff < len(data) {
				s.binary.Add(1) // ripgrep: "stopped searching binary file after match"
			}
		}
		if h.start >= cutoff {
			return false
		}
		hits = append(hits, h)
		switch s.mode {
		case FilesWithMatches:
			return false
		case Content:
			return len(hits) < maxHits
		}
		return true
	})
	if len(hits) == 0 {
		return nil
	}
	r := &File{Path: path, Count: len(hits)}
	if s.mode != Content {
		return r
	}
	// The texts of the file's lines go into one string (a Builder, sized
	// for the matching lines and their context): one allocation a file
	// rather than one a line.
	t := &m.texts
	t.b, t.ends, t.spans, t.marks, t.maxLine = strings.Builder{}, t.ends[:0], t.spans[:0], t.marks[:0], s.maxLine
	size := 0
	oneLine := s.before == 0 && s.after == 0
	for _, h := range hits {
		size += h.spanEnd - h.start
		oneLine = oneLine && h.endLine == h.line
	}
	t.b.Grow(size * (1 + s.before + s.after))
	r.Matches = make([]Match, len(hits))
	if oneLine {
		// Each line is a match's only line, and its text the match's:
		// the Lines are the Matches (File.Lines), not kept twice.
		for i, h := range hits {
			r.Matches[i] = Match{Path: path, Line: h.line, Column: h.col}
			t.add(data[h.start:h.spanEnd])
		}
		all := t.b.String()
		t.b = strings.Builder{}
		for i := range r.Matches {
			r.Matches[i].Text = t.text(all, i)
		}
		return r
	}
	r.lines = make([]Line, 0, len(hits))
	// Each Line's Text is set at the end from its span; a match's text
	// span is marks[i].
	marks := t.marks
	lastOut := 0 // the last line written
	for i, h := range hits {
		r.Matches[i] = Match{Path: path, Line: h.line, Column: h.col}
		marks = append(marks, t.add(data[h.start:h.spanEnd]))
		// Lines before, back to the last line written, in order.
		first := max(h.line-s.before, lastOut+1)
		start := h.start
		for n := h.line - 1; n >= first; n-- {
			start = bytes.LastIndexByte(data[:start-1], '\n') + 1
		}
		for n := first; n < h.line; n++ {
			end := start + bytes.IndexByte(data[start:], '\n')
			r.lines = append(r.lines, Line{N: n, Starts: -1})
			t.line(data[start:end])
			start = end + 1
		}
		// The match's own lines (several for a multiline match).
		starts := i
		for n, start := h.line, h.start; ; n++ {
			end := bytes.IndexByte(data[start:h.spanEnd], '\n')
			if end < 0 {
				r.lines = append(r.lines, Line{N: n, Match: true, Starts: starts})
				if start == h.start {
					t.spans = append(t.spans, marks[i]) // a one-line match's line is its text
				} else {
					t.line(data[start:h.spanEnd])
				}
				break
			}
			r.lines = append(r.lines, Line{N: n, Match: true, Starts: starts})
			t.line(data[start : start+end])
			start += end + 1
			starts = -1
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
			r.lines = append(r.lines, Line{N: n, Starts: -1})
			t.line(data[start:end])
			lastOut = n
			start = end + 1
		}
	}
	t.marks = marks
	all := t.b.String()
	t.b = strings.Builder{}
	for i := range r.Matches {
		r.Matches[i].Text = t.text(all, marks[i])
	}
	prev := 0
	for i := range r.lines {
		r.lines[i].Text = t.text(all, t.spans[i])
		r.lines[i].Gap = prev > 0 && r.lines[i].N > prev+1
		prev = r.lines[i].N
	}
	return r
}

// texts builds the printable texts of one file's lines in one string
// (b): add appends one and returns its index in ends, line appends one
// for the next Line (its index in spans).
type texts struct {
	b       strings.Builder
	ends    []int // where each text ends in b (it starts where the one before ends)
	spans   []int // the text of each Line, an index in ends
	marks   []int // the text of each Match, an index in ends
	maxLine int
}

// add appends the printable text of b (no trailing CR, a long line cut)
// and returns its index.
func (t *texts) add(b []byte) int {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if t.maxLine > 0 && len(b) > t.maxLine {
		t.b.WriteString(workspace.CutLine(string(b), t.maxLine))
	} else {
		t.b.Write(b)
	}
	t.ends = append(t.ends, t.b.Len())
	return len(t.ends) - 1
}

// line adds the text of the next Line.
func (t *texts) line(b []byte) { t.spans = append(t.spans, t.add(b)) }

// text is the text i of all, b's string.
func (t *texts) text(all string, i int) string {
	start := 0
	if i > 0 {
		start = t.ends[i-1]
	}
	return all[start:t.ends[i]]
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

// result sorts what was kept; after streaming, the counts only.
func (s *state) result() *Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := &Result{
		Mode: s.mode, Limit: s.limit, Truncated: s.truncated,
		Searched: s.searched.Load(), Binary: s.binary.Load(),
	}
	if s.partial != nil {
		r.Streamed, r.StreamedUnits, r.StreamedFiles = true, s.streamed, s.streamedFiles
		return r
	}
	r.Files = []*File(s.kept)
	sort.Slice(r.Files, func(i, j int) bool { return r.Files[j].after(r.Files[i]) })
	return r
}

// fileHeap is a max-heap of file results by path.
type fileHeap []*File

func (h fileHeap) Len() int           { return len(h) }
func (h fileHeap) Less(i, j int) bool { return h[i].after(h[j]) }
func (h fileHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fileHeap) Push(x any)        { *h = append(*h, x.(*File)) }
func (h *fileHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
