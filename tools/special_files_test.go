//go:build unix

package tools

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
)

// TestSpecialFilesDoNotHang: a FIFO in the workspace is refused by every
// tool that reads what it changes, before approval, instead of blocking.
func TestSpecialFilesDoNotHang(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err) // a temporary folder takes a FIFO on any Linux file system
	}
	testenv.WriteFiles(t, root, map[string]string{"a.txt": "a\n"})
	calls := []toolCall{
		{"read_file", map[string]any{"path": "fifo"}},
		{"edit_file", map[string]any{"path": "fifo", "old_string": "a", "new_string": "b"}},
		{"multi_edit", map[string]any{"path": "fifo", "edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}},
		{"write_file", map[string]any{"path": "fifo", "content": "x"}},
		{"apply_patch", map[string]any{"patch": "--- a/fifo\n+++ b/fifo\n@@ -1 +1 @@\n-a\n+b\n"}},
		{"copy_file", map[string]any{"source": "fifo", "dest": "copy"}},
		{"copy_file", map[string]any{"source": "a.txt", "dest": "fifo", "overwrite": true}},
		{"delete_file", map[string]any{"path": "fifo"}},
	}
	for _, c := range calls {
		done := make(chan *Result, 1)
		go func() { done <- ftCall(t, env, c.tool, c.args) }()
		select {
		case res := <-done:
			wantError(t, res, NotAFile)
		case <-time.After(5 * time.Second):
			t.Fatalf("%s on a FIFO blocks", c.tool)
		}
	}
}
