package tools

import (
	"encoding/json"
	"strings"
)

// CurrentDirectory is get_current_directory: the workspace roots.
var CurrentDirectory = builtin(Def[struct{}]{
	Spec: Spec{
		Name:        "get_current_directory",
		Category:    "fs",
		Title:       "Current directory",
		Description: "Returns the workspace root that relative paths are resolved against, and every other root.",
		Aliases:     []string{"getCurrentDirectory"},
		Instant:     true,
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		OutputSchema: json.RawMessage(`{"type":"object","required":["directory","roots"],"properties":{
			"directory":{"type":"string"},"roots":{"type":"array","items":{"type":"string"}},
			"names":{"type":"array","items":{"type":"string"},"description":"with several roots, each root's name: the first segment of its paths"}}}`),
	},
	Execute: func(c *Call, _ struct{}) (*Result, error) {
		roots := c.Workspace.Roots()
		if len(roots) == 0 {
			return nil, Errorf(NotConfigured, "the session has no workspace root")
		}
		content := roots[0]
		st := map[string]any{"directory": roots[0], "roots": roots}
		if len(roots) > 1 {
			// With several roots, paths start with the root's name
			// (docs/protocol.md, "Paths with several roots").
			var names []string
			var lines []string
			for _, f := range c.Workspace.Folders() {
				names = append(names, f.Name)
				lines = append(lines, f.Name+"/ = "+f.Path)
			}
			content = "roots (paths start with the root's name; a path without one is relative to the first root):\n" + strings.Join(lines, "\n")
			st["names"] = names
		}
		return Success(content, st), nil
	},
})
