package tools

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/workspace"
)

// CopyFile is copy_file.
var CopyFile = builtin(editTool(Def[copyFileArgs]{
	Name:  "copy_file",
	Title: "Copy file",
	Description: "Copies a file (the editor's buffer when it is open) to a new path; missing parent directories are created. " +
		"An existing file at dest is replaced only with overwrite: true. Copying asks for approval in safe mode, " +
		"to a new path too. Directories are not copied.",
	Annotations: Annotations{Destructive: true, Approval: "ask"},
	InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["source","dest"],"properties":{
		"source":{"type":"string","description":"the file to copy, relative to the workspace root or absolute inside it"},
		"dest":{"type":"string","description":"the path of the copy"},
		"overwrite":{"type":"boolean","default":false,"description":"replace an existing file at dest"}}}`),
}, planCopy))

type copyFileArgs struct {
	Source    string `json:"source"`
	Dest      string `json:"dest"`
	Overwrite bool   `json:"overwrite"`
}

func planCopy(c *Call, a copyFileArgs) (*workspace.Plan, error) {
	src, err := c.Workspace.Resolve(a.Source)
	if err != nil {
		return nil, err
	}
	dst, err := c.Workspace.Resolve(a.Dest)
	if err != nil {
		return nil, err
	}
	srcRel, dstRel := c.Workspace.Rel(src), c.Workspace.Rel(dst)
	if src == dst {
		return nil, Errorf(InvalidParams, "source and dest are the same path (%s)", srcRel)
	}
	if fi, err := c.Workspace.Stat(src); err == nil && fi.IsDir() {
		return nil, Errorf(NotAFile, "%s is a directory; copy_file copies files", srcRel)
	}
	text, exists, err := currentText(c, src)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, Errorf(FileNotFound, "%s does not exist", srcRel)
	}
	ch := workspace.FileChange{Op: workspace.OpCreate, Path: dst, NewText: text,
		Binary: strings.IndexByte(text, 0) >= 0 || !utf8.ValidString(text)}
	fi, err := c.Workspace.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fileError(dstRel, err)
	case fi.IsDir():
		return nil, Errorf(AlreadyExists, "%s is an existing directory; give the full path of the copy", dstRel)
	case !a.Overwrite:
		return nil, Errorf(AlreadyExists, "%s already exists; pass overwrite: true to replace it", dstRel)
	default:
		old, _, err := currentText(c, dst)
		if err != nil {
			return nil, err
		}
		if err := checkFresh(c, dst, old, false); err != nil {
			return nil, err
		}
		ch.Overwrite, ch.OldText, ch.Version = true, old, version(c, dst)
	}
	return &workspace.Plan{Changes: []workspace.FileChange{ch}}, nil
}
