package patch

import (
	"fmt"
	"slices"
	"strings"
)

// Match says how loosely a chunk's lines were found in the file.
type Match int

// The levels of matching, strictest first.
const (
	Exact         Match = iota
	TrailingSpace       // equal once whitespace at line ends is ignored
	Space               // equal once whitespace around lines is ignored
	Punctuation         // equal once typographic dashes, quotes and spaces read as ASCII
)

func (m Match) String() string {
	switch m {
	case Exact:
		return "exactly"
	case TrailingSpace:
		return "when whitespace at line ends is ignored"
	case Space:
		return "when whitespace around lines is ignored"
	case Punctuation:
		return "when typographic dashes, quotes and spaces are read as ASCII"
	}
	return fmt.Sprintf("Match(%d)", int(m))
}

// ChunkError is a chunk that cannot be placed in the file.
type ChunkError struct {
	Chunk int // from 1
	Line  int // the chunk's first line in the patch
	Msg   string
}

func (e *ChunkError) Error() string {
	return fmt.Sprintf("chunk %d (line %d of the patch): %s", e.Chunk, e.Line, e.Msg)
}

// Apply applies an Update's chunks to text (LF line endings) and returns
// the new text, which ends with "\n" unless it is empty, and how loosely
// each chunk matched. When a chunk cannot be placed, every such chunk is
// returned as an error and the text is not changed.
//
// Each chunk's Old lines are looked for after the chunk before it, and
// after its Context line when it has one; an EOF chunk at the end of the
// file first. When that fails they are looked for from the Context line
// itself (models repeat it as the first context line), without the empty
// lines that end them (blank lines between chunks), and then anywhere they
// overlap no other chunk (lines moved since the model read the file). At
// each place, lines compare exactly, then by the looser Match levels in
// order; a stricter level anywhere wins over a looser one. A chunk without
// Old lines inserts its New lines after its Context line, or at the end.
func Apply(text string, chunks []Chunk) (string, []Match, []*ChunkError) {
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") || text == "" {
		lines = lines[:len(lines)-1]
	}
	var (
		repls   spans
		matches = make([]Match, len(chunks))
		fails   []*ChunkError
		cursor  int
	)
	for i, c := range chunks {
		fail := func(format string, args ...any) {
			fails = append(fails, &ChunkError{Chunk: i + 1, Line: c.Line, Msg: fmt.Sprintf(format, args...)})
		}
		from, anchor := cursor, -1
		if c.Context != "" {
			at, m := seek(lines, []string{c.Context}, cursor, false)
			if at < 0 {
				at, m = seek(lines, []string{c.Context}, 0, false)
			}
			if at < 0 {
				fail("the file has no line %q (the chunk's @@ context)", c.Context)
				continue
			}
			from, anchor, matches[i] = at+1, at, m
		}
		if len(c.Old) == 0 {
			at := len(lines)
			if c.Context != "" && !c.EOF {
				at = from
			}
			repls = append(repls, span{i + 1, at, 0, c.New})
			cursor = at
			continue
		}
		old, nw := c.Old, c.New
		at, m := seek(lines, old, from, c.EOF)
		if at < 0 && anchor >= 0 {
			at, m = seek(lines, old, anchor, c.EOF)
		}
		if at < 0 && old[len(old)-1] == "" {
			for len(old) > 0 && old[len(old)-1] == "" && len(nw) > 0 && nw[len(nw)-1] == "" {
				old, nw = old[:len(old)-1], nw[:len(nw)-1]
			}
			if len(old) > 0 {
				at, m = seek(lines, old, from, c.EOF)
			}
		}
		if at >= 0 && repls.overlap(at, len(old)) != 0 {
			at = -1
		}
		taken := 0 // a chunk whose lines these are
		if at < 0 && len(old) > 0 {
			// Anywhere else, where no other chunk is.
			for a, am := seek(lines, old, 0, false); a >= 0; a, am = seek(lines, old, a+1, false) {
				if taken = repls.overlap(a, len(old)); taken == 0 {
					at, m = a, am
					break
				}
			}
		}
		if at < 0 {
			if taken != 0 {
				fail("its lines are the ones chunk %d already changes; give each change one chunk", taken)
				continue
			}
			fail("the file has no lines\n%s\n(the chunk's ' ' and '-' lines, in this order)", indent(c.Old))
			continue
		}
		matches[i] = max(matches[i], m)
		repls = append(repls, span{i + 1, at, len(old), nw})
		cursor = at + len(old)
	}
	if len(fails) > 0 {
		return text, nil, fails
	}
	slices.SortStableFunc(repls, func(a, b span) int { return a.start - b.start })
	out := make([]string, 0, len(lines))
	pos := 0
	for _, r := range repls {
		out = append(out, lines[pos:r.start]...)
		out = append(out, r.new...)
		pos = r.start + r.n
	}
	out = append(out, lines[pos:]...)
	if len(out) == 0 {
		return "", matches, nil
	}
	return strings.Join(out, "\n") + "\n", matches, nil
}

// span is where a chunk replaces n lines from start with new.
type span struct {
	chunk, start, n int
	new             []string
}

type spans []span

// overlap returns the chunk whose lines overlap n lines from start, or 0.
func (ss spans) overlap(start, n int) int {
	for _, s := range ss {
		if start < s.start+s.n && s.start < start+n {
			return s.chunk
		}
	}
	return 0
}

func indent(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("    " + l)
	}
	return b.String()
}

// seek finds pattern in lines at or after start and returns its index and
// how loosely it matched, or -1. With eof the end of the file is tried
// first at each level.
func seek(lines, pattern []string, start int, eof bool) (int, Match) {
	if len(pattern) > len(lines) || start > len(lines)-len(pattern) {
		if len(pattern) == 0 {
			return start, Exact
		}
		return -1, Exact
	}
	for level := Exact; level <= Punctuation; level++ {
		eq := func(at int) bool {
			for j, p := range pattern {
				if !sameAt(lines[at+j], p, level) {
					return false
				}
			}
			return true
		}
		if end := len(lines) - len(pattern); eof && eq(end) {
			return end, level
		}
		for at := start; at+len(pattern) <= len(lines); at++ {
			if eq(at) {
				return at, level
			}
		}
	}
	return -1, Exact
}

// sameAt compares a file line with a patch line at a level of looseness.
func sameAt(line, want string, level Match) bool {
	switch level {
	case Exact:
		return line == want
	case TrailingSpace:
		return strings.TrimRight(line, " \t\r") == strings.TrimRight(want, " \t\r")
	case Space:
		return strings.TrimSpace(line) == strings.TrimSpace(want)
	}
	return asciiPunct(strings.TrimSpace(line)) == asciiPunct(strings.TrimSpace(want))
}

// asciiPunct reads typographic dashes, quotes and spaces as their ASCII
// counterparts.
var asciiPunct = strings.NewReplacer(
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
	"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
	"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
).Replace
