package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentls/agentls/codeindex"
)

// Diagnostics is diagnostics: parse and type errors of Go code, and some
// vet warnings.
var Diagnostics = builtin(Def[diagnosticsArgs]{
	Spec: Spec{
		Name:     "diagnostics",
		Category: "code",
		Title:    "Diagnostics",
		Description: "Reports the syntax and type errors of Go code, as the compiler would, and a few go vet warnings (printf arguments, " +
			"Println with formatting directives, self-assignment), reading the editor's unsaved buffers: " +
			"for a file, the problems of that file (its whole package is type-checked); for a directory (default: the workspace root), " +
			"the problems of every Go package below it (at most 40 packages; partial says when there were more). " +
			"Returns diagnostics [{path, line, column, severity, message, source}] with 1-based positions. " +
			"Files of other languages have no diagnostics here.",
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"path":{"type":"string","default":".","description":"file or directory, relative to the workspace root"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["diagnostics","partial"],"properties":{
			"diagnostics":{"type":"array","items":{"type":"object","required":["path","line","column","severity","message","source"],"properties":{
				"path":{"type":"string"},"line":{"type":"integer"},"column":{"type":"integer"},
				"end_line":{"type":"integer"},"end_column":{"type":"integer"},
				"severity":{"enum":["error","warning","information","hint"]},"message":{"type":"string"},"source":{"type":"string"}}}},
			"partial":{"type":"boolean"},"count":{"type":"integer"},"note":{"type":"string"}}}`),
	},
	Execute: diagnostics,
})

type diagnosticsArgs struct {
	Path string `json:"path"`
}

func diagnostics(c *Call, a diagnosticsArgs) (*Result, error) {
	if a.Path == "" {
		a.Path = "."
	}
	path, rel, err := resolveArg(c, a.Path)
	if err != nil {
		return nil, err
	}
	ix := c.Index()
	if !isGo(path) {
		ix = c.builtIndex() // a directory needs the file list
	}
	ds, partial, err := ix.Diagnostics(c.Ctx, path)
	if err != nil {
		if c.Ctx.Err() != nil {
			return nil, c.Ctx.Err()
		}
		if e, ok := AsError(fileError(rel, err)); ok && e.Code != Internal && e.Code != ExecutionError {
			return nil, e
		}
		return nil, Errorf(ExecutionError, "%s: %v", rel, err)
	}
	for i := range ds {
		ds[i].Path = c.Workspace.Rel(ds[i].Path)
	}
	if ds == nil {
		ds = []codeindex.Diagnostic{} // an empty list, never null (the output schema says array)
	}
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "%s:%d:%d: %s: %s (%s)\n", d.Path, d.Line, d.Column, d.Severity, d.Message, d.Source)
	}
	s := map[string]any{"diagnostics": ds, "partial": partial, "count": len(ds)}
	if len(ds) == 0 {
		fmt.Fprintf(&b, "no problems found in %s", rel)
		if !isGo(path) && !strings.HasSuffix(path, "/") {
			if fi, err := statFile(c, rel, path); err == nil && !fi.IsDir() {
				b.WriteString(" (diagnostics cover Go code only)")
				s["note"] = "diagnostics cover Go code only"
			}
		}
		b.WriteString("\n")
	}
	if partial {
		b.WriteString("(partial: not every package was checked)\n")
	}
	return Success(b.String(), s), nil
}
