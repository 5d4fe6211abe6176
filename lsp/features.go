package lsp

import (
	"context"
	"encoding/json"
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
// advertised at initialize and served.

// featureMethods maps each request to the lsp.features name that enables it.
var featureMethods = map[string]string{
	"textDocument/documentSymbol": "documentSymbol",
	"workspace/symbol":            "workspaceSymbol",
	"textDocument/definition":     "definition",
	"textDocument/references":     "references",
	"textDocument/hover":          "hover",
}

// feature reports whether the configuration enables a feature.
func (s *session) feature(name string) bool {
	return slices.Contains(s.ws.Config().LSP.Features, name)
}

// indexCapabilities advertises the enabled features.
func (s *session) indexCapabilities(c *protocol.ServerCapabilities) {
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

// featureHandler returns the handler of an index request; a request whose
// feature the configuration does not enable is not found.
func (s *session) featureHandler(method string) (handlerFunc, bool) {
	name, ok := featureMethods[method]
	if !ok {
		return nil, false
	}
	var h handlerFunc
	switch method {
	case "textDocument/documentSymbol":
		h = s.documentSymbol
	case "workspace/symbol":
		h = s.workspaceSymbol
	case "textDocument/definition":
		h = s.definition
	case "textDocument/references":
		h = s.references
	case "textDocument/hover":
		h = s.hover
	}
	return func(ctx context.Context, params json.RawMessage) (any, error) {
		if !s.feature(name) {
			return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, fmt.Sprintf("%s is off (enable %q in lsp.features)", method, name))
		}
		return h(ctx, params)
	}, true
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
	positionParams struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Position workspace.Position `json:"position"`
		Context  struct {
			IncludeDeclaration bool `json:"includeDeclaration"`
		} `json:"context"`
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
func (s *session) text(path string) string {
	b, err := s.ws.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// lspPos converts a 1-based line and byte column of text to an LSP
// position (UTF-16).
func lspPos(text string, line, col int) workspace.Position {
	start, ok := lineOffset(text, line)
	if !ok {
		return workspace.Position{Line: uint32(max(line-1, 0))}
	}
	end := start
	for end < len(text) && text[end] != '\n' {
		end++
	}
	off := min(start+max(col-1, 0), end)
	return workspace.Position{Line: uint32(line - 1), Character: workspace.UTF16Len(text[start:off])}
}

// lineEnd is the LSP position of the end of a 1-based line.
func lineEnd(text string, line int) workspace.Position {
	start, ok := lineOffset(text, line)
	if !ok {
		return workspace.Position{Line: uint32(max(line-1, 0))}
	}
	end := start
	for end < len(text) && text[end] != '\n' {
		end++
	}
	return workspace.Position{Line: uint32(line - 1), Character: workspace.UTF16Len(strings.TrimSuffix(text[start:end], "\r"))}
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
func (s *session) bytePos(path string, p workspace.Position) (int, int, error) {
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
	s     *session
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

func (s *session) documentSymbol(ctx context.Context, raw json.RawMessage) (any, error) {
	var p positionParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("textDocument/documentSymbol", err)
	}
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

func (s *session) workspaceSymbol(ctx context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("workspace/symbol", err)
	}
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

// position reads a TextDocumentPositionParams as a path, line and byte
// column.
func (s *session) position(method string, raw json.RawMessage) (positionParams, string, int, int, error) {
	var p positionParams
	p.Context.IncludeDeclaration = true
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, "", 0, 0, invalidParams(method, err)
	}
	path, err := workspace.URIToPath(p.TextDocument.URI)
	if err != nil {
		return p, "", 0, 0, invalidParams(method, err)
	}
	line, col, err := s.bytePos(path, p.Position)
	if err != nil {
		return p, "", 0, 0, invalidParams(method, err)
	}
	return p, path, line, col, nil
}

// queryCtx bounds a query; a position without an identifier gives an
// empty answer, as editors expect.
func queryCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 60*time.Second)
}

func emptyOnPosition(err error) bool {
	var pe *codeindex.PositionError
	return errors.As(err, &pe)
}

func (s *session) definition(ctx context.Context, raw json.RawMessage) (any, error) {
	_, path, line, col, err := s.position("textDocument/definition", raw)
	if err != nil {
		return nil, err
	}
	ctx, cancel := queryCtx(ctx)
	defer cancel()
	a, err := s.index().Definition(ctx, path, line, col)
	if err != nil {
		if emptyOnPosition(err) {
			return []lspLocation{}, nil
		}
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "definition: %v", err)
	}
	return s.lspLocations(a.Locations), nil
}

func (s *session) references(ctx context.Context, raw json.RawMessage) (any, error) {
	p, path, line, col, err := s.position("textDocument/references", raw)
	if err != nil {
		return nil, err
	}
	ctx, cancel := queryCtx(ctx)
	defer cancel()
	a, err := s.index().References(ctx, path, line, col, p.Context.IncludeDeclaration)
	if err != nil {
		if emptyOnPosition(err) {
			return []lspLocation{}, nil
		}
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "references: %v", err)
	}
	return s.lspLocations(a.Locations), nil
}

func (s *session) lspLocations(ls []codeindex.Location) []lspLocation {
	t := &texts{s: s}
	out := make([]lspLocation, 0, len(ls))
	for _, l := range ls {
		out = append(out, t.location(l))
	}
	return out
}

func (s *session) hover(ctx context.Context, raw json.RawMessage) (any, error) {
	_, path, line, col, err := s.position("textDocument/hover", raw)
	if err != nil {
		return nil, err
	}
	ctx, cancel := queryCtx(ctx)
	defer cancel()
	a, err := s.index().Hover(ctx, path, line, col)
	if err != nil {
		if emptyOnPosition(err) {
			return nil, nil
		}
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "hover: %v", err)
	}
	if a.Signature == "" && len(a.Locations) == 0 {
		return nil, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "```%s\n%s\n```", a.Language, a.Signature)
	if a.Doc != "" {
		fmt.Fprintf(&b, "\n\n%s", a.Doc)
	}
	if a.Precision == codeindex.PrecisionName {
		b.WriteString("\n\n*(found by name)*")
	}
	return map[string]any{"contents": map[string]string{"kind": "markdown", "value": b.String()}}, nil
}

// sameDir reports whether two files are in one directory (one Go package).
func sameDir(a, b string) bool { return filepath.Dir(a) == filepath.Dir(b) }
