// Starting a process in its own process group (and cgroup, and pid
// namespace where the machine allows), keeping its output in logs, and
// signalling and ending the whole group.

package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentls/agentls/sandbox"
)

// Stream is one of a process's output streams. Combined interleaves
// stdout and stderr as they arrive.
type Stream int

// The streams of a process's output.
const (
	Stdout Stream = iota
	Stderr
	Combined
)

var streamNames = [...]string{"stdout", "stderr", "combined"}

// String is the stream's name: stdout, stderr or combined.
func (s Stream) String() string {
	if s < 0 || int(s) >= len(streamNames) {
		return fmt.Sprintf("Stream(%d)", int(s))
	}
	return streamNames[s]
}

// ParseStream returns the stream of a name (stdout, stderr, combined);
// any other name is Combined.
func ParseStream(name string) Stream {
	for i, n := range streamNames {
		if n == name {
			return Stream(i)
		}
	}
	return Combined
}

// MaxStoredBytes caps each stream of a process kept in its logs; what
// comes beyond is counted (Dropped) but not kept.
const MaxStoredBytes = 256 << 20

// terminateGrace is how long a process group has between SIGTERM and
// SIGKILL.
const terminateGrace = 500 * time.Millisecond

// Spec is a process to start.
type Spec struct {
	Argv    []string
	Dir     string
	Env     []string
	Attr    *syscall.SysProcAttr // its own process group is forced
	Command string               // what the process is called in reports
	// Background processes count against the Store's limit of running
	// background processes.
	Background bool
	// Cgroup, when set, is the cgroup to run in (one with limits, made by
	// the caller, which the process's end removes); otherwise Start makes
	// one without a limit where it can, unless NoCgroup.
	Cgroup   *Cgroup
	NoCgroup bool
	// Box, when set, is the sandbox Argv runs in (bwrap must work: the
	// caller checked; a SandboxError otherwise); when nil, Argv runs in
	// bwrap's pid namespace only (sandbox.Lifetime) where bwrap works, and
	// plainly elsewhere.
	Box *sandbox.Spec
	// Prefix runs before bwrap (run_code's prlimit).
	Prefix []string
}

// Proc is one started process: its process group and the logs of its
// output, kept in unlinked temporary files. Its methods are safe for
// concurrent use.
type Proc struct {
	id         string
	command    string
	started    time.Time
	pid        int
	background bool
	// cgroup tracks every process of the group, also those that left the
	// process group (setsid); nil where the machine allows none.
	cgroup *Cgroup
	// nsInit is the host pid of the first process of the pid namespace
	// (bwrap's), nsID the namespace ("pid:[inode]"); zero when the process
	// runs without bwrap. Killing nsInit kills the whole tree.
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
	dropped int64 // bytes beyond MaxStoredBytes, not kept
}

// ID is the process's id in its Store (sh_1, sh_2, …).
func (p *Proc) ID() string { return p.id }

// Pid is the host pid of the process group's leader.
func (p *Proc) Pid() int { return p.pid }

// Command is Spec.Command.
func (p *Proc) Command() string { return p.command }

// Done is closed when the process has ended: its group is gone and its
// output read.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exit reports whether the process has ended and, when it has, its exit
// code (128+n for signal n, like a shell) and the signal's name ("" when
// it exited).
func (p *Proc) Exit() (ended bool, code int, signal string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended, p.exitCode, p.signal
}

// Size returns how many bytes of a stream are kept and how many beyond
// MaxStoredBytes were not.
func (p *Proc) Size(s Stream) (size, dropped int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs[s].size, p.logs[s].dropped
}

// WaitOutput waits up to d until a stream holds more than since bytes or
// the process has ended. It returns ctx's error when ctx ends first.
func (p *Proc) WaitOutput(ctx context.Context, s Stream, since int64, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		size, ended, changed := p.logs[s].size, p.ended, p.changed
		p.mu.Unlock()
		if size > since || ended {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// start starts a process in its own process group under id. sink, when
// set, sees every chunk of output as it arrives (from two goroutines, one
// a stream).
func start(id string, sp Spec, sink func(s Stream, chunk []byte)) (*Proc, error) {
	p := &Proc{id: id, command: sp.Command, background: sp.Background, changed: make(chan struct{}),
		done: make(chan struct{})}
	var pipes []*os.File // closed, with the logs, when the start fails before the program runs
	fail := func(err error) (*Proc, error) {
		for _, f := range pipes {
			f.Close()
		}
		p.closeLogs(true)
		return nil, err
	}
	for i := range p.logs {
		f, err := os.CreateTemp("", "agentls-"+id+"-"+streamNames[i]+"-*")
		if err != nil {
			return fail(fmt.Errorf("open shell output log: %w", err))
		}
		// The log lives as long as the open file: unlinked at once (where
		// the system allows), its space returns when it is closed, when the
		// Proc is garbage, or when the server exits, whoever forgot to
		// close the Store.
		_ = os.Remove(f.Name())
		p.logs[i].f = f
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return fail(fmt.Errorf("pipe: %w", err))
	}
	pipes = append(pipes, outR, outW)
	errR, errW, err := os.Pipe()
	if err != nil {
		return fail(fmt.Errorf("pipe: %w", err))
	}
	pipes = append(pipes, errR, errW)
	argv := sp.Argv
	box := sp.Box
	var bwrap string
	if box == nil {
		if b, err := sandbox.Find(); err == nil {
			bwrap, box = b, &sandbox.Spec{Mode: sandbox.Lifetime, Dir: sp.Dir}
		}
	} else if bwrap, err = sandbox.Find(); err != nil {
		return fail(&SandboxError{Err: err})
	}
	var infoR, infoW *os.File
	if box != nil {
		if infoR, infoW, err = os.Pipe(); err != nil {
			return fail(fmt.Errorf("pipe: %w", err))
		}
		argv = append(sandbox.Args(bwrap, *box, 3), argv...)
	}
	argv = append(append([]string(nil), sp.Prefix...), argv...)
	p.cgroup = sp.Cgroup
	if p.cgroup == nil && !sp.NoCgroup {
		p.cgroup = NewCgroup(0, 0)
	}
	if p.cgroup != nil {
		argv = p.cgroup.wrap(argv)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = sp.Dir, sp.Env
	cmd.Stdout, cmd.Stderr = outW, errW
	if infoW != nil {
		cmd.ExtraFiles = []*os.File{infoW}
	}
	cmd.SysProcAttr = ownGroup(sp.Attr)
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
		p.cgroup.Remove()
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, &StartError{Program: sp.Argv[0], Err: ee.Err}
		}
		return nil, fmt.Errorf("start %s: %w", sp.Argv[0], err)
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
					p.append(Stream(i), buf[:n])
					if sink != nil {
						sink(Stream(i), buf[:n])
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
		// No child outlives its leader: end what is left of the group.
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
		p.cgroup.Remove()
		p.mu.Lock()
		p.ended, p.exitCode, p.signal, p.endedAt = true, code, sig, time.Now()
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
		live.Delete(p)
		close(p.done)
	}()
	return p, nil
}

// signalGroup signals the process group (and the cgroup, when there is one)
// unless the group is known to have ended. A process in a pid namespace
// gets other signals than SIGKILL on every process of the namespace but its
// first (bwrap, which ends when the command does), so that the command has
// its grace; SIGKILL goes to the namespace's first process, which takes
// the whole namespace with it, whatever left the group or the cgroup.
func (p *Proc) signalGroup(sig syscall.Signal) {
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
func (p *Proc) groupAlive() bool {
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

// procStat returns what follows the command's name in /proc/PID/stat
// (" state ppid pgrp ..."; the name, in parentheses, may hold anything, so
// the fields follow the last ')'), or false when there is no such process.
func procStat(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", false
	}
	return s[i+1:], true
}

// running reports whether a process exists and is not a zombie.
func running(pid int) bool {
	fields, ok := procStat(pid)
	return ok && len(fields) > 1 && fields[1] != 'Z' && fields[1] != 'X'
}

// groupMembers lists the processes of a process group from /proc.
func groupMembers(pgid int) []int {
	return procPIDs(func(pid int) bool {
		fields, ok := procStat(pid)
		if !ok {
			return false
		}
		var state string
		var ppid, pg int
		_, err := fmt.Sscanf(fields, " %s %d %d", &state, &ppid, &pg)
		return err == nil && pg == pgid
	})
}

// awaitGroupGone waits up to d for the group to end.
func (p *Proc) awaitGroupGone(d time.Duration) {
	deadline := time.Now().Add(d)
	for p.groupAlive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}

// Terminate ends the whole process group: SIGTERM, then SIGKILL after a
// short grace. It returns when the process has ended; on an ended process
// it returns at once.
func (p *Proc) Terminate() {
	p.signalGroup(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(terminateGrace):
	}
	p.signalGroup(syscall.SIGKILL)
	<-p.done
}

func (p *Proc) isEnded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

// append records output in the stream's log and the combined log.
func (p *Proc) append(stream Stream, b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, i := range []Stream{stream, Combined} {
		l := &p.logs[i]
		keep := int64(len(b))
		if room := MaxStoredBytes - l.size; keep > room {
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

// Read returns up to n bytes of a stream from offset, and the stream's
// size.
func (p *Proc) Read(stream Stream, offset int64, n int) ([]byte, int64) {
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
func (p *Proc) closeLogs(remove bool) {
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
