package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const childEnv = "AGENTLS_SANDBOX_TEST_CHILD"

// TestStartSurvivesThreadExitDiesWithProcess re-runs the test binary as a
// "server" that starts two sleeps with Start: one called from a goroutine
// locked to its OS thread that then exits without unlocking, so that the
// runtime ends that thread (a child whose parent-death signal were tied to
// the thread that called Start would then die), and one from a plain
// goroutine. Both sleeps live on while the "server" does, and both die
// when it is killed with SIGKILL.
func TestStartSurvivesThreadExitDiesWithProcess(t *testing.T) {
	t.Parallel()
	if os.Getenv(childEnv) != "" {
		type started struct{ tid, pid int }
		done := make(chan started)
		var call func()
		call = func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			if syscall.Gettid() == os.Getpid() {
				// The runtime never ends the main thread (it parks it),
				// so keep it here and call Start from another thread,
				// one that does end.
				go call()
				select {}
			}
			cmd := exec.Command("sleep", "1000")
			if err := Start(cmd); err != nil {
				fmt.Println("error", err)
				os.Exit(1)
			}
			done <- started{syscall.Gettid(), cmd.Process.Pid}
		}
		go call()
		a := <-done
		cmd := exec.Command("sleep", "1000")
		if err := Start(cmd); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		// Report only once the thread that called Start has ended, so that
		// a parent-death signal tied to it has fired. The deadline is a
		// hang guard only.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", a.tid)); errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				fmt.Println("error: the thread that called Start did not end")
				os.Exit(1)
			}
		}
		fmt.Println(a.pid, cmd.Process.Pid)
		time.Sleep(time.Hour)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartSurvivesThreadExitDiesWithProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(line) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("child said %q", line)
		}
		pids = append(pids, pid)
	}
	alive := func(pid int) bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
	}
	time.Sleep(200 * time.Millisecond)
	for _, pid := range pids {
		if !alive(pid) {
			t.Errorf("sleep %d died when a thread of its parent ended", pid)
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("sleep %d outlived its parent's SIGKILL", pid)
		}
	}
}
