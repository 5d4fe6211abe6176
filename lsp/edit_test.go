package lsp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
)

func annotatedCaps() map[string]any {
	return map[string]any{"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{
		"documentChanges": true, "resourceOperations": []string{"create", "rename", "delete"}, "changeAnnotationSupport": map[string]any{},
	}}}
}

// editStructured decodes an edit tool's structured result.
func editStructured(t *testing.T, res *tools.Result) tools.EditResult {
	t.Helper()
	b, _ := json.Marshal(res.Structured)
	var e tools.EditResult
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("structured %s: %v", b, err)
	}
	return e
}

func TestAnnotatedEditOfLargeUnsavedBuffer(t *testing.T) {
	c, root := started(t, annotatedCaps(), nil)
	ctx := ctxT(t)
	path := filepath.Join(root, "big.txt")
	var b strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	disk := b.String()
	os.WriteFile(path, []byte(disk), 0o644)
	buffer := strings.Replace(disk, "line 7\n", "line 7 (unsaved é中😀)\n", 1)
	c.OpenDoc(ctx, path, buffer)

	var seen []lsptest.ApplyEditParams
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(raw json.RawMessage) lsptest.ApplyResult {
		var p lsptest.ApplyEditParams
		json.Unmarshal(raw, &p)
		seen = append(seen, p)
		return c.ApplyEdit(ctx, raw, false)
	}})
	res, err := c.ToolCall(ctx, "edit_file", map[string]any{"path": "big.txt", "old_string": "line 7 (unsaved é中😀)\n", "new_string": "line 7 — edited 😀\n"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != tools.StatusSuccess || res.ApprovedBy != "user" {
		t.Fatalf("result: %+v", res)
	}
	if len(seen) != 1 {
		t.Fatalf("%d applyEdit requests, want 1", len(seen))
	}
	p := seen[0]
	a, ok := p.Edit.ChangeAnnotations["agentls"]
	if !ok || !a.NeedsConfirmation || !strings.Contains(a.Label, "edit_file") || !strings.Contains(a.Label, "big.txt") {
		t.Errorf("change annotation = %+v", p.Edit.ChangeAnnotations)
	}
	if len(p.Edit.DocumentChanges) != 1 {
		t.Fatalf("documentChanges = %d entries, want 1", len(p.Edit.DocumentChanges))
	}
	var te lsptest.TextDocumentEdit
	json.Unmarshal(p.Edit.DocumentChanges[0], &te)
	if te.TextDocument.Version == nil || *te.TextDocument.Version != 1 {
		t.Errorf("edit not versioned against the open buffer: %+v", te.TextDocument)
	}
	if len(te.Edits) != 1 {
		t.Fatalf("%d text edits, want 1 minimal edit", len(te.Edits))
	}
	e := te.Edits[0]
	if e.Range.Start.Line != 6 || e.Range.End.Line != 7 || e.Range.Start.Character != 0 || e.NewText != "line 7 — edited 😀\n" || e.AnnotationID != "agentls" {
		t.Errorf("text edit = %+v, want line 7 only, annotated", e)
	}
	got, _, _ := c.Doc(path)
	if want := strings.Replace(disk, "line 7\n", "line 7 — edited 😀\n", 1); got != want {
		t.Error("buffer after the edit is not the proposal")
	}
	s := editStructured(t, res)
	if s.AppliedBy != "editor" || s.Landed != "all" || len(s.Unsaved) != 1 || s.Unsaved[0] != "big.txt" {
		t.Errorf("structured = %+v", s)
	}
	if d, _ := os.ReadFile(path); string(d) != disk {
		t.Error("the disk changed; the edit must land in the buffer only")
	}
}

func TestAnnotatedEditRejectedChangesNothing(t *testing.T) {
	c, root := started(t, annotatedCaps(), nil)
	ctx := ctxT(t)
	path := filepath.Join(root, "a.go")
	os.WriteFile(path, []byte("package a\n"), 0o644)
	c.OpenDoc(ctx, path, "package a // unsaved\n")
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(json.RawMessage) lsptest.ApplyResult {
		return lsptest.ApplyResult{Applied: false}
	}})
	res, _ := c.ToolCall(ctx, "edit_file", map[string]any{"path": "a.go", "old_string": "package a", "new_string": "package b"})
	if res.Status != tools.StatusRejected || res.ApprovedBy != "none" {
		t.Fatalf("result = %+v, want rejected", res)
	}
	if d, _ := os.ReadFile(path); string(d) != "package a\n" {
		t.Errorf("disk changed: %q", d)
	}
	if got, v, _ := c.Doc(path); got != "package a // unsaved\n" || v != 1 {
		t.Errorf("buffer changed: %q v%d", got, v)
	}
	// A new file the editor does not apply leaves nothing behind.
	res, _ = c.ToolCall(ctx, "write_file", map[string]any{"path": "new/b.txt", "content": "x\n"})
	if res.Status != tools.StatusRejected {
		t.Fatalf("write_file not applied by the editor: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(root, "new", "b.txt")); !os.IsNotExist(err) {
		t.Errorf("new file left behind: %v", err)
	}
}

func TestAppliedIsNotTrusted(t *testing.T) {
	c, root := started(t, annotatedCaps(), nil)
	ctx := ctxT(t)
	path := filepath.Join(root, "a.txt")
	os.WriteFile(path, []byte("one\ntwo\n"), 0o644)
	c.OpenDoc(ctx, path, "one\ntwo\n")
	// An editor that says applied but changes nothing (Neovim 0.12, some eglot).
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(json.RawMessage) lsptest.ApplyResult { return lsptest.ApplyResult{Applied: true} }})
	res, _ := c.ToolCall(ctx, "edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})
	if s := editStructured(t, res); s.Landed != "none" {
		t.Errorf("landed = %q, want none; result %+v", s.Landed, res)
	}
	// An editor where the person changed the proposal before accepting.
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(raw json.RawMessage) lsptest.ApplyResult {
		r := c.ApplyEdit(ctx, raw, false)
		c.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": "file://" + path, "version": 9},
			"contentChanges": []any{map[string]any{"text": "one\nTWO!\n"}},
		})
		return r
	}})
	res, _ = c.ToolCall(ctx, "edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})
	s := editStructured(t, res)
	if s.Landed != "partial" || !strings.Contains(s.UserChanges, "+TWO!") {
		t.Errorf("structured = %+v, want partial with the user's change", s)
	}
}

func TestApprovalRequestThenPlainApplyEdit(t *testing.T) {
	c, root := started(t, lsptest.AgentlsCaps(), nil)
	ctx := ctxT(t)
	path := filepath.Join(root, "a.txt")
	os.WriteFile(path, []byte("héllo 中\nworld\n"), 0o644)
	var req approval.Request
	var applied []lsptest.ApplyEditParams
	c.SetHooks(lsptest.Hooks{
		Approval: func(r approval.Request) approval.Response {
			req = r
			return approval.Response{Decision: approval.Approve}
		},
		ApplyEdit: func(raw json.RawMessage) lsptest.ApplyResult {
			var p lsptest.ApplyEditParams
			json.Unmarshal(raw, &p)
			applied = append(applied, p)
			return c.ApplyEdit(ctx, raw, true)
		},
	})
	res, _ := c.ToolCall(ctx, "edit_file", map[string]any{"path": "a.txt", "old_string": "中", "new_string": "😀"})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("result: %+v", res)
	}
	if req.Preview == nil || !strings.Contains(req.Preview.UnifiedDiff, "-héllo 中\n+héllo 😀\n") || len(req.Preview.Files) != 1 || req.Preview.Files[0].Path != "a.txt" {
		t.Errorf("approval/request preview = %+v", req.Preview)
	}
	if len(applied) != 1 || len(applied[0].Edit.ChangeAnnotations) != 0 {
		t.Errorf("after approve, want one plain applyEdit: %+v", applied)
	}
	if d, _ := os.ReadFile(path); string(d) != "héllo 😀\nworld\n" {
		t.Errorf("disk after save-after-apply = %q", d)
	}
	if s := editStructured(t, res); s.Landed != "all" || len(s.Unsaved) != 0 || s.AppliedBy != "editor" {
		t.Errorf("structured = %+v", s)
	}
}

func TestBareClientShowMessageThenServerWrites(t *testing.T) {
	c, root := started(t, map[string]any{}, nil)
	ctx := ctxT(t)
	path := filepath.Join(root, "crlf.txt")
	os.WriteFile(path, []byte("a\r\nb\r\n"), 0o640)
	var msg string
	c.SetHooks(lsptest.Hooks{ShowMessageRequest: func(p json.RawMessage) any {
		var m struct{ Message string }
		json.Unmarshal(p, &m)
		msg = m.Message
		return map[string]string{"title": "Approve"}
	}})
	res, _ := c.ToolCall(ctx, "edit_file", map[string]any{"path": "crlf.txt", "old_string": "b\n", "new_string": "B\nC\n"})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("result: %+v", res)
	}
	if !strings.Contains(msg, "edit_file") || !strings.Contains(msg, "crlf.txt") || !strings.Contains(msg, "+2 -1 lines") {
		t.Errorf("showMessageRequest message = %q", msg)
	}
	if d, _ := os.ReadFile(path); string(d) != "a\r\nB\r\nC\r\n" {
		t.Errorf("CRLF not kept: %q", d)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}
	if s := editStructured(t, res); s.AppliedBy != "server" || s.Landed != "all" {
		t.Errorf("structured = %+v", s)
	}
}

func TestBufferChangedAfterApproval(t *testing.T) {
	c, root := started(t, lsptest.AgentlsCaps(), nil)
	ctx := ctxT(t)
	path := filepath.Join(root, "a.txt")
	os.WriteFile(path, []byte("one\n"), 0o644)
	c.OpenDoc(ctx, path, "one\n")
	c.SetHooks(lsptest.Hooks{
		Approval: func(approval.Request) approval.Response {
			// The person types before the edit arrives; the editor refuses the old version.
			c.Notify(ctx, "textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": "file://" + path, "version": 5},
				"contentChanges": []any{map[string]any{"text": "one!\n"}},
			})
			return approval.Response{Decision: approval.Approve}
		},
		ApplyEdit: func(json.RawMessage) lsptest.ApplyResult {
			return lsptest.ApplyResult{Applied: false, FailureReason: "version mismatch"}
		},
	})
	res, _ := c.ToolCall(ctx, "edit_file", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "two"})
	if res.Status != tools.StatusError || res.Error.Code != tools.StaleFile || res.ApprovedBy != "user" {
		t.Errorf("result = %+v (%+v), want STALE_FILE approved by the user", res, res.Error)
	}
}

func TestCRLFFileHeldWithLFIsSaved(t *testing.T) {
	c, root := started(t, lsptest.AgentlsCaps(), nil)
	ctx := ctxT(t)
	path := filepath.Join(root, "w.txt")
	os.WriteFile(path, []byte("a\r\nb\r\n"), 0o644)
	c.OpenDoc(ctx, path, "a\nb\n") // Emacs shows a CRLF file with LF breaks
	c.SetHooks(lsptest.Hooks{
		Approval: func(approval.Request) approval.Response { return approval.Response{Decision: approval.Approve} },
		ApplyEdit: func(raw json.RawMessage) lsptest.ApplyResult {
			r := c.ApplyEdit(ctx, raw, false)
			text, _, _ := c.Doc(path)
			os.WriteFile(path, []byte(strings.ReplaceAll(text, "\n", "\r\n")), 0o644) // saved with CRLF
			return r
		},
	})
	res, _ := c.ToolCall(ctx, "edit_file", map[string]any{"path": "w.txt", "old_string": "b", "new_string": "B"})
	if s := editStructured(t, res); res.Status != tools.StatusSuccess || s.Landed != "all" || len(s.Unsaved) != 0 {
		t.Errorf("result %+v, structured %+v: a saved CRLF file is not unsaved", res, s)
	}
}
