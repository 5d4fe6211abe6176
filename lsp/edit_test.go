package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
)

func annotatedCaps() map[string]any {
	return map[string]any{"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{
		"documentChanges": true, "resourceOperations": []string{"create", "rename", "delete"}, "changeAnnotationSupport": map[string]any{},
	}}}
}

// editStructured decodes an edit tool's structured result.
// writeFile writes a file below root, making its folders, and returns its
// path.
func writeFile(t *testing.T, root, rel, content string) string {
	t.Helper()
	testenv.WriteFiles(t, root, map[string]string{rel: content})
	return filepath.Join(root, filepath.FromSlash(rel))
}

// recordEdits is an ApplyEdit hook that keeps the params of every
// workspace/applyEdit in *seen and applies the edit to the client's
// documents, saving them when save.
func recordEdits(ctx context.Context, c *lsptest.Client, seen *[]lsptest.ApplyEditParams, save bool) func(json.RawMessage) lsptest.ApplyResult {
	return func(raw json.RawMessage) lsptest.ApplyResult {
		var p lsptest.ApplyEditParams
		json.Unmarshal(raw, &p)
		*seen = append(*seen, p)
		return c.ApplyEdit(ctx, raw, save)
	}
}

// oneConfirmedEdit calls tool with args and wants it to succeed, approved
// by the person, through exactly one workspace/applyEdit whose change
// annotation asks for confirmation and whose label names the tool and each
// of labelParts. It returns the result and that applyEdit's params.
func oneConfirmedEdit(t *testing.T, ctx context.Context, c *lsptest.Client, tool string, args map[string]any, labelParts ...string) (*tools.Result, lsptest.ApplyEditParams) {
	t.Helper()
	var seen []lsptest.ApplyEditParams
	c.SetHooks(lsptest.Hooks{ApplyEdit: recordEdits(ctx, c, &seen, false)})
	res, err := c.ToolCall(ctx, tool, args)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != tools.StatusSuccess || res.ApprovedBy != "user" {
		t.Fatalf("result: %+v", res)
	}
	if len(seen) != 1 {
		t.Fatalf("%d applyEdit requests, want 1", len(seen))
	}
	a, ok := seen[0].Edit.ChangeAnnotations["agentls"]
	if !ok || !a.NeedsConfirmation || !strings.Contains(a.Label, tool) {
		t.Errorf("change annotation = %+v", seen[0].Edit.ChangeAnnotations)
	}
	for _, part := range labelParts {
		if !strings.Contains(a.Label, part) {
			t.Errorf("annotation label %q does not name %q", a.Label, part)
		}
	}
	return res, seen[0]
}

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
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), nil)
	path := filepath.Join(root, "big.txt")
	var b strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	disk := b.String()
	os.WriteFile(path, []byte(disk), 0o644)
	buffer := strings.Replace(disk, "line 7\n", "line 7 (unsaved é中😀)\n", 1)
	c.OpenDoc(ctx, path, buffer)

	res, p := oneConfirmedEdit(t, ctx, c, "edit_file", map[string]any{"path": "big.txt", "old_string": "line 7 (unsaved é中😀)\n", "new_string": "line 7 — edited 😀\n"}, "big.txt")
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
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), nil)
	path := writeFile(t, root, "a.go", "package a\n")
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
		t.Fatalf("write_file declined in the editor's preview: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(root, "new", "b.txt")); !os.IsNotExist(err) {
		t.Errorf("new file left behind: %v", err)
	}
}

func TestAppliedIsNotTrusted(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), nil)
	path := writeFile(t, root, "a.txt", "one\ntwo\n")
	c.OpenDoc(ctx, path, "one\ntwo\n")
	// An editor that says applied but changes nothing (Neovim 0.12, some eglot).
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(json.RawMessage) lsptest.ApplyResult { return lsptest.ApplyResult{Applied: true} }})
	res, _ := c.ToolCall(ctx, "edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})
	if s := editStructured(t, res); s.Landed != "none" || len(s.NotLanded) != 1 || len(s.LandedFiles) != 0 {
		t.Errorf("landed = %q, want none; result %+v", s.Landed, res)
	}
	if res.Status != tools.StatusError || res.Error.Code != tools.NotApplied || !strings.Contains(res.Content, "declined") {
		t.Errorf("an edit that did not land is not a success: %+v", res)
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
	if res.Status != tools.StatusError || res.Error.Code != tools.NotApplied || !strings.Contains(res.Content, "+TWO!") {
		t.Errorf("a changed proposal is not a success: %+v", res)
	}
}

func TestApprovalRequestThenPlainApplyEdit(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, lsptest.AgentlsCaps(), nil)
	path := writeFile(t, root, "a.txt", "héllo 中\nworld\n")
	var req approval.Request
	var applied []lsptest.ApplyEditParams
	c.SetHooks(lsptest.Hooks{
		Approval: func(r approval.Request) approval.Response {
			req = r
			return approval.Response{Decision: approval.Approve}
		},
		ApplyEdit: recordEdits(ctx, c, &applied, true),
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
	t.Parallel()
	c, root, ctx := started(t, map[string]any{}, nil)
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
	t.Parallel()
	c, root, ctx := started(t, lsptest.AgentlsCaps(), nil)
	path := writeFile(t, root, "a.txt", "one\n")
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
	t.Parallel()
	c, root, ctx := started(t, lsptest.AgentlsCaps(), nil)
	path := writeFile(t, root, "w.txt", "a\r\nb\r\n")
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

// neovimCaps are Neovim 0.10's default workspace capabilities
// (vim.lsp.protocol.make_client_capabilities): applyEdit and resource
// operations, but no documentChanges.
func neovimCaps() map[string]any {
	return map[string]any{"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{
		"resourceOperations": []string{"rename", "create", "delete"}}}}
}

// eglotCaps are Emacs 30 eglot's: documentChanges only.
func eglotCaps() map[string]any {
	return map[string]any{"workspace": map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true}}}
}

var yolo = map[string]any{"config": map[string]any{"approval": map[string]any{"mode": "yolo"}}}

// TestPlainChangesKeepUnsavedWork: no unsaved work is lost. A client without
// documentChanges gets the changes map for its open buffer; the disk keeps
// the saved text, and a second edit keeps the first.
func TestPlainChangesKeepUnsavedWork(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, neovimCaps(), yolo)
	path := writeFile(t, root, "a.txt", "one\ntwo\nthree\n")
	buffer := "one (unsaved é中😀)\ntwo\nthree\n"
	c.OpenDoc(ctx, path, buffer)
	var seen []json.RawMessage
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(raw json.RawMessage) lsptest.ApplyResult {
		seen = append(seen, raw)
		return c.ApplyEdit(ctx, raw, false)
	}})
	res, err := c.ToolCall(ctx, "edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO 😀"})
	if err != nil || res.Status != tools.StatusSuccess {
		t.Fatalf("first edit: %+v %v", res, err)
	}
	res, _ = c.ToolCall(ctx, "edit_file", map[string]any{"path": "a.txt", "old_string": "three", "new_string": "THREE"})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("second edit: %+v", res)
	}
	if len(seen) != 2 {
		t.Fatalf("%d applyEdit requests, want 2", len(seen))
	}
	var p struct {
		Edit struct {
			DocumentChanges []any                      `json:"documentChanges"`
			Changes         map[string]json.RawMessage `json:"changes"`
		} `json:"edit"`
	}
	json.Unmarshal(seen[0], &p)
	if p.Edit.DocumentChanges != nil || len(p.Edit.Changes) != 1 {
		t.Fatalf("applyEdit without documentChanges support = %s", seen[0])
	}
	var edits []struct {
		Range   struct{ Start, End struct{ Line, Character int } }
		NewText string
	}
	json.Unmarshal(p.Edit.Changes["file://"+path], &edits)
	if len(edits) != 1 || edits[0].Range.Start.Line != 1 || edits[0].NewText != "TWO 😀\n" {
		t.Errorf("changes = %s, want one minimal edit of line 2", p.Edit.Changes["file://"+path])
	}
	want := "one (unsaved é中😀)\nTWO 😀\nTHREE\n"
	if got, _, _ := c.Doc(path); got != want {
		t.Errorf("buffer = %q, want %q", got, want)
	}
	if d, _ := os.ReadFile(path); string(d) != "one\ntwo\nthree\n" {
		t.Errorf("disk = %q: the server wrote around the unsaved buffer", d)
	}
	if s := editStructured(t, res); s.AppliedBy != "editor" || s.Landed != "all" || len(s.Unsaved) != 1 {
		t.Errorf("structured = %+v", s)
	}

	// A file no editor holds, and a new file: the server writes them, with
	// their content, and sends nothing.
	testenv.WriteFiles(t, root, map[string]string{"closed.txt": "x\n"})
	seen = nil
	res, _ = c.ToolCall(ctx, "edit_file", map[string]any{"path": "closed.txt", "old_string": "x", "new_string": "y"})
	if s := editStructured(t, res); res.Status != tools.StatusSuccess || s.AppliedBy != "server" {
		t.Errorf("closed file: %+v", res)
	}
	res, _ = c.ToolCall(ctx, "write_file", map[string]any{"path": "new/n.txt", "content": "new é\n"})
	if s := editStructured(t, res); res.Status != tools.StatusSuccess || s.AppliedBy != "server" {
		t.Errorf("new file: %+v", res)
	}
	if d, _ := os.ReadFile(filepath.Join(root, "closed.txt")); string(d) != "y\n" {
		t.Errorf("closed.txt = %q", d)
	}
	if d, _ := os.ReadFile(filepath.Join(root, "new", "n.txt")); string(d) != "new é\n" {
		t.Errorf("new file = %q, want its content on disk", d)
	}
	if len(seen) != 0 {
		t.Errorf("applyEdit sent for files no editor holds: %s", seen)
	}

	// An editor that answers applied:false (not a preview: nobody was
	// asked there) did not apply it: NOT_APPLIED, not rejected.
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(json.RawMessage) lsptest.ApplyResult {
		return lsptest.ApplyResult{Applied: false, FailureReason: "buffer is read-only"}
	}})
	res, _ = c.ToolCall(ctx, "edit_file", map[string]any{"path": "a.txt", "old_string": "THREE", "new_string": "3"})
	if res.Status != tools.StatusError || res.Error.Code != tools.NotApplied || !strings.Contains(res.Content, "buffer is read-only") {
		t.Errorf("applied:false = %+v", res)
	}
	if got, _, _ := c.Doc(path); got != want {
		t.Errorf("buffer = %q after an edit that was not applied", got)
	}
}

// TestServerNeverWritesAroundUnsavedText: what the editor cannot do itself
// (a delete without resource operations; anything for a client without
// applyEdit) is refused for a buffer with unsaved changes.
func TestServerNeverWritesAroundUnsavedText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		caps map[string]any
		tool string
		args map[string]any
	}{
		{"eglot delete", eglotCaps(), "delete_file", map[string]any{"path": "a.txt"}},
		{"bare edit", map[string]any{}, "edit_file", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "ONE"}},
		{"neovim directory delete", neovimCaps(), "delete_file", map[string]any{"path": "d", "recursive": true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, root, ctx := started(t, tt.caps, yolo)
			path := filepath.Join(root, "a.txt")
			if tt.name == "neovim directory delete" {
				path = filepath.Join(root, "d", "a.txt")
				os.MkdirAll(filepath.Dir(path), 0o755)
			}
			os.WriteFile(path, []byte("one\n"), 0o644)
			c.OpenDoc(ctx, path, "one (unsaved)\n")
			c.SetHooks(lsptest.Hooks{ShowMessageRequest: func(json.RawMessage) any { return map[string]string{"title": "Approve"} }})
			res, _ := c.ToolCall(ctx, tt.tool, tt.args)
			if res.Status != tools.StatusError || res.Error.Code != tools.UnsavedInEditor {
				t.Fatalf("result = %+v, want UNSAVED_IN_EDITOR", res)
			}
			if d, err := os.ReadFile(path); err != nil || string(d) != "one\n" {
				t.Errorf("disk = %q, %v", d, err)
			}
		})
	}
}

// TestEglotNewFileLandsWithContent: a client with documentChanges but no
// create operation gets no empty file on disk: the server creates the file
// with its content and sends the rest of the plan to the editor.
func TestEglotNewFileLandsWithContent(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, eglotCaps(), yolo)
	open := filepath.Join(root, "open.txt")
	os.WriteFile(open, []byte("a\n"), 0o644)
	c.OpenDoc(ctx, open, "a (unsaved)\n")
	var seen []lsptest.ApplyEditParams
	c.SetHooks(lsptest.Hooks{ApplyEdit: recordEdits(ctx, c, &seen, false)})
	patch := "--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1 @@\n+made\n--- a/open.txt\n+++ b/open.txt\n@@ -1 +1 @@\n-a (unsaved)\n+b (unsaved)\n"
	res, _ := c.ToolCall(ctx, "apply_patch", map[string]any{"patch": patch})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("result: %+v", res)
	}
	if d, _ := os.ReadFile(filepath.Join(root, "made.txt")); string(d) != "made\n" {
		t.Errorf("new file on disk = %q", d)
	}
	if len(seen) != 1 || len(seen[0].Edit.DocumentChanges) != 1 {
		t.Fatalf("applyEdit = %+v, want the open file's edit only", seen)
	}
	if got, _, _ := c.Doc(open); got != "b (unsaved)\n" {
		t.Errorf("buffer = %q", got)
	}
	if s := editStructured(t, res); s.AppliedBy != "both" || s.Landed != "all" {
		t.Errorf("structured = %+v", s)
	}
}
