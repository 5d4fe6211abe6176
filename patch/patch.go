// Package patch reads the patch envelope that OpenAI's models write for
// their apply_patch tool and applies its changes to a file's text. It knows
// nothing of files, paths or approvals: tools/apply_patch.go resolves the
// paths, reads the files and plans the edit the person reviews.
//
// The format, as OpenAI publishes its grammar:
//
//	patch   := "*** Begin Patch" LF op+ "*** End Patch" LF?
//	op      := add | delete | update
//	add     := "*** Add File: " path LF ("+" line LF)*
//	delete  := "*** Delete File: " path LF
//	update  := "*** Update File: " path LF ["*** Move to: " path LF] chunk*
//	chunk   := ("@@" | "@@ " context) LF (change LF)+ ["*** End of File" LF]
//	change  := (" " | "-" | "+") line
//
// Read with the leniency of the reference implementation: markers may be
// padded with whitespace; the whole patch may be wrapped in a shell
// here-document (<<'EOF' … EOF); the first chunk of an update may leave out
// its "@@"; an empty line inside a chunk is an empty context line; blank
// lines between chunks are skipped. An update with neither chunks nor a
// move is refused, as is an envelope with no operation.
package patch

import (
	"fmt"
	"strings"
)

// The markers of the format.
const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addMarker    = "*** Add File: "
	deleteMarker = "*** Delete File: "
	updateMarker = "*** Update File: "
	moveMarker   = "*** Move to: "
	eofMarker    = "*** End of File"
)

// Kind is what an operation does to its file.
type Kind int

// The kinds of operation.
const (
	Add    Kind = iota + 1 // create the file with Text, replacing one that exists
	Delete                 // remove the file
	Update                 // apply Chunks to the file, then move it to MoveTo if set
)

func (k Kind) String() string {
	switch k {
	case Add:
		return "Add File"
	case Delete:
		return "Delete File"
	case Update:
		return "Update File"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// File is one operation of a patch.
type File struct {
	Kind   Kind
	Path   string // as written in the patch, surrounding spaces removed
	MoveTo string // Update only: the new path, or ""
	// Text is the new file of an Add: its lines, each ending in "\n".
	Text   string
	Chunks []Chunk // Update only
	Line   int     // the line of the operation's header in the patch, from 1
}

// Chunk is one change of an Update: Old lines become New lines.
type Chunk struct {
	// Context is the text after "@@ ": a line (usually a function or class
	// header) that stands before Old in the file, narrowing where Old is
	// looked for. "" when the chunk has none.
	Context string
	Old     []string // context and removed lines, in file order
	New     []string // context and added lines, in file order
	EOF     bool     // Old ends the file ("*** End of File")
	Line    int      // the chunk's first line in the patch, from 1
}

// SyntaxError is a patch that does not follow the format. Its message says
// what was expected, for the model to write the patch again.
type SyntaxError struct {
	Line int // from 1; 0 when it concerns the whole patch
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d of the patch: %s", e.Line, e.Msg)
	}
	return e.Msg
}

// Is reports whether text is meant as an envelope patch: its first line
// that is not blank (or the one after a here-document opener) is
// "*** Begin Patch".
func Is(text string) bool {
	lines := splitPatch(text)
	if len(lines) > 1 && isHeredocStart(lines[0]) {
		lines = lines[1:]
	}
	return len(lines) > 0 && strings.TrimSpace(lines[0]) == beginMarker
}

// Parse reads an envelope patch. Errors are *SyntaxError.
func Parse(text string) ([]File, error) {
	lines := splitPatch(text)
	first := 1 // the patch line number of lines[0]
	if len(lines) >= 4 && isHeredocStart(lines[0]) && strings.HasSuffix(strings.TrimSpace(lines[len(lines)-1]), "EOF") {
		lines, first = lines[1:len(lines)-1], 2
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != beginMarker {
		return nil, &SyntaxError{Msg: "the first line of the patch must be '" + beginMarker + "'"}
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != endMarker {
		return nil, &SyntaxError{Msg: "the last line of the patch must be '" + endMarker + "'"}
	}
	p := &parser{lines: lines[1 : len(lines)-1], line: first + 1}
	var files []File
	for !p.done() {
		if strings.TrimSpace(p.peek()) == "" {
			p.next()
			continue
		}
		f, err := p.operation()
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, &SyntaxError{Msg: "the patch has no operation: between '" + beginMarker + "' and '" + endMarker +
			"' write '" + addMarker + "path', '" + deleteMarker + "path' or '" + updateMarker + "path' sections"}
	}
	return files, nil
}

// splitPatch splits the patch into lines without their terminators, with
// the surrounding blank text removed.
func splitPatch(text string) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func isHeredocStart(l string) bool {
	switch strings.TrimSpace(l) {
	case "<<EOF", "<<'EOF'", `<<"EOF"`:
		return true
	}
	return false
}

// parser walks the operations' lines; line is the patch line number of
// lines[0].
type parser struct {
	lines []string
	line  int
}

func (p *parser) done() bool   { return len(p.lines) == 0 }
func (p *parser) peek() string { return p.lines[0] }
func (p *parser) next() string {
	l := p.lines[0]
	p.lines, p.line = p.lines[1:], p.line+1
	return l
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return &SyntaxError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// operation reads one Add, Delete or Update section.
func (p *parser) operation() (File, error) {
	at := p.line
	header := strings.TrimSpace(p.next())
	if path, ok := markerValue(header, addMarker); ok {
		f := File{Kind: Add, Path: path, Line: at}
		var b strings.Builder
		for !p.done() && strings.HasPrefix(p.peek(), "+") {
			b.WriteString(p.next()[1:])
			b.WriteByte('\n')
		}
		f.Text = b.String()
		return f, p.checkPath(f.Path, at)
	}
	if path, ok := markerValue(header, deleteMarker); ok {
		return File{Kind: Delete, Path: path, Line: at}, p.checkPath(path, at)
	}
	path, ok := markerValue(header, updateMarker)
	if !ok {
		return File{}, p.errorf(at, "%q is not an operation header: the headers are '%spath', '%spath' and '%spath'",
			header, addMarker, deleteMarker, updateMarker)
	}
	f := File{Kind: Update, Path: path, Line: at}
	if err := p.checkPath(path, at); err != nil {
		return f, err
	}
	if !p.done() {
		if to, ok := markerValue(strings.TrimSpace(p.peek()), moveMarker); ok {
			if err := p.checkPath(to, p.line); err != nil {
				return f, err
			}
			f.MoveTo = to
			p.next()
		}
	}
	for !p.done() {
		l := p.peek()
		if strings.TrimSpace(l) == "" {
			p.next() // a blank line between chunks
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(l), "***") {
			break // the next operation, or a misplaced marker it will report
		}
		c, err := p.chunk(len(f.Chunks) == 0)
		if err != nil {
			return f, err
		}
		f.Chunks = append(f.Chunks, c)
	}
	if len(f.Chunks) == 0 && f.MoveTo == "" {
		return f, p.errorf(at, "the update of %s has no changes: follow '%s%s' with @@ chunks of ' ', '-' and '+' lines (or a '%spath' line to move it)",
			path, updateMarker, path, moveMarker)
	}
	return f, nil
}

// markerValue returns what follows marker on a header line. The space at
// the end of a marker is optional before a value ("*** Add File:a.txt").
func markerValue(header, marker string) (string, bool) {
	bare := strings.TrimSuffix(marker, " ")
	if !strings.HasPrefix(header, bare) {
		return "", false
	}
	return strings.TrimSpace(header[len(bare):]), true
}

func (p *parser) checkPath(path string, line int) error {
	if path == "" {
		return p.errorf(line, "the header names no file")
	}
	return nil
}

// chunk reads one chunk of an Update. first allows it to start without
// its "@@" line.
func (p *parser) chunk(first bool) (Chunk, error) {
	c := Chunk{Line: p.line}
	head := p.peek()
	switch t := strings.TrimSpace(head); {
	case t == "@@":
		p.next()
	case strings.HasPrefix(head, "@@ "):
		c.Context = strings.TrimSpace(head[3:])
		p.next()
	case strings.HasPrefix(t, "@@ "):
		c.Context = strings.TrimSpace(t[3:])
		p.next()
	case !first:
		return c, p.errorf(p.line, "expected a chunk starting with '@@' (or '@@ context'), got %q; "+
			"every changed line starts with ' ' (context), '-' (removed) or '+' (added)", head)
	}
	n := 0
	for !p.done() {
		l := p.peek()
		if strings.TrimSpace(l) == eofMarker {
			if n == 0 {
				return c, p.errorf(p.line, "'%s' ends a chunk that has no lines", eofMarker)
			}
			c.EOF = true
			p.next()
			break
		}
		if l == "" {
			c.Old, c.New = append(c.Old, ""), append(c.New, "")
		} else {
			switch l[0] {
			case ' ':
				c.Old, c.New = append(c.Old, l[1:]), append(c.New, l[1:])
			case '-':
				c.Old = append(c.Old, l[1:])
			case '+':
				c.New = append(c.New, l[1:])
			default:
				if n == 0 {
					return c, p.errorf(p.line, "unexpected line %q in a chunk: every line starts with ' ' (context), '-' (removed) or '+' (added)", l)
				}
				return c, nil // the next chunk or operation
			}
		}
		n++
		p.next()
	}
	if n == 0 {
		return c, p.errorf(c.Line, "the chunk has no lines")
	}
	return c, nil
}
