package sandbox

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawnOnce sync.Once
	spawnCh   chan spawnReq
)

// spawner starts every command from one goroutine locked to its OS thread
// for the life of the process: a child's parent-death signal fires when
// the thread that forked it exits, and this thread only exits with the
// process.
func spawner() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the process
	for r := range spawnCh {
		r.done <- r.cmd.Start()
	}
}

// Start starts cmd (like cmd.Start) with SIGKILL as its parent-death
// signal, forked from the spawner thread, so that the child is killed when
// the server process dies, however it ends.
func Start(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnCh = make(chan spawnReq)
		go spawner()
	})
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	r := spawnReq{cmd: cmd, done: make(chan error, 1)}
	spawnCh <- r
	return <-r.done
}
