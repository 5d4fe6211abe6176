//go:build linux

package tools

import (
	"context"
	"encoding/json"
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

	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/workspace"
)

// needBwrap skips a test of the sandbox where bwrap does not work; the
// refusal without it is TestRunCodeNotConfigured's.
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Find(); err != nil {
		t.Skipf("no working bwrap here: %v", err)
	}
}

// escapeProbe is python code that tries every way out of the sandbox it
// is given on its command line and prints what each attempt did as JSON:
// "ok" or the error.
const escapeProbe = `import json, os, socket, sys
outside, sock, abstract, port, home, token = sys.argv[1:7]
r = {}
def attempt(name, f):
    try:
        f()
        r[name] = "ok"
    except BaseException as e:
        r[name] = type(e).__name__ + ": " + str(e)
def write(p):
    with open(p, "w") as f:
        f.write("escaped")
def unix(addr):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    s.connect(addr)
    s.send(b"hello")
def tcp():
    socket.create_connection(("127.0.0.1", int(port)), timeout=2).send(b"hello")
def read(p):
    open(p).read()
attempt("write_outside_sibling", lambda: write(os.path.join(outside, "escaped-" + token)))
attempt("write_root", lambda: write("/root/agentls-escaped-" + token))
attempt("write_etc", lambda: write("/etc/agentls-escaped-" + token))
attempt("write_usr", lambda: write("/usr/agentls-escaped-" + token))
attempt("write_private_tmp", lambda: write("/tmp/agentls-escaped-" + token))
attempt("unix_socket", lambda: unix(sock))
attempt("abstract_socket", lambda: unix("\0" + abstract))
attempt("tcp_loopback", tcp)
attempt("read_home", lambda: read(os.path.join(home, "secret.txt")))
attempt("read_env_home", lambda: read(os.path.join(os.environ.get("HOME", "/nonexistent"), "secret.txt")))
attempt("read_shadow", lambda: read("/etc/shadow"))
attempt("list_run", lambda: os.listdir("/run"))
def sysctl():
    # The value written is the one read: harmless should it get through.
    p = "/proc/sys/vm/swappiness"
    v = open(p).read()
    with open(p, "w") as f:
        f.write(v)
attempt("write_sysctl", sysctl)
attempt("list_sys", lambda: os.listdir("/sys/fs/cgroup"))
attempt("list_home", lambda: os.listdir("/home"))
attempt("write_workspace", lambda: write("inside-" + token))
attempt("read_workspace", lambda: read("data.txt"))
def own_loopback():
    s = socket.socket()
    s.bind(("localhost", 0))
    s.listen()
    socket.create_connection(("localhost", s.getsockname()[1]), timeout=2)
attempt("own_loopback", own_loopback)
print(json.dumps(r))
`

// TestRunCodeCannotEscape is the standing attack on run_code's sandbox:
// from inside the code, write outside the workspace (a sibling folder,
// /root, /etc, /usr, the host's /tmp), connect to a Unix socket of the
// host (a path and an abstract one), connect to a loopback TCP listener
// without network, read a file of the home folder and /etc/shadow, list
// /run and the cgroup file system, write a sysctl (as root, uid 0 without
// capabilities could, were /proc/sys writable). Every attempt fails and leaves nothing behind, while the
// workspace stays readable and writable, the private /tmp writable and the
// sandbox's own loopback usable by name (localhost); the result says bwrap
// was in force.
func TestRunCodeCannotEscape(t *testing.T) {
	needBwrap(t)
	needInterpreter(t, "python3")
	g := newShellRig(t, nil)
	if err := os.WriteFile(filepath.Join(g.root, "data.txt"), []byte("workspace data"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir() // a sibling of the workspace under the same parent
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "secret.txt"), []byte("the home's secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	token := fmt.Sprintf("%d", rand.Int64())

	sockPath := filepath.Join(outside, "host.sock")
	unixL, err := net.Listen("unix", sockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer unixL.Close()
	abstract := "agentls-test-" + token
	absL, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer absL.Close()
	tcpL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcpL.Close()
	accepted := make(chan string, 3)
	for name, l := range map[string]net.Listener{"unix socket": unixL, "abstract socket": absL, "tcp": tcpL} {
		go func() {
			if c, err := l.Accept(); err == nil {
				accepted <- name
				c.Close()
			}
		}()
	}
	port := strconv.Itoa(tcpL.Addr().(*net.TCPAddr).Port)

	res := g.call(context.Background(), "run_code", map[string]any{"language": "python", "code": escapeProbe, "timeout_seconds": 60,
		"args": []string{outside, sockPath, abstract, port, home, token}}, nil)
	if res.Status != StatusSuccess {
		t.Fatalf("%s: %s", res.Status, res.Content)
	}
	s := fields(t, res)
	var got map[string]string
	if err := json.Unmarshal([]byte(s["stdout"].(string)), &got); err != nil {
		t.Fatalf("probe output %q: %v (stderr %q)", s["stdout"], err, s["stderr"])
	}
	t.Logf("attempts: %v", got)
	allowed := map[string]bool{"write_workspace": true, "read_workspace": true, "write_private_tmp": true, "own_loopback": true}
	for must := range allowed {
		if got[must] != "ok" {
			t.Errorf("%s inside the sandbox failed: %s", must, got[must])
		}
	}
	for name, v := range got {
		if allowed[name] {
			continue
		}
		if v == "ok" {
			t.Errorf("escape %s succeeded", name)
		}
	}
	for _, p := range []string{filepath.Join(outside, "escaped-"+token), "/root/agentls-escaped-" + token,
		"/etc/agentls-escaped-" + token, "/usr/agentls-escaped-" + token, "/tmp/agentls-escaped-" + token} {
		if _, err := os.Lstat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s was written from inside the sandbox", p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(g.root, "inside-"+token)); err != nil || string(b) != "escaped" {
		t.Errorf("the workspace write did not reach the workspace: %q %v", b, err)
	}
	select {
	case name := <-accepted:
		t.Errorf("the host's %s listener accepted a connection from the sandbox", name)
	case <-time.After(100 * time.Millisecond):
	}
	sb := s["sandbox"].(map[string]any)
	if sb["kind"] != "bwrap" || sb["network"] != "isolated" || !strings.HasPrefix(sb["filesystem"].(string), "isolated") {
		t.Errorf("sandbox report: %v", sb)
	}
}

// TestRunCodeNetworkTrue: with network true the same loopback listener is
// reachable, so TestRunCodeCannotEscape's refusal is the sandbox's doing.
func TestRunCodeNetworkTrue(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	needInterpreter(t, "python3")
	g := newShellRig(t, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Write([]byte("pong"))
			c.Close()
		}
	}()
	res := g.call(context.Background(), "run_code", map[string]any{"language": "python", "network": true,
		"code": fmt.Sprintf("import socket\nprint(socket.create_connection(('127.0.0.1', %d), timeout=5).recv(4).decode())",
			l.Addr().(*net.TCPAddr).Port)}, nil)
	s := fields(t, res)
	if s["stdout"] != "pong\n" || s["sandbox"].(map[string]any)["network"] != "allowed" {
		t.Errorf("network true: %s %v", res.Content, s["sandbox"])
	}
}

// TestRunCodeMemoryOfTheTree: children that each stay under the limit but
// together exceed it are killed: the limit holds for the whole tree, not
// per process.
func TestRunCodeMemoryOfTheTree(t *testing.T) {
	needBwrap(t)
	needInterpreter(t, "python3")
	old := codeMemory
	codeMemory = 256 << 20
	defer func() { codeMemory = old }()
	g := newShellRig(t, nil)
	// Six children of 100 MB each (600 MB together, each far below the
	// 2 GiB address space limit) against 256 MB for the tree.
	code := `import os, signal, time
pids = []
for i in range(6):
    pid = os.fork()
    if pid == 0:
        b = bytearray(100 << 20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        time.sleep(3)
        os._exit(0)
    pids.append(pid)
killed = 0
for pid in pids:
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        killed += 1
print("killed", killed)
`
	res := g.call(context.Background(), "run_code", map[string]any{"language": "python", "code": code, "timeout_seconds": 60}, nil)
	s := fields(t, res)
	sb := s["sandbox"].(map[string]any)
	if ne, _ := sb["not_enforced"].(map[string]any); ne["memory_bytes"] != nil {
		t.Skipf("no memory cgroup here: %v", ne["memory_bytes"])
	}
	if !strings.Contains(strings.Join(toStrings(sb["enforced"]), " "), "memory cgroup") {
		t.Fatalf("memory limit neither enforced nor reported as not enforced: %v", sb)
	}
	var killed int
	if _, err := fmt.Sscanf(fmt.Sprint(s["stdout"]), "killed %d", &killed); err != nil {
		// The parent itself may be the one the kernel chose.
		if res.Status == StatusError && s["signal"] == "SIGKILL" {
			return
		}
		t.Fatalf("output %q (%s)", s["stdout"], res.Content)
	}
	if killed == 0 {
		t.Errorf("600 MB in six children under a 256 MB limit for the tree: none was killed")
	}
}

// TestRunCodeNotConfigured: without bwrap on PATH (a real lookup in a PATH
// that lacks it) run_code refuses with NOT_CONFIGURED naming the package,
// and runs nothing; with runCode.sandbox "none" (the user's choice) it runs
// and says the file system is not isolated.
func TestRunCodeNotConfigured(t *testing.T) {
	bin := t.TempDir()
	for _, p := range []string{"python3", "bash", "prlimit", "ip", "sh"} {
		// The system's programs, not a version manager's shims, which need
		// more of the PATH than this test leaves.
		if path, err := sandbox.SystemProgram(p); err == nil {
			if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Setenv("PATH", bin)
	if _, err := exec.LookPath("bwrap"); err == nil {
		t.Fatal("bwrap is still on PATH")
	}
	needInterpreter(t, "python3")

	g := newShellRig(t, nil)
	res := g.call(context.Background(), "run_code", map[string]any{"language": "python",
		"code": "open('ran.txt', 'w').write('ran')"}, nil)
	if res.Status != StatusError || res.Error.Code != NotConfigured || !strings.Contains(res.Error.Message, "apt-get install bubblewrap") {
		t.Fatalf("without bwrap: %s %+v", res.Status, res.Error)
	}
	if _, err := os.Stat(filepath.Join(g.root, "ran.txt")); err == nil {
		t.Error("the code ran without the sandbox")
	}

	g = newShellRig(t, func(c *workspace.Config) { c.RunCode.Sandbox = "none" })
	res = g.call(context.Background(), "run_code", map[string]any{"language": "python",
		"code": "open('ran.txt', 'w').write('ran'); import os; print(os.path.isdir('/root') or os.path.isdir('/home'))"}, nil)
	if res.Status != StatusSuccess {
		t.Fatalf("sandbox none: %s %s %v", res.Status, res.Content, fields(t, res))
	}
	s := fields(t, res)
	sb := s["sandbox"].(map[string]any)
	if sb["kind"] != "none" || !strings.HasPrefix(sb["filesystem"].(string), "not isolated") {
		t.Errorf("sandbox none report: %v", sb)
	}
	if s["stdout"] != "True\n" {
		t.Errorf("unsandboxed code should see the host: %q", s["stdout"])
	}
}
