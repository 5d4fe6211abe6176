package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

func TestCreateDirectory(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"file.txt": "x"})
	var asked int
	inner := env.Approver
	env.Approver = approverCounting(&asked, inner)
	res := ftCall(t, env, "create_directory", map[string]any{"path": "a/b/c"})
	wantSuccess(t, res)
	if fi, err := os.Stat(filepath.Join(root, "a", "b", "c")); err != nil || !fi.IsDir() {
		t.Fatalf("directory not made: %v", err)
	}
	if asked != 1 {
		t.Errorf("asked %d times, want 1 (create_directory asks)", asked)
	}
	var s EditResult
	decode(t, res, &s)
	if len(s.Files) != 1 || s.Files[0] != "a/b/c" || s.AppliedBy != "server" || s.Diff != "create directory a/b/c/\n" {
		t.Errorf("structured = %+v", s)
	}
	wantError(t, ftCall(t, env, "create_directory", map[string]any{"path": "a/b"}), AlreadyExists, "already exists")
	wantError(t, ftCall(t, env, "create_directory", map[string]any{"path": "file.txt"}), AlreadyExists, "not a directory")
}
