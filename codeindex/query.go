package codeindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentls/agentls/workspace"
)

// The queries of the index. Go files get the type checker's answers; other
// files, and Go files the checker cannot place, get answers by name.

// PositionError is a query position that names no identifier (out of
// range, or on white space); callers report it as bad arguments.
type PositionError struct{ Msg string }

func (e *PositionError) Error() string { return e.Msg }

// maxNameResults caps answers by name.
const maxNameResults = 500

// Definition finds the declaration of the identifier at a 1-based line and
// byte column of a file.
func (ix *Index) Definition(ctx context.Context, p string, line, col int) (*Answer, error) {
	return ix.query(ctx, p, func() (*Answer, error) { return ix.goc.definition(ctx, p, line, col) },
		func(cause error) (*Answer, error) { return ix.definitionByWord(p, line, col, cause) })
}

// References finds the uses of the identifier at a position, its
// declaration included when includeDecl.
func (ix *Index) References(ctx context.Context, p string, line, col int, includeDecl bool) (*Answer, error) {
	return ix.query(ctx, p, func() (*Answer, error) { return ix.goc.references(ctx, p, line, col, includeDecl) },
		func(cause error) (*Answer, error) { return ix.referencesByWord(ctx, p, line, col, cause) })
}

// Hover describes the identifier at a position: its declaration and doc
// comment.
func (ix *Index) Hover(ctx context.Context, p string, line, col int) (*Answer, error) {
	return ix.query(ctx, p, func() (*Answer, error) { return ix.goc.hover(ctx, p, line, col) },
		func(cause error) (*Answer, error) { return ix.hoverByWord(p, line, col, cause) })
}

// query answers with byType for a Go file, and by name (byWord) for other
// files and for a Go file the type checker cannot place; cause is then
// the checker's error.
func (ix *Index) query(ctx context.Context, p string, byType func() (*Answer, error), byWord func(cause error) (*Answer, error)) (*Answer, error) {
	if Language(p) != "go" {
		return byWord(nil)
	}
	a, err := byType()
	if err == nil || isPositionError(err) || ctx.Err() != nil {
		return a, positionErr(err)
	}
	return byWord(err)
}

// isPositionError reports whether the checker failed on the position itself
// rather than on the package.
func isPositionError(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "no identifier at") || strings.HasPrefix(msg, "line ") || strings.HasPrefix(msg, "column ")
}

func positionErr(err error) error {
	if isPositionError(err) {
		return &PositionError{Msg: err.Error()}
	}
	return err
}

// Lookup finds the declarations of a symbol given by name ("NewReader",
// "bufio.NewReader", "Reader.Read"), best first.
func (ix *Index) Lookup(symbol string) ([]Symbol, bool) {
	name := symbol
	if i := strings.LastIndexByte(symbol, '.'); i >= 0 {
		name = symbol[i+1:]
	}
	hits, partial := ix.Search(symbol, 200)
	var out []Symbol
	for _, h := range hits {
		if h.Name == name {
			out = append(out, h)
		}
	}
	return out, partial
}

// DefinitionOf answers definition for a symbol given by name.
func (ix *Index) DefinitionOf(symbol string) (*Answer, error) {
	syms, partial := ix.Lookup(symbol)
	if len(syms) == 0 {
		return nil, fmt.Errorf("no symbol named %q in the index", symbol)
	}
	a := &Answer{Name: syms[0].Name, Kind: syms[0].Kind, Precision: PrecisionName, Partial: partial, Language: Language(syms[0].Path)}
	for _, s := range syms {
		a.Locations = append(a.Locations, symbolLocation(s))
	}
	if len(syms) == 1 && Language(syms[0].Path) == "go" {
		a.Precision = PrecisionType // a Go declaration found by its qualified name is exact
	}
	return a, nil
}

// ReferencesOf answers references for a symbol given by name: the best
// declaration the name matches, then its references.
func (ix *Index) ReferencesOf(ctx context.Context, symbol string, includeDecl bool) (*Answer, error) {
	return ix.atSymbol(symbol, func(s Symbol) (*Answer, error) {
		return ix.References(ctx, s.Path, s.Line, s.Column, includeDecl)
	})
}

// HoverOf answers hover for a symbol given by name.
func (ix *Index) HoverOf(ctx context.Context, symbol string) (*Answer, error) {
	return ix.atSymbol(symbol, func(s Symbol) (*Answer, error) {
		return ix.Hover(ctx, s.Path, s.Line, s.Column)
	})
}

// atSymbol answers query at the best declaration named symbol; the answer
// is partial when the lookup was, and its note names the other
// declarations.
func (ix *Index) atSymbol(symbol string, query func(Symbol) (*Answer, error)) (*Answer, error) {
	syms, partial := ix.Lookup(symbol)
	if len(syms) == 0 {
		return nil, fmt.Errorf("no symbol named %q in the index", symbol)
	}
	a, err := query(syms[0])
	if err != nil {
		return nil, err
	}
	a.Partial = a.Partial || partial
	a.Note = joinNotes(a.Note, ix.otherDeclarations(syms))
	return a, nil
}

// otherDeclarations is the note about the declarations after the first,
// "" when there are none.
func (ix *Index) otherDeclarations(syms []Symbol) string {
	if len(syms) < 2 {
		return ""
	}
	var names []string
	for _, s := range syms[1:min(len(syms), 6)] {
		names = append(names, fmt.Sprintf("%s.%s (%s:%d)", s.Container, s.Name, ix.ws.Rel(s.Path), s.Line))
	}
	return fmt.Sprintf("%d declarations are named %s; answered for %s.%s (%s:%d); others: %s",
		len(syms), syms[0].Name, syms[0].Container, syms[0].Name, ix.ws.Rel(syms[0].Path), syms[0].Line, strings.Join(names, ", "))
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func symbolLocation(s Symbol) Location {
	return Location{Path: s.Path, Line: s.Line, Column: s.Column, EndLine: s.Line, EndColumn: s.Column + len(s.Name)}
}

// wordAt returns the identifier-like word at a 1-based line and byte column.
func (ix *Index) wordAt(p string, line, col int) (string, error) {
	w, _, err := ix.wordAtPos(p, line, col)
	return w, err
}

// wordAtPos is wordAt that also reports whether the word follows a dot (a
// member access).
func (ix *Index) wordAtPos(p string, line, col int) (string, bool, error) {
	src, err := ix.readSource(p)
	if err != nil {
		return "", false, err
	}
	text := lineOf(src, line)
	if text == nil {
		return "", false, &PositionError{Msg: fmt.Sprintf("line %d is out of range", line)}
	}
	i := col - 1
	if i < 0 || i > len(text) {
		return "", false, &PositionError{Msg: fmt.Sprintf("column %d is out of range (line %d has %d bytes)", col, line, len(text))}
	}
	if i == len(text) || !isWordByte(text[i]) {
		if i > 0 && isWordByte(text[i-1]) {
			i-- // just after the word
		} else {
			return "", false, &PositionError{Msg: fmt.Sprintf("no identifier at line %d, column %d", line, col)}
		}
	}
	s, e := i, i
	for s > 0 && isWordByte(text[s-1]) {
		s--
	}
	for e < len(text) && isWordByte(text[e]) {
		e++
	}
	return string(text[s:e]), s > 0 && text[s-1] == '.', nil
}

func isWordByte(c byte) bool { return isIdentByte(c) || c == '$' }

// lineOf returns a 1-based line of src without its terminator, or nil.
func lineOf(src []byte, line int) []byte {
	for n := 1; n < line; n++ {
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			return nil
		}
		src = src[i+1:]
	}
	if i := bytes.IndexByte(src, '\n'); i >= 0 {
		src = src[:i]
	}
	return bytes.TrimSuffix(src, []byte("\r"))
}

func byName(cause error) string {
	if cause == nil {
		return "answered by name: the index matches declarations by name, not by type"
	}
	return fmt.Sprintf("answered by name because the type checker could not: %v", cause)
}

func (ix *Index) definitionByWord(p string, line, col int, cause error) (*Answer, error) {
	w, member, err := ix.wordAtPos(p, line, col)
	if err != nil {
		return nil, err
	}
	syms := ix.rankedNamed(w, p, line, member)
	a := &Answer{Name: w, Precision: PrecisionName, Partial: ix.partial(), Note: byName(cause), Language: Language(p)}
	for i, s := range syms {
		if i >= maxNameResults {
			a.Partial = true
			break
		}
		a.Locations = append(a.Locations, symbolLocation(s))
		if a.Kind == "" {
			a.Kind = s.Kind
		}
	}
	return a, nil
}

func (ix *Index) hoverByWord(p string, line, col int, cause error) (*Answer, error) {
	a, err := ix.definitionByWord(p, line, col, cause)
	if err != nil || len(a.Locations) == 0 {
		return a, err
	}
	_, member, _ := ix.wordAtPos(p, line, col)
	s := ix.rankedNamed(a.Name, p, line, member)[0]
	a.Locations = a.Locations[:1]
	a.Language = Language(s.Path)
	a.Signature = s.Detail
	if a.Signature == "" {
		a.Signature = s.Name
	}
	if src, err := ix.readSource(s.Path); err == nil {
		a.Doc = commentAbove(src, s.Line, a.Language)
	}
	return a, nil
}

// commentAbove returns the comment lines just above a declaration (or a
// Python docstring just below it).
func commentAbove(src []byte, line int, lang string) string {
	lines := strings.Split(string(src), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	if lang == "python" && line < len(lines) {
		next := strings.TrimSpace(lines[line])
		for _, q := range []string{`"""`, `'''`} {
			if strings.HasPrefix(next, q) {
				var doc []string
				body := strings.TrimPrefix(next, q)
				for k := line; k < len(lines); k++ {
					t := strings.TrimSpace(lines[k])
					if k == line {
						t = body
					}
					if i := strings.Index(t, q); i >= 0 {
						doc = append(doc, t[:i])
						return strings.TrimSpace(strings.Join(doc, "\n"))
					}
					doc = append(doc, t)
				}
			}
		}
	}
	var doc []string
	for k := line - 2; k >= 0; k-- {
		t := strings.TrimSpace(strings.TrimRight(lines[k], "\r"))
		var body string
		switch {
		case strings.HasPrefix(t, "///"), strings.HasPrefix(t, "//!"):
			body = t[3:]
		case strings.HasPrefix(t, "//"):
			body = t[2:]
		case strings.HasPrefix(t, "#") && lang != "c" && lang != "cpp" && lang != "markdown" && !strings.HasPrefix(t, "#!"):
			body = t[1:]
		case strings.HasPrefix(t, "/**"), strings.HasPrefix(t, "/*"):
			body = strings.TrimSuffix(strings.TrimLeft(t, "/*"), "*/")
		case strings.HasPrefix(t, "*"):
			body = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(t, "*/"), "*"), "*/")
		case strings.HasPrefix(t, "@"), strings.HasPrefix(t, "#["): // annotations, attributes
			continue
		default:
			k = -1
			continue
		}
		doc = append([]string{strings.TrimSpace(body)}, doc...)
	}
	return strings.TrimSpace(strings.Join(doc, "\n"))
}

func (ix *Index) referencesByWord(ctx context.Context, p string, line, col int, cause error) (*Answer, error) {
	w, err := ix.wordAt(p, line, col)
	if err != nil {
		return nil, err
	}
	lang := Language(p)
	a := &Answer{Name: w, Precision: PrecisionName, Partial: ix.partial(), Note: byName(cause), Language: lang}
	if syms := ix.SymbolsNamed(w, p); len(syms) > 0 {
		a.Kind = syms[0].Kind
	}
	for _, f := range ix.filesOf(lang) {
		if ctx.Err() != nil {
			a.Partial = true
			break
		}
		src, err := ix.readSource(f)
		if err != nil || !containsWord(src, w) {
			continue
		}
		a.Locations = append(a.Locations, wordLocations(f, src, w)...)
		if len(a.Locations) >= maxNameResults {
			a.Locations = a.Locations[:maxNameResults]
			a.Partial = true
			break
		}
	}
	return a, nil
}

// rankedNamed orders the declarations named w for a use at p:line: the
// declaration on that very line first, then those of the same file, then
// members before top-level declarations after a dot and the other way
// round otherwise.
func (ix *Index) rankedNamed(w, p string, line int, member bool) []Symbol {
	syms := ix.SymbolsNamed(w, p)
	rank := func(s Symbol) int {
		r := 0
		if s.Path != p || s.Line != line {
			r += 4
		}
		if s.Path != p {
			r += 2
		}
		isMember := s.Container != "" && s.Kind != "heading" || s.Kind == "method" || s.Kind == "field" || s.Kind == "property"
		if isMember != member {
			r++
		}
		return r
	}
	sort.SliceStable(syms, func(i, j int) bool { return rank(syms[i]) < rank(syms[j]) })
	return syms
}

// wordLocations finds w as a whole word in src.
func wordLocations(p string, src []byte, w string) []Location {
	var out []Location
	line, lineStart := 1, 0
	for i := 0; i+len(w) <= len(src); i++ {
		if src[i] == '\n' {
			line++
			lineStart = i + 1
			continue
		}
		if src[i] != w[0] || !bytes.HasPrefix(src[i:], []byte(w)) {
			continue
		}
		e := i + len(w)
		if (i > 0 && isWordByte(src[i-1])) || (e < len(src) && isWordByte(src[e])) {
			continue
		}
		col := i - lineStart + 1
		out = append(out, Location{Path: p, Line: line, Column: col, EndLine: line, EndColumn: col + len(w)})
		i = e - 1
	}
	return out
}

// maxDiagnosticPackages caps the packages one diagnostics query checks.
const maxDiagnosticPackages = 40

// Diagnostics returns the problems of a Go file, or of the Go packages of a
// directory tree, and whether the answer is partial. Files of other
// languages have none the index can find.
func (ix *Index) Diagnostics(ctx context.Context, p string) ([]Diagnostic, bool, error) {
	fi, err := ix.ws.StatAny(p)
	if _, open := ix.ws.Overlays.Get(p); err != nil && !open {
		return nil, false, err
	}
	if err == nil && fi.IsDir() {
		return ix.treeDiagnostics(ctx, p)
	}
	if Language(p) != "go" {
		return nil, false, nil
	}
	ds, err := ix.goc.diagnostics(ctx, p)
	return ds, false, err
}

func (ix *Index) treeDiagnostics(ctx context.Context, dir string) ([]Diagnostic, bool, error) {
	partial := ix.partial()
	seen := map[string]bool{}
	var dirs []string
	for _, f := range ix.filesOf("go") {
		d := filepath.Dir(f)
		rel, ok := workspace.Within(dir, d)
		if ok && strings.Contains(string(filepath.Separator)+rel, string(filepath.Separator)+"_") {
			continue // the go command ignores directories named _*
		}
		if ok && !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	if len(dirs) > maxDiagnosticPackages {
		dirs, partial = dirs[:maxDiagnosticPackages], true
	}
	var out []Diagnostic
	for _, d := range dirs {
		if ctx.Err() != nil {
			return out, true, nil
		}
		ds, err := ix.goc.packageDiagnostics(ctx, d)
		if err != nil && !errors.Is(err, context.Canceled) {
			continue
		}
		out = append(out, ds...)
	}
	return out, partial, nil
}
