package lsp

import (
	"context"
	"fmt"

	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// editor sends edit plans to the client as workspace/applyEdit. It builds
// its own wire types: the pinned protocol package has neither resource
// operations in documentChanges nor annotated text edits, and its ApplyEdit
// decodes the reply as a bool.
type editor struct{ s *server }

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
	moves := movesOnly(p)
	for _, ch := range p.Changes {
		if !e.takes(c, ch, moves) {
			return false
		}
	}
	return true
}

// Split implements tools.Editor. What goes to the editor follows the
// client's capabilities (docs/protocol.md, Approval: the table of how each
// change of an edit travels):
//
//   - text changes of open documents always (versioned documentChanges, or
//     the plain changes map for clients without documentChanges);
//   - text changes of files not open, only with documentChanges (version
//     null); a client without it may never tell the server about the
//     buffer it would load, so the server writes those files;
//   - a new file no editor holds only with documentChanges and the create
//     operation: otherwise the server creates it with its content, so the
//     disk never holds an empty file while the text waits in a buffer;
//   - rename and delete only with documentChanges and the operation; a
//     plan of moves only (move_file) with the rename operation alone, sent
//     as documentChanges all the same (where a RenameFile goes): Neovim
//     declares resourceOperations without documentChanges, and the
//     buffers of moved files follow them only when the editor moves them;
//   - binary content and directories never.
func (e *editor) Split(p *workspace.Plan) (ed, srv *workspace.Plan) {
	c := e.caps()
	moves := movesOnly(p)
	ed, srv = &workspace.Plan{}, &workspace.Plan{}
	for _, ch := range p.Changes {
		if e.takes(c, ch, moves) {
			ed.Changes = append(ed.Changes, ch)
		} else {
			srv.Changes = append(srv.Changes, ch)
		}
	}
	return ed, srv
}

// takes reports whether the editor applies ch, a change of a plan of moves
// only or not (see Split).
func (e *editor) takes(c clientCaps, ch workspace.FileChange, moves bool) bool {
	if !c.ApplyEdit {
		return false
	}
	_, open := e.s.ws.Overlays.Get(ch.Path)
	switch {
	case ch.Binary, ch.Op == workspace.OpMkdir:
		return false
	case ch.Op == workspace.OpRename:
		return (c.DocumentChanges || moves) && c.ResourceOperations[ch.Op]
	case ch.Op == workspace.OpDelete:
		return c.DocumentChanges && c.ResourceOperations[ch.Op]
	case ch.Op == workspace.OpCreate && !ch.Overwrite:
		return open || c.DocumentChanges && c.ResourceOperations["create"]
	}
	return open || c.DocumentChanges
}

// Wire types of a WorkspaceEdit: documentChanges, or the plain changes map
// for clients without documentChanges.
type (
	wsEdit struct {
		DocumentChanges   []any                       `json:"documentChanges,omitempty"`
		Changes           map[string][]textEdit       `json:"changes,omitempty"`
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

// Apply implements tools.Editor. p holds only what Split gave the editor.
// Clients with documentChanges get them (text edits versioned against the
// open documents, resource operations as the client allows), and so does a
// plan of moves only (RenameFile operations, see Split); any other client
// gets the changes map, which carries no versions: the server then
// compares every buffer with the text the plan was made from right before
// sending, and answers not applied (the caller reports STALE_FILE) when one
// changed. What landed is checked after the answer by the caller.
func (e *editor) Apply(ctx context.Context, p *workspace.Plan, label string, confirm bool) (bool, string, error) {
	c := e.caps()
	ann := ""
	edit := wsEdit{}
	if confirm {
		ann = annotationID
		edit.ChangeAnnotations = map[string]changeAnnotation{
			ann: {Label: label, Description: "Proposed by the agent through agentls; review before accepting.", NeedsConfirmation: true},
		}
	}
	if !c.DocumentChanges && !movesOnly(p) {
		edit.Changes = map[string][]textEdit{}
		for _, ch := range p.Changes {
			if ch.Op != workspace.OpCreate && ch.Op != workspace.OpModify {
				return false, "", fmt.Errorf("the editor cannot apply a %s without documentChanges", ch.Op)
			}
			d, open := e.s.ws.Overlays.Get(ch.Path)
			if !open {
				return false, e.s.ws.Rel(ch.Path) + " was closed in the editor before the edit was sent", nil
			}
			if d.Text != e.base(ch) {
				return false, "the buffer of " + e.s.ws.Rel(ch.Path) + " changed before the edit was sent", nil
			}
			uri := workspace.PathToURI(ch.Path)
			if d.URI != "" {
				uri = d.URI // the editor's own spelling of the URI
			}
			edit.Changes[uri] = append(edit.Changes[uri], e.textEdits(ch, uri, ann).Edits...)
		}
	} else {
		edit.DocumentChanges = []any{}
		for _, ch := range p.Changes {
			uri := workspace.PathToURI(ch.Path)
			switch ch.Op {
			case workspace.OpCreate, workspace.OpModify:
				if ch.Op == workspace.OpCreate && !ch.Overwrite {
					if _, open := e.s.ws.Overlays.Get(ch.Path); !open {
						edit.DocumentChanges = append(edit.DocumentChanges, resourceOp{Kind: "create", URI: uri,
							Options: map[string]any{"overwrite": false, "ignoreIfExists": false}, AnnotationID: ann})
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
				return false, "", fmt.Errorf("the editor cannot apply a %s", ch.Op)
			}
		}
	}
	var res applyEditResult
	// The person may be reviewing it (confirm): the editor learns when the
	// call stops waiting.
	if err := e.s.callPerson(ctx, "workspace/applyEdit", map[string]any{"label": label, "edit": edit}, &res); err != nil {
		return false, "", err
	}
	return res.Applied, res.FailureReason, nil
}

// movesOnly reports whether every change of p is a rename.
func movesOnly(p *workspace.Plan) bool {
	for _, ch := range p.Changes {
		if ch.Op != workspace.OpRename {
			return false
		}
	}
	return len(p.Changes) > 0
}

// base is the text a change's edits are computed against: the buffer's
// text the plan was made from ("" for a new file).
func (e *editor) base(ch workspace.FileChange) string {
	if ch.Op == workspace.OpCreate && !ch.Overwrite {
		if d, open := e.s.ws.Overlays.Get(ch.Path); open {
			return d.Text
		}
		return ""
	}
	return ch.OldText
}

// textEdits turns one file's change into minimal TextEdits (a line diff
// of the lines between the common prefix and suffix, never the whole
// text), versioned against the open document.
func (e *editor) textEdits(ch workspace.FileChange, uri, ann string) textDocumentEdit {
	old := e.base(ch)
	id := versionedID{URI: uri}
	if d, ok := e.s.ws.Overlays.Get(ch.Path); ok {
		v := d.Version
		id.Version = &v
	}
	rs := workspace.Replacements(old, ch.NewText)
	edits := make([]textEdit, 0, len(rs))
	pos := workspace.NewPositionWalker(old) // rs ascend
	for _, r := range rs {
		edits = append(edits, textEdit{
			Range:   workspace.Range{Start: pos.Position(r.Start), End: pos.Position(r.End)},
			NewText: r.Text, AnnotationID: ann,
		})
	}
	return textDocumentEdit{TextDocument: id, Edits: edits}
}
