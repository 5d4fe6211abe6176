package tools

import (
	"encoding/json"

	"github.com/agentls/agentls/codeindex"
)

// FindDefinition is definition: where the identifier at a position, or a named
// symbol, is declared.
var FindDefinition = builtin(Def[positionArgs]{
	Spec: Spec{
		Name:     "definition",
		Category: "code",
		Title:    "Go to definition",
		Description: "Finds where an identifier is declared. Give path, line and column (1-based; the column of any character of the identifier, " +
			"as grep reports it) or symbol (a name such as \"NewReader\", \"bufio.NewReader\" or \"Reader.Read\"; add path, or path and line, to pick the one in a file or on a line). " +
			"Go code is resolved by the type checker (precision \"type\"), across the packages of the module and the standard library; " +
			"other languages (Python, JavaScript/TypeScript, Rust, Java, C/C++, shell, Markdown) by name (precision \"name\": every declaration " +
			"with that name). Returns locations [{path, line, column, end_line, end_column}].",
		Annotations:  Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema:  json.RawMessage(positionSchema("")),
		OutputSchema: json.RawMessage(locationsOutputSchema),
	},
	Validate: validatePosition,
	Execute:  definition,
})

func definition(c *Call, a positionArgs) (*Result, error) {
	ans, err := askIndex(c, &a, false,
		func(ix *codeindex.Index) (*answer, error) { return ix.DefinitionOf(a.Symbol) },
		func(ix *codeindex.Index, path string) (*answer, error) {
			return ix.Definition(c.Ctx, path, a.Line, a.Column)
		})
	if err != nil {
		return nil, err
	}
	return answerResult(c, ans, "definition"), nil
}
