package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Procs lists the live processes (zombies excluded) whose command line,
// its arguments joined by spaces, contains pattern: one "pid cmdline" a
// line. It reads /proc (so it needs no PATH) and lists nothing where there
// is none.
func Procs(pattern string) string {
	var out []string
	eachProc(func(pid int, args []string) {
		if cmdline := strings.Join(args, " "); strings.Contains(cmdline, pattern) {
			out = append(out, fmt.Sprintf("%d %s", pid, cmdline))
		}
	})
	return strings.Join(out, "\n")
}

// SleepPids returns the pids of the live sleep processes whose first
// argument starts with token. Tests name the processes they start with a
// sleep of a unique duration; the shells and wrappers whose command lines
// also hold the token are not counted.
func SleepPids(token string) []int {
	var out []int
	eachProc(func(pid int, args []string) {
		if len(args) > 1 && args[0] == "sleep" && strings.HasPrefix(args[1], token) {
			out = append(out, pid)
		}
	})
	return out
}

// KillSleeps sends SIGKILL to the sleeps SleepPids(token) finds, so that a
// test leaves none of its marked processes behind.
func KillSleeps(token string) {
	for _, pid := range SleepPids(token) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// eachProc calls fn with the pid and arguments of every live process but
// this one.
func eachProc(fn func(pid int, args []string)) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 || !Alive(pid) {
			continue
		}
		fn(pid, strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"))
	}
}

// Alive reports whether process pid exists and is not a zombie, from
// /proc/pid/stat ("pid (comm) state …").
func Alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
