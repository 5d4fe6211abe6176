//go:build linux

package tools

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/workspace"
)

// plantedScript is what a repository could hold and an allow-listed
// "python3 escape.py" would run: it writes outside the workspace and
// connects to a listener of the host, both named in target.txt (so that
// the command line names no outside path, which would make it ask).
const plantedScript = `import socket
outside, port = open("target.txt").read().split()
try:
    open(outside, "w").write("escaped")
    print("wrote outside")
except OSError as e:
    print("write refused:", e)
try:
    socket.create_connection(("127.0.0.1", int(port)), timeout=2)
    print("connected")
except OSError as e:
    print("connect refused:", e)
open("inside.txt", "w").write("in")
`

// TestAllowListedCommandIsSandboxed: a mistake in the allow list (python3
// allowed, so any script of the repository runs without a person) cannot
// reach outside the workspace nor the network; shell.allowNetwork gives
// the network back; approved commands and shell.sandboxAuto false run as
// before, outside any sandbox.
func TestAllowListedCommandIsSandboxed(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	needInterpreter(t, "python3")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	testenv.AcceptEach(l, func(c net.Conn) { c.Close() })
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	tests := []struct {
		name      string
		edit      func(*workspace.Config)
		answer    string // what the person answers when asked
		by        string
		sandboxed bool
		outside   bool // the write outside lands
		network   bool
	}{
		{"allow-listed", func(c *workspace.Config) { c.Shell.Allow = []string{"python3"} }, approval.Reject, "config", true, false, false},
		{"allow-listed with allowNetwork", func(c *workspace.Config) {
			c.Shell.Allow, c.Shell.AllowNetwork = []string{"python3"}, []string{"python3 escape.py"}
		}, approval.Reject, "config", true, false, true},
		{"allowNetwork covers another command", func(c *workspace.Config) {
			c.Shell.Allow, c.Shell.AllowNetwork = []string{"python3"}, []string{"curl"}
		}, approval.Reject, "config", true, false, false},
		{"yolo mode", func(c *workspace.Config) { c.Approval.Mode = "yolo" }, approval.Reject, "auto", true, false, false},
		{"sandboxAuto off", func(c *workspace.Config) {
			c.Shell.Allow, c.Shell.SandboxAuto = []string{"python3"}, false
		}, approval.Reject, "config", false, true, true},
		{"approved by the person", nil, approval.Approve, "user", false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newShellRig(t, tt.edit)
			g.env.Approver = approval.Fixed(tt.answer, "")
			if err := os.WriteFile(filepath.Join(g.root, "escape.py"), []byte(plantedScript), 0o644); err != nil {
				t.Fatal(err)
			}
			outside := filepath.Join(t.TempDir(), "escaped.txt")
			if err := os.WriteFile(filepath.Join(g.root, "target.txt"), []byte(outside+" "+port), 0o644); err != nil {
				t.Fatal(err)
			}
			res := g.call(context.Background(), "shell_exec", map[string]any{"command": "python3 escape.py"}, nil)
			if res.Status != StatusSuccess || res.ApprovedBy != tt.by {
				t.Fatalf("status %s by %s, want success by %s: %s", res.Status, res.ApprovedBy, tt.by, res.Content)
			}
			s := fields(t, res)
			out := s["stdout"].(string)
			if _, ok := s["sandbox"]; ok != tt.sandboxed {
				t.Errorf("sandbox in the result: %v, want %v", s["sandbox"], tt.sandboxed)
			}
			_, err := os.Stat(outside)
			if landed := err == nil; landed != tt.outside {
				t.Errorf("write outside landed: %v, want %v (%s)", landed, tt.outside, out)
			}
			if got := strings.Contains(out, "connected\n"); got != tt.network {
				t.Errorf("network: %v, want %v (%s)", got, tt.network, out)
			}
			if b, err := os.ReadFile(filepath.Join(g.root, "inside.txt")); err != nil || string(b) != "in" {
				t.Errorf("the workspace was not writable: %q %v", b, err)
			}
		})
	}
}

// TestAllowListedBackgroundIsSandboxed: shell_background of an
// allow-listed command runs in the same sandbox.
func TestAllowListedBackgroundIsSandboxed(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	g := newShellRig(t, func(c *workspace.Config) { c.Shell.Allow = []string{"bash escape.sh"} })
	g.env.Approver = approval.Fixed(approval.Reject, "")
	outside := filepath.Join(t.TempDir(), "escaped.txt")
	script := fmt.Sprintf("{ echo x > %s; } 2>/dev/null || echo refused; ls /root >/dev/null 2>&1 || echo nohome; touch inside.txt\n", outside)
	if err := os.WriteFile(filepath.Join(g.root, "escape.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	res := g.call(context.Background(), "shell_background", map[string]any{"command": "bash escape.sh"}, nil)
	if res.Status != StatusSuccess || res.ApprovedBy != "config" {
		t.Fatalf("%s by %s: %s", res.Status, res.ApprovedBy, res.Content)
	}
	s := fields(t, res)
	if _, ok := s["sandbox"]; !ok {
		t.Errorf("no sandbox in the result: %v", s)
	}
	out := g.call(context.Background(), "shell_output", map[string]any{"id": s["id"], "wait_ms": 10000}, nil)
	for i := 0; i < 100 && fields(t, out)["running"] == true; i++ {
		time.Sleep(50 * time.Millisecond)
		out = g.call(context.Background(), "shell_output", map[string]any{"id": s["id"]}, nil)
	}
	if o := fields(t, out)["output"]; o != "refused\nnohome\n" {
		t.Errorf("output %q", o)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the background command wrote outside the workspace")
	}
	if _, err := os.Stat(filepath.Join(g.root, "inside.txt")); err != nil {
		t.Errorf("the workspace was not writable: %v", err)
	}
}

// TestAllowListedWithoutBwrap: without bwrap an allow-listed command asks
// instead of running unsandboxed (the person rejects here), and in yolo
// mode, where nobody is asked, it is refused with NOT_CONFIGURED.
func TestAllowListedWithoutBwrap(t *testing.T) {
	bin := t.TempDir()
	for _, p := range []string{"bash", "sh", "true"} {
		if path, err := sandbox.SystemProgram(p); err == nil {
			if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("PATH", bin)
	g := newShellRig(t, func(c *workspace.Config) { c.Shell.Allow = []string{"true"} })
	g.env.Approver = approval.Fixed(approval.Reject, "")
	if res := g.call(context.Background(), "shell_exec", map[string]any{"command": "true"}, nil); res.Status != StatusRejected {
		t.Errorf("allow-listed without bwrap: %s by %s, want it to ask (and be rejected): %s", res.Status, res.ApprovedBy, res.Content)
	}
	g = newShellRig(t, func(c *workspace.Config) { c.Approval.Mode = "yolo" })
	res := g.call(context.Background(), "shell_exec", map[string]any{"command": "true"}, nil)
	if res.Status != StatusError || res.Error.Code != NotConfigured || !strings.Contains(res.Error.Message, "bubblewrap") {
		t.Errorf("yolo without bwrap: %s %+v", res.Status, res.Error)
	}
	g = newShellRig(t, func(c *workspace.Config) { c.Approval.Mode, c.Shell.SandboxAuto = "yolo", false })
	if res := g.call(context.Background(), "shell_exec", map[string]any{"command": "true"}, nil); res.Status != StatusSuccess {
		t.Errorf("yolo without bwrap and sandboxAuto off: %s %s", res.Status, res.Content)
	}
}

// TestTimeoutKillsEscapedChildren: at the timeout, children that left the
// process group (setsid, a double fork) and, as root, the pids cgroup
// still end. The command is an approved one, which sees /sys (an
// allow-listed one runs in the sandbox, where there is no cgroup file
// system to leave by).
func TestTimeoutKillsEscapedChildren(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	g := newShellRig(t, nil)
	token := fmt.Sprintf("%d.%04d", 5000+rand.IntN(4000), rand.IntN(10000))
	cmd := fmt.Sprintf(`setsid sleep %[1]s1 </dev/null >/dev/null 2>&1 &
( ( sleep %[1]s2 </dev/null >/dev/null 2>&1 & ) & )
sh -c 'echo $$ > /sys/fs/cgroup/pids/cgroup.procs 2>/dev/null; exec setsid sleep %[1]s3' </dev/null >/dev/null 2>&1 &
sleep %[1]s4`, token)
	done := make(chan *Result, 1)
	go func() {
		done <- g.call(context.Background(), "shell_exec", map[string]any{"command": cmd, "timeout_ms": 5000}, nil)
	}()
	defer testenv.KillSleeps(token)
	started := 0
	var res *Result
wait:
	for {
		started = max(started, len(testenv.SleepPids(token)))
		select {
		case res = <-done:
			break wait
		case <-time.After(25 * time.Millisecond):
		}
	}
	if started < 4 {
		t.Fatalf("only %d of 4 sleeps were seen before the timeout (a slow machine?): %s", started, res.Content)
	}
	if res.Error == nil || res.Error.Code != Timeout {
		t.Fatalf("want TIMEOUT: %s %+v", res.Status, res.Error)
	}
	testenv.Eventually(5*time.Second, func() bool { return len(testenv.SleepPids(token)) == 0 })
	if left := testenv.SleepPids(token); len(left) > 0 {
		out, _ := exec.Command("ps", "-o", "pid,pgid,sid,cmd", "-p", fmt.Sprint(left[0])).CombinedOutput()
		t.Errorf("escaped children left: %v\n%s", left, out)
	}
}

// BenchmarkShellExecSandbox measures what bwrap adds to a command that
// does nothing: plain (no bwrap on PATH), in a pid namespace (an approved
// command) and in the isolating sandbox (an allow-listed one).
func BenchmarkShellExecSandbox(b *testing.B) {
	if _, err := sandbox.Find(); err != nil {
		b.Skip(err)
	}
	for _, bb := range []struct {
		name  string
		allow []string
		plain bool
	}{{"plain", nil, true}, {"lifetime", nil, false}, {"isolate", []string{"true"}, false}} {
		b.Run(bb.name, func(b *testing.B) {
			if bb.plain {
				bin := b.TempDir()
				for _, p := range []string{"bash", "sh", "true"} {
					if path, err := sandbox.SystemProgram(p); err == nil {
						os.Symlink(path, filepath.Join(bin, p))
					}
				}
				b.Setenv("PATH", bin)
			}
			g := newShellRig(b, func(c *workspace.Config) { c.Shell.Allow = bb.allow })
			for b.Loop() {
				if res := g.call(context.Background(), "shell_exec", map[string]any{"command": "true"}, nil); res.Status != StatusSuccess {
					b.Fatal(res.Content)
				}
			}
		})
	}
}
