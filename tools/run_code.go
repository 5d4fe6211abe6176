package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/process"
	"github.com/agentls/agentls/sandbox"
)

// RunCode is run_code: a snippet of Python, bash or JavaScript run from a
// temporary file with argv (no shell string), under resource limits and,
// where the machine allows it, without network.
var RunCode = builtin(Def[runCodeArgs]{
	Spec: Spec{
		Name:     "run_code",
		Category: "shell",
		Title:    "Run code",
		Description: "Runs a snippet of code: language python (python3), bash or node. The code is written to a temporary file and run " +
			"with its args in a workspace folder (cwd, default the root) in a sandbox (bubblewrap): the workspace is readable and " +
			"writable, the system's programs and libraries read-only, /tmp is private and also HOME; nothing else of the machine " +
			"(no home folder, no other files, no host sockets) and no network unless network is true. Resource limits: CPU time = " +
			"timeout_seconds, 2 GiB address space per process, 1024 open files, 1 GiB file size, 256 processes and 2 GiB memory " +
			"for all its processes together. The result's sandbox field states which limits and isolation were really in force. " +
			"timeout_seconds defaults to 60 (at most 600). A non-zero exit is an error (EXECUTION_ERROR) that carries the output. " +
			"Without bubblewrap installed it refuses (NOT_CONFIGURED).",
		Annotations: Annotations{Destructive: true, Approval: "ask"},
		Risk:        approval.RiskExecute,
		Timeout:     11 * time.Minute,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["language","code"],"properties":{
			"language":{"enum":["python","bash","node"]},
			"code":{"type":"string","minLength":1,"description":"the program text"},
			"args":{"type":"array","items":{"type":"string"},"description":"command-line arguments for the program"},
			"env":{"type":"object","additionalProperties":{"type":"string"},"description":"extra environment variables"},
			"timeout_seconds":{"type":"integer","minimum":1,"maximum":600,"default":60},
			"network":{"type":"boolean","default":false,"description":"allow network access"},
			"cwd":{"type":"string","description":"working folder inside the workspace (default: the root)"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["exit_code","stdout","stderr","truncated","timed_out","duration_ms","sandbox"],"properties":{
			"exit_code":{"type":"integer"},"stdout":{"type":"string"},"stderr":{"type":"string"},"truncated":{"type":"boolean"},
			"timed_out":{"type":"boolean"},"duration_ms":{"type":"integer"},"id":{"type":"string"},"pid":{"type":"integer"},
			"signal":{"type":"string"},"language":{"type":"string"},"sandbox":{"type":"object"}}}`),
	},
	Assess:  assessRunCode,
	Execute: runCode,
})

type runCodeArgs struct {
	Language       string            `json:"language"`
	Code           string            `json:"code"`
	Args           []string          `json:"args"`
	Env            map[string]string `json:"env"`
	TimeoutSeconds int               `json:"timeout_seconds"`
	Network        bool              `json:"network"`
	Cwd            string            `json:"cwd"`
}

func (a runCodeArgs) commandCwd() string { return a.Cwd }

func assessRunCode(c *Call, a runCodeArgs) (Assessment, error) {
	if _, err := shellDir(c, a.Cwd); err != nil {
		return Assessment{}, err
	}
	as := approval.Assessment{Risk: approval.RiskExecute, AlwaysKey: "run_code:" + a.Language}
	if a.Network {
		as.Risk = approval.RiskNetwork
		as.AlwaysKey += "+network"
		as.Warning = "the code may use the network"
	}
	envAssess(&as, a.Env)
	return Assessment{Assessment: as}, nil
}

// Resource limits of run_code.
const (
	codeAddressSpace = 2 << 30
	codeOpenFiles    = 1024
	codeProcesses    = 256
	codeFileSize     = 1 << 30
)

// interpreters of run_code: candidate programs, file name, extra flags.
var codeLanguages = map[string]struct {
	programs []string
	file     string
	flags    []string
}{
	"python": {[]string{"python3", "python"}, "main.py", []string{"-u"}},
	"bash":   {[]string{"bash"}, "main.sh", nil},
	"node":   {[]string{"node", "nodejs"}, "main.js", nil},
}

func runCode(c *Call, a runCodeArgs) (*Result, error) {
	lang, ok := codeLanguages[a.Language]
	if !ok {
		return nil, Errorf(InvalidParams, "language %q is not python, bash or node", a.Language)
	}
	dir, err := shellDir(c, a.Cwd)
	if err != nil {
		return nil, err
	}
	cfg := c.Workspace.Config()
	boxed := cfg.RunCode.Sandbox != "none"
	var interp string
	if boxed {
		if _, err := sandbox.Find(); err != nil {
			return nil, Errorf(NotConfigured, "run_code runs code only in its sandbox, and %v; install it, or set "+
				"runCode.sandbox to \"none\" in your user config to run code without the sandbox", err)
		}
		// The sandbox shows the system folders only: the interpreter must
		// be there, not in a home folder's version manager.
		if interp, err = sandbox.SystemProgram(lang.programs...); err != nil {
			return nil, Errorf(NotConfigured, "no interpreter for %s that the sandbox can run: %v", a.Language, err)
		}
	} else {
		for _, p := range lang.programs {
			if path, err := exec.LookPath(p); err == nil {
				interp = path
				break
			}
		}
		if interp == "" {
			return nil, Errorf(NotConfigured, "no interpreter for %s on PATH (looked for %s)", a.Language, strings.Join(lang.programs, ", "))
		}
	}
	tmp, err := os.MkdirTemp("", "agentls-code-")
	if err != nil {
		return nil, fmt.Errorf("make code folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, lang.file)
	if err := os.WriteFile(file, []byte(a.Code), 0o600); err != nil {
		return nil, fmt.Errorf("write code: %w", err)
	}
	timeout := time.Duration(a.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	timeout = min(timeout, maxShellTimeout)

	sb := newSandbox(int(timeout/time.Second), boxed)
	defer sb.cgroup.Remove() // when the run did not start
	argv := append(append(append([]string{interp}, lang.flags...), file), a.Args...)
	sp := process.Spec{Dir: dir, Env: CommandEnv(cfg, a.Env), Command: a.Language + " " + lang.file,
		Cgroup: sb.cgroup, Prefix: sb.argvPrefix}
	if sb.cgroup == nil {
		sp.NoCgroup = true // the limited one could not be made: none other
	}
	if boxed {
		sp.Box = &sandbox.Spec{Mode: sandbox.Isolate, Writable: writableRoots(c), ReadOnly: []string{tmp},
			Network: a.Network, Dir: dir}
		sp.Env = sandbox.Env(sp.Env)
		sb.isolate(a.Network)
		sp.Argv = argv
	} else {
		sb.network(&sp, a.Network)
		sp.Argv = sb.wrap(argv)
	}
	return foreground(c, sp, timeout, func(*process.Proc) map[string]any {
		return map[string]any{"language": a.Language, "sandbox": sb.report()}
	})
}

// codeMemory caps the memory of all of a run's processes together (a
// variable so that tests can lower it).
var codeMemory int64 = codeAddressSpace

// codeSandbox is what run_code could put in force on this machine for one run.
type codeSandbox struct {
	kind        string // "bwrap" or "none"
	limits      map[string]int64
	enforced    []string
	notEnforced map[string]string
	netMode     string // "isolated" or "allowed"
	netMethod   string
	filesystem  string
	cgroup      *process.Cgroup // the pids (and memory) cgroup, when the machine allows one
	argvPrefix  []string
	ip          string // the ip program, to raise loopback in an isolated network
}

func newSandbox(cpuSeconds int, boxed bool) *codeSandbox {
	sb := &codeSandbox{
		kind: "none",
		limits: map[string]int64{
			"cpu_seconds": int64(cpuSeconds), "address_space_bytes": codeAddressSpace, "open_files": codeOpenFiles,
			"processes": codeProcesses, "file_size_bytes": codeFileSize, "memory_bytes": codeMemory,
		},
		notEnforced: map[string]string{},
		filesystem:  "not isolated (runCode.sandbox is \"none\"): the code can read and write what the server can",
	}
	if boxed {
		sb.kind = "bwrap"
	}
	sb.cgroup = process.NewCgroup(codeProcesses, codeMemory)
	prlimit, err := prlimitProgram()
	if err != nil {
		for _, k := range []string{"cpu_seconds", "address_space_bytes", "open_files", "file_size_bytes"} {
			sb.notEnforced[k] = err.Error()
		}
	} else {
		sb.argvPrefix = []string{prlimit,
			fmt.Sprintf("--cpu=%d:%d", cpuSeconds, cpuSeconds+1),
			fmt.Sprintf("--as=%d", codeAddressSpace),
			fmt.Sprintf("--nofile=%d", codeOpenFiles),
			fmt.Sprintf("--fsize=%d", codeFileSize),
			"--core=0",
		}
		sb.enforced = append(sb.enforced, "cpu_seconds (RLIMIT_CPU, per process)", "address_space_bytes (RLIMIT_AS, per process)",
			"open_files (RLIMIT_NOFILE)", "file_size_bytes (RLIMIT_FSIZE)")
	}
	switch {
	case sb.cgroup != nil:
		sb.enforced = append(sb.enforced, "processes (pids cgroup "+sb.cgroup.Dir()+", the whole tree)")
	case os.Geteuid() == 0:
		sb.notEnforced["processes"] = "no pids cgroup could be made, and RLIMIT_NPROC does not bind root"
	case sb.argvPrefix != nil:
		// RLIMIT_NPROC counts every process of the user: allow the current
		// ones plus the budget.
		n := userProcesses() + codeProcesses
		sb.argvPrefix = append(sb.argvPrefix, fmt.Sprintf("--nproc=%d", n))
		sb.enforced = append(sb.enforced, fmt.Sprintf("processes (RLIMIT_NPROC, %d for the whole user)", n))
	default:
		sb.notEnforced["processes"] = "neither a pids cgroup nor prlimit is available"
	}
	if sb.cgroup.MemoryDir() != "" {
		sb.enforced = append(sb.enforced, "memory_bytes (memory cgroup "+sb.cgroup.MemoryDir()+", all processes of the run together)")
	} else {
		sb.notEnforced["memory_bytes"] = "no memory cgroup could be made here: only each process's address space is limited"
	}
	if sb.argvPrefix != nil {
		sb.argvPrefix = append(sb.argvPrefix, "--")
	}
	return sb
}

// isolate records the bwrap sandbox of a run.
func (sb *codeSandbox) isolate(network bool) {
	sb.filesystem = isolatedFilesystem
	sb.enforced = append(sb.enforced,
		"filesystem (bwrap: "+isolatedFilesystem+")",
		"namespaces (bwrap: user where bwrap makes one, mount, pid, IPC, UTS, and network unless network is true)",
		"lifetime (bwrap --die-with-parent and a pid namespace: every process of the run ends with it and with the server)",
		"capabilities (bwrap --cap-drop ALL)")
	if network {
		sb.netMode, sb.netMethod = "allowed", "the host's network (bwrap --share-net); the host's abstract Unix sockets are reachable"
		return
	}
	sb.netMode, sb.netMethod = "isolated", "bwrap network namespace; only the loopback interface, up"
	sb.enforced = append(sb.enforced, "network ("+sb.netMethod+")")
}

// wrap returns the argv that runs argv with the loopback interface up in an
// isolated network (runCode.sandbox "none").
func (sb *codeSandbox) wrap(argv []string) []string {
	if sb.ip != "" {
		return append([]string{"/bin/sh", "-c", `"$0" link set lo up 2>/dev/null || echo "agentls: the loopback interface stays down" >&2; exec "$@"`, sb.ip}, argv...)
	}
	return argv
}

// network isolates the run in its own network namespace unless allow
// (runCode.sandbox "none", where bwrap does not).
func (sb *codeSandbox) network(sp *process.Spec, allow bool) {
	if allow {
		sb.netMode, sb.netMethod = "allowed", "the host's network"
		return
	}
	attr, method, err := netnsAttr()
	if err != nil {
		sb.netMode, sb.netMethod = "allowed", "not isolated: "+err.Error()
		sb.notEnforced["network"] = err.Error()
		return
	}
	sp.Attr = attr
	sb.netMode, sb.netMethod = "isolated", method
	if ip, err := exec.LookPath("ip"); err == nil {
		sb.ip = ip
		sb.netMethod += "; only the loopback interface, up"
	} else {
		sb.netMethod += "; no interface up (no ip program to raise loopback)"
	}
	sb.enforced = append(sb.enforced, "network ("+sb.netMethod+")")
}

func (sb *codeSandbox) report() map[string]any {
	r := map[string]any{
		"kind": sb.kind, "limits": sb.limits, "enforced": sb.enforced, "network": sb.netMode, "network_method": sb.netMethod,
		"process_group": true, "filesystem": sb.filesystem,
	}
	if len(sb.notEnforced) > 0 {
		r["not_enforced"] = sb.notEnforced
	}
	return r
}

var prlimitProbe struct {
	once sync.Once
	path string
	err  error
}

// prlimitProgram returns the prlimit program once it has been seen to set
// every limit run_code uses on this machine.
func prlimitProgram() (string, error) {
	p := &prlimitProbe
	p.once.Do(func() {
		path, err := exec.LookPath("prlimit")
		if err != nil {
			p.err = errors.New("the prlimit program (util-linux) is not installed")
			return
		}
		out, err := exec.Command(path, "--cpu=5:6", fmt.Sprintf("--as=%d", codeAddressSpace),
			fmt.Sprintf("--nofile=%d", codeOpenFiles), fmt.Sprintf("--fsize=%d", codeFileSize), "--core=0",
			"--", "/bin/true").CombinedOutput()
		if err != nil {
			p.err = fmt.Errorf("prlimit cannot set the limits here: %v %s", err, strings.TrimSpace(string(out)))
			return
		}
		p.path = path
	})
	return p.path, p.err
}

func userProcesses() int {
	ents, _ := os.ReadDir("/proc")
	uid := strconv.Itoa(os.Getuid())
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
				if f[1] == uid {
					n++
				}
				break
			}
		}
	}
	return n
}
