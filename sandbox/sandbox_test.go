package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	iso := Args("/usr/bin/bwrap", Spec{Mode: Isolate, Writable: []string{"/w"}, ReadOnly: []string{"/code"}, Dir: "/w/sub"}, 3)
	net := Args("/usr/bin/bwrap", Spec{Mode: Isolate, Writable: []string{"/w"}, Network: true}, -1)
	life := Args("/usr/bin/bwrap", Spec{Mode: Lifetime, Dir: "/w"}, 3)
	has := func(a []string, seq ...string) bool {
		for i := 0; i+len(seq) <= len(a); i++ {
			if slices.Equal(a[i:i+len(seq)], seq) {
				return true
			}
		}
		return false
	}
	for _, tt := range []struct {
		name string
		args []string
		seq  []string
		want bool
	}{
		{"isolate unshares everything", iso, []string{"--unshare-all"}, true},
		{"isolate has no network", iso, []string{"--share-net"}, false},
		{"isolate dies with the server", iso, []string{"--die-with-parent"}, true},
		{"isolate has its own session", iso, []string{"--new-session"}, true},
		{"isolate drops capabilities", iso, []string{"--cap-drop", "ALL"}, true},
		{"isolate binds the workspace", iso, []string{"--bind", "/w", "/w"}, true},
		{"isolate binds the code read-only", iso, []string{"--ro-bind", "/code", "/code"}, true},
		{"isolate has a private /tmp", iso, []string{"--tmpfs", "/tmp"}, true},
		{"isolate has read-only sysctls", iso, []string{"--ro-bind", "/proc/sys", "/proc/sys"}, true},
		{"isolate reports on fd 3", iso, []string{"--info-fd", "3"}, true},
		{"isolate works in the folder", iso, []string{"--chdir", "/w/sub"}, true},
		{"isolate shows no shadow", iso, []string{"--ro-bind-try", "/etc/shadow", "/etc/shadow"}, false},
		{"isolate shows no home", iso, []string{"--bind", "/home", "/home"}, false},
		{"isolate without network has no resolv.conf", iso, []string{"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"}, false},
		{"network shares the network", net, []string{"--share-net"}, true},
		{"network resolves names", net, []string{"--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf"}, true},
		{"lifetime keeps the file system", life, []string{"--dev-bind", "/", "/"}, true},
		{"lifetime has its own pids", life, []string{"--unshare-pid"}, true},
		{"lifetime keeps the network", life, []string{"--unshare-all"}, false},
		{"lifetime dies with the server", life, []string{"--die-with-parent"}, true},
	} {
		if got := has(tt.args, tt.seq...); got != tt.want {
			t.Errorf("%s: %v in %v is %v", tt.name, tt.seq, tt.args, got)
		}
	}
	for _, a := range [][]string{iso, net, life} {
		if a[len(a)-1] != "--" {
			t.Errorf("does not end with --: %v", a)
		}
	}
	env := Env([]string{"HOME=/root", "PATH=/usr/bin", "SSH_AUTH_SOCK=/run/user/0/ssh", "XDG_RUNTIME_DIR=/run/user/0", "TMPDIR=/x"})
	if want := []string{"PATH=/usr/bin", "HOME=/tmp", "TMPDIR=/tmp"}; !slices.Equal(env, want) {
		t.Errorf("Env = %v, want %v", env, want)
	}
}

// TestFindWithoutBwrap: a PATH without bwrap gives ErrNotInstalled, which
// names the package.
func TestFindWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := Find(); err != ErrNotInstalled || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf("Find = %v", err)
	}
}

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
	if runtime.GOOS != "linux" {
		t.Skip("parent-death signals are Linux's")
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
