package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/process"
	"github.com/agentls/agentls/workspace"
)

// shellProgress records progress reports with the time they arrived.
type shellProgress struct {
	mu   sync.Mutex
	msgs []string
	// onReport, when set, sees each report as it arrives.
	onReport func(string)
}

func (p *shellProgress) Report(m string, _ int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, m)
	if p.onReport != nil {
		p.onReport(m)
	}
}

func (p *shellProgress) Partial(any) {}

func (p *shellProgress) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.msgs, "")
}

// shellRig is a rig with the shell tools, configured by edit, whose root
// holds a folder sub.
type shellRig struct{ *rig }

func newShellRig(t testing.TB, edit func(*workspace.Config)) *shellRig {
	t.Helper()
	g := &shellRig{newRig(t, "", ShellExec, ShellBackground, ShellOutput, ShellKill, RunCode)}
	g.config(edit)
	if err := os.Mkdir(filepath.Join(g.root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

// call runs a tool under ctx, reporting its progress to p.
func (g *shellRig) call(ctx context.Context, name string, args any, p Progress) *Result {
	g.t.Helper()
	return runTool(g.t, ctx, g.r, g.env, name, args, p)
}

// fields returns a result's structured value as a map.
func fields(t *testing.T, res *Result) map[string]any {
	t.Helper()
	b, _ := json.Marshal(res.Structured)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured of %s: %v (%s)", res.Tool, err, b)
	}
	return m
}

// liveInGroup lists the processes of a process group that are not zombies
// (this machine's init does not always reap orphans).
func liveInGroup(t *testing.T, pgid int) []string {
	t.Helper()
	out, err := exec.Command("ps", "-eo", "pgid=,pid=,stat=,args=").Output()
	if err != nil {
		t.Fatalf("ps: %v", err)
	}
	var live []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != strconv.Itoa(pgid) || strings.HasPrefix(f[2], "Z") {
			continue
		}
		live = append(live, line)
	}
	return live
}

// pgrepF lists the live processes whose command line contains pattern,
// one "pid cmdline" a line.
var pgrepF = testenv.Procs

func TestShellExec(t *testing.T) {
	t.Setenv("AGENTLS_TEST_TOKEN", "hunter2")
	t.Setenv("AGENTLS_TEST_PLAIN", "visible")
	t.Setenv("MY_PRIVATE_STUFF", "hidden")
	g := newShellRig(t, func(c *workspace.Config) { c.Shell.SecretEnv = []string{"MY_PRIVATE_*"} })
	tests := []struct {
		name       string
		args       map[string]any
		status     Status
		code       Code
		exit       float64
		stdout     string
		stderr     string
		contentHas string
	}{
		{"stdout and stderr apart", map[string]any{"command": "echo out; echo err >&2"}, StatusSuccess, "", 0, "out\n", "err\n", "out\n[stderr]\nerr\n"},
		{"exit code", map[string]any{"command": "echo partial; exit 3"}, StatusError, ExecutionError, 3, "partial\n", "", "exited with code 3"},
		{"cwd", map[string]any{"command": "basename $PWD", "cwd": "sub"}, StatusSuccess, "", 0, "sub\n", "", ""},
		{"env argument", map[string]any{"command": `echo "$GREETING"`, "env": map[string]string{"GREETING": "hi"}}, StatusSuccess, "", 0, "hi\n", "", ""},
		{"secrets removed", map[string]any{"command": `echo "[$AGENTLS_TEST_TOKEN][$MY_PRIVATE_STUFF][$AGENTLS_TEST_PLAIN]"`}, StatusSuccess, "", 0, "[][][visible]\n", "", ""},
		{"stdin is empty", map[string]any{"command": "cat; echo done"}, StatusSuccess, "", 0, "done\n", "", ""},
		{"killed by a signal", map[string]any{"command": "kill -9 $$"}, StatusError, ExecutionError, 137, "", "", "SIGKILL"},
		{"cwd outside", map[string]any{"command": "ls", "cwd": "/etc"}, StatusError, InvalidPath, 0, "", "", ""},
		{"cwd missing", map[string]any{"command": "ls", "cwd": "nope"}, StatusError, FileNotFound, 0, "", "", ""},
		{"blocked", map[string]any{"command": "echo hi && rm -rf /"}, StatusError, CommandBlocked, 0, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := g.call(context.Background(), "shell_exec", tt.args, nil)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s: %s", res.Status, tt.status, res.Content)
			}
			if tt.code != "" && (res.Error == nil || res.Error.Code != tt.code) {
				t.Fatalf("error %+v, want code %s", res.Error, tt.code)
			}
			if tt.contentHas != "" && !strings.Contains(res.Content, tt.contentHas) {
				t.Errorf("content %q lacks %q", res.Content, tt.contentHas)
			}
			if tt.code != "" && tt.code != ExecutionError {
				return
			}
			s := fields(t, res)
			for _, k := range []string{"exit_code", "stdout", "stderr", "truncated", "timed_out", "duration_ms"} {
				if _, ok := s[k]; !ok {
					t.Errorf("structured lacks %s: %v", k, s)
				}
			}
			if s["exit_code"] != tt.exit || s["stdout"] != tt.stdout || s["stderr"] != tt.stderr {
				t.Errorf("got exit %v stdout %q stderr %q, want %v %q %q", s["exit_code"], s["stdout"], s["stderr"], tt.exit, tt.stdout, tt.stderr)
			}
		})
	}
}

// TestShellTimeoutLeavesNoProcess: a command that times out is ended with
// every process it started.
func TestShellTimeoutLeavesNoProcess(t *testing.T) {
	t.Parallel()
	g := newShellRig(t, nil)
	marker := fmt.Sprintf("100.%d", time.Now().UnixNano()%1000000)
	// The command must have started for its end to be checked: on a busy
	// machine the shell may not get that far within a second, so the
	// limit grows until it does (each run still ends by its limit).
	var s map[string]any
	for _, ms := range []int{1000, 5000, 20000} {
		res := g.call(context.Background(), "shell_exec", map[string]any{
			"command": "echo started; sleep " + marker + " & sleep " + marker, "timeout_ms": ms}, nil)
		if res.Status != StatusError || res.Error.Code != Timeout {
			t.Fatalf("status %s %+v, want TIMEOUT", res.Status, res.Error)
		}
		if s = fields(t, res); s["stdout"] == "started\n" {
			break
		}
	}
	if s["timed_out"] != true || s["stdout"] != "started\n" {
		t.Errorf("structured %v", s)
	}
	if live := liveInGroup(t, int(s["pid"].(float64))); len(live) > 0 {
		t.Errorf("processes left in the group:\n%s", strings.Join(live, "\n"))
	}
	if left := pgrepF("sleep " + marker); left != "" {
		t.Errorf("sleep left behind:\n%s", left)
	}
}

// TestShellCancel: a cancelled call is answered as cancelled and its processes
// are killed.
func TestShellCancel(t *testing.T) {
	t.Parallel()
	g := newShellRig(t, nil)
	marker := fmt.Sprintf("200.%d", time.Now().UnixNano()%1000000)
	ctx, cancel := context.WithCancel(context.Background())
	p := &shellProgress{}
	go func() {
		for !strings.Contains(p.text(), "ready") {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	// Uncancelled, the command would run for 200 seconds and print never.
	res := g.call(ctx, "shell_exec", map[string]any{"command": "echo ready; sleep " + marker + " & sleep " + marker + "; echo never"}, p)
	if res.Status != StatusCancelled || strings.Contains(p.text(), "never") {
		t.Fatalf("status %s, want cancelled: %s", res.Status, res.Content)
	}
	if left := pgrepF("sleep " + marker); left != "" {
		time.Sleep(200 * time.Millisecond)
		if left := pgrepF("sleep " + marker); left != "" {
			t.Errorf("sleep left behind:\n%s", left)
		}
	}
}

// TestShellStreams: output arrives as progress reports while the command
// runs: the command goes on only once the test saw its
// first line reported (it waits for a file the report creates), so output
// held back to the end makes the call time out.
func TestShellStreams(t *testing.T) {
	t.Parallel()
	g := newShellRig(t, nil)
	flag := filepath.Join(g.root, "streamed")
	p := &shellProgress{onReport: func(m string) {
		if strings.Contains(m, "one") {
			_ = os.WriteFile(flag, nil, 0o644)
		}
	}}
	res := g.call(context.Background(), "shell_exec", map[string]any{"timeout_ms": 60000,
		"command": "echo one; while [ ! -e streamed ]; do sleep 0.05; done; echo two >&2"}, p)
	p.mu.Lock()
	defer p.mu.Unlock()
	if res.Status != StatusSuccess {
		t.Fatalf("status %s: %s (reports %q)", res.Status, res.Content, p.msgs)
	}
	if len(p.msgs) < 2 || p.msgs[0] != "one\n" {
		t.Fatalf("reports %q", p.msgs)
	}
}

// TestShellLargeOutput: several MB are cut to head and tail with a marker,
// and every byte can be read back by range.
func TestShellLargeOutput(t *testing.T) {
	t.Parallel()
	g := newShellRig(t, func(c *workspace.Config) { c.Shell.MaxOutputBytes = 64 << 10 })
	var want strings.Builder
	for i := 1; i <= 500000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	p := &shellProgress{}
	res := g.call(context.Background(), "shell_exec", map[string]any{"command": "seq 1 500000; echo tail-of-stderr >&2"}, p)
	if res.Status != StatusSuccess {
		t.Fatalf("status %s: %.300s", res.Status, res.Content)
	}
	s := fields(t, res)
	stdout := s["stdout"].(string)
	if s["truncated"] != true || int(s["stdout_bytes"].(float64)) != want.Len() {
		t.Fatalf("truncated %v, stdout_bytes %v, want true and %d", s["truncated"], s["stdout_bytes"], want.Len())
	}
	if len(stdout) > 70<<10 {
		t.Errorf("stdout kept %d bytes", len(stdout))
	}
	if !strings.HasPrefix(stdout, "1\n2\n3\n") || !strings.HasSuffix(stdout, "499999\n500000\n") {
		t.Errorf("head or tail missing: %.40q … %q", stdout, stdout[len(stdout)-40:])
	}
	m := regexp.MustCompile(`\[… (\d+) bytes cut \(bytes (\d+) to (\d+) of (\d+)\); read them with shell_output (\{.*\}) …\]`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no marker in %.200q", stdout[30<<10:34<<10])
	}
	var margs map[string]any
	if err := json.Unmarshal([]byte(m[5]), &margs); err != nil {
		t.Fatalf("marker arguments %s: %v", m[5], err)
	}
	from, _ := strconv.Atoi(m[2])
	to, _ := strconv.Atoi(m[3])
	// Read the cut part back, in pieces.
	var got strings.Builder
	since := from
	for since < to {
		margs["since"], margs["max_bytes"] = since, min(1<<20, to-since)
		r := g.call(context.Background(), "shell_output", margs, nil)
		if r.Status != StatusSuccess {
			t.Fatalf("shell_output: %s", r.Content)
		}
		o := fields(t, r)
		got.WriteString(o["output"].(string))
		since = int(o["next_offset"].(float64))
		if o["running"] != false {
			t.Error("a finished shell reads as running")
		}
	}
	if got.String() != want.String()[from:to] {
		t.Errorf("the range read back differs from the output (%d bytes, want %d)", got.Len(), to-from)
	}
	// The streamed progress stopped at a cap, with a note.
	if pt := p.text(); len(pt) > 5*(64<<10) || !strings.Contains(pt, "no more progress") {
		t.Errorf("progress streamed %d bytes", len(pt))
	}
	// stderr is kept apart; the combined stream holds both (interleaved as
	// the two pipes were read).
	r := g.call(context.Background(), "shell_output", map[string]any{"id": margs["id"], "stream": "stderr"}, nil)
	if o := fields(t, r); o["output"] != "tail-of-stderr\n" {
		t.Errorf("stderr %q", o["output"])
	}
	r = g.call(context.Background(), "shell_output", map[string]any{"id": margs["id"], "max_bytes": 1}, nil)
	if o := fields(t, r); int(o["total_bytes"].(float64)) != want.Len()+len("tail-of-stderr\n") {
		t.Errorf("combined holds %v bytes", o["total_bytes"])
	}
}

// TestShellPolicy: the command policy decides through the pipeline.
func TestShellPolicy(t *testing.T) {
	t.Parallel()
	g := newShellRig(t, func(c *workspace.Config) { c.Shell.Allow = []string{"echo", "ls"}; c.Shell.Deny = []string{"curl"} })
	g.env.Approver = approval.Fixed(approval.Reject, "no")
	tests := []struct {
		cmd    string
		env    map[string]string
		status Status
		by     string
	}{
		{"echo hi && ls", nil, StatusSuccess, "config"},
		{"echo hi && touch x", nil, StatusRejected, "none"},
		{"echo $(curl x)", nil, StatusError, "none"},
		{"echo hi", map[string]string{"LD_PRELOAD": "/tmp/x.so"}, StatusRejected, "none"},
		{"ls", map[string]string{"XDG_CONFIG_HOME": "cfg"}, StatusRejected, "none"},
		{"echo $((X))", map[string]string{"X": "a[$(touch x)]"}, StatusRejected, "none"},
		{"cat .env", nil, StatusRejected, "none"},
	}
	for _, tt := range tests {
		args := map[string]any{"command": tt.cmd}
		if tt.env != nil {
			args["env"] = tt.env
		}
		res := g.call(context.Background(), "shell_exec", args, nil)
		if res.Status != tt.status || res.ApprovedBy != tt.by {
			t.Errorf("%q: status %s by %s, want %s by %s (%s)", tt.cmd, res.Status, res.ApprovedBy, tt.status, tt.by, res.Content)
		}
	}
	if _, err := os.Stat(filepath.Join(g.root, "x")); err == nil {
		t.Error("a rejected command ran")
	}
	// "always" is remembered for the command's prefix, not the tool.
	g.env.Approver = approval.Fixed(approval.Always, "")
	if res := g.call(context.Background(), "shell_exec", map[string]any{"command": "date -u"}, nil); res.Status != StatusSuccess {
		t.Fatalf("always: %s", res.Content)
	}
	g.env.Approver = approval.Fixed(approval.Reject, "no")
	if res := g.call(context.Background(), "shell_exec", map[string]any{"command": "date -u"}, nil); res.ApprovedBy != "always" {
		t.Errorf("remembered prefix: approved by %s (%s)", res.ApprovedBy, res.Content)
	}
	if res := g.call(context.Background(), "shell_exec", map[string]any{"command": "touch y"}, nil); res.Status != StatusRejected {
		t.Errorf("always covered another command: %s", res.Status)
	}
}

// TestShellSetsidEscape: a process that leaves the process group (setsid)
// still ends with the call where the machine gives a cgroup.
func TestShellSetsidEscape(t *testing.T) {
	// Not parallel: it counts the process's cgroups.
	if g := process.NewCgroup(0, 0); g == nil {
		t.Skip("no pids cgroup here: only the process group is ended")
	} else {
		g.Remove()
	}
	g := newShellRig(t, nil)
	marker := fmt.Sprintf("500.%d", time.Now().UnixNano()%1000000)
	res := g.call(context.Background(), "shell_exec", map[string]any{"command": "setsid sleep " + marker + " >/dev/null 2>&1 & sleep 0.2; echo done"}, nil)
	if res.Status != StatusSuccess {
		t.Fatalf("%s: %s", res.Status, res.Content)
	}
	if left := pgrepF("sleep " + marker); left != "" {
		t.Errorf("escaped process left behind:\n%s", left)
	}
	if dirs := process.Cgroups(); len(dirs) > 0 {
		t.Errorf("cgroups left: %v", dirs)
	}
}

// TestRunArgv: programs run without a shell get the same handling.
func TestRunArgv(t *testing.T) {
	t.Parallel()
	g := newShellRig(t, nil)
	c := &Call{Ctx: context.Background(), Workspace: g.env.Workspace, Session: g.env.Session, Progress: &shellProgress{}}
	res, err := RunArgv(c, []string{"printf", "%s|", "a b", "$HOME", ";rm x"}, g.root, nil, 5*time.Second)
	if err != nil || res.Status != StatusSuccess {
		t.Fatalf("%v %+v", err, res)
	}
	if s := fields(t, res); s["stdout"] != "a b|$HOME|;rm x|" {
		t.Errorf("stdout %q", s["stdout"])
	}
	res, err = RunArgv(c, []string{"sh", "-c", "sleep 5"}, g.root, nil, 200*time.Millisecond)
	if err != nil || res.Error == nil || res.Error.Code != Timeout {
		t.Errorf("timeout: %v %+v", err, res)
	}
}

// TestShellBinaryOutput: binary output is described, not dumped, and can be
// read back.
func TestShellBinaryOutput(t *testing.T) {
	t.Parallel()
	g := newShellRig(t, nil)
	res := g.call(context.Background(), "shell_exec", map[string]any{"command": `printf 'a\000b\377'`}, nil)
	s := fields(t, res)
	if !strings.HasPrefix(s["stdout"].(string), "[4 bytes of binary output, not shown") {
		t.Fatalf("stdout %q", s["stdout"])
	}
	r := g.call(context.Background(), "shell_output", map[string]any{"id": s["id"], "stream": "stdout", "encoding": "base64"}, nil)
	if o := fields(t, r); o["output"] != "YQBi/w==" {
		t.Errorf("read back: %v", o)
	}
}
