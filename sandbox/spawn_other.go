//go:build !linux

package sandbox

import "os/exec"

// Start starts cmd. Parent-death signals exist only on Linux: elsewhere a
// child outlives a server that is killed.
func Start(cmd *exec.Cmd) error { return cmd.Start() }
