package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// patchE2E is one patch that creates, modifies (an open, unsaved buffer)
// and deletes files.
const patchE2E = `diff --git a/new/made.txt b/new/made.txt
new file mode 100644
--- /dev/null
+++ b/new/made.txt
@@ -0,0 +1,2 @@
+made by the patch
+é中😀
--- a/mod.txt
+++ b/mod.txt
@@ -2,3 +2,3 @@
 two
-three (unsaved é中😀)
+THREE 😀
 four
--- a/del.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
`

func patchTree(t *testing.T, c *lsptest.Client, root string) (mod, modDisk, modBuffer string) {
	t.Helper()
	ctx := ctxT(t)
	mod = filepath.Join(root, "mod.txt")
	modDisk = "one\ntwo\nthree\nfour\nfive\n"
	modBuffer = strings.Replace(modDisk, "three\n", "three (unsaved é中😀)\n", 1)
	os.WriteFile(mod, []byte(modDisk), 0o644)
	testenv.WriteFiles(t, root, map[string]string{"del.txt": "bye\n"})
	if err := c.OpenDoc(ctx, mod, modBuffer); err != nil {
		t.Fatal(err)
	}
	return mod, modDisk, modBuffer
}

// TestApplyPatchAnnotatedEditor: an editor with change annotations and
// resource operations gets the whole patch as one annotated WorkspaceEdit
// (create, minimal versioned text edits computed from the buffer, delete);
// applying it is the approval.
func TestApplyPatchAnnotatedEditor(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), nil)
	mod, _, modBuffer := patchTree(t, c, root)
	res, p := oneConfirmedEdit(t, ctx, c, "apply_patch", map[string]any{"patch": patchE2E}, "new/made.txt, mod.txt, del.txt")
	type change struct {
		Kind         string `json:"kind"`
		URI          string `json:"uri"`
		AnnotationID string `json:"annotationId"`
	}
	var kinds []string
	for _, raw := range p.Edit.DocumentChanges {
		var ch change
		json.Unmarshal(raw, &ch)
		if ch.Kind != "" {
			kinds = append(kinds, ch.Kind+" "+strings.TrimPrefix(ch.URI, workspace.PathToURI(root)+"/"))
			if ch.AnnotationID != "agentls" {
				t.Errorf("resource operation without the annotation: %s", raw)
			}
			continue
		}
		var te lsptest.TextDocumentEdit
		json.Unmarshal(raw, &te)
		name := strings.TrimPrefix(te.TextDocument.URI, workspace.PathToURI(root)+"/")
		kinds = append(kinds, "edit "+name)
		for _, e := range te.Edits {
			if e.AnnotationID != "agentls" {
				t.Errorf("text edit without the annotation: %+v", e)
			}
		}
		if name == "mod.txt" {
			// Versioned against the open buffer; only the changed line, with
			// its UTF-16 position.
			if te.TextDocument.Version == nil || *te.TextDocument.Version != 1 {
				t.Errorf("mod.txt edit not versioned: %+v", te.TextDocument)
			}
			if len(te.Edits) != 1 || te.Edits[0].Range.Start.Line != 2 || te.Edits[0].Range.End.Line != 3 || te.Edits[0].NewText != "THREE 😀\n" {
				t.Errorf("mod.txt edits = %+v", te.Edits)
			}
		}
	}
	if want := []string{"create new/made.txt", "edit new/made.txt", "edit mod.txt", "delete del.txt"}; !slices.Equal(kinds, want) {
		t.Errorf("documentChanges = %v, want %v", kinds, want)
	}
	if got, _, _ := c.Doc(mod); got != strings.Replace(modBuffer, "three (unsaved é中😀)\n", "THREE 😀\n", 1) {
		t.Errorf("buffer = %q", got)
	}
	if got, _, _ := c.Doc(filepath.Join(root, "new", "made.txt")); got != "made by the patch\né中😀\n" {
		t.Errorf("new buffer = %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "del.txt")); !os.IsNotExist(err) {
		t.Errorf("del.txt not deleted: %v", err)
	}
	s := editStructured(t, res)
	if s.AppliedBy != "editor" || s.Landed != "all" || !slices.Equal(s.Unsaved, []string{"mod.txt", "new/made.txt"}) {
		t.Errorf("structured = %+v", s)
	}
	var changed []string
	for _, m := range c.Received("tool/event") {
		var e struct{ Kind, Path, Operation string }
		json.Unmarshal(m.Params, &e)
		if e.Kind == "fileChanged" {
			changed = append(changed, e.Operation+" "+e.Path)
		}
	}
	if want := []string{"create new/made.txt", "modify mod.txt", "delete del.txt"}; !slices.Equal(changed, want) {
		t.Errorf("fileChanged events = %v, want %v", changed, want)
	}
}

// TestApplyPatchDeclinedInEditor: a declined preview changes nothing, and
// the call is rejected.
func TestApplyPatchDeclinedInEditor(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), nil)
	mod, modDisk, modBuffer := patchTree(t, c, root)
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(json.RawMessage) lsptest.ApplyResult {
		return lsptest.ApplyResult{Applied: false}
	}})
	res, _ := c.ToolCall(ctx, "apply_patch", map[string]any{"patch": patchE2E})
	if res.Status != tools.StatusRejected || res.ApprovedBy != "none" {
		t.Fatalf("result = %+v, want rejected", res)
	}
	if got, v, _ := c.Doc(mod); got != modBuffer || v != 1 {
		t.Errorf("buffer changed: %q v%d", got, v)
	}
	if d, _ := os.ReadFile(mod); string(d) != modDisk {
		t.Errorf("disk changed: %q", d)
	}
	if d, err := os.ReadFile(filepath.Join(root, "del.txt")); err != nil || string(d) != "bye\n" {
		t.Errorf("del.txt: %q %v", d, err)
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !os.IsNotExist(err) {
		t.Errorf("new/ left behind: %v", err)
	}
}

// TestApplyPatchFailedSendsNothing: PATCH_FAILED is found before any
// question; the editor sees no edit.
func TestApplyPatchFailedSendsNothing(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), nil)
	patchTree(t, c, root)
	var edits int
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(raw json.RawMessage) lsptest.ApplyResult { edits++; return c.ApplyEdit(ctx, raw, false) }})
	// The disk's line, not the buffer's: the hunk does not apply.
	bad := strings.Replace(patchE2E, "-three (unsaved é中😀)", "-three", 1)
	res, _ := c.ToolCall(ctx, "apply_patch", map[string]any{"patch": bad})
	if res.Status != tools.StatusError || res.Error.Code != tools.PatchFailed || !strings.Contains(res.Error.Message, "hunk 1 of 1 of mod.txt") {
		t.Fatalf("result = %+v", res)
	}
	if edits != 0 {
		t.Errorf("%d applyEdit requests after PATCH_FAILED", edits)
	}
	if _, err := os.Stat(filepath.Join(root, "del.txt")); err != nil {
		t.Errorf("del.txt: %v", err)
	}
}

// TestApplyPatchApprovalRequest: a client of editors/ gets approval/request
// with the whole patch as a unified diff, then the edit.
func TestApplyPatchApprovalRequest(t *testing.T) {
	t.Parallel()
	caps := lsptest.AgentlsCaps()
	caps["workspace"].(map[string]any)["workspaceEdit"] = map[string]any{"documentChanges": true, "resourceOperations": []string{"create", "rename", "delete"}}
	c, root, ctx := started(t, caps, nil)
	mod, _, _ := patchTree(t, c, root)
	var req approval.Request
	c.SetHooks(lsptest.Hooks{
		Approval: func(r approval.Request) approval.Response {
			req = r
			return approval.Response{Decision: approval.Approve}
		},
		ApplyEdit: func(raw json.RawMessage) lsptest.ApplyResult { return c.ApplyEdit(ctx, raw, true) },
	})
	res, _ := c.ToolCall(ctx, "apply_patch", map[string]any{"patch": patchE2E})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("result: %+v", res)
	}
	if req.Preview == nil || len(req.Preview.Files) != 3 {
		t.Fatalf("preview = %+v", req.Preview)
	}
	for _, part := range []string{"+++ b/new/made.txt", "-three (unsaved é中😀)\n+THREE 😀\n", "--- a/del.txt\n+++ /dev/null"} {
		if !strings.Contains(req.Preview.UnifiedDiff, part) {
			t.Errorf("preview diff lacks %q:\n%s", part, req.Preview.UnifiedDiff)
		}
	}
	if got, _, _ := c.Doc(mod); !strings.Contains(got, "THREE 😀") {
		t.Errorf("buffer = %q", got)
	}
	if s := editStructured(t, res); s.AppliedBy != "editor" || s.Landed != "all" {
		t.Errorf("structured = %+v", s)
	}
}

// TestApplyPatchRenameInEditor: a rename with changes is a RenameFile then
// the renamed file's text edits; what landed is checked under the new name.
func TestApplyPatchRenameInEditor(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), nil)
	testenv.WriteFiles(t, root, map[string]string{"old.txt": "a\nb\nc\n"})
	var edits []lsptest.ApplyEditParams
	c.SetHooks(lsptest.Hooks{ApplyEdit: recordEdits(ctx, c, &edits, true)})
	patch := "--- a/old.txt\n+++ b/new.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
	res, _ := c.ToolCall(ctx, "apply_patch", map[string]any{"patch": patch})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("result: %+v", res)
	}
	var kinds []string
	for _, e := range edits {
		for _, ch := range e.Edit.DocumentChanges {
			var k struct{ Kind string }
			json.Unmarshal(ch, &k)
			kinds = append(kinds, k.Kind)
		}
	}
	if !slices.Equal(kinds, []string{"rename", ""}) {
		t.Errorf("documentChanges kinds = %q, want rename then a text edit", kinds)
	}
	if _, err := os.Stat(filepath.Join(root, "old.txt")); !os.IsNotExist(err) {
		t.Errorf("old.txt still there: %v", err)
	}
	if d, _ := os.ReadFile(filepath.Join(root, "new.txt")); string(d) != "a\nB\nc\n" {
		t.Errorf("new.txt = %q", d)
	}
	if s := editStructured(t, res); s.Landed != "all" || s.AppliedBy != "editor" {
		t.Errorf("structured = %+v", s)
	}
}

// TestPatchToolsMoveDeleteMkdirInEditor: move_file to a new path is
// automatic and sent as a RenameFile; delete_file is a DeleteFile the
// editor's preview asks about; create_directory, which no WorkspaceEdit
// can express, is asked with showMessageRequest and made by the server.
func TestPatchToolsMoveDeleteMkdirInEditor(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), nil)
	testenv.WriteFiles(t, root, map[string]string{"a.txt": "a\n"})
	var edits []lsptest.ApplyEditParams
	var asked []string
	c.SetHooks(lsptest.Hooks{
		ApplyEdit: recordEdits(ctx, c, &edits, false),
		ShowMessageRequest: func(p json.RawMessage) any {
			var m struct{ Message string }
			json.Unmarshal(p, &m)
			asked = append(asked, m.Message)
			return map[string]string{"title": "Approve"}
		},
	})
	// A move asks in safe mode, to a new path too: through the editor's preview.
	res, _ := c.ToolCall(ctx, "move_file", map[string]any{"from": "a.txt", "to": "b.txt"})
	if res.Status != tools.StatusSuccess || res.ApprovedBy != "user" {
		t.Fatalf("move_file: %+v", res)
	}
	if len(edits) != 1 || len(edits[0].Edit.ChangeAnnotations) == 0 || !strings.Contains(string(edits[0].Edit.DocumentChanges[0]), `"kind":"rename"`) {
		t.Errorf("move_file edit = %+v", edits)
	}
	if d, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(d) != "a\n" {
		t.Errorf("b.txt = %q", d)
	}
	res, _ = c.ToolCall(ctx, "delete_file", map[string]any{"path": "b.txt"})
	if res.Status != tools.StatusSuccess || res.ApprovedBy != "user" {
		t.Fatalf("delete_file: %+v", res)
	}
	if len(edits) != 2 || !edits[1].Edit.ChangeAnnotations["agentls"].NeedsConfirmation || !strings.Contains(string(edits[1].Edit.DocumentChanges[0]), `"kind":"delete"`) {
		t.Errorf("delete_file edit = %+v", edits[1:])
	}
	if _, err := os.Stat(filepath.Join(root, "b.txt")); !os.IsNotExist(err) {
		t.Errorf("b.txt still there: %v", err)
	}
	res, _ = c.ToolCall(ctx, "create_directory", map[string]any{"path": "x/y"})
	if res.Status != tools.StatusSuccess || len(asked) != 1 || !strings.Contains(asked[0], "create_directory") {
		t.Fatalf("create_directory: %+v, asked %q", res, asked)
	}
	if fi, err := os.Stat(filepath.Join(root, "x", "y")); err != nil || !fi.IsDir() {
		t.Errorf("x/y: %v", err)
	}
	if s := editStructured(t, res); s.AppliedBy != "server" {
		t.Errorf("structured = %+v", s)
	}
}
