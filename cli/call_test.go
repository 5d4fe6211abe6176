package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// TestAbsRoot: the root the one-shot grep prefetches the index copy of is
// the session's root, however --root spells it (the copy is named after
// the root: another spelling would never be taken).
func TestAbsRoot(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(dir, "a"))
	for _, root := range []string{"", ".", "./", "b/..", filepath.Join(dir, "a") + "/", dir + "/a/b/../.", "b", "../a/b/"} {
		w := workspacetest.New(t)
		spelled := root
		if spelled == "" {
			spelled, _ = os.Getwd() // openSession's default
		}
		if err := w.SetFolders([]workspace.Folder{{Path: spelled}}); err != nil {
			t.Fatal(err)
		}
		if got, want := absRoot(root), w.Roots()[0]; got != want {
			t.Errorf("absRoot(%q) = %q, the session's root is %q", root, got, want)
		}
	}
}
