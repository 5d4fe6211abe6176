package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentls/agentls/search"
)

// Grep is grep: ripgrep's search, with ripgrep's defaults (ignore files,
// hidden files and binary files skipped), run in process by the search
// engine (package search). This file reads the arguments and turns the
// engine's results and errors into the tool's.
var Grep = builtin(Def[grepArgs]{
	Spec: Spec{
		Name:     "grep",
		Category: "fs",
		Title:    "Search file contents",
		Description: "Searches the contents of the workspace's files for a regular expression (RE2 syntax, as Go and ripgrep read it), " +
			"like ripgrep: files listed in .gitignore/.ignore, hidden files and binary files are skipped. Reads the editor's unsaved buffers for open files. " +
			"output_mode \"content\" (default) gives `path:line:text` lines (with context lines `path-line-text` when context/before/after are set), " +
			"\"files_with_matches\" the paths of matching files, \"count\" `path:count` lines. Paths are relative to the workspace root, sorted. " +
			"Narrow with path (a directory or file), glob (file name globs such as \"*.go\" or \"*.{ts,tsx}\", \"!\" to exclude, comma-separated), " +
			"type (ripgrep type names: go, py, js, ts, rust, java, c, cpp, sh, md, json, yaml, html, css, ...). " +
			"fixed_strings searches the pattern literally; word matches whole words only; multiline lets the pattern match across lines " +
			"(\\n, [\\s\\S]). At most max_results lines (or files, or counts) are returned; truncated says when there were more.",
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		Cacheable:   true,
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
	},
	Execute: grep,
})

// GrepPattern returns the search pattern of grep's arguments (JSON), as
// the tool searches it; false when they do not decode.
func GrepPattern(args json.RawMessage) (search.Pattern, bool) {
	var a grepArgs
	if json.Unmarshal(args, &a) != nil {
		return search.Pattern{}, false
	}
	return a.Pattern, true
}

// grepArgs are grep's arguments: the pattern's (pattern, fixed_strings,
// case_insensitive, word, multiline) and where and how to search.
type grepArgs struct {
	search.Pattern
	Path           string `json:"path"`
	Glob           string `json:"glob"`
	Type           string `json:"type"`
	Context        *int   `json:"context"`
	Before         *int   `json:"before"`
	After          *int   `json:"after"`
	OutputMode     string `json:"output_mode"`
	MaxResults     int    `json:"max_results"`
	IncludeIgnored bool   `json:"include_ignored"`
}

// GrepMatch is one element of grep's structured matches.
type GrepMatch = search.Match

// PartialStreamer is a Progress that says whether its Partial batches reach
// a client (the call has a partialResultToken). Then, as LSP 3.17 asks of
// partial results, grep streams its results as it finds them (at most
// max_results units, in no order, without context lines) and its final
// result carries none of them: only the summary (truncated, the counts of
// what was streamed and searched).
type PartialStreamer interface {
	StreamsPartial() bool
}

func grep(c *Call, a grepArgs) (*Result, error) {
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
	mode := search.Mode(a.OutputMode)
	if mode == "" {
		mode = search.Content
	}
	if mode != search.Content {
		before, after = 0, 0
	}
	opts := search.Options{
		Path: a.Path, Glob: a.Glob, Type: a.Type, IncludeIgnored: a.IncludeIgnored,
		Mode: mode, Limit: a.MaxResults, Before: before, After: after,
		Cache: c.Session.Search,
		// A one-shot call may skip files by the index a server left on
		// disk (search/diskindex.go).
		DiskIndex: c.Session.oneShot,
	}
	if ps, ok := c.Progress.(PartialStreamer); ok && ps.StreamsPartial() {
		opts.Partial = func(b search.Batch) { c.Progress.Partial(partialBatch(mode, b)) }
	}
	p := a.Pattern
	tree := c.dependsOnGrep(a) // the result cache's (resultcache_tree.go)
	res, err := search.Run(c.Ctx, c.Workspace, p, opts)
	tree.done(err == nil)
	if err != nil {
		var ae *search.ArgError
		var fe *search.FileError
		switch {
		case errors.As(err, &ae):
			return nil, Errorf(InvalidParams, "%s", ae.Msg)
		case errors.As(err, &fe):
			return nil, fileError(fe.Rel, fe.Err)
		}
		return nil, err
	}
	var out *Result
	if res.Streamed {
		out = grepStreamSummary(res)
	} else {
		out = grepResult(res, before > 0 || after > 0, after, c.Workspace.Config().Limits.MaxOutputBytes)
	}
	st := out.Structured.(map[string]any)
	st["files_searched"] = res.Searched
	if res.Walked {
		st["skipped_too_large"] = res.TooLarge
		st["skipped_binary"] = res.Binary
	}
	return out, nil
}

// partialBatch is a streamed batch in the shape of the structured result:
// {"matches": [...]}, {"files": [...]} or {"counts": {...}}.
func partialBatch(mode search.Mode, b search.Batch) map[string]any {
	switch mode {
	case search.Content:
		return map[string]any{"matches": anys(b.Matches)}
	case search.FilesWithMatches:
		return map[string]any{"files": anys(b.Files)}
	}
	return map[string]any{"counts": b.Counts}
}

// anys copies s into a []any.
func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// grepResult is the result of a search that was not streamed: the first
// Limit units, as ripgrep prints them (`path:line:text`, context lines
// `path-line-text`, "--" between groups).
func grepResult(res *search.Result, withContext bool, after, maxBytes int) *Result {
	b := cappedText{max: maxBytes}
	st := map[string]any{"truncated": res.Truncated}
	n := 0
	switch res.Mode {
	case search.FilesWithMatches:
		paths := []string{}
		for _, f := range res.Files {
			if n == res.Limit {
				break
			}
			paths = append(paths, f.Path)
			b.WriteString(f.Path)
			b.WriteString("\n")
			n++
		}
		st["files"] = paths
	case search.Count:
		counts := map[string]int{}
		for _, f := range res.Files {
			if n == res.Limit {
				break
			}
			counts[f.Path] = f.Count
			b.WriteString(f.Path)
			b.WriteString(":")
			b.WriteString(strconv.Itoa(f.Count))
			b.WriteString("\n")
			n++
		}
		st["counts"] = counts
	default:
		// The listed matches are runs of each file's Matches (they come
		// in order), kept where they are rather than copied into one list.
		matches := make(search.MatchRuns, 0, len(res.Files))
		var cur *search.File
		var lo, hi int
		flush := func() {
			if cur != nil {
				matches = append(matches, cur.Matches[lo:hi])
			}
		}
		contentLines(res, after, func(f *search.File, l search.Line, first, listed bool) {
			if listed {
				if cur != f || l.Starts != hi {
					flush()
					cur, lo, hi = f, l.Starts, l.Starts
				}
				hi++
			}
			if withContext && (l.Gap || first) {
				b.WriteString("--\n")
			}
			sep := "-"
			if l.Match {
				sep = ":"
			}
			b.WriteString(f.Path)
			b.WriteString(sep)
			b.WriteInt(l.N)
			b.WriteString(sep)
			b.WriteString(l.Text)
			b.WriteString("\n")
		})
		flush()
		st["matches"] = matches
	}
	content := b.String()
	if b.size == 0 {
		content = "No matches found.\n"
	}
	return Success(content+grepTruncated(res), st)
}

// contentLines calls fn with the lines of a Content result that grep
// shows, in order: the lines of the first Limit matches and their
// context; once the list is full, the after-context of its last match
// still follows (its lines up to after lines past it, matching ones marked
// as matches but not counted, as ripgrep prints them). first: the first
// line of a file after the first file; listed: the line starts a match
// that is in the list.
func contentLines(res *search.Result, after int, fn func(f *search.File, l search.Line, first, listed bool)) {
	n := 0
	full, inLast, end := false, false, 0
	for fi, f := range res.Files {
		if full {
			return
		}
		li := -1
		for l := range f.Lines() {
			li++
			if full && l.N > end && !(inLast && l.Match && l.Starts < 0) {
				return // (a kept match's own lines always show)
			}
			listed := false
			if l.Starts >= 0 {
				inLast = !full
				if !full {
					listed = true
					n++
				}
			}
			if l.Match && inLast {
				end = l.N + after
			}
			full = n == res.Limit
			fn(f, l, li == 0 && fi > 0, listed)
		}
	}
}

// cappedText builds grep's text, bounded by max bytes (none when max <= 0):
// past max+1 bytes it keeps nothing more, only counts (size, lines), since
// the text is cut at max anyway. An output-heavy search (tens of thousands
// of lines) then does not build the text it throws away; what it keeps is
// the same start of the same text.
type cappedText struct {
	b     strings.Builder
	max   int
	size  int // bytes of the whole text
	lines int // its newlines
}

func (c *cappedText) WriteString(s string) {
	c.size += len(s)
	c.lines += strings.Count(s, "\n")
	if c.max <= 0 || c.b.Len() <= c.max {
		c.reserve(len(s))
		c.b.WriteString(s)
	}
}

// reserve makes room for n more bytes: past a few kilobytes, room for all
// max bytes at once, which an output-heavy search reaches, rather than
// doubling up to it (a garbage of twice its size).
func (c *cappedText) reserve(n int) {
	const small = 4 << 10
	if c.max > small && c.b.Len() >= small && c.b.Len()+n > c.b.Cap() {
		c.b.Grow(c.max + small - c.b.Len())
	}
}

// WriteInt writes n in decimal, without allocating.
func (c *cappedText) WriteInt(n int) {
	var buf [20]byte
	d := strconv.AppendInt(buf[:0], int64(n), 10)
	c.size += len(d)
	if c.max <= 0 || c.b.Len() <= c.max {
		c.reserve(len(d))
		c.b.Write(d)
	}
}

// String is the text, cut at the last whole line within max bytes when it
// is longer, with a note that says so (limits.maxOutputBytes; structured
// keeps every match).
func (c *cappedText) String() string {
	content := c.b.String()
	if c.max <= 0 || c.size <= c.max {
		return content
	}
	cut := strings.LastIndexByte(content[:c.max], '\n') + 1
	return content[:cut] + fmt.Sprintf("[content cut at %d of %d lines (limits.maxOutputBytes); every match is in structured; "+
		"narrow the pattern, path, glob or type, lower context, or use output_mode files_with_matches or count]\n",
		strings.Count(content[:cut], "\n"), c.lines)
}

// grepStreamSummary is the final result of a streamed search: no results
// (the partial batches had them all), the counts and truncation.
func grepStreamSummary(res *search.Result) *Result {
	st := map[string]any{"truncated": res.Truncated, "streamed": res.StreamedUnits, "streamed_files": res.StreamedFiles}
	unit := "matching lines"
	switch res.Mode {
	case search.FilesWithMatches:
		st["files"], unit = []string{}, "files"
	case search.Count:
		st["counts"], unit = map[string]int{}, "file counts"
	default:
		st["matches"] = search.MatchRuns{}
	}
	content := fmt.Sprintf("%d %s in %d files, sent as partial results (on the call's partialResultToken), not repeated here.\n", res.StreamedUnits, unit, res.StreamedFiles)
	if res.StreamedUnits == 0 {
		content = "No matches found.\n"
	}
	return Success(content+grepTruncated(res), st)
}

func grepTruncated(res *search.Result) string {
	if !res.Truncated {
		return ""
	}
	return fmt.Sprintf("[results truncated at %d; narrow the pattern, path, glob or type, or raise max_results]\n", res.Limit)
}
