package tools

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

func TestMoveFile(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"a.txt": "A\n", "b.txt": "B\n", "dir/x.txt": "x\n", "other/": ""})
	var asked int
	env.Approver = approverCounting(&asked, env.Approver)

	// A move to a new path asks in safe mode (every change is seen first),
	// parents are made.
	res := ftCall(t, env, "move_file", map[string]any{"from": "a.txt", "to": "new/place/a2.txt"})
	wantSuccess(t, res)
	if asked != 1 || ftRead(t, root, "new/place/a2.txt") != "A\n" || ftRead(t, root, "a.txt") != "<absent>" {
		t.Errorf("asked %d; moved %q; old %q", asked, ftRead(t, root, "new/place/a2.txt"), ftRead(t, root, "a.txt"))
	}
	if res.ApprovedBy != "user" {
		t.Errorf("approvedBy = %s", res.ApprovedBy)
	}
	var s EditResult
	decode(t, res, &s)
	if s.Diff != "rename a.txt → new/place/a2.txt\n" {
		t.Errorf("diff = %q", s.Diff)
	}
	// Onto an existing file: refused without overwrite, asks with it.
	wantError(t, ftCall(t, env, "move_file", map[string]any{"from": "b.txt", "to": "new/place/a2.txt"}), AlreadyExists, "overwrite: true")
	wantSuccess(t, ftCall(t, env, "move_file", map[string]any{"from": "b.txt", "to": "new/place/a2.txt", "overwrite": true}))
	if asked != 2 || ftRead(t, root, "new/place/a2.txt") != "B\n" || ftRead(t, root, "b.txt") != "<absent>" {
		t.Errorf("overwrite: asked %d, content %q", asked, ftRead(t, root, "new/place/a2.txt"))
	}
	// Directories.
	wantSuccess(t, ftCall(t, env, "move_file", map[string]any{"from": "dir", "to": "dir2"}))
	if ftRead(t, root, "dir2/x.txt") != "x\n" {
		t.Error("directory not moved")
	}
	wantError(t, ftCall(t, env, "move_file", map[string]any{"from": "dir2", "to": "dir2/inside"}), InvalidParams, "into itself")
	os.Mkdir(filepath.Join(root, "target"), 0o755)
	wantError(t, ftCall(t, env, "move_file", map[string]any{"from": "dir2/x.txt", "to": "target", "overwrite": true}), AlreadyExists, "target/x.txt")
	wantError(t, ftCall(t, env, "move_file", map[string]any{"from": "dir2", "to": "new/place/a2.txt", "overwrite": true}), AlreadyExists, "directory cannot replace")
	wantError(t, ftCall(t, env, "move_file", map[string]any{"from": "nope", "to": "x"}), FileNotFound)
	wantError(t, ftCall(t, env, "move_file", map[string]any{"from": "dir2", "to": "./dir2"}), InvalidParams, "same path")
}

// TestMoveFileEventNamesBothPaths: a move's fileChanged event says where
// the file was and where it is.
func TestMoveFileEventNamesBothPaths(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"a.txt": "x\n"})
	var mu sync.Mutex
	var changed []Event
	env.Events = EventsFunc(func(e Event) {
		if e.Kind == "fileChanged" {
			mu.Lock()
			changed = append(changed, e)
			mu.Unlock()
		}
	})
	wantSuccess(t, ftCall(t, env, "move_file", map[string]any{"from": "a.txt", "to": "d/b.txt"}))
	mu.Lock()
	defer mu.Unlock()
	if len(changed) != 1 || changed[0].Operation != "rename" || changed[0].OldPath != "a.txt" || changed[0].Path != "d/b.txt" {
		t.Errorf("fileChanged events = %+v, want one rename from a.txt to d/b.txt", changed)
	}
}
