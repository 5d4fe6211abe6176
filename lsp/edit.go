package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// editor sends edit plans to the client as workspace/applyEdit. It builds
// its own wire types: the pinned protocol package has neither resource
// operations in documentChanges nor annotated text edits, and its ApplyEdit
// decodes the reply as a bool (STYLE.md).
type editor struct{ s *session }

var _ tools.Editor = (*editor)(nil)

func (e *editor) caps() clientCaps { return e.s.clientCaps() }

// ConfirmsEdits implements tools.Editor: clients with change annotation
// support show their own preview, unless they take approval/request (and
// did not ask for the native preview).
func (e *editor) ConfirmsEdits() bool {
	c := e.caps()
	return c.ApplyEdit && c.DocumentChanges && c.ChangeAnnotations && (!c.ApprovalRequest || c.NativePreview)
}

// SavesAfterApply implements tools.Editor.
func (e *editor) SavesAfterApply() bool { return e.caps().SaveAfterApply }

// CanApply implements tools.Editor.
func (e *editor) CanApply(p *workspace.Plan) bool {
	c := e.caps()
	if !c.ApplyEdit || !c.DocumentChanges {
		return false
	}
	for _, ch := range p.Changes {
		switch {
		case ch.Binary, ch.Op == workspace.OpMkdir:
			return false
		case ch.Op == workspace.OpDelete && !c.ResourceOperations["delete"]:
			return false
		case ch.Op == workspace.OpRename && !c.ResourceOperations["rename"]:
			return false
		}
	}
	return true
}

// Wire types of a WorkspaceEdit made only of documentChanges.
type (
	wsEdit struct {
		DocumentChanges   []any                       `json:"documentChanges"`
		ChangeAnnotations map[string]changeAnnotation `json:"changeAnnotations,omitempty"`
	}
	changeAnnotation struct {
		Label             string `json:"label"`
		Description       string `json:"description,omitempty"`
		NeedsConfirmation bool   `json:"needsConfirmation"`
	}
	textDocumentEdit struct {
		TextDocument versionedID `json:"textDocument"`
		Edits        []textEdit  `json:"edits"`
	}
	versionedID struct {
		URI     string `json:"uri"`
		Version *int32 `json:"version"` // null: the file on disk
	}
	textEdit struct {
		Range        workspace.Range `json:"range"`
		NewText      string          `json:"newText"`
		AnnotationID string          `json:"annotationId,omitempty"`
	}
	resourceOp struct {
		Kind         string         `json:"kind"`
		URI          string         `json:"uri,omitempty"`
		OldURI       string         `json:"oldUri,omitempty"`
		NewURI       string         `json:"newUri,omitempty"`
		Options      map[string]any `json:"options,omitempty"`
		AnnotationID string         `json:"annotationId,omitempty"`
	}
	applyEditResult struct {
		Applied       bool   `json:"applied"`
		FailureReason string `json:"failureReason,omitempty"`
		FailedChange  *int   `json:"failedChange,omitempty"`
	}
)

const annotationID = "agentls"

// Apply implements tools.Editor. Files to create that the client cannot
// create itself are created empty by the server first (and removed again
// when the edit is declined), then filled by a text edit.
func (e *editor) Apply(ctx context.Context, p *workspace.Plan, label string, confirm bool) (bool, string, error) {
	c := e.caps()
	ann := ""
	edit := wsEdit{DocumentChanges: []any{}}
	if confirm {
		ann = annotationID
		edit.ChangeAnnotations = map[string]changeAnnotation{
			ann: {Label: label, Description: "Proposed by the agent through agentls; review before accepting.", NeedsConfirmation: true},
		}
	}
	var precreated []string
	undo := func() {
		for _, p := range precreated {
			os.Remove(p)
		}
	}
	for _, ch := range p.Changes {
		uri := workspace.PathToURI(ch.Path)
		switch ch.Op {
		case workspace.OpCreate, workspace.OpModify:
			if ch.Op == workspace.OpCreate && !ch.Overwrite {
				if c.ResourceOperations["create"] {
					edit.DocumentChanges = append(edit.DocumentChanges, resourceOp{Kind: "create", URI: uri,
						Options: map[string]any{"overwrite": false, "ignoreIfExists": false}, AnnotationID: ann})
				} else {
					if err := os.MkdirAll(filepath.Dir(ch.Path), 0o755); err != nil {
						undo()
						return false, "", fmt.Errorf("create %s: %w", ch.Path, err)
					}
					f, err := os.OpenFile(ch.Path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
					if err != nil {
						undo()
						return false, "", fmt.Errorf("create %s: %w", ch.Path, err)
					}
					f.Close()
					precreated = append(precreated, ch.Path)
				}
			}
			edit.DocumentChanges = append(edit.DocumentChanges, e.textEdits(ch, uri, ann))
		case workspace.OpDelete:
			edit.DocumentChanges = append(edit.DocumentChanges, resourceOp{Kind: "delete", URI: uri,
				Options: map[string]any{"recursive": ch.Dir, "ignoreIfNotExists": false}, AnnotationID: ann})
		case workspace.OpRename:
			edit.DocumentChanges = append(edit.DocumentChanges, resourceOp{Kind: "rename", OldURI: uri,
				NewURI: workspace.PathToURI(ch.NewPath), Options: map[string]any{"overwrite": ch.Overwrite, "ignoreIfExists": false}, AnnotationID: ann})
		default:
			undo()
			return false, "", fmt.Errorf("the editor cannot apply a %s", ch.Op)
		}
	}
	var res applyEditResult
	if _, err := e.s.conn.Call(ctx, "workspace/applyEdit", map[string]any{"label": label, "edit": edit}, &res); err != nil {
		undo()
		return false, "", err
	}
	if !res.Applied {
		undo()
	}
	return res.Applied, res.FailureReason, nil
}

// textEdits turns one file's change into minimal TextEdits (a line diff),
// versioned against the open document.
func (e *editor) textEdits(ch workspace.FileChange, uri, ann string) textDocumentEdit {
	old := ch.OldText
	if ch.Op == workspace.OpCreate && !ch.Overwrite {
		old = ""
	}
	id := versionedID{URI: uri}
	if d, ok := e.s.ws.Overlays.Get(ch.Path); ok {
		v := d.Version
		id.Version = &v
	}
	rs := workspace.Replacements(old, ch.NewText)
	edits := make([]textEdit, 0, len(rs))
	idx := workspace.NewLineIndex(old)
	for _, r := range rs {
		edits = append(edits, textEdit{
			Range:   workspace.Range{Start: idx.Position(r.Start), End: idx.Position(r.End)},
			NewText: r.Text, AnnotationID: ann,
		})
	}
	return textDocumentEdit{TextDocument: id, Edits: edits}
}
