package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/git"
	"github.com/agentls/agentls/process"
	"github.com/agentls/agentls/workspace"
)

// ShellExec is shell_exec: bash -c in its own process group.
var ShellExec = builtin(Def[shellExecArgs]{
	Spec: Spec{
		Name:     "shell_exec",
		Category: "shell",
		Title:    "Run shell command",
		Description: "Runs a command with `bash -c` in a workspace folder (cwd, default the workspace root) and returns its exit code, " +
			"stdout and stderr separately. Output is streamed while the command runs. A non-zero exit is an error " +
			"(EXECUTION_ERROR) that still carries the output. The command ends after timeout_ms (default 120000, at most 600000) " +
			"with TIMEOUT and the output so far. Every process it started ends with it, also ones left in the background: " +
			"use shell_background for servers and watchers. Large output keeps its head and tail " +
			"with a marker; read the cut part with shell_output and the id in the result. stdin is empty: do not run interactive " +
			"programs. The command is judged part by part: allowed commands " +
			"(shell.allow) run without asking, in a sandbox (the workspace writable, no home, no network unless shell.allowNetwork " +
			"covers the command); others ask, denied ones are refused.",
		Aliases:     []string{"executeCommand", "shell", "bash"},
		Annotations: Annotations{Destructive: true, Approval: "ask"},
		Risk:        approval.RiskExecute,
		// The tool enforces timeout_ms itself; the runner's limit is a backstop.
		Timeout: 11 * time.Minute,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["command"],"properties":{
			"command":{"type":"string","minLength":1,"description":"the command, run with bash -c"},
			"cwd":{"type":"string","description":"working folder, relative to the workspace root or absolute inside it (default: the root)"},
			"timeout_ms":{"type":"integer","minimum":1,"maximum":600000,"description":"time limit in milliseconds (default 120000, or shell.timeoutSeconds)"},
			"env":{"type":"object","additionalProperties":{"type":"string"},"description":"extra environment variables"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["exit_code","stdout","stderr","truncated","timed_out","duration_ms"],"properties":{
			"exit_code":{"type":"integer"},"stdout":{"type":"string"},"stderr":{"type":"string"},"truncated":{"type":"boolean"},
			"timed_out":{"type":"boolean"},"duration_ms":{"type":"integer"},"id":{"type":"string"},"pid":{"type":"integer"},"signal":{"type":"string"},
			"cancelled":{"type":"boolean"},"stdout_bytes":{"type":"integer"},"stderr_bytes":{"type":"integer"},
			"sandbox":{"type":"object","description":"present when the command ran in the sandbox because it ran without approval"}}}`),
	},
	Assess:  assessShell,
	Execute: shellExec,
})

type shellExecArgs struct {
	Command   string            `json:"command"`
	Cwd       string            `json:"cwd"`
	TimeoutMs int               `json:"timeout_ms"`
	Env       map[string]string `json:"env"`
}

func (a shellExecArgs) commandCwd() string { return a.Cwd }

// assessShell runs the command policy (approval.JudgeCommandIn) on the
// command of shell_exec or shell_background.
func assessShell(c *Call, a shellExecArgs) (Assessment, error) {
	dir, err := shellDir(c, a.Cwd)
	if err != nil {
		return Assessment{}, err
	}
	as := approval.JudgeCommandIn(a.Command, dir, c.Workspace.Config(), c.Workspace)
	if c.Tool != nil && c.Tool.Name == "shell_background" {
		// A process that keeps running is its own question.
		as.AlwaysKey = "shell_background:" + strings.TrimPrefix(as.AlwaysKey, "shell:")
	}
	envAssess(&as, a.Env)
	sandboxAssess(c, &as)
	return Assessment{Assessment: as}, nil
}

// envAssess makes a call ask when its env argument sets a risky variable or
// a value that holds shell code (which arithmetic on it would run).
func envAssess(as *approval.Assessment, env map[string]string) {
	for _, k := range workspace.Names(env) {
		w := ""
		switch {
		case approval.RiskyEnv(k):
			w = fmt.Sprintf("sets %s, which changes what programs run", k)
		case approval.CodeLike(env[k]):
			w = fmt.Sprintf("the value of %s holds shell code", k)
		default:
			continue
		}
		as.AutoByConfig = false
		as.AlwaysKey += " ; env:" + k
		if as.Warning != "" {
			w = as.Warning + "; " + w
		}
		as.Warning = w
	}
}

// shellDir resolves the cwd argument to a folder inside the roots.
func shellDir(c *Call, cwd string) (string, error) {
	if cwd == "" {
		root := c.Workspace.Root()
		if root == "" {
			return "", Errorf(NotConfigured, "the session has no workspace root")
		}
		return root, nil
	}
	dir, err := c.Workspace.Resolve(cwd)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", Errorf(FileNotFound, "cwd %s does not exist", cwd)
		}
		return "", Errorf(PermissionDenied, "cwd %s: %v", cwd, err)
	}
	if !fi.IsDir() {
		return "", Errorf(NotADirectory, "cwd %s is not a folder", cwd)
	}
	return dir, nil
}

// shellTimeout is timeout_ms, or shell.timeoutSeconds, capped at ten minutes.
func shellTimeout(cfg *workspace.Config, ms int) time.Duration {
	d := time.Duration(ms) * time.Millisecond
	if ms <= 0 {
		d = time.Duration(cfg.Shell.TimeoutSeconds) * time.Second
	}
	if d <= 0 {
		d = 120 * time.Second
	}
	return min(d, maxShellTimeout)
}

const maxShellTimeout = 10 * time.Minute

func shellExec(c *Call, a shellExecArgs) (*Result, error) {
	dir, err := shellDir(c, a.Cwd)
	if err != nil {
		return nil, err
	}
	cfg := c.Workspace.Config()
	sp := process.Spec{
		Argv:    []string{"bash", "-c", a.Command},
		Dir:     dir,
		Env:     shellEnv(c, dir, a.Env),
		Command: a.Command,
	}
	box, err := autoSandbox(c, &sp)
	if err != nil {
		return nil, err
	}
	var extra func(*process.Proc) map[string]any
	if box != nil {
		extra = func(*process.Proc) map[string]any { return map[string]any{"sandbox": box} }
	}
	return foreground(c, sp, shellTimeout(cfg, a.TimeoutMs), extra)
}

// shellEnv is the environment of a command (shell, custom tool): CommandEnv,
// and for a command nobody approved (an allow list, a rule, an earlier
// "always", an automatic custom tool) the automatic-git settings of
// git.SafetyEnv, so that any git it runs uses only the workspace's
// repository and runs no program its configuration names. (In yolo mode every command runs
// unasked, as the person chose; git is not restricted there.)
func shellEnv(c *Call, dir string, extra map[string]string) []string {
	env := CommandEnv(c.Workspace.Config(), extra)
	if unapproved(c) && !(c.Decision.By == "auto" && c.Workspace.Config().Approval.Mode == "yolo") {
		env = git.SafetyEnv(c.Workspace, dir, env)
	}
	return env
}

// RunArgv runs argv (no shell) in dir the way shell_exec runs a command:
// in its own process group (and cgroup where the machine allows), with the
// environment of shellEnv plus env, output streamed as progress reports,
// ended as a whole at timeout or cancellation, and a result with the
// structured fields of shell_exec (a non-zero exit is EXECUTION_ERROR). For
// tools that run programs: custom tools, git.
func RunArgv(c *Call, argv []string, dir string, env map[string]string, timeout time.Duration) (*Result, error) {
	if len(argv) == 0 {
		return nil, Errorf(InvalidParams, "no program to run")
	}
	sp := process.Spec{Argv: argv, Dir: dir, Env: shellEnv(c, dir, env), Command: strings.Join(argv, " ")}
	return foreground(c, sp, min(timeout, maxShellTimeout), nil)
}

// DefaultSecretEnv are the variable names (globs, matched case-insensitively)
// removed from the environment of every command, in addition to
// shell.secretEnv: tokens, secrets, keys, passwords and credentials.
var DefaultSecretEnv = []string{
	"*_TOKEN", "*_TOKEN_*", "*_SECRET", "*_SECRET_*", "*SECRET_KEY*", "*_KEY", "*_APIKEY", "*_API_KEY*",
	"*PASSWORD*", "*PASSWD*", "*CREDENTIALS*", "*_PAT",
}

// CommandEnv is the environment commands run with: the server's environment
// minus the secret variables (DefaultSecretEnv and shell.secretEnv), plus
// extra.
func CommandEnv(cfg *workspace.Config, extra map[string]string) []string {
	pats := append(append([]string(nil), DefaultSecretEnv...), cfg.Shell.SecretEnv...)
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := extra[name]; ok || secretName(pats, name) {
			continue
		}
		env = append(env, kv)
	}
	for _, k := range workspace.Names(extra) {
		env = append(env, k+"="+extra[k])
	}
	return env
}

func secretName(pats []string, name string) bool {
	up := strings.ToUpper(name)
	for _, p := range pats {
		if ok, _ := filepath.Match(strings.ToUpper(p), up); ok {
			return true
		}
	}
	return false
}
