//go:build linux

package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/sandbox"
)

// marker returns an argument for sleep that no other process has: a long
// duration whose decimals are unique to the test.
func marker(base int) string {
	return fmt.Sprintf("%d.%06d", base, time.Now().UnixNano()%1000000)
}

// gone waits a little for no process to match pattern, and returns (and
// kills, so that a failing test leaves nothing) those that are left.
func gone(pattern string) string {
	testenv.Eventually(3*time.Second, func() bool { return testenv.Procs(pattern) == "" })
	left := testenv.Procs(pattern)
	for _, line := range strings.Split(left, "\n") {
		if pid, err := strconv.Atoi(strings.Fields(line + " x")[0]); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return left
}

// mode is how a test runs its processes: with bwrap's pid namespace (where
// bwrap works), with a pids cgroup only, or with the process group only.
type mode struct {
	name     string
	noBwrap  bool
	noCgroup bool
}

var modes = []mode{{"bwrap", false, false}, {"cgroup", true, false}, {"group", true, true}}

// inEachMode runs test once in each mode, as a subtest named after it,
// with the mode set up.
func inEachMode(t *testing.T, test func(t *testing.T, m mode)) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			m.setup(t)
			test(t, m)
		})
	}
}

// setup prepares a mode: it hides bwrap from PATH when the mode runs
// without it, and skips when the machine lacks what the mode needs.
func (m mode) setup(t *testing.T) {
	t.Helper()
	if m.noBwrap {
		t.Setenv("PATH", t.TempDir()) // programs are named by absolute path
	} else if _, err := sandbox.Find(); err != nil {
		t.Skipf("no bwrap: %v", err)
	}
	if !m.noCgroup && m.noBwrap {
		g := NewCgroup(0, 0)
		if g == nil {
			t.Skip("no pids cgroup here")
		}
		g.Remove()
	}
}

// sleepsRun waits until n sleeps of marker mk run, and fails the test if
// they do not: a later check that they are gone would prove nothing about
// processes that never ran. The marked sleeps are started as "sleep" (found
// on PATH), the name testenv.SleepPids knows them by. The wait is a hang
// guard only.
func sleepsRun(t *testing.T, mk string, n int) {
	t.Helper()
	if !testenv.Eventually(20*time.Second, func() bool { return len(testenv.SleepPids(mk)) == n }) {
		pids := testenv.SleepPids(mk)
		testenv.KillSleeps(mk) // leave nothing behind
		t.Fatalf("%d sleeps of %s run, want %d", len(pids), mk, n)
	}
}

func (m mode) spec(script string) Spec {
	return Spec{Argv: []string{"/bin/sh", "-c", script}, Dir: "/", Env: []string{"PATH=/usr/bin:/bin"},
		Command: script, NoCgroup: m.noCgroup}
}

// TestEndsWithLeader: when the leader exits, what it left running ends
// with it: a child in its process group in every mode, and a child that
// left the group (setsid) where a cgroup or a pid namespace holds it.
func TestEndsWithLeader(t *testing.T) {
	inEachMode(t, func(t *testing.T, m mode) {
		st := NewStore()
		defer st.Close()
		// The leader waits for the gate file, so that the children are
		// seen running before it exits.
		gate := filepath.Join(t.TempDir(), "gate")
		inGroup, escaped := marker(700), marker(701)
		marks := []string{inGroup}
		script := "sleep " + inGroup + " & "
		if !m.noCgroup || !m.noBwrap {
			marks = append(marks, escaped)
			script += "/usr/bin/setsid sleep " + escaped + " >/dev/null 2>&1 & "
		}
		script += "until [ -e '" + gate + "' ]; do /bin/sleep 0.05; done; echo done"
		p, err := st.Start(m.spec(script), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, mk := range marks {
			sleepsRun(t, mk, 1)
		}
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Done():
		case <-time.After(20 * time.Second):
			t.Fatal("the process did not end")
		}
		ended, code, sig := p.Exit()
		if !ended || code != 0 || sig != "" {
			t.Errorf("exit: ended %v code %d signal %q", ended, code, sig)
		}
		if out, _ := p.Read(Stdout, 0, 100); string(out) != "done\n" {
			t.Errorf("stdout %q", out)
		}
		for _, mk := range marks {
			if left := gone("sleep " + mk); left != "" {
				t.Errorf("left behind:\n%s", left)
			}
		}
		if dirs := Cgroups(); len(dirs) > 0 {
			t.Errorf("cgroups left: %v", dirs)
		}
	})
}

// TestStoreClose: Close ends every process of the Store (a running
// background one with its children, and a finished one), forgets them, and
// a Store that is closed starts nothing.
func TestStoreClose(t *testing.T) {
	inEachMode(t, func(t *testing.T, m mode) {
		st := NewStore()
		mk := marker(702)
		sp := m.spec("sleep " + mk + " & sleep " + mk)
		sp.Background = true
		var ids []string
		for range 3 {
			p, err := st.Start(sp, nil)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID())
		}
		short, err := st.Start(m.spec("echo hi"), nil)
		if err != nil {
			t.Fatal(err)
		}
		<-short.Done()
		st.Finish(short)
		if got := st.IDs(); len(got) != 4 {
			t.Fatalf("ids %v", got)
		}
		if p, ok := st.Get(ids[1]); !ok || p.ID() != ids[1] {
			t.Fatalf("Get(%s): %v %v", ids[1], p, ok)
		}
		sleepsRun(t, mk, 6) // two of each of the three background processes
		st.Close()
		if left := gone("sleep " + mk); left != "" {
			t.Errorf("left behind:\n%s", left)
		}
		if _, ok := st.Get(ids[0]); ok || len(st.IDs()) != 0 {
			t.Errorf("a closed store still holds %v", st.IDs())
		}
		if _, err := st.Start(m.spec("true"), nil); !errors.Is(err, ErrClosed) {
			t.Errorf("start after Close: %v, want ErrClosed", err)
		}
		st.Close() // twice is harmless
	})
}

// TestStartErrors: the errors of Start are typed, so that callers can
// tell the model's mistakes from the machine's.
func TestStartErrors(t *testing.T) {
	modes[2].setup(t) // no bwrap or cgroup to wrap the program: it is started itself
	st := NewStore()
	defer st.Close()
	_, err := st.Start(Spec{Argv: []string{"agentls-no-such-program"}, Dir: "/", NoCgroup: true}, nil)
	var se *StartError
	if !errors.As(err, &se) || se.Program != "agentls-no-such-program" {
		t.Errorf("missing program: %v (%T), want a StartError", err, err)
	}
	_, err = st.Start(Spec{Argv: []string{"/bin/true"}, Dir: "/", Box: &sandbox.Spec{Mode: sandbox.Isolate, Dir: "/"}}, nil)
	var be *SandboxError
	if !errors.As(err, &be) || !errors.Is(err, sandbox.ErrNotInstalled) {
		t.Errorf("sandbox without bwrap: %v (%T), want a SandboxError", err, err)
	}
	if len(st.IDs()) != 0 {
		t.Errorf("failed starts are kept: %v", st.IDs())
	}
}

// TestBackgroundLimit: at most MaxBackground background processes run at
// once in a Store; foreground ones do not count, and an ended one frees
// its place.
func TestBackgroundLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts many processes")
	}
	m := modes[2] // the process group only: cheap
	m.setup(t)
	st := NewStore()
	defer st.Close()
	mk := marker(703)
	sp := m.spec("exec /bin/sleep " + mk)
	sp.Background = true
	var first *Proc
	for i := range MaxBackground {
		p, err := st.Start(sp, nil)
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if first == nil {
			first = p
		}
	}
	_, err := st.Start(sp, nil)
	var tm *TooManyError
	if !errors.As(err, &tm) || tm.Running != MaxBackground {
		t.Fatalf("start %d: %v, want a TooManyError", MaxBackground+1, err)
	}
	if p, err := st.Start(m.spec("true"), nil); err != nil {
		t.Errorf("a foreground process counted against the limit: %v", err)
	} else {
		<-p.Done()
	}
	first.Terminate()
	if _, err := st.Start(sp, nil); err != nil {
		t.Errorf("an ended process still counts: %v", err)
	}
}

// TestTerminate: Terminate ends a process that ignores SIGTERM (SIGKILL
// after the grace), reports the signal, and returns at once on an ended
// process.
func TestTerminate(t *testing.T) {
	inEachMode(t, func(t *testing.T, m mode) {
		st := NewStore()
		defer st.Close()
		mk := marker(704)
		p, err := st.Start(m.spec("trap '' TERM; echo ready; /bin/sleep "+mk+"; /bin/sleep "+mk), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.WaitOutput(context.Background(), Stdout, 0, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		p.Terminate()
		ended, code, sig := p.Exit()
		if !ended || sig == "" || code <= 128 {
			t.Errorf("after Terminate: ended %v code %d signal %q", ended, code, sig)
		}
		if left := gone("sleep " + mk); left != "" {
			t.Errorf("left behind:\n%s", left)
		}
		p.Terminate() // ended: returns at once
	})
}

// TestOutput: output is kept per stream and combined, read from an offset,
// and WaitOutput returns on new output, at the end, at its limit, and with
// the context's error when the context ends.
func TestOutput(t *testing.T) {
	t.Parallel()
	st := NewStore()
	defer st.Close()
	var mu sync.Mutex
	var seen [2]bytes.Buffer
	p, err := st.Start(Spec{Argv: []string{"/bin/sh", "-c", "echo out; echo err >&2; read x </dev/null; sleep 0.5; echo late"},
		Dir: "/", Env: []string{"PATH=/usr/bin:/bin"}}, func(s Stream, b []byte) {
		mu.Lock()
		seen[s].Write(b)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.WaitOutput(ctx, Stderr, 0, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if out, size := p.Read(Stderr, 0, 100); string(out) != "err\n" || size != 4 {
		t.Errorf("stderr %q (%d)", out, size)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.WaitOutput(cctx, Stdout, 100, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
	if err := p.WaitOutput(ctx, Stdout, 100, time.Minute); err != nil { // returns at the end
		t.Fatal(err)
	}
	<-p.Done()
	if out, _ := p.Read(Stdout, 4, 100); string(out) != "late\n" {
		t.Errorf("stdout from 4: %q", out)
	}
	if out, size := p.Read(Combined, 0, 100); size != 13 || !strings.Contains(string(out), "late") {
		t.Errorf("combined %q (%d)", out, size)
	}
	if out, size := p.Read(Stdout, 100, 10); out != nil || size != 9 {
		t.Errorf("past the end: %q %d", out, size)
	}
	if size, dropped := p.Size(Stdout); size != 9 || dropped != 0 {
		t.Errorf("size %d dropped %d", size, dropped)
	}
	mu.Lock()
	if seen[Stdout].String() != "out\nlate\n" || seen[Stderr].String() != "err\n" {
		t.Errorf("sink saw %q and %q", seen[Stdout].String(), seen[Stderr].String())
	}
	mu.Unlock()
}

// TestEndAll: EndAll ends the processes of every Store. Not parallel: it
// would end those of the tests running beside it too.
func TestEndAll(t *testing.T) {
	mk := marker(705)
	var stores []*Store
	for range 2 {
		st := NewStore()
		defer st.Close()
		stores = append(stores, st)
		sp := Spec{Argv: []string{"/bin/sh", "-c", "sleep " + mk + " & sleep " + mk}, Dir: "/", Background: true}
		if _, err := st.Start(sp, nil); err != nil {
			t.Fatal(err)
		}
	}
	sleepsRun(t, mk, 4) // two of each Store's process
	EndAll(10 * time.Second)
	if left := gone("sleep " + mk); left != "" {
		t.Errorf("left behind:\n%s", left)
	}
	for _, st := range stores {
		for _, id := range st.IDs() {
			p, _ := st.Get(id)
			if ended, _, _ := p.Exit(); !ended {
				t.Errorf("%s still running", id)
			}
		}
	}
}

// TestSweepCgroups: the cgroup of a server that died is emptied and removed.
func TestSweepCgroups(t *testing.T) {
	t.Parallel()
	parent := pidsCgroupParent()
	if parent == "" {
		t.Skip("no pids cgroup here")
	}
	// A pid that no process has: the highest one of a short-lived process.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	dir := filepath.Join(parent, fmt.Sprintf("%s%d-1", cgroupPrefix(), dead))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot make a cgroup: %v", err)
	}
	mk := fmt.Sprintf("600.%d", time.Now().UnixNano()%1000000)
	procs := filepath.Join(dir, "cgroup.procs")
	orphan := exec.Command("/bin/sh", "-c", `echo $$ > "$0" && exec sleep "$1"`, procs, mk)
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		orphan.Process.Kill() // (an error once it has ended)
		os.Remove(dir)
	})
	exited := make(chan error, 1)
	go func() { exited <- orphan.Wait() }()
	// The sweep is tested only if the sleep runs in the cgroup: wait for it
	// there (the wait is a hang guard), and fail if the shell could not put
	// itself in and ended instead.
	pid := orphan.Process.Pid
	inCgroup := func() bool {
		b, _ := os.ReadFile(procs)
		return slices.Contains(testenv.SleepPids(mk), pid) && slices.Contains(strings.Fields(string(b)), strconv.Itoa(pid))
	}
	if !testenv.Eventually(20*time.Second, func() bool { return inCgroup() || len(exited) > 0 }) || !inCgroup() {
		select {
		case err := <-exited:
			t.Fatalf("the process did not join cgroup %s: it ended (%v)", dir, err)
		default:
			t.Fatalf("the sleep of %s does not run in cgroup %s", mk, dir)
		}
	}
	sweepCgroups(parent)
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("cgroup %s left", dir)
	}
	if !testenv.Eventually(5*time.Second, func() bool { return len(testenv.SleepPids(mk)) == 0 }) {
		t.Errorf("process of a dead server left: %v", testenv.SleepPids(mk))
	}
}
