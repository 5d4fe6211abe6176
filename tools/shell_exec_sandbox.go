package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/sandbox"
)

// live holds every shell (*proc) that has not ended, of every session, so
// that EndAll can end them when the server stops.
var live sync.Map

// EndAll ends every running shell of every session (whole process trees:
// SIGTERM, then SIGKILL after a short grace) and returns when they have
// ended or after limit. The server calls it when it is told to stop
// (SIGTERM, SIGINT); a server that is killed outright relies on the
// parent-death signal and the pid namespace instead (see package sandbox).
func EndAll(limit time.Duration) {
	var wg sync.WaitGroup
	live.Range(func(k, _ any) bool {
		p := k.(*proc)
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.terminate()
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
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if nsOf(pid) == id {
			out = append(out, pid)
		}
	}
	return out
}

// automatic reports whether the call runs without a person having said
// yes to it: by an allow list or a rule ("config") or by the mode ("auto").
func automatic(c *Call) bool {
	return c.Decision.By == "config" || c.Decision.By == "auto"
}

// autoSandbox puts a shell command that runs without a person in the
// sandbox of run_code when shell.sandboxAuto is on: the workspace roots
// writable, no network unless every part of the command is on
// shell.allowNetwork. It returns what the result reports about it (nil when
// the command runs as approved commands do), or an error when the sandbox
// is needed and bwrap is missing.
func autoSandbox(c *Call, sp *startSpec) (map[string]any, error) {
	cfg := c.Workspace.Config()
	if !cfg.Shell.SandboxAuto || !automatic(c) {
		return nil, nil
	}
	if _, err := sandbox.Find(); err != nil {
		return nil, Errorf(NotConfigured, "this command runs without approval, and such commands run only in the sandbox "+
			"(shell.sandboxAuto), but %v; install it, or set shell.sandboxAuto to false in your user config", err)
	}
	netCfg := *cfg
	netCfg.Shell.Allow = cfg.Shell.AllowNetwork
	network := len(cfg.Shell.AllowNetwork) > 0 &&
		approval.JudgeCommandIn(sp.command, sp.dir, &netCfg, c.Workspace).AutoByConfig
	sp.box = &sandbox.Spec{Mode: sandbox.Isolate, Writable: writableRoots(c), Network: network, Dir: sp.dir}
	sp.env = sandbox.Env(sp.env)
	net := "isolated (shell.allowNetwork does not cover the command)"
	if network {
		net = "allowed (shell.allowNetwork covers the command)"
	}
	return map[string]any{
		"kind": "bwrap", "why": "the command runs without approval (shell.sandboxAuto)",
		"filesystem": isolatedFilesystem, "network": net,
	}, nil
}

// isolatedFilesystem is what the sandbox's report says of the file system.
const isolatedFilesystem = "isolated: the workspace roots read-write; /usr and a few /etc files read-only; a private /tmp; " +
	"no home, no /run, no host /tmp, no host sockets"

// writableRoots are the folders a sandboxed process may write: the
// workspace roots and the absolute paths.allow entries.
func writableRoots(c *Call) []string {
	roots := c.Workspace.Roots()
	for _, a := range c.Workspace.Config().Paths.Allow {
		if len(a) > 0 && a[0] == '/' {
			if fi, err := os.Stat(a); err == nil && fi.IsDir() {
				roots = append(roots, a)
			}
		}
	}
	return roots
}

// sandboxAssess makes an allow-listed command ask when it would have to
// run in the sandbox and bwrap is missing, instead of failing.
func sandboxAssess(c *Call, as *approval.Assessment) {
	if !as.AutoByConfig || !c.Workspace.Config().Shell.SandboxAuto {
		return
	}
	if _, err := sandbox.Find(); err != nil {
		as.AutoByConfig = false
		w := "allow-listed commands run only in the sandbox, and " + err.Error()
		if as.Warning != "" {
			w = as.Warning + "; " + w
		}
		as.Warning = w
	}
}
