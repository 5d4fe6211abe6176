package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
)

func TestDeleteFile(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"a.txt": "bye\n", "dir/x.txt": "x\n", "dir/sub/y.txt": "y\n"})
	os.Mkdir(filepath.Join(root, "emptydir"), 0o755)
	os.Symlink("a.txt", filepath.Join(root, "link"))
	var reqs []approval.Request
	env.Approver = approval.ApproverFunc(func(_ context.Context, r approval.Request) (approval.Response, error) {
		reqs = append(reqs, r)
		return approval.Response{Decision: approval.Approve}, nil
	})
	// A link goes, its target stays.
	wantSuccess(t, ftCall(t, env, "delete_file", map[string]any{"path": "link"}))
	if _, err := os.Lstat(filepath.Join(root, "link")); !os.IsNotExist(err) || ftRead(t, root, "a.txt") != "bye\n" {
		t.Errorf("link not deleted or target touched: %v", err)
	}
	res := ftCall(t, env, "delete_file", map[string]any{"path": "a.txt"})
	wantSuccess(t, res)
	if ftRead(t, root, "a.txt") != "<absent>" {
		t.Error("a.txt still there")
	}
	r := reqs[len(reqs)-1]
	if r.Risk != approval.RiskDangerous || r.Preview == nil || r.Preview.Files[0].OldText == nil || *r.Preview.Files[0].OldText != "bye\n" {
		t.Errorf("approval request = %+v", r)
	}
	wantError(t, ftCall(t, env, "delete_file", map[string]any{"path": "dir"}), NotAFile, "recursive: true")
	wantError(t, ftCall(t, env, "delete_file", map[string]any{"path": "emptydir"}), NotAFile, "recursive: true")
	wantSuccess(t, ftCall(t, env, "delete_file", map[string]any{"path": "dir", "recursive": true}))
	if r := reqs[len(reqs)-1]; r.Warning != "deletes the directory dir and everything in it" || r.Preview.UnifiedDiff != "delete directory dir/ (recursively)\n" {
		t.Errorf("recursive delete request: warning %q, diff %q", r.Warning, r.Preview.UnifiedDiff)
	}
	if _, err := os.Stat(filepath.Join(root, "dir")); !os.IsNotExist(err) {
		t.Errorf("dir still there: %v", err)
	}
	wantError(t, ftCall(t, env, "delete_file", map[string]any{"path": "gone.txt"}), FileNotFound)
	// Rejected: nothing deleted.
	testenv.WriteFiles(t, root, map[string]string{"keep.txt": "k"})
	env.Approver = approval.ApproverFunc(func(context.Context, approval.Request) (approval.Response, error) {
		return approval.Response{Decision: approval.Reject, Message: "no"}, nil
	})
	if res := ftCall(t, env, "delete_file", map[string]any{"path": "keep.txt"}); res.Status != StatusRejected || ftRead(t, root, "keep.txt") != "k" {
		t.Errorf("rejected delete: %s, file %q", res.Status, ftRead(t, root, "keep.txt"))
	}
	// Dangerous: asks even in yolo mode.
	cfg := *env.Workspace.Config()
	cfg.Approval.Mode = "yolo"
	env.Workspace.SetConfig(&cfg)
	if res := ftCall(t, env, "delete_file", map[string]any{"path": "keep.txt"}); res.Status != StatusRejected {
		t.Errorf("yolo delete_file did not ask: %s", res.Status)
	}
}

// TestDeleteSeesHiddenIgnoredSensitive: the check before a recursive delete
// walks beneath the root with hidden, ignored and .git entries included, so
// a sensitive file the ignore rules hide still refuses the delete.
func TestDeleteSeesHiddenIgnoredSensitive(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{
		"d/.gitignore":         ".aws/\n",
		"d/sub/.aws/config":    "k",
		"e/.git/id_rsa.backup": "k",
		"f/plain.txt":          "ok",
	})
	for _, dir := range []string{"d", "e"} {
		wantError(t, ftCall(t, env, "delete_file", map[string]any{"path": dir, "recursive": true}), SensitivePath)
	}
	wantSuccess(t, ftCall(t, env, "delete_file", map[string]any{"path": "f", "recursive": true}))
	if ftRead(t, root, "d/sub/.aws/config") != "k" || ftRead(t, root, "e/.git/id_rsa.backup") != "k" {
		t.Fatal("a refused delete removed files")
	}
}
