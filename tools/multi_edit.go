package tools

import (
	"encoding/json"

	"github.com/agentls/agentls/workspace"
)

// MultiEdit is multi_edit: several replacements in one file, applied in
// order to the result of the previous ones, all or nothing.
var MultiEdit = builtin(editTool(Def[multiEditArgs]{
	Spec: Spec{
		Name:     "multi_edit",
		Category: "fs",
		Title:    "Edit file (several replacements)",
		Description: "Makes several exact-string replacements in one file, in order: each edit applies to the text the previous ones " +
			"produced. All or nothing: if any edit fails (old_string not found, or found more than once without replace_all) " +
			"nothing is changed and the error names the edit. Same matching rules as edit_file. Edits the editor's buffer when the " +
			"file is open. The person approves the whole change as one diff.",
		Annotations: Annotations{Destructive: true, Approval: "ask"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path","edits"],"properties":{
			"path":{"type":"string","description":"file path, relative to the workspace root or absolute inside it"},
			"edits":{"type":"array","minItems":1,"description":"the replacements, applied in order","items":{
				"type":"object","additionalProperties":false,"required":["old_string","new_string"],"properties":{
					"old_string":{"type":"string","minLength":1,"description":"the exact text to replace"},
					"new_string":{"type":"string","description":"the text to put in its place"},
					"replace_all":{"type":"boolean","default":false,"description":"replace every occurrence"}}}}}}`),
	},
}, planMultiEdit))

type multiEditArgs struct {
	Path  string `json:"path"`
	Edits []Edit `json:"edits"`
}

func planMultiEdit(c *Call, a multiEditArgs) (*workspace.Plan, error) {
	if len(a.Edits) == 0 {
		return nil, Errorf(InvalidParams, "edits is empty")
	}
	return planEdits(c, a.Path, a.Edits)
}
