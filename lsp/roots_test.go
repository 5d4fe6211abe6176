package lsp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// TestAddedFolderPathsRoundTrip: after didChangeWorkspaceFolders adds a
// folder, results name its files with the folder's name first, and that
// path given back to read_file reads the file.
func TestAddedFolderPathsRoundTrip(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, nil, nil)
	testenv.WriteFiles(t, root, map[string]string{"first.txt": "marker in the first root\n"})
	second := t.TempDir()
	os.MkdirAll(filepath.Join(second, "pkg"), 0o755)
	os.WriteFile(filepath.Join(second, "pkg", "two.txt"), []byte("marker in the second root\n"), 0o644)
	c.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": workspace.PathToURI(second), "name": "backend"}}, "removed": []any{}}})

	firstName := filepath.Base(root)
	for _, tt := range []struct{ path, want string }{
		{"backend/pkg/two.txt", "marker in the second root\n"},
		{firstName + "/first.txt", "marker in the first root\n"},
		{"first.txt", "marker in the first root\n"}, // relative to the first root, as before
	} {
		res, _ := c.ToolCall(ctx, "read_file", map[string]any{"path": tt.path})
		if res.Status != tools.StatusSuccess || !strings.Contains(res.Content, strings.TrimSpace(tt.want)) {
			t.Errorf("read_file %s: %+v", tt.path, res)
		}
	}
	// glob over the second root names its files the same way, and each
	// name reads back.
	res, _ := c.ToolCall(ctx, "glob", map[string]any{"pattern": "**/*.txt", "path": "backend"})
	b, _ := json.Marshal(res.Structured)
	var st struct{ Files []string }
	json.Unmarshal(b, &st)
	if len(st.Files) != 1 || st.Files[0] != "backend/pkg/two.txt" {
		t.Fatalf("glob in the added folder = %s", b)
	}
	res, _ = c.ToolCall(ctx, "read_file", map[string]any{"path": st.Files[0]})
	if res.Status != tools.StatusSuccess {
		t.Errorf("read_file of a result path: %+v", res)
	}
	// The model learns the names from get_current_directory.
	res, _ = c.ToolCall(ctx, "get_current_directory", map[string]any{})
	b, _ = json.Marshal(res.Structured)
	var cd struct{ Names []string }
	json.Unmarshal(b, &cd)
	if len(cd.Names) != 2 || cd.Names[0] != firstName || cd.Names[1] != "backend" || !strings.Contains(res.Content, "backend/ = "+second) {
		t.Errorf("get_current_directory = %s\n%s", b, res.Content)
	}
}

// TestSensitiveInEveryRoot attacks the root names: paths.sensitive globs
// are relative to a root, and a result path with the root's name first
// must not slip past an anchored glob, in any root.
func TestSensitiveInEveryRoot(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, nil, map[string]any{"config": map[string]any{"paths": map[string]any{"sensitive": []string{"secrets/**", ".env"}}}})
	second := t.TempDir()
	for _, r := range []string{root, second} {
		os.MkdirAll(filepath.Join(r, "secrets"), 0o755)
		os.WriteFile(filepath.Join(r, "secrets", "key.txt"), []byte("TOPSECRET\n"), 0o644)
		testenv.WriteFiles(t, r, map[string]string{"plain.txt": "not secret\n"})
	}
	c.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": workspace.PathToURI(second), "name": "backend"}}, "removed": []any{}}})
	first := filepath.Base(root)
	for _, dir := range []string{".", first, "backend"} {
		res, _ := c.ToolCall(ctx, "grep", map[string]any{"pattern": "SECRET|secret", "path": dir})
		if strings.Contains(res.Content, "TOPSECRET") || !strings.Contains(res.Content, "not secret") {
			t.Errorf("grep %s: %s", dir, res.Content)
		}
		res, _ = c.ToolCall(ctx, "list_directory", map[string]any{"path": dir, "recursive": true})
		if res.Status != tools.StatusSuccess {
			t.Errorf("list_directory %s: %+v", dir, res)
		} else if strings.Contains(res.Content, "key.txt") {
			t.Errorf("list_directory %s entered a sensitive folder: %s", dir, res.Content)
		}
	}
	for _, p := range []string{"backend/secrets/key.txt", first + "/secrets/key.txt", "secrets/key.txt"} {
		res, _ := c.ToolCall(ctx, "read_file", map[string]any{"path": p})
		if res.Status != tools.StatusError || res.Error.Code != "SENSITIVE_PATH" {
			t.Errorf("read_file %s = %+v", p, res)
		}
	}
}
