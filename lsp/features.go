package lsp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/codeindex"
	"github.com/agentls/agentls/workspace"
)

// The language features served from the workspace index:
// textDocument/documentSymbol, workspace/symbol, textDocument/definition,
// textDocument/references, textDocument/hover and published diagnostics.
// They are off by default, so as not to duplicate the language servers
// people already run: only those named in the config's lsp.features are
// advertised at initialize and served (the method table names each
// request's feature).

// feature reports whether the configuration enables a feature.
func (s *server) feature(name string) bool {
	return slices.Contains(s.ws.Config().LSP.Features, name)
}

// indexCapabilities advertises the enabled features.
func (s *server) indexCapabilities(c *protocol.ServerCapabilities) {
	if s.feature("documentSymbol") {
		c.DocumentSymbolProvider = true
	}
	if s.feature("workspaceSymbol") {
		c.WorkspaceSymbolProvider = true
	}
	if s.feature("definition") {
		c.DefinitionProvider = true
	}
	if s.feature("references") {
		c.ReferencesProvider = true
	}
	if s.feature("hover") {
		c.HoverProvider = true
	}
}

// Wire types of the index features (the pinned protocol package's lack
// optional fields or use interface{} where these are exact).
type (
	lspRange struct {
		Start workspace.Position `json:"start"`
		End   workspace.Position `json:"end"`
	}
	lspLocation struct {
		URI   string   `json:"uri"`
		Range lspRange `json:"range"`
	}
	documentSymbol struct {
		Name           string           `json:"name"`
		Detail         string           `json:"detail,omitempty"`
		Kind           int              `json:"kind"`
		Range          lspRange         `json:"range"`
		SelectionRange lspRange         `json:"selectionRange"`
		Children       []documentSymbol `json:"children,omitempty"`
	}
	symbolInformation struct {
		Name          string      `json:"name"`
		Kind          int         `json:"kind"`
		Location      lspLocation `json:"location"`
		ContainerName string      `json:"containerName,omitempty"`
	}
	textDocumentParams struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
	}
	positionParams struct {
		textDocumentParams
		Position workspace.Position `json:"position"`
		Context  struct {
			// IncludeDeclaration is true when absent.
			IncludeDeclaration *bool `json:"includeDeclaration"`
		} `json:"context"`
	}
	workspaceSymbolParams struct {
		Query string `json:"query"`
	}
)

// symbolKinds maps the index's kinds to LSP SymbolKinds.
var symbolKinds = map[string]int{
	"module": 2, "namespace": 3, "package": 4, "class": 5, "method": 6, "property": 7, "field": 8,
	"constructor": 9, "enum": 10, "interface": 11, "function": 12, "variable": 13, "constant": 14,
	"heading": 15, "enum_member": 22, "struct": 23, "type": 5, "impl": 3, "macro": 12, "parameter": 13,
}

func symbolKind(k string) int {
	if n, ok := symbolKinds[k]; ok {
		return n
	}
	return 13
}

// text returns a file's text as the tools see it ("" when unreadable).
func (s *server) text(path string) string {
	b, err := s.ws.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// lspPos converts a 1-based line and byte column of text to an LSP
// position (UTF-16).
func lspPos(text string, line, col int) workspace.Position {
	start, end, ok := lineSpan(text, line)
	if !ok {
		return workspace.Position{Line: uint32(max(line-1, 0))}
	}
	off := min(start+max(col-1, 0), end)
	return workspace.Position{Line: uint32(line - 1), Character: workspace.UTF16Len(text[start:off])}
}

// lineEnd is the LSP position of the end of a 1-based line.
func lineEnd(text string, line int) workspace.Position {
	start, end, ok := lineSpan(text, line)
	if !ok {
		return workspace.Position{Line: uint32(max(line-1, 0))}
	}
	return workspace.Position{Line: uint32(line - 1), Character: workspace.UTF16Len(strings.TrimSuffix(text[start:end], "\r"))}
}

// lineSpan is the byte range of a 1-based line, without its '\n'.
func lineSpan(text string, line int) (start, end int, ok bool) {
	start, ok = lineOffset(text, line)
	if !ok {
		return 0, 0, false
	}
	end = start
	for end < len(text) && text[end] != '\n' {
		end++
	}
	return start, end, true
}

// lineOffset is the byte offset where a 1-based line starts.
func lineOffset(text string, line int) (int, bool) {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return 0, false
		}
		off += i + 1
	}
	return off, true
}

// bytePos converts an LSP position in a file to a 1-based line and byte
// column.
func (s *server) bytePos(path string, p workspace.Position) (int, int, error) {
	text := s.text(path)
	off, err := workspace.Offset(text, p)
	if err != nil {
		return 0, 0, err
	}
	start := strings.LastIndexByte(text[:off], '\n') + 1
	return int(p.Line) + 1, off - start + 1, nil
}

// texts caches file texts during one request.
type texts struct {
	s     *server
	files map[string]string
}

func (t *texts) get(path string) string {
	if t.files == nil {
		t.files = map[string]string{}
	}
	text, ok := t.files[path]
	if !ok {
		text = t.s.text(path)
		t.files[path] = text
	}
	return text
}

func (t *texts) location(l codeindex.Location) lspLocation {
	text := t.get(l.Path)
	return lspLocation{URI: workspace.PathToURI(l.Path), Range: lspRange{lspPos(text, l.Line, l.Column), lspPos(text, l.EndLine, l.EndColumn)}}
}

func (s *server) documentSymbol(ctx context.Context, p textDocumentParams) ([]documentSymbol, error) {
	path, err := workspace.URIToPath(p.TextDocument.URI)
	if err != nil {
		return nil, invalidParams("textDocument/documentSymbol", err)
	}
	ix := s.index()
	if codeindex.Language(path) == "" {
		return []documentSymbol{}, nil
	}
	syms, err := ix.Outline(path)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "documentSymbol: %v", err)
	}
	text := s.text(path)
	goFile := codeindex.Language(path) == "go"
	var conv func([]codeindex.Symbol) []documentSymbol
	conv = func(syms []codeindex.Symbol) []documentSymbol {
		out := make([]documentSymbol, 0, len(syms))
		for _, sym := range syms {
			sel := lspRange{lspPos(text, sym.Line, sym.Column), lspPos(text, sym.Line, sym.Column+len(sym.Name))}
			end := lineEnd(text, max(sym.EndLine, sym.Line))
			if goFile && sym.EndColumn > 0 {
				end = lspPos(text, max(sym.EndLine, sym.Line), sym.EndColumn)
			}
			out = append(out, documentSymbol{
				Name: sym.Name, Detail: sym.Detail, Kind: symbolKind(sym.Kind),
				Range:          lspRange{workspace.Position{Line: sel.Start.Line}, end},
				SelectionRange: sel, Children: conv(sym.Children),
			})
		}
		return out
	}
	return conv(syms), nil
}

func (s *server) workspaceSymbol(ctx context.Context, p workspaceSymbolParams) ([]symbolInformation, error) {
	ix := s.index()
	syms, _ := ix.Search(p.Query, 200)
	t := &texts{s: s}
	out := make([]symbolInformation, 0, len(syms))
	for _, sym := range syms {
		loc := t.location(codeindex.Location{Path: sym.Path, Line: sym.Line, Column: sym.Column, EndLine: sym.Line, EndColumn: sym.Column + len(sym.Name)})
		out = append(out, symbolInformation{Name: sym.Name, Kind: symbolKind(sym.Kind), Location: loc, ContainerName: sym.Container})
	}
	return out, nil
}

// indexQuery is one of the index's queries at a position.
type indexQuery func(ctx context.Context, path string, line, col int) (*codeindex.Answer, error)

// ask runs an index query at p's position, bounded in time. A position
// without an identifier is an empty answer (nil, nil), as editors expect;
// a position that cannot be read is InvalidParams.
func (s *server) ask(ctx context.Context, method string, p positionParams, q indexQuery) (*codeindex.Answer, error) {
	path, err := workspace.URIToPath(p.TextDocument.URI)
	if err != nil {
		return nil, invalidParams(method, err)
	}
	line, col, err := s.bytePos(path, p.Position)
	if err != nil {
		return nil, invalidParams(method, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	a, err := q(ctx, path, line, col)
	var pe *codeindex.PositionError
	switch {
	case errors.As(err, &pe):
		return nil, nil
	case err != nil:
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: %v", strings.TrimPrefix(method, "textDocument/"), err)
	}
	return a, nil
}

func (s *server) definition(ctx context.Context, p positionParams) ([]lspLocation, error) {
	a, err := s.ask(ctx, "textDocument/definition", p, s.index().Definition)
	return s.lspLocations(a), err
}

func (s *server) references(ctx context.Context, p positionParams) ([]lspLocation, error) {
	decl := p.Context.IncludeDeclaration == nil || *p.Context.IncludeDeclaration
	a, err := s.ask(ctx, "textDocument/references", p, func(ctx context.Context, path string, line, col int) (*codeindex.Answer, error) {
		return s.index().References(ctx, path, line, col, decl)
	})
	return s.lspLocations(a), err
}

// lspLocations are an answer's locations (none for no answer).
func (s *server) lspLocations(a *codeindex.Answer) []lspLocation {
	if a == nil {
		return []lspLocation{}
	}
	t := &texts{s: s}
	out := make([]lspLocation, 0, len(a.Locations))
	for _, l := range a.Locations {
		out = append(out, t.location(l))
	}
	return out
}

// hoverResult is a Hover with markdown contents.
type hoverResult struct {
	Contents struct {
		Kind  string `json:"kind"`
		Value string `json:"value"`
	} `json:"contents"`
}

func (s *server) hover(ctx context.Context, p positionParams) (*hoverResult, error) {
	a, err := s.ask(ctx, "textDocument/hover", p, s.index().Hover)
	if err != nil || a == nil || a.Signature == "" && len(a.Locations) == 0 {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "```%s\n%s\n```", a.Language, a.Signature)
	if a.Doc != "" {
		fmt.Fprintf(&b, "\n\n%s", a.Doc)
	}
	if a.Precision == codeindex.PrecisionName {
		b.WriteString("\n\n*(found by name)*")
	}
	h := &hoverResult{}
	h.Contents.Kind, h.Contents.Value = "markdown", b.String()
	return h, nil
}

// sameDir reports whether two files are in one directory (one Go package).
func sameDir(a, b string) bool { return filepath.Dir(a) == filepath.Dir(b) }
