package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

// DeleteFile is delete_file.
var DeleteFile = builtin(warnRecursive(editTool(Def[deleteFileArgs]{
	Spec: Spec{
		Name:     "delete_file",
		Category: "fs",
		Title:    "Delete file",
		Description: "Deletes a file, or a directory with everything in it when recursive is true (a directory is never deleted " +
			"without it). Always asks the person. A directory that holds sensitive files (paths.sensitive) is refused, and so is " +
			"a workspace root.",
		Annotations: Annotations{Destructive: true, Dangerous: true, Approval: "ask"},
		Risk:        approval.RiskDangerous,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path"],"properties":{
			"path":{"type":"string","description":"file or directory path, relative to the workspace root or absolute inside it"},
			"recursive":{"type":"boolean","default":false,"description":"required to delete a directory and its contents"}}}`),
	},
}, planDelete)))

// warnRecursive makes the question about a recursive delete say so.
func warnRecursive(d Def[deleteFileArgs]) Def[deleteFileArgs] {
	assess := d.Assess
	d.Assess = func(c *Call, args deleteFileArgs) (Assessment, error) {
		a, err := assess(c, args)
		if err == nil && a.Edit != nil && len(a.Edit.Changes) == 1 && a.Edit.Changes[0].Dir {
			a.Warning = fmt.Sprintf("deletes the directory %s and everything in it", c.Workspace.Rel(a.Edit.Changes[0].Path))
		}
		return a, err
	}
	return d
}

type deleteFileArgs struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
}

func planDelete(c *Call, a deleteFileArgs) (*workspace.Plan, error) {
	path, rel, err := resolveArg(c, a.Path)
	if err != nil {
		return nil, err
	}
	if err := refuseRoot(c, path, "delete"); err != nil {
		return nil, err
	}
	fi, err := c.Workspace.Lstat(path)
	if err != nil {
		return nil, fileError(rel, err)
	}
	ch := workspace.FileChange{Op: workspace.OpDelete, Path: path}
	switch {
	case fi.IsDir():
		if !a.Recursive {
			return nil, Errorf(NotAFile, "%s is a directory; pass recursive: true to delete it and everything in it", rel)
		}
		if err := sensitiveInside(c, path); err != nil {
			return nil, err
		}
		ch.Dir = true
	case fi.Mode()&fs.ModeSymlink != 0:
		// The link goes, not what it points to: there is no text to show.
	case !fi.Mode().IsRegular():
		return nil, Errorf(NotAFile, "%s is not a regular file", rel)
	default:
		text, err := freshText(c, path)
		if err != nil {
			return nil, err
		}
		ch.OldText, ch.Version = text, version(c, path)
	}
	return &workspace.Plan{Changes: []workspace.FileChange{ch}}, nil
}

// refuseRoot refuses to delete or move a workspace root (or a directory
// that holds one).
func refuseRoot(c *Call, path, verb string) error {
	roots := c.Workspace.Roots()
	for _, a := range c.Workspace.Config().Paths.Allow {
		if filepath.IsAbs(a) {
			roots = append(roots, filepath.Clean(a))
		}
	}
	for _, r := range roots {
		if rel, err := filepath.Rel(path, r); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return Errorf(InvalidPath, "cannot %s %s: it is (or holds) the workspace root %s", verb, c.Workspace.Rel(path), r)
		}
	}
	return nil
}

var errSensitiveFound = errors.New("sensitive")

// sensitiveInside refuses a directory that holds a path matching the
// sensitive globs: deleting or moving it would touch that file. It walks
// everything beneath the directory (walkAll).
func sensitiveInside(c *Call, dir string) error {
	var mu sync.Mutex
	var found string
	if rel := c.Workspace.Rel(dir); rel != "." && c.Workspace.IsSensitive(rel) {
		found = rel
	}
	var err error
	if found == "" {
		err = walkAll(c, dir, 0, func(f *workspace.File) error {
			if rel := c.Workspace.Rel(f.Path); rel != "." && c.Workspace.IsSensitive(rel) {
				mu.Lock()
				if found == "" {
					found = rel
				}
				mu.Unlock()
				return errSensitiveFound
			}
			return nil
		})
		if err == nil && found != "" {
			err = errSensitiveFound
		}
	} else {
		err = errSensitiveFound
	}
	if errors.Is(err, errSensitiveFound) {
		return Errorf(SensitivePath, "%s holds %s, which matches a sensitive pattern (paths.sensitive); agents may not touch it", c.Workspace.Rel(dir), found)
	}
	if err != nil {
		return fileError(c.Workspace.Rel(dir), err)
	}
	return nil
}
