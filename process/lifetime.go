// Ending every process of every Store when the server stops, and finding
// the processes of a bwrap pid namespace.

package process

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// live holds every Proc that has not ended, of every Store, so that EndAll
// can end them when the server stops.
var live sync.Map

// EndAll ends every running process of every Store (whole process trees:
// SIGTERM, then SIGKILL after a short grace) and returns when they have
// ended or after limit. The server calls it when it is told to stop
// (SIGTERM, SIGINT); a server that is killed outright relies on the
// parent-death signal and the pid namespace instead (see package sandbox).
func EndAll(limit time.Duration) {
	var wg sync.WaitGroup
	live.Range(func(k, _ any) bool {
		p := k.(*Proc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Terminate()
		}()
		return true
	})
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
}

// readBwrapInfo reads what bwrap writes on its --info-fd: the host pid of
// the first process of the new pid namespace and the namespace's inode. It
// returns zeros when bwrap wrote nothing (it failed to start) within a
// bound.
func readBwrapInfo(r *os.File) (int, string) {
	_ = r.SetReadDeadline(time.Now().Add(10 * time.Second))
	var info struct {
		ChildPid int    `json:"child-pid"`
		PidNS    uint64 `json:"pid-namespace"`
	}
	if err := json.NewDecoder(r).Decode(&info); err != nil || info.ChildPid <= 0 {
		return 0, ""
	}
	id := nsOf(info.ChildPid)
	if info.PidNS != 0 {
		id = fmt.Sprintf("pid:[%d]", info.PidNS)
	}
	if id == "" {
		return 0, ""
	}
	return info.ChildPid, id
}

// nsOf returns the pid namespace of a process ("pid:[inode]"), or "".
func nsOf(pid int) string {
	ns, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		return ""
	}
	return ns
}

// nsMembers lists the processes (host pids) of a pid namespace from /proc.
func nsMembers(id string) []int {
	if id == "" {
		return nil
	}
	return procPIDs(func(pid int) bool { return nsOf(pid) == id })
}

// procPIDs lists the processes in /proc for which keep is true.
func procPIDs(keep func(pid int) bool) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && keep(pid) {
			out = append(out, pid)
		}
	}
	return out
}
