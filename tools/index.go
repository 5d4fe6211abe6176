package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/agentls/agentls/codeindex"
	"github.com/agentls/agentls/workspace"
)

// The code-intelligence tools (diagnostics, symbols, definition,
// references, hover) answer from the session's code index (Session.Index).
// The LSP server builds it after initialized, with progress; a session
// without a server (the call command) builds it on first use.

// Index returns the call's workspace index, building it in the background
// if nobody has started it yet.
func (c *Call) Index() *codeindex.Index {
	ix := c.Session.Index
	ix.Start(nil)
	return ix
}

// indexWait bounds how long a query waits for the first build before it
// answers from a partial index.
const indexWait = 20 * time.Second

// builtIndex returns the call's index after waiting (up to indexWait) for
// its first build, reporting progress meanwhile.
func (c *Call) builtIndex() *codeindex.Index {
	ix := c.Index()
	if st := ix.Status(); st.Complete || !st.Building {
		return ix
	}
	c.Progress.Report("waiting for the workspace index", -1)
	ctx, cancel := context.WithTimeout(c.Ctx, indexWait)
	defer cancel()
	ix.Wait(ctx)
	return ix
}

// positionArgs are the arguments of definition, references and hover.
type positionArgs struct {
	Path   string `json:"path"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Symbol string `json:"symbol"`
}

// positionSchema is the schema of positionArgs; extra is more properties.
func positionSchema(extra string) string {
	return `{"type":"object","additionalProperties":false,"properties":{
		"path":{"type":"string","description":"file, relative to the workspace root"},
		"line":{"type":"integer","minimum":1,"description":"1-based line"},
		"column":{"type":"integer","minimum":1,"description":"1-based byte column of any character of the identifier (as grep reports columns)"},
		"symbol":{"type":"string","description":"instead of line and column: a name, optionally qualified: \"NewReader\", \"bufio.NewReader\", \"Reader.Read\"; with path, the declaration in that file comes first; with path and line, the name's occurrence on that line"}` + extra + `}}`
}

// validatePosition checks that the call names a position or a symbol.
func validatePosition(a positionArgs) error {
	switch {
	case a.Symbol != "" && a.Column != 0:
		return Errorf(InvalidParams, "give either symbol (optionally with path, or path and line), or path with line and column, not both")
	case a.Symbol != "" && a.Line != 0 && a.Path == "":
		return Errorf(InvalidParams, "a line needs a path")
	case a.Symbol == "" && (a.Path == "" || a.Line == 0 || a.Column == 0):
		return Errorf(InvalidParams, "give path, line and column (1-based), or symbol")
	}
	return nil
}

// resolvePosition makes the path of a position absolute. A symbol with a
// path becomes the position of its declaration in that file, when the file
// declares it; otherwise the symbol is looked up in the whole workspace.
func (c *Call) resolvePosition(a *positionArgs) (string, error) {
	if a.Symbol == "" {
		return c.Workspace.Resolve(a.Path)
	}
	if a.Path == "" {
		return "", nil
	}
	path, err := c.Workspace.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	if a.Line != 0 {
		// symbol on a line: the column of its first whole-word occurrence
		text, err := c.Workspace.ReadFile(path)
		if err != nil {
			return "", fileError(c.Workspace.Rel(path), err)
		}
		lines := strings.Split(string(text), "\n")
		if a.Line > len(lines) {
			return "", Errorf(InvalidParams, "line %d is out of range (%s has %d lines)", a.Line, c.Workspace.Rel(path), len(lines))
		}
		name := a.Symbol[strings.LastIndexByte(a.Symbol, '.')+1:]
		col := wordColumn(lines[a.Line-1], name)
		if col == 0 {
			return "", Errorf(InvalidParams, "%s does not occur on line %d of %s", name, a.Line, c.Workspace.Rel(path))
		}
		a.Column, a.Symbol = col, ""
		return path, nil
	}
	syms, err := c.Index().Outline(path)
	if err != nil {
		return "", fileError(c.Workspace.Rel(path), err)
	}
	if s, ok := findDeclared(syms, a.Symbol); ok {
		a.Line, a.Column, a.Symbol = s.Line, s.Column, ""
		return path, nil
	}
	return "", nil
}

// askIndex answers definition, references or hover for the call's
// position or symbol (resolvePosition). bySymbol looks a symbol up in the
// built index. at answers a position: in a Go file from the index as it is
// (the type checker needs no first build) unless whole says the answer
// needs every file, otherwise from the built index. A failure becomes the
// model's error (indexError).
func askIndex(c *Call, a *positionArgs, whole bool,
	bySymbol func(ix *codeindex.Index) (*answer, error),
	at func(ix *codeindex.Index, path string) (*answer, error)) (*answer, error) {
	path, err := c.resolvePosition(a)
	if err != nil {
		return nil, err
	}
	var ans *answer
	if a.Symbol != "" {
		ans, err = bySymbol(c.builtIndex())
	} else {
		ix := c.Index()
		if whole || !isGo(path) {
			ix = c.builtIndex()
		}
		ans, err = at(ix, path)
	}
	if err != nil {
		return nil, indexError(c, path, err)
	}
	return ans, nil
}

// wordColumn is the 1-based byte column of the first whole-word
// occurrence of w in line, or 0.
func wordColumn(line, w string) int {
	isWord := func(c byte) bool {
		return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
	}
	for i := 0; ; {
		j := strings.Index(line[i:], w)
		if j < 0 || w == "" {
			return 0
		}
		s, e := i+j, i+j+len(w)
		if (s == 0 || !isWord(line[s-1])) && (e == len(line) || !isWord(line[e])) {
			return s + 1
		}
		i = s + 1
	}
}

// findDeclared finds a symbol ("Name", "Type.Name") in an outline.
func findDeclared(syms []codeindex.Symbol, symbol string) (codeindex.Symbol, bool) {
	qual, name := "", symbol
	if i := strings.LastIndexByte(symbol, '.'); i >= 0 {
		qual, name = symbol[:i], symbol[i+1:]
	}
	for _, s := range syms {
		if s.Name == name && (qual == "" || qual == s.Container || strings.HasSuffix(qual, "."+s.Container)) {
			return s, true
		}
		if d, ok := findDeclared(s.Children, symbol); ok {
			return d, true
		}
	}
	return codeindex.Symbol{}, false
}

// indexError turns an index failure into the model's error.
func indexError(c *Call, path string, err error) error {
	var pe *codeindex.PositionError
	switch {
	case errors.As(err, &pe):
		return Errorf(InvalidParams, "%s", pe.Msg)
	case errors.Is(err, fs.ErrNotExist):
		return Errorf(FileNotFound, "%s does not exist", c.Workspace.Rel(path))
	case strings.HasPrefix(err.Error(), "no symbol named"):
		return Errorf(NoMatch, "%v; try symbols with a query to search names fuzzily", err)
	case c.Ctx.Err() != nil:
		return c.Ctx.Err()
	}
	return Errorf(ExecutionError, "%v", err)
}

// location is a structured location: path relative to the root.
type location struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
}

func (c *Call) locations(ls []codeindex.Location) []location {
	out := make([]location, len(ls))
	for i, l := range ls {
		out[i] = location{Path: c.Workspace.Rel(l.Path), Line: l.Line, Column: l.Column, EndLine: l.EndLine, EndColumn: l.EndColumn}
	}
	return out
}

// locationsOutputSchema is definition's and references' output schema.
const locationsOutputSchema = `{"type":"object","required":["locations","precision","partial"],"properties":{
	"locations":{"type":"array","items":{"type":"object","required":["path","line","column","end_line","end_column"],"properties":{
		"path":{"type":"string"},"line":{"type":"integer"},"column":{"type":"integer"},
		"end_line":{"type":"integer"},"end_column":{"type":"integer"}}}},
	"precision":{"enum":["type","name"]},"partial":{"type":"boolean"},
	"name":{"type":"string"},"kind":{"type":"string"},"note":{"type":"string"}}}`

// lineReader returns lines of files for a result's content, reading each
// file once.
type lineReader struct {
	c     *Call
	files map[string][]string
}

// line is a file's 1-based line, trimmed and cut to 160 bytes ("" when
// unreadable).
func (r *lineReader) line(path string, n int) string {
	if r.files == nil {
		r.files = map[string][]string{}
	}
	ls, ok := r.files[path]
	if !ok {
		if data, err := r.c.Workspace.ReadFile(path); err == nil {
			ls = strings.Split(string(data), "\n")
		}
		r.files[path] = ls
	}
	if n < 1 || n > len(ls) {
		return ""
	}
	t := strings.TrimSpace(ls[n-1])
	if len(t) > 160 {
		t = workspace.CutLine(t, 160)
	}
	return t
}

// maxContentLocations caps the locations listed in a result's content.
const maxContentLocations = 300

// answerResult builds definition's and references' result.
func answerResult(c *Call, a *codeindex.Answer, what string) *Result {
	locs := c.locations(a.Locations)
	var b strings.Builder
	switch len(locs) {
	case 0:
		fmt.Fprintf(&b, "no %s found for %s", what, a.Name)
	case 1:
		fmt.Fprintf(&b, "1 %s of %s %s", what, a.Kind, a.Name)
	default:
		fmt.Fprintf(&b, "%d %ss of %s %s", len(locs), what, a.Kind, a.Name)
	}
	if a.Precision == codeindex.PrecisionName {
		b.WriteString(" (by name: may include unrelated symbols of the same name)")
	}
	if a.Partial {
		b.WriteString(" (partial: the index is incomplete)")
	}
	b.WriteString("\n")
	lines := lineReader{c: c}
	for i, l := range locs {
		if i == maxContentLocations {
			fmt.Fprintf(&b, "(%d more in structured.locations)\n", len(locs)-i)
			break
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s\n", l.Path, l.Line, l.Column, lines.line(a.Locations[i].Path, l.Line))
	}
	if a.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", a.Note)
	}
	s := map[string]any{"locations": locs, "precision": a.Precision, "partial": a.Partial, "name": a.Name, "kind": a.Kind}
	if a.Note != "" {
		s["note"] = a.Note
	}
	return Success(b.String(), s)
}

type answer = codeindex.Answer

// isGo reports whether a file gets the type checker's answers (which do
// not need the index's first build).
func isGo(path string) bool { return codeindex.Language(path) == "go" }
