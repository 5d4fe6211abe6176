package tools

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/agentls/agentls/workspace"
)

// MoveFile is move_file.
var MoveFile = builtin(editTool(Def[moveFileArgs]{
	Spec: Spec{
		Name:     "move_file",
		Category: "fs",
		Title:    "Move or rename file",
		Description: "Moves or renames a file or a directory. to is the new path itself, not a directory to move into; missing parent " +
			"directories are created. An existing file at to is replaced only with overwrite: true (a directory never is). " +
			"Moving asks for approval in safe mode, to a new path too.",
		Annotations: Annotations{Destructive: true, Approval: "ask"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["from","to"],"properties":{
			"from":{"type":"string","description":"the file or directory to move, relative to the workspace root or absolute inside it"},
			"to":{"type":"string","description":"its new path"},
			"overwrite":{"type":"boolean","default":false,"description":"replace an existing file at to"}}}`),
	},
}, planMove))

type moveFileArgs struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Overwrite bool   `json:"overwrite"`
}

func planMove(c *Call, a moveFileArgs) (*workspace.Plan, error) {
	p, err := resolvePair(c, "from", a.From, "to", a.To)
	if err != nil {
		return nil, err
	}
	if err := refuseRoot(c, p.from, "move"); err != nil {
		return nil, err
	}
	fi, err := c.Workspace.Lstat(p.from)
	if err != nil {
		return nil, fileError(p.fromRel, err)
	}
	if fi.IsDir() {
		if r, err := filepath.Rel(p.from, p.to); err == nil && filepath.IsLocal(r) {
			return nil, Errorf(InvalidParams, "cannot move %s into itself (%s)", p.fromRel, p.toRel)
		}
		if err := sensitiveInside(c, p.from); err != nil {
			return nil, err
		}
	}
	if err := linksStayInside(c, p.from, p.to); err != nil {
		return nil, err
	}
	ch := workspace.FileChange{Op: workspace.OpRename, Path: p.from, NewPath: p.to, Dir: fi.IsDir()}
	existing, err := checkDest(c, p, a.Overwrite, fi.IsDir(), fmt.Sprintf("give the full new path (for example %s)",
		filepath.ToSlash(filepath.Join(p.toRel, filepath.Base(p.from)))))
	if err != nil {
		return nil, err
	}
	if existing != nil {
		if existing.Mode().IsRegular() {
			if _, err := freshText(c, p.to); err != nil {
				return nil, err
			}
		}
		ch.Overwrite = true
	}
	return &workspace.Plan{Changes: []workspace.FileChange{ch}}, nil
}

// linksStayInside refuses a move that would make a symlink lead out of the
// workspace: a relative link (from itself, or any link below a moved
// directory) points elsewhere once moved.
func linksStayInside(c *Call, from, to string) error {
	fi, err := c.Workspace.Lstat(from)
	if err != nil {
		return nil
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := c.Workspace.Readlink(from)
		if err != nil {
			return nil
		}
		return linkStaysInside(c, from, to, from, target)
	}
	if !fi.IsDir() {
		return nil
	}
	return walkAll(c, from, 1, func(f *workspace.File) error {
		if f.Type&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := f.Readlink()
		if err != nil {
			return nil
		}
		return linkStaysInside(c, from, to, f.Path, target)
	})
}

// linkStaysInside checks one symlink p (below from, or from itself) with
// the given target.
func linkStaysInside(c *Call, from, to, p, target string) error {
	if filepath.IsAbs(target) {
		return nil // an absolute target is where it was, and Resolve checked from
	}
	rel, err := filepath.Rel(from, p)
	if err != nil {
		return nil
	}
	moved := filepath.Join(to, rel)
	dest := filepath.Join(filepath.Dir(moved), target)
	if _, err := c.Workspace.Resolve(dest); err != nil {
		return Errorf(InvalidPath, "moving %s would make the symlink %s point to %s, outside the workspace (or to a sensitive path)",
			c.Workspace.Rel(from), c.Workspace.Rel(moved), dest)
	}
	return nil
}
