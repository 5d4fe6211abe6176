// This file holds the entry points of the shell command judge and the
// verdict it accumulates. The rest of the judge: command_parse.go (parsing,
// words), command_judge.go (one part of a command), command_paths.go (the
// paths it names), command_builtin.go (rules for particular programs),
// command_wrappers.go (programs that run programs) and command_rules.go
// (tables and matching).

package approval

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentls/agentls/workspace"
)

// JudgeCommand judges a shell command run in the first workspace root. See
// JudgeCommandIn.
func JudgeCommand(cmd string, cfg *workspace.Config, ws *workspace.Workspace) Assessment {
	dir := ""
	if ws != nil {
		dir = ws.Root()
	}
	return JudgeCommandIn(cmd, dir, cfg, ws)
}

// JudgeCommandIn judges a shell command that bash -c would run in dir (an
// absolute path). The command is parsed as bash and each simple command of it
// is judged: the parts of pipelines and lists, subshells, command and process
// substitutions, the strings given to eval, bash -c and sh -c (parsed in
// turn), and the programs that wrappers (env, sudo, xargs, nohup, timeout,
// nice, command, exec, time, stdbuf, setsid, find -exec) run.
//
// The answer:
//   - Blocked: a part matches shell.deny, or is catastrophic (rm -r of /, ~,
//     /* or a top-level system folder, rm --no-preserve-root, a fork bomb,
//     mkfs, dd or a write onto a block device).
//   - Dangerous, with a Warning: a part is dangerous (rm -r, sudo, chmod -R
//     777, shutdown, reboot, git push --force, git reset --hard, a download
//     piped into a shell, ...), names a sensitive path, writes outside the
//     workspace (a redirection, or rm, cp, mv, tee, touch, sed -i, ... of an
//     outside path), or cannot be judged
//     statically (unparsable, a program name that is an expansion, eval of an
//     expansion, a brace expansion in the program name). Dangerous calls ask
//     even in yolo mode, so a denied program cannot hide behind an expansion.
//   - AutoByConfig: every part is on shell.allow (program and argument
//     prefix, word by word), no redirection writes a file other than
//     /dev/null, and every path a part names is inside the roots. Builtins
//     that change nothing (true, false, :, test, [, exit, set -e/-u/-x/-o
//     pipefail, command -v, export and declare of ordinary variables) and
//     cd/pushd/popd into a workspace folder need no place on the list;
//     relative paths are checked from every folder the command may cd into.
//     A path outside the workspace that is only read makes the call ask.
//   - AlwaysKey: "shell:" and the program and first argument of each part
//     that was not allowed (and each outside path, written "outside:PATH",
//     and each file written, ">PATH"), so that "always" never covers the
//     whole tool nor more than what was asked.
//
// cfg may be nil (ws's configuration, or the default, is used) and ws may be
// nil (paths are then not checked).
func JudgeCommandIn(cmd, dir string, cfg *workspace.Config, ws *workspace.Workspace) Assessment {
	if cfg == nil {
		if ws != nil {
			cfg = ws.Config()
		} else {
			cfg = workspace.DefaultConfig()
		}
	}
	j := &judge{ws: ws, dir: dir, keys: map[string]bool{}}
	j.allow = patterns(cfg.Shell.Allow)
	j.deny = patterns(cfg.Shell.Deny)
	j.source(cmd, 0)
	if j.codeText && j.reEval {
		j.unjudgeable("a value holds shell code as text and arithmetic evaluates variables, which would run it")
	}
	if j.downloads && j.runsLocal {
		j.danger("downloads and runs a script: code nobody has seen")
	}

	a := Assessment{Risk: RiskExecute, Blocked: j.blocked, Dangerous: j.dangerous}
	a.Warning = strings.Join(j.warnings, "; ")
	a.AutoByConfig = j.blocked == "" && !j.dangerous && !j.notAuto && j.parts > 0
	keys := slices.Sorted(maps.Keys(j.keys))
	if len(keys) == 0 && j.first != "" {
		keys = append(keys, j.first)
	}
	if len(keys) == 0 {
		// Unparsable: the first two words as written.
		f := strings.Fields(cmd)
		keys = append(keys, strings.Join(f[:min(2, len(f))], " "))
	}
	a.AlwaysKey = "shell:" + strings.Join(keys, " ; ")
	return a
}

// maxDepth bounds the nesting of bash -c and eval strings.
const maxDepth = 8

// judge accumulates the verdict on one command.
type judge struct {
	ws     *workspace.Workspace
	dir    string
	cdDirs []string // folders the command cds into
	allow  [][]string
	deny   [][]string

	parts     int    // simple commands judged
	first     string // program and first argument of the first part
	blocked   string
	dangerous bool
	notAuto   bool
	codeText  bool // a literal holds a command substitution as text
	reEval    bool // arithmetic or [[ -eq ]] evaluates variables again
	downloads bool // a part downloads (curl, wget)
	runsLocal bool // a part runs a script file or a program by path
	warnings  []string
	keys      map[string]bool // prefixes of the parts that were not allowed
}

func (j *judge) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(j.warnings, w) {
		j.warnings = append(j.warnings, w)
	}
}

// block refuses the command; the first reason wins.
func (j *judge) block(format string, args ...any) {
	if j.blocked == "" {
		j.blocked = fmt.Sprintf(format, args...)
	}
}

// danger makes the command ask, even in yolo mode, with a warning.
func (j *judge) danger(format string, args ...any) {
	j.dangerous = true
	j.notAuto = true
	j.warn(format, args...)
}

// unjudgeable marks a part the parser cannot judge statically.
func (j *judge) unjudgeable(format string, args ...any) {
	j.danger("cannot be judged statically: "+format, args...)
}

// ask makes the command ask, with a warning, under key.
func (j *judge) ask(key, format string, args ...any) {
	j.notAuto = true
	if key != "" {
		j.keys[key] = true
	}
	if format != "" {
		j.warn(format, args...)
	}
}
