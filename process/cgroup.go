// Cgroups that hold every process of a started process: the pids cgroup
// (v1 or v2), an optional memory cgroup, the server's own cgroups from
// /proc/self/cgroup, and the sweep of what servers that died left behind.

package process

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Cgroup is a pids cgroup (v1 or v2) that holds every process of one
// started process, so that processes which leave the process group
// (setsid, daemons) still end with it; optionally also a memory cgroup that
// caps the memory of the whole tree. All methods are safe on a nil
// *Cgroup.
type Cgroup struct {
	dir    string
	memDir string // the memory cgroup (v1), or dir (v2), when memory is capped
}

var cgroupSeq atomic.Int64

// NewCgroup makes a cgroup under the server's own pids cgroup, with at most
// pidsMax processes when pidsMax > 0, and at most memMax bytes of memory for
// all its processes together when memMax > 0 and the machine allows a
// memory cgroup (memDir is empty when it does not). It returns nil when the
// machine allows no pids cgroup (no controller, not permitted).
func NewCgroup(pidsMax int, memMax int64) *Cgroup {
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
	g := &Cgroup{dir: dir}
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
		g := &Cgroup{dir: filepath.Join(parent, e.Name())}
		if mem := v1CgroupParent("memory"); mem != "" {
			if _, err := os.Stat(filepath.Join(mem, e.Name())); err == nil {
				g.memDir = filepath.Join(mem, e.Name())
			}
		}
		g.kill(syscall.SIGKILL)
		g.Remove()
	}
}

// wrap returns an argv that joins the cgroup and then execs argv: a fixed sh
// script writes its own pid to cgroup.procs, so the program never runs
// outside the cgroup.
func (g *Cgroup) wrap(argv []string) []string {
	if g.memDir != "" && g.memDir != g.dir {
		return append([]string{"/bin/sh", "-c", `echo $$ > "$0" && echo $$ > "$1" || exit 125; shift; exec "$@"`,
			filepath.Join(g.dir, "cgroup.procs"), filepath.Join(g.memDir, "cgroup.procs")}, argv...)
	}
	return append([]string{"/bin/sh", "-c", `echo $$ > "$0" || exit 125; exec "$@"`,
		filepath.Join(g.dir, "cgroup.procs")}, argv...)
}

func (g *Cgroup) pids() []int {
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

// Dir is the pids cgroup's folder ("" on a nil Cgroup).
func (g *Cgroup) Dir() string {
	if g == nil {
		return ""
	}
	return g.dir
}

// MemoryDir is the memory cgroup's folder, "" when memory is not capped.
func (g *Cgroup) MemoryDir() string {
	if g == nil {
		return ""
	}
	return g.memDir
}

// kill signals every process of the cgroup.
func (g *Cgroup) kill(sig syscall.Signal) {
	for _, pid := range g.pids() {
		killPid(pid, sig)
	}
}

// alive reports whether a process of the cgroup is left (zombies that
// nobody reaped do not count).
func (g *Cgroup) alive() bool {
	for _, pid := range g.pids() {
		if running(pid) {
			return true
		}
	}
	return false
}

// Remove deletes the cgroup once it is empty, killing stragglers. A
// started process removes its cgroup when it ends; a caller that made one
// for a process that did not start removes it.
func (g *Cgroup) Remove() {
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

// Cgroups lists the folders of this server's cgroups that exist now: every
// started process removes its own when it ends, so a cgroup listed while
// no process runs was left behind.
func Cgroups() []string {
	parent := pidsCgroupParent()
	if parent == "" {
		return nil
	}
	dirs, _ := filepath.Glob(filepath.Join(parent, fmt.Sprintf("%s%d-*", cgroupPrefix(), os.Getpid())))
	return dirs
}
