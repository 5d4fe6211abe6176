package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentls/agentls/codeindex"
)

// Hover is hover: the declaration and documentation of the identifier at a
// position, or of a named symbol.
var Hover = builtin(Def[positionArgs]{
	Spec: Spec{
		Name:     "hover",
		Category: "code",
		Title:    "Describe a symbol",
		Description: "Describes an identifier: its declaration (signature, type) and its doc comment, like an editor's hover. Give path, line " +
			"and column (1-based; the column of any character of the identifier) or symbol (\"NewReader\", \"bufio.NewReader\", \"Reader.Read\"; add path, or path and line, to pick the one in a file or on a line). " +
			"Go code is resolved by the type checker (precision \"type\"); other languages by name (precision \"name\": the first declaration " +
			"with that name, with the comment above it).",
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(positionSchema("")),
		OutputSchema: json.RawMessage(`{"type":"object","required":["name","signature","precision","partial"],"properties":{
			"name":{"type":"string"},"kind":{"type":"string"},"signature":{"type":"string"},"doc":{"type":"string"},
			"language":{"type":"string"},"precision":{"enum":["type","name"]},"partial":{"type":"boolean"},"note":{"type":"string"},
			"locations":{"type":"array","items":{"type":"object"}}}}`),
	},
	Validate: validatePosition,
	Execute:  hover,
})

func hover(c *Call, a positionArgs) (*Result, error) {
	ans, err := askIndex(c, &a, false,
		func(ix *codeindex.Index) (*answer, error) { return ix.HoverOf(c.Ctx, a.Symbol) },
		func(ix *codeindex.Index, path string) (*answer, error) {
			return ix.Hover(c.Ctx, path, a.Line, a.Column)
		})
	if err != nil {
		return nil, err
	}
	if len(ans.Locations) == 0 && ans.Signature == "" {
		return nil, Errorf(NoMatch, "no declaration found for %s", ans.Name)
	}
	locs := c.locations(ans.Locations)
	var b strings.Builder
	fmt.Fprintf(&b, "```%s\n%s\n```\n", ans.Language, ans.Signature)
	if ans.Doc != "" {
		fmt.Fprintf(&b, "\n%s\n", ans.Doc)
	}
	if len(locs) > 0 {
		fmt.Fprintf(&b, "\ndeclared at %s:%d:%d", locs[0].Path, locs[0].Line, locs[0].Column)
		if ans.Precision == "name" {
			b.WriteString(" (found by name)")
		}
		b.WriteString("\n")
	}
	if ans.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", ans.Note)
	}
	s := map[string]any{"name": ans.Name, "kind": ans.Kind, "signature": ans.Signature, "doc": ans.Doc,
		"language": ans.Language, "precision": ans.Precision, "partial": ans.Partial, "locations": locs}
	if ans.Note != "" {
		s["note"] = ans.Note
	}
	return Success(b.String(), s), nil
}
