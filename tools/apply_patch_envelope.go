package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentls/agentls/patch"
	"github.com/agentls/agentls/workspace"
)

// planEnvelope plans a patch in OpenAI's "*** Begin Patch" envelope (read
// by package patch): Add File creates a file or replaces one, Delete File
// removes one, Update File changes one and, with Move to, moves it
// (replacing a file at the destination; parent folders are created). One
// plan for the whole patch: the person reviews it once, and if any part
// does not apply nothing is written.
func planEnvelope(c *Call, text string) (*workspace.Plan, error) {
	files, err := patch.Parse(text)
	if err != nil {
		return nil, Errorf(InvalidParams, "the patch is not a valid '*** Begin Patch' envelope: %v", err)
	}
	plan := &workspace.Plan{}
	seen := map[string]bool{}
	claim := func(p string) error {
		if seen[p] {
			return Errorf(InvalidParams, "%s appears more than once in the patch; give each file one operation", c.Workspace.Rel(p))
		}
		seen[p] = true
		return nil
	}
	var failures []string
	var failDetails []map[string]any
	var notes []string
	for _, f := range files {
		path, err := c.Workspace.Resolve(f.Path)
		if err != nil {
			return nil, err
		}
		if err := claim(path); err != nil {
			return nil, err
		}
		rel := c.Workspace.Rel(path)
		old, exists, err := envelopeTarget(c, path, f.Kind)
		if err != nil {
			return nil, err
		}
		switch f.Kind {
		case patch.Add:
			ch := workspace.FileChange{Op: workspace.OpCreate, Path: path, NewText: f.Text}
			if exists {
				ch.Overwrite, ch.OldText, ch.Version = true, old, version(c, path)
			}
			plan.Changes = append(plan.Changes, ch)
			continue
		case patch.Delete:
			plan.Changes = append(plan.Changes, workspace.FileChange{Op: workspace.OpDelete, Path: path, OldText: old, Version: version(c, path)})
			continue
		}
		newText := old
		if len(f.Chunks) > 0 {
			e := detectEOL(old)
			applied, matches, fails := patch.Apply(e.toLF(old), f.Chunks)
			for _, fl := range fails {
				failures = append(failures, fmt.Sprintf("%s, %v", rel, fl))
				failDetails = append(failDetails, map[string]any{"path": rel, "chunk": fl.Chunk, "line": fl.Line})
			}
			if len(fails) > 0 {
				continue
			}
			for i, m := range matches {
				if m != patch.Exact {
					notes = append(notes, fmt.Sprintf("chunk %d of %s matched only %v", i+1, rel, m))
				}
			}
			newText = e.restore(applied)
		}
		if f.MoveTo == "" {
			if newText != old {
				plan.Changes = append(plan.Changes, workspace.FileChange{Op: workspace.OpModify, Path: path, OldText: old, NewText: newText, Version: version(c, path)})
			}
			continue
		}
		changes, err := planEnvelopeMove(c, path, f.MoveTo, old, newText, claim)
		if err != nil {
			return nil, err
		}
		plan.Changes = append(plan.Changes, changes...)
	}
	return finishPatch(c, plan, "chunks", failures, failDetails, notes)
}

// envelopeTarget checks the file an operation names and returns its text:
// Add accepts a file or nothing, Delete and Update need a text file; none
// takes a directory. A file the session read in another version is stale.
func envelopeTarget(c *Call, path string, kind patch.Kind) (string, bool, error) {
	rel := c.Workspace.Rel(path)
	if fi, err := c.Workspace.Lstat(path); err == nil && fi.IsDir() {
		return "", false, Errorf(NotAFile, "%s is a directory; '*** %v: ' names a file", rel, kind)
	}
	old, exists, err := currentText(c, path)
	if err != nil {
		return "", false, err
	}
	switch {
	case !exists && kind == patch.Update:
		return "", false, Errorf(FileNotFound, "the patch updates %s, which does not exist; a new file is '*** Add File: %s' followed by its lines, each starting with '+'", rel, rel)
	case !exists && kind == patch.Delete:
		return "", false, Errorf(FileNotFound, "the patch deletes %s, which does not exist", rel)
	case !exists:
		return "", false, nil
	case kind == patch.Update && strings.IndexByte(old, 0) >= 0:
		return "", false, Errorf(BinaryFile, "%s is a binary file; apply_patch changes text files", rel)
	}
	return old, true, checkFresh(c, path, old)
}

// planEnvelopeMove plans an Update's move of path (whose text becomes
// newText) to the patch's "Move to" path, replacing a file there.
func planEnvelopeMove(c *Call, path, moveTo, old, newText string, claim func(string) error) ([]workspace.FileChange, error) {
	dst, err := c.Workspace.Resolve(moveTo)
	if err != nil {
		return nil, err
	}
	if dst == path {
		if newText == old {
			return nil, nil
		}
		return []workspace.FileChange{{Op: workspace.OpModify, Path: path, OldText: old, NewText: newText, Version: version(c, path)}}, nil
	}
	if err := claim(dst); err != nil {
		return nil, err
	}
	if err := linksStayInside(c, path, dst); err != nil {
		return nil, err
	}
	dstRel := c.Workspace.Rel(dst)
	switch fi, err := c.Workspace.Lstat(dst); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fileError(dstRel, err)
	case fi.IsDir():
		return nil, Errorf(NotAFile, "%s is a directory; '*** Move to: ' names the file's new path", dstRel)
	default:
		// The file there is replaced: the person sees its text become the
		// moved file's, and the source go.
		text, _, err := currentText(c, dst)
		if err != nil {
			return nil, err
		}
		if err := checkFresh(c, dst, text); err != nil {
			return nil, err
		}
		return []workspace.FileChange{
			{Op: workspace.OpCreate, Path: dst, Overwrite: true, OldText: text, NewText: newText, Version: version(c, dst)},
			{Op: workspace.OpDelete, Path: path, OldText: old, Version: version(c, path)},
		}, nil
	}
	rename := workspace.FileChange{Op: workspace.OpRename, Path: path, NewPath: dst}
	out := []workspace.FileChange{rename}
	if newText != old {
		out = append(out, workspace.FileChange{Op: workspace.OpModify, Path: dst, OldText: old, NewText: newText})
	}
	return out, nil
}
