package tools

import (
	"encoding/json"
	"strings"
)

// CurrentDirectory is get_current_directory: the workspace roots.
var CurrentDirectory = &Tool{
	Name:        "get_current_directory",
	Title:       "Current directory",
	Description: "Returns the workspace root that relative paths are resolved against, and every other root.",
	Aliases:     []string{"getCurrentDirectory"},
	Annotations: Annotations{ReadOnly: true, Approval: "auto"},
	OutputSchema: json.RawMessage(`{"type":"object","required":["directory","roots"],"properties":{
		"directory":{"type":"string"},"roots":{"type":"array","items":{"type":"string"}}}}`),
	Execute: func(c *Call, _ json.RawMessage) (*Result, error) {
		roots := c.Workspace.Roots()
		if len(roots) == 0 {
			return nil, Errorf(NotConfigured, "the session has no workspace root")
		}
		content := roots[0]
		if len(roots) > 1 {
			content += "\nother roots:\n" + strings.Join(roots[1:], "\n")
		}
		return Success(content, map[string]any{"directory": roots[0], "roots": roots}), nil
	},
}
