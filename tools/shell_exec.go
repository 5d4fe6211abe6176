package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/workspace"
)

// ShellExec is shell_exec: bash -c in its own process group.
var ShellExec = &Tool{
	Name:  "shell_exec",
	Title: "Run shell command",
	Description: "Runs a command with `bash -c` in a workspace folder (cwd, default the workspace root) and returns its exit code, " +
		"stdout and stderr separately. Output is streamed while the command runs. A non-zero exit is an error " +
		"(EXECUTION_ERROR) that still carries the output. The command ends after timeout_ms (default 120000, at most 600000) " +
		"with TIMEOUT and the output so far. Every process it started ends with it, also ones left in the background: " +
		"use shell_background for servers and watchers. Large output keeps its head and tail " +
		"with a marker; read the cut part with shell_output and the id in the result. stdin is empty: do not run interactive " +
		"programs. The command is judged part by part: allowed commands " +
		"(shell.allow) run without asking, in a sandbox (the workspace writable, no home, no network unless shell.allowNetwork " +
		"covers the command); others ask, denied ones are refused.",
	Aliases:     []string{"executeCommand", "shell", "bash"},
	Annotations: Annotations{Destructive: true, Approval: "ask"},
	Risk:        approval.RiskExecute,
	// The tool enforces timeout_ms itself; the runner's limit is a backstop.
	Timeout: 11 * time.Minute,
	InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["command"],"properties":{
		"command":{"type":"string","minLength":1,"description":"the command, run with bash -c"},
		"cwd":{"type":"string","description":"working folder, relative to the workspace root or absolute inside it (default: the root)"},
		"timeout_ms":{"type":"integer","minimum":1,"maximum":600000,"description":"time limit in milliseconds (default 120000, or shell.timeoutSeconds)"},
		"env":{"type":"object","additionalProperties":{"type":"string"},"description":"extra environment variables"}}}`),
	OutputSchema: json.RawMessage(`{"type":"object","required":["exit_code","stdout","stderr","truncated","timed_out","duration_ms"],"properties":{
		"exit_code":{"type":"integer"},"stdout":{"type":"string"},"stderr":{"type":"string"},"truncated":{"type":"boolean"},
		"timed_out":{"type":"boolean"},"duration_ms":{"type":"integer"},"id":{"type":"string"},"pid":{"type":"integer"},"signal":{"type":"string"},
		"cancelled":{"type":"boolean"},"stdout_bytes":{"type":"integer"},"stderr_bytes":{"type":"integer"},
		"sandbox":{"type":"object","description":"present when the command ran in the sandbox because it ran without approval"}}}`),
	Assess:  assessShell,
	Execute: Typed(shellExec),
}

type shellExecArgs struct {
	Command   string            `json:"command"`
	Cwd       string            `json:"cwd"`
	TimeoutMs int               `json:"timeout_ms"`
	Env       map[string]string `json:"env"`
}

// assessShell runs the command policy (approval.JudgeCommandIn) on the
// command of shell_exec or shell_background.
func assessShell(c *Call, raw json.RawMessage) (Assessment, error) {
	var a shellExecArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return Assessment{}, Errorf(InvalidParams, "arguments: %v", err)
	}
	dir, err := shellDir(c, a.Cwd)
	if err != nil {
		return Assessment{}, err
	}
	as := approval.JudgeCommandIn(a.Command, dir, c.Workspace.Config(), c.Workspace)
	if c.Tool != nil && c.Tool.Name == "shell_background" {
		// A process that keeps running is its own question.
		as.AlwaysKey = "shell_background:" + strings.TrimPrefix(as.AlwaysKey, "shell:")
	}
	envAssess(&as, a.Env)
	sandboxAssess(c, &as)
	return Assessment{Assessment: as}, nil
}

// envAssess makes a call ask when its env argument sets a risky variable or
// a value that holds shell code (which arithmetic on it would run).
func envAssess(as *approval.Assessment, env map[string]string) {
	for _, k := range sortedKeys(env) {
		w := ""
		switch {
		case approval.RiskyEnv(k):
			w = fmt.Sprintf("sets %s, which changes what programs run", k)
		case approval.CodeLike(env[k]):
			w = fmt.Sprintf("the value of %s holds shell code", k)
		default:
			continue
		}
		as.AutoByConfig = false
		as.AlwaysKey += " ; env:" + k
		if as.Warning != "" {
			w = as.Warning + "; " + w
		}
		as.Warning = w
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// shellDir resolves the cwd argument to a folder inside the roots.
func shellDir(c *Call, cwd string) (string, error) {
	if cwd == "" {
		root := c.Workspace.Root()
		if root == "" {
			return "", Errorf(NotConfigured, "the session has no workspace root")
		}
		return root, nil
	}
	dir, err := c.Workspace.Resolve(cwd)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", Errorf(FileNotFound, "cwd %s does not exist", cwd)
		}
		return "", Errorf(PermissionDenied, "cwd %s: %v", cwd, err)
	}
	if !fi.IsDir() {
		return "", Errorf(NotADirectory, "cwd %s is not a folder", cwd)
	}
	return dir, nil
}

// shellTimeout is timeout_ms, or shell.timeoutSeconds, capped at ten minutes.
func shellTimeout(cfg *workspace.Config, ms int) time.Duration {
	d := time.Duration(ms) * time.Millisecond
	if ms <= 0 {
		d = time.Duration(cfg.Shell.TimeoutSeconds) * time.Second
	}
	if d <= 0 {
		d = 120 * time.Second
	}
	return min(d, maxShellTimeout)
}

const maxShellTimeout = 10 * time.Minute

func shellExec(c *Call, a shellExecArgs) (*Result, error) {
	dir, err := shellDir(c, a.Cwd)
	if err != nil {
		return nil, err
	}
	cfg := c.Workspace.Config()
	sp := startSpec{
		argv:    []string{"bash", "-c", a.Command},
		dir:     dir,
		env:     shellEnv(c, dir, a.Env),
		command: a.Command,
	}
	box, err := autoSandbox(c, &sp)
	if err != nil {
		return nil, err
	}
	var extra func(*proc) map[string]any
	if box != nil {
		extra = func(*proc) map[string]any { return map[string]any{"sandbox": box} }
	}
	return foreground(c, sp, shellTimeout(cfg, a.TimeoutMs), extra)
}

// shellEnv is the environment of a command (shell, custom tool): CommandEnv,
// and for a command nobody approved (an allow list, a rule, an earlier
// "always", an automatic custom tool) the automatic-git settings of
// GitSafetyEnv, so that any git it runs uses only the workspace's
// repository and runs no program its configuration names. (In yolo mode every command runs
// unasked, as the person chose; git is not restricted there.)
func shellEnv(c *Call, dir string, extra map[string]string) []string {
	env := CommandEnv(c.Workspace.Config(), extra)
	if unapproved(c) && !(c.Decision.By == "auto" && c.Workspace.Config().Approval.Mode == "yolo") {
		env = GitSafetyEnv(c.Workspace, dir, env)
	}
	return env
}

// RunArgv runs argv (no shell) in dir the way shell_exec runs a command:
// in its own process group (and cgroup where the machine allows), with the
// environment of shellEnv plus env, output streamed as progress reports,
// ended as a whole at timeout or cancellation, and a result with the
// structured fields of shell_exec (a non-zero exit is EXECUTION_ERROR). For
// tools that run programs: custom tools, git.
func RunArgv(c *Call, argv []string, dir string, env map[string]string, timeout time.Duration) (*Result, error) {
	if len(argv) == 0 {
		return nil, Errorf(InvalidParams, "no program to run")
	}
	sp := startSpec{argv: argv, dir: dir, env: shellEnv(c, dir, env), command: strings.Join(argv, " ")}
	return foreground(c, sp, min(timeout, maxShellTimeout), nil)
}

// DefaultSecretEnv are the variable names (globs, matched case-insensitively)
// removed from the environment of every command, in addition to
// shell.secretEnv: tokens, secrets, keys, passwords and credentials.
var DefaultSecretEnv = []string{
	"*_TOKEN", "*_TOKEN_*", "*_SECRET", "*_SECRET_*", "*SECRET_KEY*", "*_KEY", "*_APIKEY", "*_API_KEY*",
	"*PASSWORD*", "*PASSWD*", "*CREDENTIALS*", "*_PAT",
}

// CommandEnv is the environment commands run with: the server's environment
// minus the secret variables (DefaultSecretEnv and shell.secretEnv), plus
// extra.
func CommandEnv(cfg *workspace.Config, extra map[string]string) []string {
	pats := append(append([]string(nil), DefaultSecretEnv...), cfg.Shell.SecretEnv...)
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[name]; ok || secretName(pats, name) {
			continue
		}
		env = append(env, kv)
	}
	for _, k := range sortedKeys(extra) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

func secretName(pats []string, name string) bool {
	up := strings.ToUpper(name)
	for _, p := range pats {
		if ok, _ := filepath.Match(strings.ToUpper(p), up); ok {
			return true
		}
	}
	return false
}

// The streams of a shell's output. Combined interleaves both as they
// arrive.
const (
	streamStdout = iota
	streamStderr
	streamCombined
)

var streamNames = [...]string{"stdout", "stderr", "combined"}

// maxStoredBytes caps each stream of a shell kept for shell_output.
const maxStoredBytes = 256 << 20

// maxStreamed caps the output sent as progress reports, in multiples of
// shell.maxOutputBytes.
const maxStreamedFactor = 4

// terminateGrace is how long a process group has between SIGTERM and
// SIGKILL.
const terminateGrace = 500 * time.Millisecond

// startSpec is a process to start.
type startSpec struct {
	argv       []string
	dir        string
	env        []string
	attr       *syscall.SysProcAttr // its own process group is forced
	command    string               // what shell_output shows
	background bool
	// cgroup, when set, is the cgroup to run in (run_code's, with a process
	// limit); otherwise start makes one without a limit where it can.
	cgroup   *cgroup
	noCgroup bool
	// box, when set, is the sandbox argv runs in (bwrap must work: the
	// caller checked); otherwise start runs argv in bwrap's pid namespace
	// only (sandbox.Lifetime) where bwrap works, plainly elsewhere.
	box *sandbox.Spec
	// prefix runs before bwrap (run_code's prlimit).
	prefix []string
}

// proc is one shell: its process group and the logs of its output, kept in
// unlinked temporary files.
type proc struct {
	id         string
	command    string
	started    time.Time
	pid        int
	background bool
	// cgroup tracks every process of the shell, also those that left the
	// process group (setsid); nil where the machine allows none.
	cgroup *cgroup
	// nsInit is the host pid of the first process of the shell's pid
	// namespace (bwrap's), nsID the namespace ("pid:[inode]"); zero when
	// the shell runs without bwrap. Killing nsInit kills the whole tree.
	nsInit int
	nsID   string

	mu       sync.Mutex
	logs     [3]outputLog
	changed  chan struct{} // closed and replaced on new output and at the end
	exited   bool          // the leader was waited for and the group ended
	ended    bool          // exited and all output read
	exitCode int
	signal   string
	endedAt  time.Time
	done     chan struct{} // closed when ended
}

type outputLog struct {
	f       *os.File
	size    int64 // bytes written to f
	dropped int64 // bytes beyond maxStoredBytes, not kept
}

// shellStore is a session's shells.
type shellStore struct {
	mu       sync.Mutex
	procs    map[string]*proc
	finished []string // ids of finished foreground shells, oldest first
	seq      int
	closed   bool
}

var shellStoreKey = NewKey[*shellStore]("shells")

// keptForeground is how many finished shell_exec outputs a session keeps.
const keptForeground = 32

// maxBackground caps the background shells running at once in a session.
const maxBackground = 32

func shellsOf(s *Session) (*shellStore, error) {
	if s == nil {
		return nil, Errorf(Internal, "the call has no session to keep its output in")
	}
	return Update(s, shellStoreKey, func(old *shellStore, ok bool) *shellStore {
		if ok && old != nil {
			return old
		}
		return &shellStore{procs: map[string]*proc{}}
	}), nil
}

// get returns a shell by id.
func (st *shellStore) get(id string) (*proc, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := st.procs[id]
	if !ok {
		ids := sortedKeys(st.procs)
		return nil, Errorf(InvalidParams, "no shell %q in this session (shells: %s)", id, strings.Join(ids, ", "))
	}
	return p, nil
}

// start starts a process in its own process group. sink, when set, sees
// every chunk of output as it arrives (from two goroutines, one a stream).
func (st *shellStore) start(sp startSpec, sink func(stream int, chunk []byte)) (*proc, error) {
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return nil, Errorf(Cancelled, "the session has ended")
	}
	if sp.background {
		running := 0
		for _, p := range st.procs {
			if p.background && !p.isEnded() {
				running++
			}
		}
		if running >= maxBackground {
			st.mu.Unlock()
			return nil, Errorf(TooLarge, "%d background shells are running; end one with shell_kill first", running)
		}
	}
	st.seq++
	id := fmt.Sprintf("sh_%d", st.seq)
	st.mu.Unlock()

	p := &proc{id: id, command: sp.command, background: sp.background, changed: make(chan struct{}),
		done: make(chan struct{})}
	for i := range p.logs {
		f, err := os.CreateTemp("", "agentls-"+id+"-"+streamNames[i]+"-*")
		if err != nil {
			p.closeLogs(true)
			return nil, fmt.Errorf("open shell output log: %w", err)
		}
		// The log lives as long as the open file: unlinked at once (where
		// the system allows), its space returns when it is closed, when the
		// session is garbage, or when the server exits, whoever forgot to
		// call CloseSession.
		_ = os.Remove(f.Name())
		p.logs[i].f = f
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		p.closeLogs(true)
		return nil, fmt.Errorf("pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		p.closeLogs(true)
		return nil, fmt.Errorf("pipe: %w", err)
	}
	argv := sp.argv
	box := sp.box
	var bwrap string
	if box == nil {
		if b, err := sandbox.Find(); err == nil {
			bwrap, box = b, &sandbox.Spec{Mode: sandbox.Lifetime, Dir: sp.dir}
		}
	} else if bwrap, err = sandbox.Find(); err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		p.closeLogs(true)
		return nil, Errorf(NotConfigured, "%v", err)
	}
	var infoR, infoW *os.File
	if box != nil {
		if infoR, infoW, err = os.Pipe(); err != nil {
			outR.Close()
			outW.Close()
			errR.Close()
			errW.Close()
			p.closeLogs(true)
			return nil, fmt.Errorf("pipe: %w", err)
		}
		argv = append(sandbox.Args(bwrap, *box, 3), argv...)
	}
	argv = append(append([]string(nil), sp.prefix...), argv...)
	p.cgroup = sp.cgroup
	if p.cgroup == nil && !sp.noCgroup {
		p.cgroup = newCgroup(0, 0)
	}
	if p.cgroup != nil {
		argv = p.cgroup.wrap(argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = sp.dir, sp.env
	cmd.Stdout, cmd.Stderr = outW, errW
	if infoW != nil {
		cmd.ExtraFiles = []*os.File{infoW}
	}
	cmd.SysProcAttr = ownGroup(sp.attr)
	err = sandbox.Start(cmd)
	outW.Close()
	errW.Close()
	if infoW != nil {
		infoW.Close()
		if err == nil {
			p.nsInit, p.nsID = readBwrapInfo(infoR)
		}
		infoR.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		p.closeLogs(true)
		p.cgroup.remove()
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, Errorf(ExecutionError, "cannot start %s: %v", sp.argv[0], ee.Err)
		}
		return nil, fmt.Errorf("start %s: %w", sp.argv[0], err)
	}
	p.pid = cmd.Process.Pid
	p.started = time.Now()
	live.Store(p, struct{}{})

	var readers sync.WaitGroup
	for i, r := range []*os.File{outR, errR} {
		readers.Add(1)
		go func() {
			defer readers.Done()
			buf := make([]byte, 32<<10)
			for {
				n, err := r.Read(buf)
				if n > 0 {
					p.append(i, buf[:n])
					if sink != nil {
						sink(i, buf[:n])
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
	go func() {
		_ = cmd.Wait() // the exit status is in ProcessState
		code, sig := exitStatus(cmd.ProcessState)
		if box != nil && sig == "" && code > 128 && code < 128+65 {
			// bwrap exits with 128+n when the command was killed by
			// signal n: read it as a shell does.
			sig = sigName(syscall.Signal(code - 128))
		}
		// No child outlives its shell: end what is left of the group.
		p.signalGroup(syscall.SIGTERM)
		p.awaitGroupGone(terminateGrace)
		p.signalGroup(syscall.SIGKILL)
		p.mu.Lock()
		p.exited = true
		p.mu.Unlock()
		drained := make(chan struct{})
		go func() { readers.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(time.Second):
			// A process that left the group holds the pipes: stop reading.
			outR.Close()
			errR.Close()
			<-drained
		}
		outR.Close()
		errR.Close()
		p.cgroup.kill(syscall.SIGKILL)
		p.cgroup.remove()
		p.mu.Lock()
		p.ended, p.exitCode, p.signal, p.endedAt = true, code, sig, time.Now()
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		live.Delete(p)
		close(p.done)
	}()

	st.mu.Lock()
	closed := st.closed
	if !closed {
		st.procs[id] = p
	}
	st.mu.Unlock()
	if closed {
		// The session ended while this shell started: CloseSession did not
		// see it.
		p.terminate()
		p.closeLogs(true)
		return nil, Errorf(Cancelled, "the session has ended")
	}
	return p, nil
}

// signalGroup signals the process group (and the cgroup, when there is one)
// unless the group is known to have ended. A shell in a pid namespace gets
// other signals than SIGKILL on every process of the namespace but its
// first (bwrap, which ends when the command does), so that the command has
// its grace; SIGKILL goes to the namespace's first process, which takes
// the whole namespace with it, whatever left the group or the cgroup.
func (p *proc) signalGroup(sig syscall.Signal) {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	if exited {
		return
	}
	if p.nsInit != 0 && sig != syscall.SIGKILL {
		for _, pid := range nsMembers(p.nsID) {
			if pid != p.nsInit {
				killPid(pid, sig)
			}
		}
		return
	}
	if p.nsInit != 0 && nsOf(p.nsInit) == p.nsID {
		killPid(p.nsInit, syscall.SIGKILL)
	}
	killGroup(p.pid, sig)
	p.cgroup.kill(sig)
}

// groupAlive reports whether a process of the group is left (zombies that
// nobody reaped count as gone).
func (p *proc) groupAlive() bool {
	if p.nsInit != 0 {
		for _, pid := range nsMembers(p.nsID) {
			if running(pid) {
				return true
			}
		}
	}
	if p.cgroup.alive() {
		return true
	}
	if !groupExists(p.pid) {
		return false
	}
	for _, pid := range groupMembers(p.pid) {
		if running(pid) {
			return true
		}
	}
	return false
}

// running reports whether a process exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// groupMembers lists the processes of a process group from /proc.
func groupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		var state string
		var ppid, pg int
		if _, err := fmt.Sscanf(s[i+1:], " %s %d %d", &state, &ppid, &pg); err == nil && pg == pgid {
			out = append(out, pid)
		}
	}
	return out
}

// awaitGroupGone waits up to d for the group to end.
func (p *proc) awaitGroupGone(d time.Duration) {
	deadline := time.Now().Add(d)
	for p.groupAlive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// terminate ends the whole process group: SIGTERM, then SIGKILL after a
// short grace. It returns when the shell has ended.
func (p *proc) terminate() {
	p.signalGroup(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(terminateGrace):
	}
	p.signalGroup(syscall.SIGKILL)
	<-p.done
}

func (p *proc) isEnded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

// append records output in the stream's log and the combined log.
func (p *proc) append(stream int, b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, i := range []int{stream, streamCombined} {
		l := &p.logs[i]
		keep := int64(len(b))
		if room := maxStoredBytes - l.size; keep > room {
			keep = max(room, 0)
		}
		if keep > 0 && l.f != nil {
			n, _ := l.f.WriteAt(b[:keep], l.size)
			l.size += int64(n)
			keep = int64(n)
		}
		l.dropped += int64(len(b)) - keep
	}
	close(p.changed)
	p.changed = make(chan struct{})
}

// read returns up to n bytes of a stream from offset.
func (p *proc) read(stream int, offset int64, n int) ([]byte, int64) {
	p.mu.Lock()
	size, f := p.logs[stream].size, p.logs[stream].f
	p.mu.Unlock()
	if offset >= size || f == nil {
		return nil, size
	}
	buf := make([]byte, min(int64(n), size-offset))
	m, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return buf[:m], size
	}
	return buf[:m], size
}

// closeLogs closes (and when remove is set, deletes) the log files.
func (p *proc) closeLogs(remove bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.logs {
		if f := p.logs[i].f; f != nil {
			f.Close()
			if remove {
				os.Remove(f.Name())
			}
			p.logs[i].f = nil
		}
	}
}

// finish records a finished foreground shell and forgets the oldest ones.
func (st *shellStore) finish(p *proc) {
	st.mu.Lock()
	st.finished = append(st.finished, p.id)
	var old []*proc
	for len(st.finished) > keptForeground {
		id := st.finished[0]
		st.finished = st.finished[1:]
		if q, ok := st.procs[id]; ok {
			old = append(old, q)
			delete(st.procs, id)
		}
	}
	st.mu.Unlock()
	for _, q := range old {
		q.closeLogs(true)
	}
}

// CloseSession ends every shell of the session (background shells and
// running commands: their whole process groups) and deletes their output.
// The LSP layer calls it when a session ends; later calls that start a
// shell in the session fail.
func CloseSession(s *Session) {
	if s == nil {
		return
	}
	st, ok := Get(s, shellStoreKey)
	if !ok || st == nil {
		return
	}
	st.mu.Lock()
	st.closed = true
	procs := make([]*proc, 0, len(st.procs))
	for _, p := range st.procs {
		procs = append(procs, p)
	}
	st.procs = map[string]*proc{}
	st.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.terminate()
			p.closeLogs(true)
		}()
	}
	wg.Wait()
}

// capture keeps the head and the tail of a stream for the result.
type capture struct {
	half  int
	head  []byte
	tail  []byte
	total int64
}

func newCapture(limit int) *capture { return &capture{half: max(limit/2, 1)} }

func (c *capture) write(b []byte) {
	c.total += int64(len(b))
	if room := c.half - len(c.head); room > 0 {
		n := min(room, len(b))
		c.head = append(c.head, b[:n]...)
		b = b[n:]
	}
	if len(b) == 0 {
		return
	}
	c.tail = append(c.tail, b...)
	if len(c.tail) > 2*c.half {
		c.tail = append([]byte(nil), c.tail[len(c.tail)-c.half:]...)
	}
}

// text returns the stream, cut in the middle with a marker when it is
// longer than the cap, and whether it was cut.
func (c *capture) text(id, stream string) (string, bool) {
	if c.binary() {
		return fmt.Sprintf("[%d bytes of binary output, not shown; read them with shell_output {\"id\":%q,\"stream\":%q,\"encoding\":\"base64\"}]\n",
			c.total, id, stream), true
	}
	if c.total <= int64(2*c.half) {
		return string(c.head) + string(c.tail), false
	}
	head := c.head
	for n := len(head); n > 0 && n > len(head)-utf8.UTFMax; n-- {
		if utf8.RuneStart(head[n-1]) {
			if !utf8.FullRune(head[n-1:]) {
				head = head[:n-1]
			}
			break
		}
	}
	tail := c.tail
	if len(tail) > c.half {
		tail = tail[len(tail)-c.half:]
	}
	for k := 0; k < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); k++ {
		tail = tail[1:]
	}
	from := int64(len(head))
	to := c.total - int64(len(tail))
	marker := fmt.Sprintf("\n[… %d bytes cut (bytes %d to %d of %d); read them with shell_output {\"id\":%q,\"stream\":%q,\"since\":%d} …]\n",
		to-from, from, to, c.total, id, stream, from)
	return string(head) + marker + string(tail), true
}

// binary reports whether the stream looks like binary data: a NUL byte,
// or bytes that are not UTF-8, in its head.
func (c *capture) binary() bool {
	head := c.head
	if len(head) > 8000 {
		head = head[:8000]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// Allow a rune cut at the end.
	for k := 1; k < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); k++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}

// streamer sends output as progress reports, whole runes at a time, up to a
// cap.
type streamer struct {
	progress Progress
	left     atomic.Int64
	pending  [2][]byte // an incomplete rune at the end of the last chunk
	stopped  atomic.Bool
}

func (s *streamer) send(stream int, b []byte) {
	if s.stopped.Load() {
		return
	}
	b = append(s.pending[stream], b...)
	s.pending[stream] = nil
	cut := len(b)
	for k := 1; k <= utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				cut = len(b) - k
			}
			break
		}
	}
	s.pending[stream] = append([]byte(nil), b[cut:]...)
	b = b[:cut]
	if len(b) == 0 {
		return
	}
	if s.left.Add(-int64(len(b))) < 0 {
		s.stopped.Store(true)
		s.progress.Report("[… output continues; no more progress reports for this call]\n", -1)
		return
	}
	s.progress.Report(string(b), -1)
}

// foreground runs a process to the end under a time limit, streaming its
// output, and builds the result shared by shell_exec and run_code. extra,
// when set, adds fields to the structured result once the process ended.
func foreground(c *Call, sp startSpec, timeout time.Duration, extra func(p *proc) map[string]any) (*Result, error) {
	st, err := shellsOf(c.Session)
	if err != nil {
		return nil, err
	}
	maxOut := c.Workspace.Config().Shell.MaxOutputBytes
	if maxOut <= 0 {
		maxOut = 256 << 10
	}
	caps := [2]*capture{newCapture(maxOut), newCapture(maxOut)}
	progress := c.Progress
	if progress == nil {
		progress = noProgress{}
	}
	str := &streamer{progress: progress}
	str.left.Store(int64(maxStreamedFactor * maxOut))
	start := time.Now()
	p, err := st.start(sp, func(stream int, chunk []byte) {
		caps[stream].write(chunk)
		str.send(stream, chunk)
	})
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut, cancelled := false, false
	select {
	case <-p.done:
	case <-timer.C:
		timedOut = true
		p.terminate()
	case <-c.Ctx.Done():
		cancelled = true
		p.terminate()
	}
	st.finish(p)
	p.mu.Lock()
	code, sig := p.exitCode, p.signal
	p.mu.Unlock()
	stdout, cutOut := caps[0].text(p.id, "stdout")
	stderr, cutErr := caps[1].text(p.id, "stderr")
	s := map[string]any{
		"exit_code": code, "stdout": stdout, "stderr": stderr, "truncated": cutOut || cutErr,
		"timed_out": timedOut, "duration_ms": time.Since(start).Milliseconds(), "id": p.id, "pid": p.pid,
		"stdout_bytes": caps[0].total, "stderr_bytes": caps[1].total,
	}
	if sig != "" {
		s["signal"] = sig
	}
	if cancelled {
		s["cancelled"] = true
	}
	if extra != nil {
		for k, v := range extra(p) {
			s[k] = v
		}
	}
	content := shellContent(stdout, stderr)
	var e *Error
	switch {
	case cancelled:
		e = &Error{Code: Cancelled, Message: "the call was cancelled; the command was ended", Structured: s}
	case timedOut:
		e = &Error{Code: Timeout, Message: fmt.Sprintf("the command did not finish within %s and was ended; output so far is kept", timeout),
			Recoverable: true, Structured: s}
	case code != 0:
		msg := fmt.Sprintf("the command exited with code %d", code)
		if sig != "" {
			msg = fmt.Sprintf("the command was killed by %s (exit code %d)", sig, code)
		}
		e = &Error{Code: ExecutionError, Message: msg, Recoverable: true, Structured: s}
	}
	if e == nil {
		if content == "" {
			content = "(no output)\n"
		}
		return Success(content+"[exit code 0]", s), nil
	}
	res := failure(e)
	res.Content = content + "[" + e.Message + "]"
	return res, nil
}

// shellContent is the text the model reads: stdout, then stderr under a
// header.
func shellContent(stdout, stderr string) string {
	var b strings.Builder
	b.WriteString(stdout)
	if stdout != "" && !strings.HasSuffix(stdout, "\n") {
		b.WriteByte('\n')
	}
	if stderr != "" {
		b.WriteString("[stderr]\n")
		b.WriteString(stderr)
		if !strings.HasSuffix(stderr, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// cgroup is a pids cgroup (v1 or v2) that holds every process of one shell,
// so that processes which leave the process group (setsid, daemons) still
// end with it; for run_code also a memory cgroup that caps the memory of
// the whole tree. All methods are safe on a nil *cgroup.
type cgroup struct {
	dir    string
	memDir string // the memory cgroup (v1), or dir (v2), when memory is capped
}

var cgroupSeq atomic.Int64

// newCgroup makes a cgroup under the server's own pids cgroup, with at most
// pidsMax processes when pidsMax > 0, and at most memMax bytes of memory for
// all its processes together when memMax > 0 and the machine allows a
// memory cgroup (memDir is empty when it does not). It returns nil when the
// machine allows no pids cgroup (no controller, not permitted).
func newCgroup(pidsMax int, memMax int64) *cgroup {
	parent := pidsCgroupParent()
	if parent == "" {
		return nil
	}
	sweepOnce.Do(func() { sweepCgroups(parent) })
	name := fmt.Sprintf("%s%d-%d", cgroupPrefix(), os.Getpid(), cgroupSeq.Add(1))
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	if pidsMax > 0 {
		if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(pidsMax)), 0o644); err != nil {
			os.Remove(dir)
			return nil
		}
	}
	g := &cgroup{dir: dir}
	if memMax > 0 {
		g.memDir = capMemory(dir, name, memMax)
	}
	return g
}

// capMemory caps the memory (and swap) of a cgroup: in the pids cgroup's
// own folder on cgroup v2, in a memory cgroup of the same name on v1. It
// returns the folder, or "" when the machine allows no memory cgroup.
func capMemory(pidsDir, name string, memMax int64) string {
	limit := []byte(strconv.FormatInt(memMax, 10))
	if _, err := os.Stat(filepath.Join(pidsDir, "memory.max")); err == nil {
		if os.WriteFile(filepath.Join(pidsDir, "memory.max"), limit, 0o644) != nil {
			return ""
		}
		_ = os.WriteFile(filepath.Join(pidsDir, "memory.swap.max"), []byte("0"), 0o644)
		return pidsDir
	}
	parent := v1CgroupParent("memory")
	if parent == "" {
		return ""
	}
	dir := filepath.Join(parent, name)
	if os.Mkdir(dir, 0o755) != nil {
		return ""
	}
	if os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), limit, 0o644) != nil {
		os.Remove(dir)
		return ""
	}
	// Memory plus swap, where the kernel accounts swap: no way around the
	// cap by swapping.
	_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), limit, 0o644)
	return dir
}

// selfCgroups returns the server's cgroups, a line of /proc/self/cgroup
// each: hierarchy id, controllers (comma-separated; "" on the unified v2
// hierarchy) and path.
func selfCgroups() [][3]string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	var out [][3]string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if parts := strings.SplitN(line, ":", 3); len(parts) == 3 {
			out = append(out, [3]string{parts[0], parts[1], parts[2]})
		}
	}
	return out
}

// v1CgroupParent finds the server's cgroup folder of a cgroup v1
// controller, or "".
func v1CgroupParent(controller string) string {
	for _, cg := range selfCgroups() {
		for _, c := range strings.Split(cg[1], ",") {
			if c == controller {
				dir := filepath.Join("/sys/fs/cgroup", controller, cg[2])
				if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err == nil {
					return dir
				}
			}
		}
	}
	return ""
}

var sweepOnce sync.Once

// cgroupPrefix starts the names of this server's cgroups: "agentls-", the
// pid namespace (so that a sweep only judges servers whose pids it can
// see), and a dash.
func cgroupPrefix() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "agentls-0-"
	}
	ns = strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	return "agentls-" + ns + "-"
}

// sweepCgroups ends what servers that died without closing their sessions
// left behind: the processes of their cgroups, and the cgroups.
func sweepCgroups(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	prefix := cgroupPrefix()
	for _, e := range ents {
		var owner, n int
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue // another pid namespace's, whose servers this one cannot see
		}
		if _, err := fmt.Sscanf(rest, "%d-%d", &owner, &n); err != nil || owner == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", owner)); err == nil {
			continue // the server still runs
		}
		g := &cgroup{dir: filepath.Join(parent, e.Name())}
		if mem := v1CgroupParent("memory"); mem != "" {
			if _, err := os.Stat(filepath.Join(mem, e.Name())); err == nil {
				g.memDir = filepath.Join(mem, e.Name())
			}
		}
		g.kill(syscall.SIGKILL)
		g.remove()
	}
}

// wrap returns an argv that joins the cgroup and then execs argv: a fixed sh
// script writes its own pid to cgroup.procs, so the program never runs
// outside the cgroup.
func (g *cgroup) wrap(argv []string) []string {
	if g.memDir != "" && g.memDir != g.dir {
		return append([]string{"/bin/sh", "-c", `echo $$ > "$0" && echo $$ > "$1" || exit 125; shift; exec "$@"`,
			filepath.Join(g.dir, "cgroup.procs"), filepath.Join(g.memDir, "cgroup.procs")}, argv...)
	}
	return append([]string{"/bin/sh", "-c", `echo $$ > "$0" || exit 125; exec "$@"`,
		filepath.Join(g.dir, "cgroup.procs")}, argv...)
}

func (g *cgroup) pids() []int {
	if g == nil {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// kill signals every process of the cgroup.
func (g *cgroup) kill(sig syscall.Signal) {
	for _, pid := range g.pids() {
		killPid(pid, sig)
	}
}

// alive reports whether a process of the cgroup is left (zombies that
// nobody reaped do not count).
func (g *cgroup) alive() bool {
	for _, pid := range g.pids() {
		if running(pid) {
			return true
		}
	}
	return false
}

// remove deletes the cgroup once it is empty, killing stragglers.
func (g *cgroup) remove() {
	if g == nil {
		return
	}
	for range 50 {
		if err := os.Remove(g.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			break
		}
		g.kill(syscall.SIGKILL)
		time.Sleep(20 * time.Millisecond)
	}
	if g.memDir != "" && g.memDir != g.dir {
		for range 50 {
			if err := os.Remove(g.memDir); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// pidsCgroupParent finds the server's pids cgroup folder: the pids
// hierarchy of cgroup v1, or the unified hierarchy of v2 when the pids
// controller is enabled for children.
func pidsCgroupParent() string {
	if dir := v1CgroupParent("pids"); dir != "" {
		return dir
	}
	for _, cg := range selfCgroups() {
		if cg[0] == "0" && cg[1] == "" {
			dir := filepath.Join("/sys/fs/cgroup", cg[2])
			if sc, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control")); err == nil &&
				strings.Contains(" "+strings.TrimSpace(string(sc))+" ", " pids ") {
				return dir
			}
		}
	}
	return ""
}
