package tools

import (
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/workspace"
)

// WriteFile is write_file.
var WriteFile = builtin(editTool(Def[writeFileArgs]{
	Spec: Spec{
		Name:     "write_file",
		Category: "fs",
		Title:    "Write file",
		Description: "Creates a file, or replaces the whole content of one. To replace an existing file, read it first with read_file; " +
			"for changes to part of a file prefer edit_file. An existing file keeps its line endings (CRLF stays CRLF) and its final newline. " +
			"Creating a file and overwriting one both ask for approval in safe mode (a rule approval.tools.write_file: auto makes them automatic).",
		Aliases:     []string{"writeFile"},
		Annotations: Annotations{Destructive: true, Approval: "ask"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path","content"],"properties":{
			"path":{"type":"string","description":"file path, relative to the workspace root or absolute inside it"},
			"content":{"type":"string","description":"the whole new content"},
			"encoding":{"enum":["utf-8","base64"],"default":"utf-8","description":"base64: content is the file's bytes in base64"},
			"create_dirs":{"type":"boolean","default":true,"description":"create missing parent directories"}}}`),
	},
}, planWrite))

type writeFileArgs struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	Encoding   string `json:"encoding"`
	CreateDirs bool   `json:"create_dirs"`
}

func planWrite(c *Call, a writeFileArgs) (*workspace.Plan, error) {
	path, rel, err := resolveArg(c, a.Path)
	if err != nil {
		return nil, err
	}
	content := a.Content
	binary := false
	if a.Encoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(a.Content)
		if err != nil {
			return nil, Errorf(InvalidParams, "content is not valid base64: %v", err)
		}
		content, binary = string(b), !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0
	}
	if !a.CreateDirs {
		if fi, err := c.Workspace.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
			return nil, Errorf(FileNotFound, "the directory of %s does not exist; pass create_dirs: true to create it", rel)
		}
	}
	old, exists, err := currentText(c, path)
	if err != nil {
		return nil, err
	}
	ch := workspace.FileChange{Op: workspace.OpCreate, Path: path, NewText: content, Binary: binary}
	if exists {
		if err := checkFresh(c, path, old); err != nil {
			return nil, err
		}
		if !binary {
			ch.NewText = keepEndings(old, content)
		}
		ch.Overwrite, ch.OldText, ch.Version = true, old, version(c, path)
	}
	return &workspace.Plan{Changes: []workspace.FileChange{ch}}, nil
}

// keepEndings gives new text the line endings and final newline of old.
func keepEndings(old, new string) string {
	e := detectEOL(old)
	new = e.restore(e.toLF(new))
	nl := "\n"
	if e.crlf {
		nl = "\r\n"
	}
	switch {
	case old == "" || new == "":
	case strings.HasSuffix(old, "\n") && !strings.HasSuffix(new, "\n"):
		new += nl
	case !strings.HasSuffix(old, "\n") && strings.HasSuffix(new, "\n"):
		new = strings.TrimSuffix(strings.TrimSuffix(new, "\n"), "\r")
	}
	return new
}
