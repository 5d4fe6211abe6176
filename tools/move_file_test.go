package tools

import (
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

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
