package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/git"
	"github.com/agentls/agentls/workspace"
)

// Editor applies edits in the person's editor. The LSP session implements
// it; without one (the call command, a client without applyEdit) the server
// writes files itself.
//
// The server writes a file itself only when no editor holds it with unsaved
// changes (applyPlan refuses otherwise): a change to an open buffer goes to
// the editor, so that neither the person's unsaved text nor the edit is lost.
type Editor interface {
	// CanApply reports whether the editor can apply every change of p
	// itself (Split leaves nothing for the server).
	CanApply(p *workspace.Plan) bool
	// Split divides p into the changes the editor applies and those the
	// server writes itself (what the client cannot express, and files no
	// editor holds open), each in the plan's order. The server's part is
	// written first.
	Split(p *workspace.Plan) (editor, server *workspace.Plan)
	// ConfirmsEdits reports whether the editor shows its own preview of an
	// edit sent with confirm (change annotations with needsConfirmation) and
	// answers applied:false when the person declines: then sending the edit
	// is how the person is asked (docs/protocol.md, Approval: the second of
	// the channels).
	ConfirmsEdits() bool
	// SavesAfterApply reports whether the editor saves the buffers an
	// approved edit touched that were not modified before it.
	SavesAfterApply() bool
	// Apply sends p as one workspace/applyEdit labelled label, and returns
	// the editor's answer. An error means the request itself failed.
	Apply(ctx context.Context, p *workspace.Plan, label string, confirm bool) (applied bool, reason string, err error)
}

// EditResult is the structured result of an edit tool (docs/protocol.md,
// Approval: what landed).
type EditResult struct {
	Files       []string `json:"files"`
	AppliedBy   string   `json:"applied_by"` // editor, server or both
	Landed      string   `json:"landed"`     // all, partial or none
	LandedFiles []string `json:"landed_files"`
	NotLanded   []string `json:"not_landed,omitempty"`
	UserChanges string   `json:"user_changes,omitempty"`
	Unsaved     []string `json:"unsaved"`
	Diff        string   `json:"diff"`
}

// editOutputSchema is the output schema every edit tool shares.
const editOutputSchema = `{"type":"object","required":["files","applied_by","landed","unsaved","diff"],"properties":{
	"files":{"type":"array","items":{"type":"string"}},
	"applied_by":{"enum":["editor","server","both"]},
	"landed":{"enum":["all","partial","none"]},
	"landed_files":{"type":"array","items":{"type":"string"}},
	"not_landed":{"type":"array","items":{"type":"string"}},
	"user_changes":{"type":"string"},
	"unsaved":{"type":"array","items":{"type":"string"}},
	"diff":{"type":"string"},
	"replacements":{"type":"integer"}}}`

// editTool completes the definition of a tool whose effect is an edit
// plan: plan computes what a call would change, without changing anything;
// the plan is computed before approval, previewed, applied by the editor or
// the server, and what landed is checked.
func editTool[A any](d Def[A], plan func(c *Call, a A) (*workspace.Plan, error)) Def[A] {
	d.Assess = func(c *Call, args A) (Assessment, error) {
		p, err := plan(c, args)
		if err != nil {
			return Assessment{}, err
		}
		return assessPlan(c, p, overwrites(p)), nil
	}
	d.Execute = func(c *Call, args A) (*Result, error) { return applyPlanned(c, args, plan) }
	if d.OutputSchema == nil {
		d.OutputSchema = json.RawMessage(editOutputSchema)
	}
	if d.Risk == "" {
		d.Risk = approval.RiskWrite
	}
	return d
}

// assessPlan describes a planned change for approval: its preview, and
// whether it asks (needsApproval, or always when it writes git metadata:
// gitMetadata).
func assessPlan(c *Call, p *workspace.Plan, needsApproval bool) Assessment {
	a := Assessment{Edit: p, Preview: preview(c, p)}
	a.NeedsApproval = needsApproval
	gitMetadata(c, p, &a)
	return a
}

// applyPlanned applies the plan the call's assessment made, or plans the
// change now when the call was not assessed.
func applyPlanned[A any](c *Call, args A, plan func(c *Call, a A) (*workspace.Plan, error)) (*Result, error) {
	p := c.Assessed.Edit
	if p == nil {
		var err error
		if p, err = plan(c, args); err != nil {
			return nil, err
		}
	}
	return applyPlan(c, p)
}

// overwrites reports whether a plan changes or removes anything that exists
// (what makes a conditional tool ask).
func overwrites(p *workspace.Plan) bool {
	for _, ch := range p.Changes {
		switch ch.Op {
		case workspace.OpCreate, workspace.OpRename:
			if ch.Overwrite {
				return true
			}
		case workspace.OpMkdir:
		default:
			return true
		}
	}
	return false
}

// gitMetadata makes a plan that writes git metadata (workspace.GitMetadata:
// a .git folder or file, a folder shaped like a git directory,
// .gitattributes naming drivers, .gitmodules, git configuration) ask in
// every mode and over every rule, saying why: git run later would run what
// that metadata names.
func gitMetadata(c *Call, p *workspace.Plan, a *Assessment) {
	why := workspace.GitMetadata(p, func(path string) string { return git.RootOf(c.Workspace, path) })
	why = append(why, gitConfigWrites(c, p)...)
	if len(why) == 0 {
		return
	}
	a.NeedsApproval, a.Dangerous = true, true
	w := "writes git metadata: " + strings.Join(why, "; ")
	if a.Warning != "" {
		w = a.Warning + "; " + w
	}
	a.Warning = w
}

// gitConfigWrites says which changes of p write a file that the workspace
// repository's configuration includes (git.ConfigFiles).
func gitConfigWrites(c *Call, p *workspace.Plan) []string {
	included := map[string]map[string]bool{} // root → files
	var why []string
	for _, ch := range p.Changes {
		if ch.Op == workspace.OpDelete {
			continue
		}
		for _, path := range []string{ch.Path, ch.NewPath} {
			if path == "" {
				continue
			}
			root := git.RootOf(c.Workspace, path)
			if included[root] == nil {
				included[root] = map[string]bool{}
				for _, f := range git.ConfigFiles(root) {
					included[root][f] = true
				}
			}
			if included[root][filepath.Clean(path)] || included[root][realParent(path)] {
				why = append(why, fmt.Sprintf("%s is included by the repository's git configuration (include.path): "+
					"it can name programs git runs", c.Workspace.Rel(path)))
			}
		}
	}
	return why
}

// realParent is path with the symbolic links of its folder resolved (git
// prints resolved paths), or path when the folder does not exist.
func realParent(path string) string {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, filepath.Base(path))
}

func preview(c *Call, p *workspace.Plan) *approval.Preview {
	pv := &approval.Preview{UnifiedDiff: p.UnifiedDiff(c.Workspace.Rel)}
	for _, ch := range p.Changes {
		f := approval.FilePreview{Path: c.Workspace.Rel(ch.Path), URI: workspace.PathToURI(ch.Path), Operation: ch.Op}
		switch ch.Op {
		case workspace.OpCreate, workspace.OpModify:
			nt := ch.NewText
			f.NewText = &nt
			if ch.Op == workspace.OpModify || ch.Overwrite {
				ot := ch.OldText
				f.OldText = &ot
				f.Operation = workspace.OpModify
			}
		case workspace.OpDelete:
			if !ch.Dir {
				ot := ch.OldText
				f.OldText = &ot
			}
		case workspace.OpRename:
			f.NewPath = c.Workspace.Rel(ch.NewPath)
		}
		pv.Files = append(pv.Files, f)
	}
	return pv
}

// currentText returns the text of path now: the open buffer, or the disk.
func currentText(c *Call, path string) (text string, exists bool, err error) {
	if d, ok := c.Workspace.Overlays.Get(path); ok {
		return d.Text, true, nil
	}
	rel := c.Workspace.Rel(path)
	// Opened beneath the workspace's roots and checked on the open file, so
	// that what is read is what was checked.
	f, err := c.Workspace.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fileError(rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, fileError(rel, err)
	}
	if fi.IsDir() {
		return "", true, Errorf(NotAFile, "%s is a directory", rel)
	}
	if !fi.Mode().IsRegular() {
		// Reading a FIFO or a device would block or never end.
		return "", true, Errorf(NotAFile, "%s is not a regular file", rel)
	}
	if max := c.Workspace.Config().Limits.MaxFileBytes; fi.Size() > int64(max) {
		return "", true, Errorf(TooLarge, "%s is %d bytes, over the %d of limits.maxFileBytes", rel, fi.Size(), max)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(c.Workspace.Config().Limits.MaxFileBytes)+1))
	if err != nil {
		return "", true, fileError(rel, err)
	}
	return string(b), true, nil
}

// version is the open document's version, or 0.
func version(c *Call, path string) int32 {
	if d, ok := c.Workspace.Overlays.Get(path); ok {
		return d.Version
	}
	return 0
}

// checkFresh fails with STALE_FILE when path changed since the model read
// it. A file the session never read passes: nothing says the model saw
// another version, and the person's review shows what the change replaces.
func checkFresh(c *Call, path, current string) error {
	rec, ok, own, hash := readState(c.Session, path, current)
	if !ok || own || rec.Hash == hash {
		return nil
	}
	before := ""
	if rec.Text != nil {
		before = *rec.Text
	}
	msg, details := staleReport(c, path, rec.Text != nil, before, current,
		"changed since you last read it", "Nothing was written. Read it again with read_file, then make your edit against its new text.")
	return Errorf(StaleFile, "%s", msg).WithDetails(details)
}

// staleReport words a STALE_FILE error for path: what happened (what),
// where the change came from (the editor's buffer, where the person typed,
// or the disk), what changed (a line summary and a short diff when the
// earlier text is known) and what the agent should do next.
func staleReport(c *Call, path string, known bool, before, now, what, next string) (string, map[string]any) {
	rel := c.Workspace.Rel(path)
	details := map[string]any{"path": rel}
	where := "on disk (the person or another program wrote it)"
	if _, open := c.Workspace.Overlays.Get(path); open {
		where = "in the editor: the person typed in it (the buffer may be unsaved)"
		details["changedIn"] = "editor"
	} else {
		details["changedIn"] = "disk"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s, %s.", rel, what, where)
	if known {
		d := workspace.UnifiedDiff(rel, rel, before, now)
		if len(d) > 4000 {
			d = d[:4000] + "\n… (diff cut)\n"
		}
		add, del := workspace.DiffLineCounts(d)
		fmt.Fprintf(&b, " %d line(s) added and %d removed. %s\nWhat changed:\n%s", add, del, next, d)
		details["diff"] = d
	} else {
		fmt.Fprintf(&b, " %s", next)
	}
	return b.String(), details
}

// eol is a file's line-ending convention.
type eol struct{ crlf bool }

// detectEOL reports whether text uses CRLF line endings (most of its line
// breaks are CRLF).
func detectEOL(text string) eol {
	n := strings.Count(text, "\n")
	return eol{crlf: n > 0 && strings.Count(text, "\r\n")*2 > n}
}

// toLF turns CRLF into LF when the file uses CRLF.
func (e eol) toLF(s string) string {
	if !e.crlf {
		return s
	}
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// restore turns LF into the file's convention.
func (e eol) restore(s string) string {
	if !e.crlf {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}
