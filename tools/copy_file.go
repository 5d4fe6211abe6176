package tools

import (
	"encoding/json"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/workspace"
)

// CopyFile is copy_file.
var CopyFile = builtin(editTool(Def[copyFileArgs]{
	Spec: Spec{
		Name:     "copy_file",
		Category: "fs",
		Title:    "Copy file",
		Description: "Copies a file (the editor's buffer when it is open) to a new path; missing parent directories are created. " +
			"An existing file at dest is replaced only with overwrite: true. Copying asks for approval in safe mode, " +
			"to a new path too. Directories are not copied.",
		Annotations: Annotations{Destructive: true, Approval: "ask"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["source","dest"],"properties":{
			"source":{"type":"string","description":"the file to copy, relative to the workspace root or absolute inside it"},
			"dest":{"type":"string","description":"the path of the copy"},
			"overwrite":{"type":"boolean","default":false,"description":"replace an existing file at dest"}}}`),
	},
}, planCopy))

type copyFileArgs struct {
	Source    string `json:"source"`
	Dest      string `json:"dest"`
	Overwrite bool   `json:"overwrite"`
}

func planCopy(c *Call, a copyFileArgs) (*workspace.Plan, error) {
	p, err := resolvePair(c, "source", a.Source, "dest", a.Dest)
	if err != nil {
		return nil, err
	}
	var mode fs.FileMode // the source's permission bits, which the copy keeps
	if fi, err := c.Workspace.Stat(p.from); err == nil {
		if fi.IsDir() {
			return nil, Errorf(NotAFile, "%s is a directory; copy_file copies files", p.fromRel)
		}
		mode = fi.Mode().Perm()
	}
	text, exists, err := currentText(c, p.from)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, Errorf(FileNotFound, "%s does not exist", p.fromRel)
	}
	ch := workspace.FileChange{Op: workspace.OpCreate, Path: p.to, NewText: text, Mode: mode,
		Binary: strings.IndexByte(text, 0) >= 0 || !utf8.ValidString(text)}
	existing, err := checkDest(c, p, a.Overwrite, false, "give the full path of the copy")
	if err != nil {
		return nil, err
	}
	if existing != nil {
		old, err := freshText(c, p.to)
		if err != nil {
			return nil, err
		}
		ch.Overwrite, ch.OldText, ch.Version = true, old, version(c, p.to)
	}
	return &workspace.Plan{Changes: []workspace.FileChange{ch}}, nil
}
