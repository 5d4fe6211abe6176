package tools

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

var netnsProbe struct {
	once   sync.Once
	user   bool
	method string
	err    error
}

// netnsAttr returns process attributes that start a child in a new, empty
// network namespace (and a new user namespace when the plain one is not
// permitted), as probed once on this machine.
func netnsAttr() (*syscall.SysProcAttr, string, error) {
	p := &netnsProbe
	p.once.Do(func() {
		try := func(user bool) error {
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = netnsSysProcAttr(user)
			return cmd.Run()
		}
		err := try(false)
		if err == nil {
			p.method = "own network namespace (CLONE_NEWNET, like unshare -n)"
			return
		}
		err2 := try(true)
		if err2 == nil {
			p.user = true
			p.method = "own user and network namespace (like unshare -rn)"
			return
		}
		p.err = fmt.Errorf("no network namespace: %v; with a user namespace: %v", err, err2)
	})
	if p.err != nil {
		return nil, "", p.err
	}
	return netnsSysProcAttr(p.user), p.method, nil
}

func netnsSysProcAttr(user bool) *syscall.SysProcAttr {
	if !user {
		return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	}
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
}
