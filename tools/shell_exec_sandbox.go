// The sandbox of shell commands that run without a person's yes
// (shell.sandboxAuto), and what a sandboxed process may write.

package tools

import (
	"os"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/process"
	"github.com/agentls/agentls/sandbox"
)

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
func autoSandbox(c *Call, sp *process.Spec) (map[string]any, error) {
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
		approval.JudgeCommandIn(sp.Command, sp.Dir, &netCfg, c.Workspace).AutoByConfig
	sp.Box = &sandbox.Spec{Mode: sandbox.Isolate, Writable: writableRoots(c), Network: network, Dir: sp.Dir}
	sp.Env = sandbox.Env(sp.Env)
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
