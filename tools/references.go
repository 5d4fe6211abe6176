package tools

import (
	"encoding/json"

	"github.com/agentls/agentls/codeindex"
)

// References is references: the uses of the identifier at a position, or
// of a named symbol.
var References = builtin(Def[referencesArgs]{
	Spec: Spec{
		Name:     "references",
		Category: "code",
		Title:    "Find references",
		Description: "Finds the uses of an identifier across the workspace. Give path, line and column (1-based; the column of any character of " +
			"the identifier) or symbol (\"NewReader\", \"bufio.NewReader\", \"Reader.Read\"; add path, or path and line, to pick the one in a file or on a line). Go code is resolved by the type checker " +
			"(precision \"type\": only uses of that very declaration, in every package of the workspace that mentions it); other languages " +
			"by whole-word search in files of the same language (precision \"name\"). The declaration is included unless " +
			"include_declaration is false. Returns locations [{path, line, column, end_line, end_column}].",
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(positionSchema(`,
			"include_declaration":{"type":"boolean","default":true,"description":"include the declaration itself"}`)),
		OutputSchema: json.RawMessage(locationsOutputSchema),
	},
	Validate: (func(a referencesArgs) error { return validatePosition(a.positionArgs) }),
	Execute:  references,
})

type referencesArgs struct {
	positionArgs
	IncludeDeclaration bool `json:"include_declaration"`
}

func references(c *Call, a referencesArgs) (*Result, error) {
	// Every use, in Go too, needs the whole index.
	ans, err := askIndex(c, &a.positionArgs, true,
		func(ix *codeindex.Index) (*answer, error) {
			return ix.ReferencesOf(c.Ctx, a.Symbol, a.IncludeDeclaration)
		},
		func(ix *codeindex.Index, path string) (*answer, error) {
			return ix.References(c.Ctx, path, a.Line, a.Column, a.IncludeDeclaration)
		})
	if err != nil {
		return nil, err
	}
	return answerResult(c, ans, "reference"), nil
}
