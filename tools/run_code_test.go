package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/process"
)

func needInterpreter(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err == nil {
			return
		}
	}
	t.Skipf("no %s on PATH", strings.Join(names, " or "))
}

func TestRunCode(t *testing.T) {
	t.Parallel()
	g := newShellRig(t, nil)
	if err := os.WriteFile(filepath.Join(g.root, "sub", "data.txt"), []byte("from the workspace\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		interp string
		args   map[string]any
		status Status
		stdout string
		exit   float64
	}{
		{"python args", "python3", map[string]any{"language": "python", "code": "import sys\nprint(sys.argv[1:])", "args": []string{"a b", "$HOME"}},
			StatusSuccess, "['a b', '$HOME']\n", 0},
		{"python cwd", "python3", map[string]any{"language": "python", "code": "print(open('data.txt').read(), end='')", "cwd": "sub"},
			StatusSuccess, "from the workspace\n", 0},
		{"python exit", "python3", map[string]any{"language": "python", "code": "import sys\nprint('x')\nsys.exit(4)"},
			StatusError, "x\n", 4},
		{"bash", "bash", map[string]any{"language": "bash", "code": "echo \"$1-$2\"; echo $GREETING", "args": []string{"a", "b"}, "env": map[string]string{"GREETING": "hi"}},
			StatusSuccess, "a-b\nhi\n", 0},
		{"node", "node", map[string]any{"language": "node", "code": "console.log(process.argv.slice(2).join(','))", "args": []string{"1", "2"}},
			StatusSuccess, "1,2\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			needInterpreter(t, tt.interp)
			res := g.call(context.Background(), "run_code", tt.args, nil)
			if res.Status != tt.status {
				t.Fatalf("status %s, want %s: %s", res.Status, tt.status, res.Content)
			}
			s := fields(t, res)
			if s["stdout"] != tt.stdout || s["exit_code"] != tt.exit {
				t.Errorf("stdout %q exit %v, want %q %v (stderr %q)", s["stdout"], s["exit_code"], tt.stdout, tt.exit, s["stderr"])
			}
			if _, ok := s["sandbox"].(map[string]any); !ok {
				t.Errorf("no sandbox report: %v", s)
			}
		})
	}
}

// TestRunCodeSandbox checks that what the sandbox report claims is in force
// really is, from inside the code.
func TestRunCodeSandbox(t *testing.T) {
	t.Parallel()
	needInterpreter(t, "python3")
	g := newShellRig(t, nil)
	code := `import resource, socket
print("as", resource.getrlimit(resource.RLIMIT_AS)[0])
print("nofile", resource.getrlimit(resource.RLIMIT_NOFILE)[0])
print("cpu", resource.getrlimit(resource.RLIMIT_CPU)[0])
print("ifaces", sorted(n for _, n in socket.if_nameindex()))
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
c = socket.create_connection(s.getsockname())
print("loopback ok")
`
	res := g.call(context.Background(), "run_code", map[string]any{"language": "python", "code": code, "timeout_seconds": 30}, nil)
	if res.Status != StatusSuccess {
		t.Fatalf("%s: %s", res.Status, res.Content)
	}
	s := fields(t, res)
	sb := s["sandbox"].(map[string]any)
	t.Logf("sandbox: %v", sb)
	out := s["stdout"].(string)
	enforced := strings.Join(toStrings(sb["enforced"]), "\n")
	// Where prlimit is (util-linux: every Linux here), the limits are set,
	// and the checks below see them in force rather than trust the report.
	if _, err := exec.LookPath("prlimit"); err == nil {
		for _, l := range []string{"RLIMIT_AS", "RLIMIT_NOFILE", "RLIMIT_CPU"} {
			if !strings.Contains(enforced, l) {
				t.Errorf("prlimit is here but %s is not enforced: %v", l, sb)
			}
		}
	}
	if strings.Contains(enforced, "RLIMIT_AS") && !strings.Contains(out, "as 2147483648\n") {
		t.Errorf("address space limit claimed but not in force: %s", out)
	}
	if strings.Contains(enforced, "RLIMIT_NOFILE") && !strings.Contains(out, "nofile 1024\n") {
		t.Errorf("open files limit claimed but not in force: %s", out)
	}
	if strings.Contains(enforced, "RLIMIT_CPU") && !strings.Contains(out, "cpu 30\n") {
		t.Errorf("CPU limit claimed but not in force: %s", out)
	}
	if strings.Contains(sb["network_method"].(string), "loopback interface, up") && !strings.Contains(out, "loopback ok\n") {
		t.Errorf("loopback claimed up but unusable: %s %s", out, s["stderr"])
	}
	if sb["network"] == "isolated" && !strings.Contains(out, "ifaces ['lo']\n") {
		t.Errorf("network isolation claimed but interfaces are visible: %s", out)
	}
	if os.Geteuid() == 0 && sb["network"] != "isolated" {
		t.Errorf("root should get a network namespace here: %v", sb)
	}
	// network: true gives the host's network.
	res = g.call(context.Background(), "run_code", map[string]any{"language": "python", "network": true,
		"code": "import socket\nprint(len(socket.if_nameindex()) > 1)"}, nil)
	if s := fields(t, res); s["stdout"] != "True\n" || s["sandbox"].(map[string]any)["network"] != "allowed" {
		t.Errorf("network true: %v", s)
	}
}

func toStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestRunCodeProcessLimit: a program that starts processes without end
// hits the process limit instead of the machine's, and the processes it
// left are gone once the call ended.
func TestRunCodeProcessLimit(t *testing.T) {
	g := newShellRig(t, nil)
	needInterpreter(t, "python3")
	// The children sleep for a unique duration, longer than the wait
	// below, so that only they are counted and only a kill ends them.
	// Popen returns only once sleep runs: n counts real sleeps.
	marker := fmt.Sprintf("600.%d", time.Now().UnixNano()%1000000)
	t.Cleanup(func() { testenv.KillSleeps(marker) })
	res := g.call(context.Background(), "run_code", map[string]any{"language": "python", "timeout_seconds": 20,
		"code": `import subprocess
n = 0
for i in range(400):
    try:
        subprocess.Popen(["sleep", "` + marker + `"])
    except OSError:
        break
    n += 1
print("started", n)
`}, nil)
	s := fields(t, res)
	sb := s["sandbox"].(map[string]any)
	if !strings.Contains(strings.Join(toStrings(sb["enforced"]), " "), "processes") {
		t.Skipf("no process limit on this machine: %v", sb["not_enforced"])
	}
	out, _ := s["stdout"].(string)
	var n int
	if _, err := fmt.Sscanf(strings.TrimSpace(out), "started %d", &n); err != nil || n >= 400 || n == 0 {
		t.Errorf("started %q of 400 processes under a limit of 256 (%s)", out, res.Content)
	}
	// The deadline only guards against a hang: the sleeps would outlive it.
	testenv.Eventually(30*time.Second, func() bool { return len(testenv.SleepPids(marker)) == 0 })
	if left := testenv.SleepPids(marker); len(left) > 0 {
		t.Errorf("%d of the %d sleeps left behind", len(left), n)
	}
}

// TestRunCodeTimeout: the code is ended at timeout_seconds with TIMEOUT,
// and every process it started is gone when the result arrives. What is
// asserted is behaviour (the status, the output so far, no process left),
// never how long it took: the machine may be busy.
func TestRunCodeTimeout(t *testing.T) {
	// Not parallel: it counts the process's cgroups.
	needInterpreter(t, "python3")
	g := newShellRig(t, nil)
	marker := fmt.Sprintf("300.%d", time.Now().UnixNano()%1000000)
	// The child must have started for its end to be checked: on a busy
	// machine the interpreter may not get that far within a second, so the
	// limit grows until it does (each run still ends by its limit).
	var s map[string]any
	for _, secs := range []int{1, 5, 20} {
		res := g.call(context.Background(), "run_code", map[string]any{"language": "python", "timeout_seconds": secs,
			"code": "import subprocess\nchild = subprocess.Popen(['sleep', '" + marker + "'])\nprint('begun', flush=True)\nchild.wait()"}, nil)
		if res.Status != StatusError || res.Error.Code != Timeout {
			t.Fatalf("status %s %+v, want TIMEOUT", res.Status, res.Error)
		}
		if s = fields(t, res); s["stdout"] == "begun\n" {
			break
		}
	}
	if s["stdout"] != "begun\n" || s["timed_out"] != true {
		t.Errorf("structured %v", s)
	}
	if left := pgrepF("sleep " + marker); left != "" {
		t.Errorf("the code's child outlived the timeout:\n%s", left)
	}
	if left := process.Cgroups(); len(left) > 0 {
		t.Errorf("cgroups left behind: %v", left)
	}
}
