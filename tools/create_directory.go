package tools

import (
	"encoding/json"

	"github.com/agentls/agentls/workspace"
)

// CreateDirectory is create_directory.
var CreateDirectory = builtin(editTool(Def[createDirectoryArgs]{
	Spec: Spec{
		Name:     "create_directory",
		Category: "fs",
		Title:    "Create directory",
		Description: "Creates a directory, and its missing parents, in the workspace. Fails with ALREADY_EXISTS when the path exists. " +
			"There is no need to create directories before write_file, which creates missing parents itself.",
		Annotations: Annotations{Approval: "ask"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path"],"properties":{
			"path":{"type":"string","description":"directory path, relative to the workspace root or absolute inside it"}}}`),
	},
}, planCreateDirectory))

type createDirectoryArgs struct {
	Path string `json:"path"`
}

func planCreateDirectory(c *Call, a createDirectoryArgs) (*workspace.Plan, error) {
	path, rel, err := resolveArg(c, a.Path)
	if err != nil {
		return nil, err
	}
	fi, err := lstatIfAny(c, path, rel)
	switch {
	case err != nil:
		return nil, err
	case fi != nil && fi.IsDir():
		return nil, Errorf(AlreadyExists, "the directory %s already exists; nothing to do", rel)
	case fi != nil:
		return nil, Errorf(AlreadyExists, "%s already exists and is not a directory", rel)
	}
	return &workspace.Plan{Changes: []workspace.FileChange{{Op: workspace.OpMkdir, Path: path, Dir: true}}}, nil
}
