package tools

import (
	"encoding/json"
	"fmt"
)

// Formats are the definition formats of tool/list and `agentls tools`.
var Formats = []string{"agentls", "openai", "anthropic", "mcp"}

// anthropicTextEditor is the type of Anthropic's text editor tool that
// str_replace_based_edit_tool is declared as in the anthropic format.
const anthropicTextEditor = "text_editor_20250728"

// Definition is a tool's agentls-format definition.
type Definition struct {
	Name         string          `json:"name"`
	Category     string          `json:"category"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  Annotations     `json:"annotations"`
	Aliases      []string        `json:"aliases"`
}

// Export returns the definitions of ts in format.
func Export(ts []*Tool, format string) ([]any, error) {
	if _, err := export(&Tool{}, format); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(ts))
	for _, t := range ts {
		d, err := export(t, format)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func export(t *Tool, format string) (any, error) {
	switch format {
	case "", "agentls":
		aliases := t.Aliases
		if aliases == nil {
			aliases = []string{}
		}
		return Definition{
			Name: t.Name, Category: t.Category, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
			Annotations: t.Annotations, Aliases: aliases,
		}, nil
	case "openai":
		// The Chat Completions "tools" entry.
		return map[string]any{
			"type": "function",
			"function": map[string]any{
				"name":        t.Name,
				"description": t.Description,
				"parameters":  t.InputSchema,
			},
		}, nil
	case "anthropic":
		if t.Name == TextEditor.Name {
			// Declared as Anthropic's own text editor tool, whose schema
			// Claude models know (the other formats carry it in full).
			return map[string]any{"type": anthropicTextEditor, "name": t.Name}, nil
		}
		return map[string]any{
			"name":         t.Name,
			"description":  t.Description,
			"input_schema": t.InputSchema,
		}, nil
	case "mcp":
		d := map[string]any{
			"name":        t.Name,
			"title":       t.Title,
			"description": t.Description,
			"inputSchema": t.InputSchema,
			"annotations": map[string]any{
				"title":           t.Title,
				"readOnlyHint":    t.Annotations.ReadOnly,
				"destructiveHint": t.Annotations.Destructive,
				"openWorldHint":   t.Risk == "network",
			},
		}
		if len(t.OutputSchema) > 0 {
			d["outputSchema"] = t.OutputSchema
		}
		return d, nil
	}
	return nil, fmt.Errorf("unknown format %q (want one of agentls, openai, anthropic, mcp)", format)
}
