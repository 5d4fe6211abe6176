// Process supervision for shell_exec, shell_background and run_code: starting
// a command in its own process group, keeping its output for shell_output,
// signalling and ending the whole group, and ending a session's shells.

package tools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentls/agentls/sandbox"
)

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
