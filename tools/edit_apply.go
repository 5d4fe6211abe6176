// Applying an edit tool's plan: by the editor or the server, then checking
// what landed (editTool in edit.go makes the plan).

package tools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentls/agentls/workspace"
)

// applyPlan applies an approved plan (or asks through the editor's own
// preview when the call was deferred to it) and reports what landed. A call
// is a success only when all of its change landed; otherwise it is a
// NOT_APPLIED error whose structured result lists what did land.
func applyPlan(c *Call, p *workspace.Plan) (*Result, error) {
	// A symlink may have appeared on a path while the call waited for
	// approval (a background shell can make one): check the paths again.
	for _, ch := range p.Changes {
		for _, path := range []string{ch.Path, ch.NewPath} {
			if path == "" {
				continue
			}
			if _, err := c.Workspace.Resolve(path); err != nil {
				return nil, err
			}
		}
	}
	// The person may have edited while the call waited for approval.
	if path, err := staleChange(c, p); err != nil {
		return nil, err
	} else if path != "" {
		return nil, staleSincePlan(c, p, path, "changed while the edit waited for approval")
	}
	defer landing(c.Session, p)()
	// Each file is named once: a moved file that is also updated is its
	// rename, "from → to", in what the model reads.
	files := make([]string, 0, len(p.Changes))
	var labels []string
	for _, ch := range p.Changes {
		ps := changePaths(c, ch)
		if len(ps) == 1 && slices.Contains(files, ps[0]) {
			continue
		}
		files = appendOnce(files, ps...)
		labels = append(labels, strings.Join(ps, " → "))
	}
	res := EditResult{Files: files, Unsaved: []string{}, LandedFiles: []string{}, Diff: p.UnifiedDiff(c.Workspace.Rel)}
	ed := c.Editor
	confirm := c.ConfirmInEditor
	edPlan, srvPlan := &workspace.Plan{}, p
	switch {
	case ed != nil && confirm:
		edPlan, srvPlan = p, &workspace.Plan{}
	case ed != nil:
		edPlan, srvPlan = ed.Split(p)
	}
	// The server never writes around a buffer with unsaved changes.
	if err := checkServerWritable(c, srvPlan, ed != nil); err != nil {
		return nil, err
	}
	switch {
	case len(edPlan.Changes) == 0:
		res.AppliedBy = "server"
	case len(srvPlan.Changes) == 0:
		res.AppliedBy = "editor"
	default:
		res.AppliedBy = "both"
	}
	if len(srvPlan.Changes) > 0 {
		if err := writePlan(c.Workspace, srvPlan); err != nil {
			return nil, err
		}
	}
	// What landed, per path: the server's part when written.
	landed := map[string]landState{}
	for _, ch := range srvPlan.Changes {
		landed[ch.Path] = landState{landed: true}
	}
	editorAnswered := false
	if len(edPlan.Changes) > 0 {
		var clean map[string]bool // only verify's wait for a save reads it
		if ed.SavesAfterApply() {
			clean = cleanBefore(c, edPlan)
		}
		label := fmt.Sprintf("agentls: %s %s", c.Tool.Name, strings.Join(files, ", "))
		if confirm && c.Assessed.Warning != "" {
			label += " — " + c.Assessed.Warning // the editor's preview is the question: say why
		}
		applied, reason, err := ed.Apply(c.Ctx, edPlan, label, confirm)
		if err != nil {
			return nil, fmt.Errorf("workspace/applyEdit: %w", err)
		}
		if !applied && !confirm && len(srvPlan.Changes) == 0 && changedSincePlan(c, edPlan) {
			// The person typed in a buffer after approving, before the edit
			// arrived: the editor refused an edit made for older text.
			path, _ := staleChange(c, p)
			return nil, staleSincePlan(c, p, path, "changed in the editor after the edit was approved, before it could be applied")
		}
		if !applied && confirm {
			msg := "the person declined the edit in the editor's preview"
			if reason != "" {
				msg += ": " + reason
			}
			res.Landed, res.NotLanded = "none", files
			return &Result{Status: StatusRejected, Content: "rejected: " + msg + ". Nothing changed.", Message: reason,
				Error: &Error{Code: Rejected, Message: msg}, Structured: res}, nil
		}
		if applied {
			editorAnswered = true
			for path, ok := range verify(c, edPlan, clean, ed.SavesAfterApply(), &res) {
				landed[path] = ok
			}
		} else {
			for _, ch := range edPlan.Changes {
				landed[ch.Path] = landState{untouched: true}
			}
			if reason == "" {
				reason = "no reason given"
			}
			return notApplied(c, p, landed, res, fmt.Sprintf("the editor answered that it did not apply the edit (%s)", reason)), nil
		}
	}
	if err := applyModes(c, edPlan, landed); err != nil {
		return nil, err
	}
	all := true
	for _, ch := range p.Changes {
		all = all && landed[ch.Path].landed
	}
	if !all {
		why := "the editor did not apply it"
		if editorAnswered {
			why = fmt.Sprintf("the editor answered that it applied the edit, but the change did not show up within %s: "+
				"the person may have declined it in the editor (some editors ask again and still answer applied), or the editor did not apply it", landWait)
		}
		return notApplied(c, p, landed, res, why), nil
	}
	res.Landed = "all"
	res.LandedFiles = files
	recordLanded(c, p, landed)
	out := Success(editSummary(res, labels), res)
	out.Display = res.Diff // a person reads the change itself
	return out, nil
}

// applyModes gives the files of the editor's part that landed the mode
// bits their change asks for (FileChange.Mode): the editor writes text,
// not modes.
func applyModes(c *Call, p *workspace.Plan, landed map[string]landState) error {
	for _, ch := range p.Changes {
		if ch.Op == workspace.OpCreate && ch.Mode != 0 && landed[ch.Path].landed {
			if err := c.Workspace.Chmod(ch.Path, ch.Mode); err != nil {
				return fileError(c.Workspace.Rel(ch.Path), err)
			}
		}
	}
	return nil
}

// changePaths names the files a change touches, relative: both of a
// rename (from, then to).
func changePaths(c *Call, ch workspace.FileChange) []string {
	if ch.Op == workspace.OpRename {
		return []string{c.Workspace.Rel(ch.Path), c.Workspace.Rel(ch.NewPath)}
	}
	return []string{c.Workspace.Rel(ch.Path)}
}

// appendOnce appends the paths list does not hold yet.
func appendOnce(list []string, paths ...string) []string {
	for _, p := range paths {
		if !slices.Contains(list, p) {
			list = append(list, p)
		}
	}
	return list
}

// notApplied is the result of an edit that did not land, or only in part:
// a NOT_APPLIED error that lists what landed.
func notApplied(c *Call, p *workspace.Plan, landed map[string]landState, res EditResult, why string) *Result {
	res.LandedFiles, res.NotLanded = []string{}, nil
	untouched := true
	for _, ch := range p.Changes {
		untouched = untouched && landed[ch.Path].untouched
		if landed[ch.Path].landed {
			res.LandedFiles = appendOnce(res.LandedFiles, changePaths(c, ch)...)
		} else {
			res.NotLanded = appendOnce(res.NotLanded, changePaths(c, ch)...)
		}
	}
	res.Landed = "partial"
	if untouched {
		res.Landed = "none"
	}
	recordLanded(c, p, landed)
	var b strings.Builder
	if res.Landed == "none" {
		fmt.Fprintf(&b, "The edit was not applied: %s. Nothing changed in %s; do not assume the edit was made.", why, strings.Join(res.NotLanded, ", "))
	} else {
		landedFiles := strings.Join(res.LandedFiles, ", ")
		if landedFiles == "" {
			landedFiles = "nothing"
		}
		fmt.Fprintf(&b, "The edit was applied only in part: %s. Landed as proposed: %s. Not as proposed: %s.", why,
			landedFiles, strings.Join(res.NotLanded, ", "))
	}
	if res.UserChanges != "" {
		fmt.Fprintf(&b, "\nWhat the files hold instead of the proposal:\n%s", res.UserChanges)
	}
	b.WriteString("\nRead the files again before another edit.")
	msg := b.String()
	return &Result{Status: StatusError, Content: "error: " + msg, Structured: res,
		Error: &Error{Code: NotApplied, Message: msg, Recoverable: true,
			Details: map[string]any{"landed": res.Landed, "landed_files": res.LandedFiles, "not_landed": res.NotLanded}}}
}

// recordLanded records what the model now knows of the files that landed
// as proposed (a file that holds something else must be read again) and
// tells the client which files changed.
func recordLanded(c *Call, p *workspace.Plan, landed map[string]landState) {
	for _, ch := range p.Changes {
		if landed[ch.Path].untouched {
			continue
		}
		switch ch.Op {
		case workspace.OpCreate, workspace.OpModify:
			if t, _, err := currentText(c, ch.Path); err == nil && landed[ch.Path].landed {
				RecordRead(c.Session, ch.Path, t)
			}
			op := "modify"
			if ch.Op == workspace.OpCreate && !ch.Overwrite {
				op = "create"
			}
			c.FileChanged(ch.Path, op)
		case workspace.OpDelete:
			c.FileChanged(ch.Path, "delete")
		case workspace.OpRename:
			c.Events.Event(Event{CallID: c.ID, Tool: c.Tool.Name, Kind: "fileChanged", Path: c.Workspace.Rel(ch.NewPath),
				OldPath: c.Workspace.Rel(ch.Path), Operation: "rename"})
		case workspace.OpMkdir:
			c.FileChanged(ch.Path, "create")
		}
	}
}

// checkServerWritable refuses a plan part the server would write around a
// buffer with unsaved changes: the disk would then hold the buffer's
// unsaved text plus the edit while the buffer keeps neither, and the next
// save would undo the edit. A clean open buffer (the same text as the disk)
// loses nothing; the editor reloads it.
func checkServerWritable(c *Call, p *workspace.Plan, haveEditor bool) error {
	open := c.Workspace.Overlays.Paths()
	for _, ch := range p.Changes {
		if ch.Op == workspace.OpMkdir {
			continue // replaces nothing
		}
		for _, target := range []string{ch.Path, ch.NewPath} {
			if target == "" {
				continue
			}
			for _, o := range open {
				if o != target && !(ch.Dir || ch.Op == workspace.OpRename) {
					continue
				}
				if o != target && !strings.HasPrefix(o, target+string(filepath.Separator)) {
					continue
				}
				d, ok := c.Workspace.Overlays.Get(o)
				if !ok {
					continue
				}
				if same, err := diskHolds(c.Workspace, o, d.Text); err == nil && same {
					continue
				}
				why := "the client cannot apply edits (no workspace.applyEdit)"
				if haveEditor {
					why = fmt.Sprintf("the editor cannot %s it itself (its workspaceEdit capabilities)", describeOp(ch))
				}
				return Errorf(UnsavedInEditor, "%s is open in the editor with unsaved changes, and %s; the server does not write around unsaved text. "+
					"Nothing was changed: ask the person to save or close it, then try again.", c.Workspace.Rel(o), why).
					WithDetails(map[string]any{"path": c.Workspace.Rel(o)})
			}
		}
	}
	return nil
}

func describeOp(ch workspace.FileChange) string {
	switch {
	case ch.Binary:
		return "write binary content to"
	case ch.Op == workspace.OpDelete:
		return "delete"
	case ch.Op == workspace.OpRename:
		return "rename"
	case ch.Op == workspace.OpCreate && ch.Overwrite:
		return "replace"
	}
	return "change"
}

// staleSincePlan is the STALE_FILE error for a file of p (path, from
// staleChange) whose text is no longer the text p was made from.
func staleSincePlan(c *Call, p *workspace.Plan, path, what string) error {
	if path == "" {
		return Errorf(StaleFile, "a file %s; nothing changed. Read the files again with read_file, then make your edit against their new text.", what)
	}
	src, before := path, ""
	for _, ch := range p.Changes {
		if ch.Op == workspace.OpRename && ch.NewPath == path {
			src = ch.Path
		}
		if ch.Path == path && (ch.Op == workspace.OpModify || ch.Op == workspace.OpCreate && ch.Overwrite) {
			before = ch.OldText
		}
	}
	now, _, err := currentText(c, src)
	if err != nil {
		return err
	}
	msg, details := staleReport(c, src, true, before, now, what,
		"Nothing was written. Read it again with read_file, then make your edit against its new text.")
	return Errorf(StaleFile, "%s", msg).WithDetails(details)
}

// staleChange returns the first file of the plan whose text is no longer
// the text the plan was made from, or "".
func staleChange(c *Call, p *workspace.Plan) (string, error) {
	renamedFrom := map[string]string{}
	for _, ch := range p.Changes {
		if ch.Op == workspace.OpRename {
			renamedFrom[ch.NewPath] = ch.Path
		}
		if ch.Op != workspace.OpModify && !(ch.Op == workspace.OpCreate && ch.Overwrite) {
			continue
		}
		// A file an earlier change renames (apply_patch: rename, then
		// modify the renamed file) still has its old name now.
		src := ch.Path
		if from, ok := renamedFrom[ch.Path]; ok {
			src = from
		}
		cur, _, err := currentText(c, src)
		if err != nil {
			return "", err
		}
		if cur != ch.OldText {
			return ch.Path, nil
		}
	}
	return "", nil
}

// changedSincePlan reports whether a file of the plan no longer has the text
// the plan was made from, waiting a moment for the editor's pending
// didChange notifications.
func changedSincePlan(c *Call, p *workspace.Plan) bool {
	deadline := time.Now().Add(500 * time.Millisecond)
	for {
		if path, err := staleChange(c, p); err == nil && path != "" {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// editSummary is the content of an edit that landed.
func editSummary(r EditResult, labels []string) string {
	var b strings.Builder
	by := "the " + r.AppliedBy
	if r.AppliedBy == "both" {
		by = "the editor and the server"
	}
	fmt.Fprintf(&b, "Applied to %s (by %s).", strings.Join(labels, ", "), by)
	if len(r.Unsaved) > 0 {
		fmt.Fprintf(&b, "\nUnsaved in the editor (the disk still has the old text): %s", strings.Join(r.Unsaved, ", "))
	}
	return b.String()
}

// cleanBefore records which files had no unsaved changes before the edit.
func cleanBefore(c *Call, p *workspace.Plan) map[string]bool {
	clean := map[string]bool{}
	for _, ch := range p.Changes {
		d, open := c.Workspace.Overlays.Get(ch.Path)
		if !open {
			clean[ch.Path] = true
			continue
		}
		same, err := diskHolds(c.Workspace, ch.Path, d.Text)
		clean[ch.Path] = err == nil && same
	}
	return clean
}

// diskHolds reports whether the file at path holds text, line endings
// aside (sameText), and reads it a block at a time: it stops at the first
// difference that line endings cannot explain, without reading (and
// holding) the whole file. A difference at a carriage return is left to
// sameText on the whole file.
func diskHolds(w *workspace.Workspace, path, text string) (bool, error) {
	f, err := w.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 32<<10)
	rest := text
	for {
		n, err := f.Read(buf)
		got := buf[:n]
		if n > len(rest) || string(got) != rest[:n] {
			i := 0
			for i < n && i < len(rest) && got[i] == rest[i] {
				i++
			}
			if i < n && got[i] == '\r' || i < len(rest) && rest[i] == '\r' {
				break
			}
			return false, nil
		}
		rest = rest[n:]
		if err == io.EOF {
			if rest != "" && rest[0] == '\r' {
				break
			}
			return rest == "", nil
		}
		if err != nil {
			return false, err
		}
	}
	disk, err := w.ReadDisk(path)
	return err == nil && sameText(disk, text), err
}

// sameText compares a file on disk with an editor's buffer of it. Editors
// such as Emacs hold a CRLF file with LF line breaks and write CRLF back, so
// line endings do not count.
func sameText(disk []byte, buffer string) bool {
	if string(disk) == buffer { // compared in place, not copied
		return true
	}
	if !bytes.Contains(disk, []byte("\r\n")) && !strings.Contains(buffer, "\r\n") {
		return false
	}
	return strings.ReplaceAll(string(disk), "\r\n", "\n") == strings.ReplaceAll(buffer, "\r\n", "\n")
}

// landState is what verify saw of one change: it landed as proposed, or
// it left the file as it was (neither: something else is there now).
type landState struct{ landed, untouched bool }

// landWait is how long the server waits for an applied edit to show up in
// the buffers (didChange) or on disk, and for a save after apply.
var landWait = 3 * time.Second

// verify compares what landed with the proposal, because editors answer
// applied:true after a declined or partial apply, and send the didChange of
// an applied edit before or after their answer. It waits up to landWait for
// every file to land, fills res's unsaved files and user changes, and
// returns, per path, whether the change landed as proposed or left the file
// untouched.
func verify(c *Call, p *workspace.Plan, clean map[string]bool, saves bool, res *EditResult) map[string]landState {
	deadline := time.Now().Add(landWait)
	type state struct{ landed, untouched, unsaved bool }
	check := func(ch workspace.FileChange) state {
		switch ch.Op {
		case workspace.OpDelete:
			_, err := c.Workspace.Lstat(ch.Path)
			gone := errors.Is(err, fs.ErrNotExist)
			return state{landed: gone, untouched: !gone}
		case workspace.OpRename:
			_, errOld := c.Workspace.Lstat(ch.Path)
			_, errNew := c.Workspace.Lstat(ch.NewPath)
			moved := errors.Is(errOld, fs.ErrNotExist) && errNew == nil
			return state{landed: moved, untouched: errOld == nil}
		case workspace.OpMkdir:
			fi, err := c.Workspace.Stat(ch.Path)
			ok := err == nil && fi.IsDir()
			return state{landed: ok, untouched: !ok}
		}
		if d, open := c.Workspace.Overlays.Get(ch.Path); open {
			if d.Text != ch.NewText {
				return state{untouched: d.Text == ch.OldText}
			}
			saved, err := diskHolds(c.Workspace, ch.Path, ch.NewText) // landed: saved too?
			return state{landed: true, untouched: ch.NewText == ch.OldText, unsaved: err != nil || !saved}
		}
		disk, derr := c.Workspace.ReadDisk(ch.Path)
		onDisk := derr == nil && sameText(disk, ch.NewText)
		return state{landed: onDisk, untouched: derr != nil && ch.Op == workspace.OpCreate || derr == nil && string(disk) == ch.OldText}
	}
	wake := make(chan struct{}, 1)
	stop := c.Workspace.Overlays.Watch(func(workspace.Document) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer stop()
	var states []state
	for {
		states = states[:0]
		done := true
		for _, ch := range p.Changes {
			s := check(ch)
			states = append(states, s)
			// Wait for every file to land, and for the save of a file that
			// was clean before when the editor saves after apply.
			if !s.landed || s.unsaved && saves && clean[ch.Path] {
				done = false
			}
		}
		if done || time.Now().After(deadline) || c.Ctx.Err() != nil {
			break
		}
		select {
		case <-wake:
		case <-time.After(50 * time.Millisecond):
		}
	}
	landed := map[string]landState{}
	var userChanges strings.Builder
	for i, ch := range p.Changes {
		s := states[i]
		landed[ch.Path] = landState{landed: s.landed, untouched: s.untouched}
		if s.unsaved {
			res.Unsaved = append(res.Unsaved, c.Workspace.Rel(ch.Path))
		}
		if !s.landed && !s.untouched && (ch.Op == workspace.OpModify || ch.Op == workspace.OpCreate) {
			now, _, _ := currentText(c, ch.Path)
			rel := c.Workspace.Rel(ch.Path)
			userChanges.WriteString(workspace.UnifiedDiff(rel, rel, ch.NewText, now))
		}
	}
	sort.Strings(res.Unsaved)
	res.UserChanges = userChanges.String()
	return landed
}

// writePlan applies a plan to the disk. Every new content is written to a
// temporary file first, so a failure there changes nothing; then the files
// are renamed into place. Every operation runs beneath the workspace's roots
// (workspace/beneath.go): a directory swapped for a symlink since the plan
// was approved makes it fail, never write outside.
func writePlan(w *workspace.Workspace, p *workspace.Plan) error {
	for _, ch := range p.Changes {
		var err error
		switch ch.Op {
		case workspace.OpCreate, workspace.OpModify:
			perm := fs.FileMode(0o644)
			if ch.Mode != 0 {
				perm = ch.Mode
			}
			if err = w.MkdirAll(filepath.Dir(ch.Path), 0o755); err == nil {
				err = w.WriteFileAtomic(ch.Path, []byte(ch.NewText), perm)
			}
			if err == nil && ch.Mode != 0 {
				err = w.Chmod(ch.Path, ch.Mode) // an existing file kept its own
			}
		case workspace.OpDelete:
			if ch.Dir {
				err = w.RemoveAll(ch.Path)
			} else {
				err = w.Remove(ch.Path)
			}
		case workspace.OpRename:
			if err = w.MkdirAll(filepath.Dir(ch.NewPath), 0o755); err == nil {
				err = w.Rename(ch.Path, ch.NewPath)
			}
		case workspace.OpMkdir:
			err = w.MkdirAll(ch.Path, 0o755)
		}
		if err != nil {
			return fileError(w.Rel(ch.Path), err)
		}
	}
	return nil
}
