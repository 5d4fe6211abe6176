package workspace

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Position is an LSP position: a zero-based line and a zero-based offset in
// UTF-16 code units within that line.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is an LSP range, end exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// lineStart returns the byte offset where line begins, or false when text has
// fewer lines. Line terminators are \n, \r\n and \r, as LSP defines them.
func lineStart(text string, line uint32) (int, bool) {
	off := 0
	for l := uint32(0); l < line; l++ {
		i := indexLineEnd(text[off:])
		if i < 0 {
			return len(text), false
		}
		off += i
		if text[off] == '\r' && off+1 < len(text) && text[off+1] == '\n' {
			off++
		}
		off++
	}
	return off, true
}

// indexLineEnd returns the index of the first \n or \r in s, or -1.
func indexLineEnd(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\r' {
			return i
		}
	}
	return -1
}

// Offset converts p into a byte offset in text. A character past the end of
// its line clamps to the line end, as the LSP specification asks; a line past
// the end of the text is an error.
func Offset(text string, p Position) (int, error) {
	start, ok := lineStart(text, p.Line)
	if !ok {
		if p.Line > 0 && p.Character == 0 {
			// the position just after a final line terminator
			if s, ok := lineStart(text, p.Line-1); ok && indexLineEnd(text[s:]) >= 0 {
				return len(text), nil
			}
		}
		return 0, fmt.Errorf("line %d is past the end of the document", p.Line)
	}
	end := len(text)
	if i := indexLineEnd(text[start:]); i >= 0 {
		end = start + i
	}
	units := uint32(0)
	off := start
	for off < end && units < p.Character {
		r, size := utf8.DecodeRuneInString(text[off:end])
		n := uint32(1)
		if r >= 0x10000 {
			n = 2
		}
		if units+n > p.Character {
			break // inside a surrogate pair: stay before the rune
		}
		units += n
		off += size
	}
	return off, nil
}

// PositionOf converts a byte offset in text into an LSP position.
func PositionOf(text string, offset int) Position {
	if offset > len(text) {
		offset = len(text)
	}
	var line uint32
	start := 0
	for i := 0; i < offset; i++ {
		switch text[i] {
		case '\n':
			line++
			start = i + 1
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue
			}
			line++
			start = i + 1
		}
	}
	return Position{Line: line, Character: UTF16Len(text[start:offset])}
}

// UTF16Len is the length of s in UTF-16 code units.
func UTF16Len(s string) uint32 {
	var n uint32
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// LineIndex converts byte offsets of one text to LSP positions quickly.
type LineIndex struct {
	text   string
	starts []int // byte offset of each line start
}

// NewLineIndex indexes text's line starts (\n, \r\n and \r end lines).
func NewLineIndex(text string) *LineIndex {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue
			}
			starts = append(starts, i+1)
		}
	}
	return &LineIndex{text: text, starts: starts}
}

// Position returns the LSP position of a byte offset.
func (x *LineIndex) Position(offset int) Position {
	offset = min(max(offset, 0), len(x.text))
	line := sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > offset }) - 1
	return Position{Line: uint32(line), Character: UTF16Len(x.text[x.starts[line]:offset])}
}

// PositionWalker converts ascending byte offsets of one text to LSP
// positions, scanning the text only up to the last offset asked: a few
// edits near the start of a large text cost little.
type PositionWalker struct {
	text      string
	off       int    // the offset scanned up to
	line      uint32 // its line
	lineStart int    // the offset where that line starts
}

// NewPositionWalker returns a walker at the start of text.
func NewPositionWalker(text string) *PositionWalker { return &PositionWalker{text: text} }

// Position returns the LSP position of offset, which must not be below the
// offset of the previous call.
func (w *PositionWalker) Position(offset int) Position {
	offset = min(max(offset, w.off), len(w.text))
	seg := w.text[w.off:offset]
	if strings.IndexByte(seg, '\r') < 0 {
		if n := strings.Count(seg, "\n"); n > 0 {
			w.line += uint32(n)
			w.lineStart = w.off + strings.LastIndexByte(seg, '\n') + 1
		}
	} else {
		for i := w.off; i < offset; i++ {
			switch w.text[i] {
			case '\n':
				w.line++
				w.lineStart = i + 1
			case '\r':
				if i+1 < len(w.text) && w.text[i+1] == '\n' {
					continue
				}
				w.line++
				w.lineStart = i + 1
			}
		}
	}
	w.off = offset
	return Position{Line: w.line, Character: UTF16Len(w.text[w.lineStart:offset])}
}
