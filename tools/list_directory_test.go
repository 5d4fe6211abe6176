package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

func TestListDirectoryCapAndEmpty(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	files := map[string]string{}
	for i := 0; i < listMaxEntries+5; i++ {
		files[fmt.Sprintf("many/f%04d.txt", i)] = ""
	}
	testenv.WriteFiles(t, root, files)
	os.Mkdir(filepath.Join(root, "empty"), 0o755)
	res := ftCall(t, env, "list_directory", map[string]any{"path": "many"})
	wantSuccess(t, res)
	var s struct {
		Entries   []ListEntry
		Truncated bool
		Total     int
	}
	decode(t, res, &s)
	if len(s.Entries) != listMaxEntries || !s.Truncated || s.Total != listMaxEntries+5 || s.Entries[0].Path != "many/f0000.txt" {
		t.Errorf("entries %d, truncated %v, total %d", len(s.Entries), s.Truncated, s.Total)
	}
	res = ftCall(t, env, "list_directory", map[string]any{"path": "empty"})
	wantSuccess(t, res)
	if res.Content != "empty/ is empty.\n" {
		t.Errorf("content = %q", res.Content)
	}
	testenv.WriteFiles(t, root, map[string]string{"empty/.hidden": ""})
	res = ftCall(t, env, "list_directory", map[string]any{"path": "empty"})
	if res.Content != "empty/ is empty (apart from hidden or ignored entries).\n[1 hidden not shown (include_hidden)]\n" {
		t.Errorf("content = %q", res.Content)
	}
}
