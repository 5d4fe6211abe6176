package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
)

func TestMultiEdit(t *testing.T) {
	t.Parallel()
	const text = "alpha\nbeta\ngamma\nbeta\ndelta\n"
	tests := []struct {
		name  string
		file  string
		edits []map[string]any
		want  string // the file after; "" when the call fails
		code  Code
		parts []string
	}{
		{"in order, each on the previous result", text, []map[string]any{
			{"old_string": "alpha", "new_string": "ALPHA"},
			{"old_string": "ALPHA\nbeta", "new_string": "first"},
		}, "first\ngamma\nbeta\ndelta\n", "", nil},
		{"replace_all", text, []map[string]any{
			{"old_string": "beta", "new_string": "B", "replace_all": true},
			{"old_string": "delta", "new_string": "D"},
		}, "alpha\nB\ngamma\nB\nD\n", "", nil},
		{"all or nothing: the second edit has no match", text, []map[string]any{
			{"old_string": "alpha", "new_string": "ALPHA"},
			{"old_string": "gamm4", "new_string": "x"},
		}, "", NoMatch, []string{"edit 2: old_string was not found", "The closest lines are:", "     3\tgamma"}},
		{"all or nothing: the first edit is ambiguous", text, []map[string]any{
			{"old_string": "beta", "new_string": "B"},
			{"old_string": "alpha", "new_string": "A"},
		}, "", AmbiguousMatch, []string{"edit 1: old_string occurs 2 times", "lines 2, 4"}},
		{"an edit whose old_string an earlier edit removed", text, []map[string]any{
			{"old_string": "gamma\n", "new_string": ""},
			{"old_string": "gamma", "new_string": "G"},
		}, "", NoMatch, []string{"edit 2"}},
		{"same old and new", text, []map[string]any{
			{"old_string": "alpha", "new_string": "alpha"},
		}, "", InvalidParams, []string{"the same"}},
		{"CRLF kept, LF in the arguments", "a\r\nb\r\nc\r\n", []map[string]any{
			{"old_string": "a\nb", "new_string": "A\nB\nB2"},
			{"old_string": "c", "new_string": "C"},
		}, "A\r\nB\r\nB2\r\nC\r\n", "", nil},
		{"non-ASCII", "é中😀\nx\n", []map[string]any{
			{"old_string": "中", "new_string": "zhōng"},
			{"old_string": "😀\n", "new_string": "🙂\n"},
		}, "ézhōng🙂\nx\n", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, root := ftEnv(t)
			testenv.WriteFiles(t, root, map[string]string{"f.txt": tt.file})
			res := ftCall(t, env, "multi_edit", map[string]any{"path": "f.txt", "edits": tt.edits})
			if tt.code != "" {
				wantError(t, res, tt.code, tt.parts...)
				if got := ftRead(t, root, "f.txt"); got != tt.file {
					t.Errorf("file changed after a failed multi_edit: %q", got)
				}
				return
			}
			wantSuccess(t, res)
			if got := ftRead(t, root, "f.txt"); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMultiEditEditsTheBuffer(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"f.go": "package f\n"})
	path := filepath.Join(root, "f.go")
	env.Workspace.Overlays.Open(workspace.Document{URI: workspace.PathToURI(path), Path: path, Version: 3, Text: "package f\n\nvar unsaved = 1\n"})
	res := ftCall(t, env, "multi_edit", map[string]any{"path": "f.go", "edits": []any{map[string]any{"old_string": "unsaved = 1", "new_string": "unsaved = 2"}}})
	// Without an editor that applies edits, the server would write the
	// buffer's unsaved text with the edit, and the person's next save would
	// undo it: refused, nothing written.
	wantError(t, res, UnsavedInEditor, "f.go")
	if got := ftRead(t, root, "f.go"); got != "package f\n" {
		t.Errorf("file = %q", got)
	}
	// A buffer with no unsaved changes loses nothing: the server writes.
	env.Workspace.Overlays.Open(workspace.Document{URI: workspace.PathToURI(path), Path: path, Version: 4, Text: "package f\n"})
	res = ftCall(t, env, "multi_edit", map[string]any{"path": "f.go", "edits": []any{map[string]any{"old_string": "package f", "new_string": "package g"}}})
	wantSuccess(t, res)
	if got := ftRead(t, root, "f.go"); got != "package g\n" {
		t.Errorf("file = %q", got)
	}
	res = ftCall(t, env, "multi_edit", map[string]any{"path": "f.go", "edits": []any{}})
	wantError(t, res, InvalidParams)
}

// TestStaleFile: every tool that changes an existing file refuses when the
// file changed (on disk or in the buffer) since the model read it, and an
// overwrite of a file never read.
func TestStaleFile(t *testing.T) {
	t.Parallel()
	type change func(t *testing.T, env *Env, root string)
	onDisk := func(t *testing.T, env *Env, root string) {
		testenv.WriteFiles(t, root, map[string]string{"f.txt": "one\ntwo changed on disk\nthree\n"})
	}
	inBuffer := func(t *testing.T, env *Env, root string) {
		p := filepath.Join(root, "f.txt")
		env.Workspace.Overlays.Open(workspace.Document{URI: workspace.PathToURI(p), Path: p, Version: 2, Text: "one\ntwo typed in the editor\nthree\n"})
	}
	calls := []toolCall{
		{"edit_file", map[string]any{"path": "f.txt", "old_string": "one", "new_string": "1"}},
		{"multi_edit", map[string]any{"path": "f.txt", "edits": []any{map[string]any{"old_string": "one", "new_string": "1"}}}},
		{"write_file", map[string]any{"path": "f.txt", "content": "new\n"}},
		{"apply_patch", map[string]any{"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+1\n"}},
		{"delete_file", map[string]any{"path": "f.txt"}},
		{"copy_file", map[string]any{"source": "g.txt", "dest": "f.txt", "overwrite": true}},
		{"move_file", map[string]any{"from": "g.txt", "to": "f.txt", "overwrite": true}},
	}
	for _, how := range []struct {
		name string
		fn   change
		what string
	}{{"disk", onDisk, "+two changed on disk"}, {"buffer", inBuffer, "+two typed in the editor"}} {
		for _, c := range calls {
			t.Run(how.name+"/"+c.tool, func(t *testing.T) {
				env, root := ftEnv(t)
				testenv.WriteFiles(t, root, map[string]string{"f.txt": "one\ntwo\nthree\n", "g.txt": "g\n"})
				wantSuccess(t, ftCall(t, env, "read_file", map[string]any{"path": "f.txt"}))
				how.fn(t, env, root)
				before := ftRead(t, root, "f.txt")
				res := ftCall(t, env, c.tool, c.args)
				wantError(t, res, StaleFile, "changed since you last read it", how.what)
				if got := ftRead(t, root, "f.txt"); got != before {
					t.Errorf("file changed: %q", got)
				}
				// Read again: the call goes through.
				wantSuccess(t, ftCall(t, env, "read_file", map[string]any{"path": "f.txt"}))
				if how.name == "buffer" {
					// Without an editor the server never writes around
					// the unsaved buffer.
					wantError(t, ftCall(t, env, c.tool, c.args), UnsavedInEditor)
					return
				}
				wantSuccess(t, ftCall(t, env, c.tool, c.args))
			})
		}
	}
}

// TestNoMatchAndAmbiguous checks the hints of edit_file's two failures.
func TestNoMatchAndAmbiguous(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"f.go": "package f\n\nfunc Total(items []int) int {\n\treturn 0\n}\n\nfunc Count() int { return 0 }\n"})
	res := ftCall(t, env, "edit_file", map[string]any{"path": "f.go", "old_string": "func Totals(items []int) int {", "new_string": "x"})
	wantError(t, res, NoMatch, "was not found in f.go", "The closest lines are:", "     3\tfunc Total(items []int) int {")
	res = ftCall(t, env, "edit_file", map[string]any{"path": "f.go", "old_string": "func  Total(items []int)  int {\n  return 0", "new_string": "x"})
	wantError(t, res, NoMatch, "matches when whitespace is ignored, from line 3")
	res = ftCall(t, env, "edit_file", map[string]any{"path": "f.go", "old_string": "return 0", "new_string": "return 1"})
	wantError(t, res, AmbiguousMatch, "occurs 2 times in f.go (lines 4, 7)")
	var d struct{ Lines []int }
	decodeDetails(t, res, &d)
	if len(d.Lines) != 2 || d.Lines[0] != 4 || d.Lines[1] != 7 {
		t.Errorf("details lines = %v", d.Lines)
	}
	if strings.Contains(ftRead(t, root, "f.go"), "return 1") {
		t.Error("file changed")
	}
}
