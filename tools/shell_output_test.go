package tools

import (
	"context"
	"testing"
)

// TestShellWaitSeesExit: shell_output waiting on a shell returns when it
// exits, with its exit code (a wait blind to the exit would hold the test
// for the whole wait_ms, the longest allowed).
func TestShellWaitSeesExit(t *testing.T) {
	g := newShellRig(t, nil)
	res := g.call(context.Background(), "shell_background", map[string]any{"command": "sleep 0.3; exit 7"}, nil)
	id := fields(t, res)["id"]
	r := g.call(context.Background(), "shell_output", map[string]any{"id": id, "wait_ms": 300000}, nil)
	if o := fields(t, r); o["running"] != false || o["exit_code"] != 7.0 {
		t.Errorf("after the wait: %v", o)
	}
}
