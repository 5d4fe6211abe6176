package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// TestMoveOfOpenModifiedBuffer: move_file of a file open in the editor
// with unsaved changes goes to the editor as a RenameFile when the client
// declares the rename operation (with documentChanges, or without it as
// Neovim does), annotated for the editor's preview when it confirms edits;
// the buffer follows the file with its unsaved text and the disk keeps the
// saved text. A client without the operation gets today's behaviour: the
// server refuses to move a file around unsaved text.
func TestMoveOfOpenModifiedBuffer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		caps     map[string]any
		init     any
		editor   bool // the client moves it
		annotate bool // with the annotation needing confirmation
	}{
		{"documentChanges and rename, preview", annotatedCaps(), nil, true, true},
		{"rename without documentChanges (Neovim)", neovimCaps(), yolo, true, false},
		{"documentChanges without rename (eglot)", eglotCaps(), yolo, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, root, ctx := started(t, tt.caps, tt.init)
			from := writeFile(t, root, "a.txt", "saved\n")
			to := filepath.Join(root, "sub", "b.txt")
			c.OpenDoc(ctx, from, "saved\nunsaved 😀\n")
			var seen []lsptest.ApplyEditParams
			c.SetHooks(lsptest.Hooks{ApplyEdit: recordEdits(ctx, c, &seen, false)})
			res, err := c.ToolCall(ctx, "move_file", map[string]any{"from": "a.txt", "to": "sub/b.txt"})
			if err != nil {
				t.Fatal(err)
			}
			if !tt.editor {
				if res.Status != tools.StatusError || res.Error.Code != tools.UnsavedInEditor || len(seen) != 0 {
					t.Fatalf("result %+v, %d applyEdit: want UNSAVED_IN_EDITOR and nothing sent", res, len(seen))
				}
				if _, err := os.Stat(from); err != nil {
					t.Errorf("a.txt moved: %v", err)
				}
				return
			}
			if res.Status != tools.StatusSuccess {
				t.Fatalf("result: %+v", res)
			}
			if s := editStructured(t, res); s.AppliedBy != "editor" || s.Landed != "all" {
				t.Errorf("structured = %+v", s)
			}
			if len(seen) != 1 || len(seen[0].Edit.DocumentChanges) != 1 || len(seen[0].Edit.Changes) != 0 {
				t.Fatalf("applyEdit = %+v, want one RenameFile in documentChanges", seen)
			}
			var op struct {
				Kind, OldURI, NewURI, AnnotationID string
				Options                            map[string]any
			}
			json.Unmarshal(seen[0].Edit.DocumentChanges[0], &op)
			if op.Kind != "rename" || op.OldURI != workspace.PathToURI(from) || op.NewURI != workspace.PathToURI(to) || op.Options["overwrite"] != false {
				t.Errorf("operation = %+v", op)
			}
			a, ok := seen[0].Edit.ChangeAnnotations[op.AnnotationID]
			if tt.annotate != (ok && a.NeedsConfirmation) {
				t.Errorf("annotation %q = %+v, want needsConfirmation %v", op.AnnotationID, seen[0].Edit.ChangeAnnotations, tt.annotate)
			}
			if _, _, open := c.Doc(from); open {
				t.Error("a buffer still visits the old path")
			}
			if text, _, open := c.Doc(to); !open || text != "saved\nunsaved 😀\n" {
				t.Errorf("buffer at the new path = %q (open %v), want the unsaved text", text, open)
			}
			if d, err := os.ReadFile(to); err != nil || string(d) != "saved\n" {
				t.Errorf("disk at the new path = %q, %v: want the saved text", d, err)
			}
			if _, err := os.Stat(from); !os.IsNotExist(err) {
				t.Errorf("old path: %v", err)
			}
			r, _ := c.ToolCall(ctx, "read_file", map[string]any{"path": "sub/b.txt"})
			if !strings.Contains(r.Content, "unsaved 😀") {
				t.Errorf("the server does not read the buffer at its new path: %s", r.Content)
			}
		})
	}
}

// TestCopyInEditorKeepsMode: a copy the editor creates (a CreateFile and
// its text) gets the source's mode bits once it landed: an executable
// stays executable.
func TestCopyInEditorKeepsMode(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, annotatedCaps(), nil)
	src := writeFile(t, root, "run.sh", "#!/bin/sh\necho hi\n")
	if err := os.Chmod(src, 0o755); err != nil {
		t.Fatal(err)
	}
	var seen []lsptest.ApplyEditParams
	c.SetHooks(lsptest.Hooks{ApplyEdit: recordEdits(ctx, c, &seen, true)})
	res, _ := c.ToolCall(ctx, "copy_file", map[string]any{"source": "run.sh", "dest": "bin/run2.sh"})
	if res.Status != tools.StatusSuccess {
		t.Fatalf("result: %+v", res)
	}
	if s := editStructured(t, res); s.AppliedBy != "editor" || len(seen) != 1 || !strings.Contains(string(seen[0].Edit.DocumentChanges[0]), `"kind":"create"`) {
		t.Fatalf("structured %+v, applyEdit %+v: want the editor to create the copy", s, seen)
	}
	fi, err := os.Stat(filepath.Join(root, "bin", "run2.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("copy: %v, %v: want mode 0755", fi, err)
	}
	if d, _ := os.ReadFile(filepath.Join(root, "bin", "run2.sh")); string(d) != "#!/bin/sh\necho hi\n" {
		t.Errorf("copy = %q", d)
	}
}
