package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
)

// TestOneLineEditSendsOneLine: a one-line edit of a 20,000-line file open
// in the editor, whose buffer differs from the disk, sends TextEdits of a
// few lines (never the whole text), through each edit tool and each shape
// of WorkspaceEdit; the edit lands in the buffer, over the unsaved text,
// and the disk is left alone. BenchmarkOneLineEditOfOpenBuffer times it.
func TestOneLineEditSendsOneLine(t *testing.T) {
	t.Parallel()
	const maxLines = 5 // lines a one-line edit may send: its range's and its new text's
	edit := func(tool string) map[string]any {
		if tool == "str_replace_based_edit_tool" {
			return map[string]any{"command": "str_replace", "path": "big.txt", "old_str": "line 12345\n", "new_str": "line 12345 édité\n"}
		}
		return map[string]any{"path": "big.txt", "old_string": "line 12345\n", "new_string": "line 12345 édité\n"}
	}
	for _, tt := range []struct {
		name string
		caps map[string]any
		init any
		tool string
	}{
		{"edit_file, documentChanges", annotatedCaps(), nil, "edit_file"},
		{"str_replace, documentChanges", annotatedCaps(), nil, "str_replace_based_edit_tool"},
		{"edit_file, changes map", neovimCaps(), yolo, "edit_file"},
		{"str_replace, changes map", neovimCaps(), yolo, "str_replace_based_edit_tool"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, root, ctx := started(t, tt.caps, tt.init)
			path := filepath.Join(root, "big.txt")
			disk := numberedLines(20000)
			os.WriteFile(path, []byte(disk), 0o644)
			buffer := strings.Replace(disk, "line 3\n", "line 3 (unsaved 😀)\n", 1)
			c.OpenDoc(ctx, path, buffer)
			var seen []lsptest.ApplyEditParams
			c.SetHooks(lsptest.Hooks{ApplyEdit: recordEdits(ctx, c, &seen, false)})
			res, err := c.ToolCall(ctx, tt.tool, edit(tt.tool))
			if err != nil || res.Status != tools.StatusSuccess {
				t.Fatalf("result: %+v %v", res, err)
			}
			if len(seen) != 1 {
				t.Fatalf("%d applyEdit requests, want 1", len(seen))
			}
			var edits []struct {
				Range   struct{ Start, End struct{ Line, Character int } }
				NewText string
			}
			if dc := seen[0].Edit.DocumentChanges; len(dc) > 0 {
				var te struct{ Edits json.RawMessage }
				if len(dc) != 1 || json.Unmarshal(dc[0], &te) != nil || json.Unmarshal(te.Edits, &edits) != nil {
					t.Fatalf("documentChanges = %s", dc)
				}
			} else if err := json.Unmarshal(seen[0].Edit.Changes["file://"+path], &edits); err != nil {
				t.Fatalf("changes = %v: %v", seen[0].Edit.Changes, err)
			}
			lines := 0
			for _, e := range edits {
				lines += e.Range.End.Line - e.Range.Start.Line + 1 + strings.Count(e.NewText, "\n")
				if e.Range.Start.Line != 12344 {
					t.Errorf("edit of line %d, want line 12345 (index 12344)", e.Range.Start.Line)
				}
			}
			if len(edits) == 0 || lines > maxLines {
				t.Errorf("%d text edits spanning %d lines, want at most %d: %+v", len(edits), lines, maxLines, edits)
			}
			want := strings.Replace(buffer, "line 12345\n", "line 12345 édité\n", 1)
			if got, _, _ := c.Doc(path); got != want {
				t.Error("the buffer is not the unsaved text with the edit")
			}
			if d, _ := os.ReadFile(path); string(d) != disk {
				t.Error("the disk changed; the edit belongs to the buffer")
			}
		})
	}
}
