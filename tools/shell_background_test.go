package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
)

func TestShellBackground(t *testing.T) {
	g := newShellRig(t, nil)
	marker := fmt.Sprintf("300.%d", time.Now().UnixNano()%1000000)
	res := g.call(context.Background(), "shell_background", map[string]any{
		"command": "for i in 1 2 3; do echo line$i; sleep 0.2; done; echo oops >&2; sleep " + marker + " & sleep " + marker}, nil)
	if res.Status != StatusSuccess {
		t.Fatalf("shell_background: %s", res.Content)
	}
	s := fields(t, res)
	id, _ := s["id"].(string)
	if !strings.HasPrefix(id, "sh_") {
		t.Fatalf("id %q", id)
	}
	// Read until the three lines and the stderr line have arrived.
	var out strings.Builder
	since := 0.0
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "oops") && time.Now().Before(deadline) {
		r := g.call(context.Background(), "shell_output", map[string]any{"id": id, "since": since, "wait_ms": 2000}, nil)
		if r.Status != StatusSuccess {
			t.Fatalf("shell_output: %s", r.Content)
		}
		o := fields(t, r)
		out.WriteString(o["output"].(string))
		since = o["next_offset"].(float64)
		if o["running"] != true {
			t.Fatalf("ended early: %v", o)
		}
	}
	if out.String() != "line1\nline2\nline3\noops\n" {
		t.Errorf("combined output %q", out.String())
	}
	// Waiting with nothing new returns after wait_ms with no output, the
	// shell still running and the offset unchanged.
	r := g.call(context.Background(), "shell_output", map[string]any{"id": id, "since": since, "wait_ms": 300}, nil)
	if o := fields(t, r); o["output"] != "" || o["running"] != true || o["next_offset"] != since {
		t.Errorf("empty wait: %v", o)
	}
	// The stdout stream alone.
	r = g.call(context.Background(), "shell_output", map[string]any{"id": id, "stream": "stdout"}, nil)
	if o := fields(t, r); o["output"] != "line1\nline2\nline3\n" {
		t.Errorf("stdout %q", o["output"])
	}
	// shell_kill ends the whole group.
	r = g.call(context.Background(), "shell_kill", map[string]any{"id": id}, nil)
	if o := fields(t, r); r.Status != StatusSuccess || o["killed"] != true {
		t.Fatalf("shell_kill: %s", r.Content)
	}
	if left := pgrepF("sleep " + marker); left != "" {
		t.Errorf("sleep left behind:\n%s", left)
	}
	if live := liveInGroup(t, int(s["pid"].(float64))); len(live) > 0 {
		t.Errorf("group left:\n%s", strings.Join(live, "\n"))
	}
	r = g.call(context.Background(), "shell_output", map[string]any{"id": id, "since": since}, nil)
	if o := fields(t, r); o["running"] != false || o["exit_code"] == nil {
		t.Errorf("after kill: %v", o)
	}
	r = g.call(context.Background(), "shell_kill", map[string]any{"id": id}, nil)
	if o := fields(t, r); o["killed"] != false {
		t.Errorf("second kill: %v", o)
	}
	r = g.call(context.Background(), "shell_output", map[string]any{"id": "sh_999"}, nil)
	if r.Status != StatusError || r.Error.Code != InvalidParams {
		t.Errorf("unknown id: %s %+v", r.Status, r.Error)
	}
}

// TestShellCloseSession: background shells end with the session, and the
// session starts no more.
func TestShellCloseSession(t *testing.T) {
	g := newShellRig(t, nil)
	marker := fmt.Sprintf("400.%d", time.Now().UnixNano()%1000000)
	var pids []int
	for range 3 {
		res := g.call(context.Background(), "shell_background", map[string]any{"command": "sleep " + marker + " & sleep " + marker}, nil)
		if res.Status != StatusSuccess {
			t.Fatalf("shell_background: %s", res.Content)
		}
		pids = append(pids, int(fields(t, res)["pid"].(float64)))
	}
	// Wait for all six sleeps (two a shell), so that Close has something
	// to end; the deadline only guards against a hang.
	if !testenv.Eventually(30*time.Second, func() bool { return len(testenv.SleepPids(marker)) == 6 }) {
		t.Fatalf("the background shells did not start their six sleeps:\n%s", pgrepF("sleep "+marker))
	}
	g.env.Session.Close()
	if left := pgrepF("sleep " + marker); left != "" {
		t.Errorf("left behind:\n%s", left)
	}
	for _, pid := range pids {
		if live := liveInGroup(t, pid); len(live) > 0 {
			t.Errorf("group %d left:\n%s", pid, strings.Join(live, "\n"))
		}
	}
	res := g.call(context.Background(), "shell_background", map[string]any{"command": "true"}, nil)
	if res.Status == StatusSuccess {
		t.Error("a closed session started a shell")
	} else if res.Error == nil || res.Error.Code != Cancelled {
		t.Errorf("a closed session: %s %+v, want CANCELLED", res.Status, res.Error)
	}
	g.env.Session.Close() // twice is harmless
}

// TestShellBackgroundNeedsApproval: shell_background is judged like
// shell_exec.
func TestShellBackgroundNeedsApproval(t *testing.T) {
	g := newShellRig(t, func(c *workspace.Config) { c.Shell.Deny = []string{"nc"} })
	res := g.call(context.Background(), "shell_background", map[string]any{"command": "sleep 1; nc -l 9999"}, nil)
	if res.Status != StatusError || res.Error.Code != CommandBlocked {
		t.Errorf("denied program: %s %+v", res.Status, res.Error)
	}
}

// TestShellConcurrent: calls of one session run at once, each with its own
// output and id.
func TestShellConcurrent(t *testing.T) {
	g := newShellRig(t, nil)
	const n = 8
	results := make([]*Result, n)
	done := make(chan int)
	for i := range n {
		go func() {
			results[i] = g.call(context.Background(), "shell_exec", map[string]any{"command": fmt.Sprintf("sleep 0.2; echo call%d", i)}, nil)
			done <- i
		}()
	}
	for range n {
		<-done
	}
	ids := map[any]bool{}
	for i, res := range results {
		s := fields(t, res)
		if res.Status != StatusSuccess || s["stdout"] != fmt.Sprintf("call%d\n", i) {
			t.Errorf("call %d: %s %v", i, res.Status, s["stdout"])
		}
		ids[s["id"]] = true
	}
	if len(ids) != n {
		t.Errorf("ids %v", ids)
	}
	r := g.call(context.Background(), "shell_output", map[string]any{"id": "sh_1", "since": 999}, nil)
	if r.Status != StatusError || r.Error.Code != InvalidParams {
		t.Errorf("since past the end: %s %+v", r.Status, r.Error)
	}
}
