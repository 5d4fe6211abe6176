package tools

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentls/agentls/codeindex"
)

// Symbols is symbols: a file's outline, or a fuzzy search of the
// workspace's declarations by name.
var Symbols = builtin(Def[symbolsArgs]{
	Spec: Spec{
		Name:     "symbols",
		Category: "code",
		Title:    "List or search symbols",
		Description: "With path: the outline of a file (functions, methods with their receiver type as container, types with their fields or " +
			"methods as children, constants, variables; classes and members in Python, JavaScript/TypeScript, Rust, Java, C/C++; shell " +
			"functions; Markdown headings). With query: a fuzzy search of the declarations of the whole workspace by name, best first " +
			"(exact, then prefix, substring, subsequence); qualify it to narrow: \"bufio.NewReader\", \"Reader.Read\"; with path too, only below that directory. " +
			"A directory path lists the top-level symbols of its files (a package at a glance). " +
			"Each symbol has name, kind, path, line, column (1-based), container, end_line and a short detail (signature).",
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"path":{"type":"string","description":"file whose outline to list (or a directory: its files' top-level symbols), relative to the workspace root"},
			"query":{"type":"string","minLength":1,"description":"name to search for in the whole workspace (fuzzy)"},
			"limit":{"type":"integer","minimum":1,"maximum":5000,"description":"most symbols to return (default 100 for a query, 1000 top-level ones for an outline, 500 for a directory)"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["symbols","partial"],"properties":{
			"symbols":{"type":"array","items":{"$ref":"#/$defs/symbol"}},
			"partial":{"type":"boolean"},"truncated":{"type":"boolean"},"precision":{"enum":["type","name"]}},
			"$defs":{"symbol":{"type":"object","required":["name","kind","path","line","column","container"],"properties":{
				"name":{"type":"string"},"kind":{"type":"string"},"path":{"type":"string"},"line":{"type":"integer"},
				"column":{"type":"integer"},"end_line":{"type":"integer"},"container":{"type":"string"},"detail":{"type":"string"},
				"children":{"type":"array","items":{"$ref":"#/$defs/symbol"}}}}}}`),
	},
	Validate: func(a symbolsArgs) error {
		if a.Path == "" && a.Query == "" {
			return Errorf(InvalidParams, "give path (a file's outline), query (a workspace search), or both (a search below path)")
		}
		return nil
	},
	Execute: symbols,
})

// maxOutline is the default limit of an outline's top-level symbols.
const maxOutline = 1000

type symbolsArgs struct {
	Path  string `json:"path"`
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

func symbols(c *Call, a symbolsArgs) (*Result, error) {
	if a.Query != "" {
		return searchSymbols(c, a)
	}
	path, rel, err := resolveArg(c, a.Path)
	if err != nil {
		return nil, err
	}
	if fi, err := c.Workspace.Stat(path); err == nil && fi.IsDir() {
		return directorySymbols(c, path, a.Limit)
	}
	if codeindex.Language(path) == "" {
		return nil, Errorf(InvalidParams, "%s: no outline for this kind of file (Go, Python, JavaScript/TypeScript, Rust, Java, C/C++, shell and Markdown have one)", rel)
	}
	syms, err := c.Index().Outline(path)
	if err != nil {
		return nil, fileError(rel, err)
	}
	if a.Limit == 0 {
		a.Limit = maxOutline
	}
	syms, truncated := c.firstSymbols(syms, a.Limit)
	var b strings.Builder
	if len(syms) == 0 {
		fmt.Fprintf(&b, "%s declares no symbols the index recognises\n", rel)
	}
	writeOutline(&b, syms, "")
	if truncated {
		fmt.Fprintf(&b, "(first %d top-level symbols; raise limit for more)\n", a.Limit)
	}
	precision := codeindex.PrecisionType
	if codeindex.Language(path) != "go" {
		precision = codeindex.PrecisionName
	}
	return Success(b.String(), map[string]any{"symbols": syms, "partial": false, "truncated": truncated, "precision": precision}), nil
}

func searchSymbols(c *Call, a symbolsArgs) (*Result, error) {
	limit := a.Limit
	if limit == 0 {
		limit = 100
	}
	var syms []codeindex.Symbol
	var partial bool
	if a.Path != "" {
		// a search below a directory (or in a file)
		under, err := c.Workspace.Resolve(a.Path)
		if err != nil {
			return nil, err
		}
		all, p := c.builtIndex().Search(a.Query, 100_000)
		partial = p
		for _, s := range all {
			if s.Path == under || strings.HasPrefix(s.Path, under+string(filepath.Separator)) {
				syms = append(syms, s)
				if len(syms) > limit {
					break
				}
			}
		}
	} else {
		syms, partial = c.builtIndex().Search(a.Query, limit+1)
	}
	syms, truncated := c.firstSymbols(syms, limit)
	var b strings.Builder
	if len(syms) == 0 {
		fmt.Fprintf(&b, "no symbol matches %q", a.Query)
		if partial {
			b.WriteString(" (partial: the index is still being built)")
		}
		b.WriteString("\n")
	}
	for _, s := range syms {
		name := s.Name
		if s.Container != "" {
			name = s.Container + "." + s.Name
		}
		fmt.Fprintf(&b, "%s %s  %s:%d:%d", s.Kind, name, s.Path, s.Line, s.Column)
		if s.Detail != "" {
			fmt.Fprintf(&b, "  %s", s.Detail)
		}
		b.WriteString("\n")
	}
	if truncated {
		fmt.Fprintf(&b, "(first %d matches; raise limit or qualify the query for more)\n", limit)
	}
	if partial && len(syms) > 0 {
		b.WriteString("(partial: the index is still being built)\n")
	}
	return Success(b.String(), map[string]any{"symbols": syms, "partial": partial, "truncated": truncated, "precision": codeindex.PrecisionName}), nil
}

// directorySymbols lists the top-level symbols of the files directly in a
// directory (a Go package, a Python package, …), without children.
func directorySymbols(c *Call, dir string, limit int) (*Result, error) {
	if limit == 0 {
		limit = 500
	}
	ix := c.builtIndex()
	var syms []codeindex.Symbol
	d, err := c.Workspace.Open(dir)
	if err != nil {
		return nil, fileError(c.Workspace.Rel(dir), err)
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return nil, fileError(c.Workspace.Rel(dir), err)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() || codeindex.Language(p) == "" {
			continue
		}
		out, err := ix.Outline(p)
		if err != nil {
			continue
		}
		for _, s := range out {
			s.Children = nil
			syms = append(syms, s)
		}
	}
	syms, truncated := c.firstSymbols(syms, limit)
	var b strings.Builder
	if len(syms) == 0 {
		fmt.Fprintf(&b, "no symbols in the files of %s\n", c.Workspace.Rel(dir))
	}
	for _, s := range syms {
		fmt.Fprintf(&b, "%s:%d:%d %s %s", s.Path, s.Line, s.Column, s.Kind, s.Name)
		if s.Detail != "" && s.Detail != s.Name {
			fmt.Fprintf(&b, "  %s", s.Detail)
		}
		b.WriteString("\n")
	}
	if truncated {
		fmt.Fprintf(&b, "(first %d symbols; raise limit for more)\n", limit)
	}
	return Success(b.String(), map[string]any{"symbols": syms, "partial": false, "truncated": truncated}), nil
}

// firstSymbols keeps the first limit symbols, with paths relative to the
// root (relSymbols), and says whether there were more.
func (c *Call) firstSymbols(syms []codeindex.Symbol, limit int) ([]codeindex.Symbol, bool) {
	truncated := len(syms) > limit
	if truncated {
		syms = syms[:limit]
	}
	return c.relSymbols(syms), truncated
}

// relSymbols copies symbols with paths relative to the root.
func (c *Call) relSymbols(syms []codeindex.Symbol) []codeindex.Symbol {
	out := make([]codeindex.Symbol, len(syms))
	for i, s := range syms {
		s.Path = c.Workspace.Rel(s.Path)
		s.Children = c.relSymbols(s.Children)
		if len(s.Children) == 0 {
			s.Children = nil
		}
		out[i] = s
	}
	return out
}

// writeOutline writes an outline, one symbol a line, children indented.
func writeOutline(b *strings.Builder, syms []codeindex.Symbol, indent string) {
	for _, s := range syms {
		fmt.Fprintf(b, "%s%d:%d %s %s", indent, s.Line, s.Column, s.Kind, s.Name)
		if s.Detail != "" && s.Detail != s.Name {
			fmt.Fprintf(b, "  %s", s.Detail)
		}
		b.WriteString("\n")
		writeOutline(b, s.Children, indent+"  ")
	}
}
