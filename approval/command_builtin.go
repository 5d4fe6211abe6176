// This file holds the built-in rules for particular programs: what blocks
// as catastrophic and what asks as dangerous (rm, mkfs, dd, chmod -R,
// power off, sudo, git).

package approval

import (
	"strings"
)

// builtin applies the built-in rules: catastrophic commands are blocked,
// dangerous ones ask.
func (j *judge) builtin(base string, ws []word, depth int) {
	args := ws[1:]
	switch {
	case base == "rm":
		j.rm(args)
	case strings.HasPrefix(base, "mkfs") || base == "mke2fs" || base == "mkdosfs":
		j.block("%s formats a filesystem", base)
	case base == "dd":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a.text, "of="); ok {
				if blockDevice.MatchString(v) {
					j.block("dd onto the block device %s", v)
				} else if !harmlessTarget[v] {
					j.ask("dd "+a.text, "dd writes to %s", v)
				}
			}
		}
	case blockWriters[base]:
		for _, a := range args {
			if blockDevice.MatchString(a.text) && base != "cat" {
				j.block("%s onto the block device %s", base, a.text)
			}
		}
	case base == "chmod" || base == "chown" || base == "chgrp":
		recursive := false
		for _, a := range args {
			if a.text == "--recursive" || (isShortFlags(a.text) && strings.Contains(a.text, "R")) {
				recursive = true
			}
		}
		if !recursive {
			return
		}
		for _, a := range args {
			if !strings.HasPrefix(a.text, "-") && rootLike(a.text) {
				j.block("%s -R of %s", base, a.text)
			}
		}
		for _, a := range args {
			if base == "chmod" && (a.text == "777" || a.text == "0777" || a.text == "a+rwx" || a.text == "o+w" || a.text == "a+w") {
				j.danger("chmod -R %s makes files writable by everyone", a.text)
			}
		}
	case powerOff[base]:
		j.danger("%s stops or restarts the machine", base)
	case base == "init":
		if len(args) > 0 && (args[0].text == "0" || args[0].text == "6") {
			j.danger("init %s stops or restarts the machine", args[0].text)
		}
	case base == "systemctl":
		for _, a := range args {
			switch a.text {
			case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "rescue", "emergency", "soft-reboot":
				j.danger("systemctl %s stops or restarts the machine", a.text)
			}
		}
	case base == "kill" || base == "pkill" || base == "killall":
		for _, a := range args {
			if a.text == "-1" && base == "kill" {
				j.danger("kill -1 signals every process")
			}
		}
	case base == "killall5":
		j.danger("killall5 signals every process")
	case base == "crontab":
		for _, a := range args {
			if a.text == "-r" {
				j.danger("crontab -r removes every cron job")
			}
		}
	case base == "sudo" || base == "doas":
		j.danger("%s runs the command as root", base)
	case base == "git":
		j.git(ws, depth)
	}
}

// rm blocks recursive removal of /, ~ and top-level folders and warns on
// every other recursive removal.
func (j *judge) rm(args []word) {
	recursive, noPreserve := false, false
	var targets []word
	opts := true
	for _, a := range args {
		switch {
		case opts && a.text == "--":
			opts = false
		case opts && (a.text == "--recursive"):
			recursive = true
		case opts && a.text == "--no-preserve-root":
			noPreserve = true
		case opts && isShortFlags(a.text):
			if strings.ContainsAny(a.text, "rR") {
				recursive = true
			}
		case opts && strings.HasPrefix(a.text, "--"):
		default:
			targets = append(targets, a)
		}
	}
	if noPreserve {
		j.block("rm --no-preserve-root")
	}
	if !recursive {
		return
	}
	for _, t := range targets {
		if rootLike(t.text) {
			j.block("rm -r of %s", t.text)
		}
		if !t.static && varPath.MatchString(t.text) {
			j.danger("rm -r of %s: if the variable is empty or unset this removes from /", t.text)
		}
	}
	j.danger("rm -r deletes folders recursively")
}

// git warns on history-destroying git commands.
func (j *judge) git(ws []word, depth int) {
	opts, _ := gitGlobals(ws)
	for _, t := range opts {
		if t == "-c" || strings.HasPrefix(t, "--config-env") || strings.HasPrefix(t, "--exec-path") {
			j.ask(keyOf(ws), "git %s can make git run arbitrary commands", t)
		}
	}
	n := gitNormal(ws)
	if len(n) < 2 {
		return
	}
	sub, args := n[1].text, n[2:]
	has := func(long string, short byte) bool {
		for _, a := range args {
			if a.text == long || strings.HasPrefix(a.text, long+"=") || (short != 0 && isShortFlags(a.text) && strings.IndexByte(a.text, short) >= 0) {
				return true
			}
		}
		return false
	}
	switch sub {
	case "push":
		forced := has("--force", 'f') || has("--force-with-lease", 0) || has("--force-if-includes", 0) || has("--mirror", 0) || has("--delete", 'd')
		for _, a := range args {
			if strings.HasPrefix(a.text, "+") || (strings.HasPrefix(a.text, ":") && len(a.text) > 1) {
				forced = true
			}
		}
		if forced {
			j.danger("git push --force (or a delete or mirror) can destroy remote history")
		}
	case "reset":
		if has("--hard", 0) || has("--merge", 0) || has("--keep", 0) {
			j.danger("git reset --hard discards uncommitted changes")
		}
	case "clean":
		if has("--force", 'f') {
			j.danger("git clean -f deletes untracked files")
		}
	case "branch":
		if has("-D", 0) || (has("--delete", 0) && has("--force", 'f')) {
			j.danger("git branch -D deletes a branch that may not be merged")
		}
	case "filter-branch", "filter-repo":
		j.danger("git %s rewrites history", sub)
	case "rebase":
		for i, a := range args {
			v, ok := "", false
			switch {
			case a.text == "-x" || a.text == "--exec":
				if i+1 < len(args) {
					v, ok = args[i+1].text, args[i+1].static
				}
			case strings.HasPrefix(a.text, "--exec="):
				v, ok = strings.TrimPrefix(a.text, "--exec="), a.static
			default:
				continue
			}
			j.gitRuns(ws, v, ok, depth)
		}
	case "submodule", "bisect":
		for i, a := range args {
			if (sub == "submodule" && a.text == "foreach") || (sub == "bisect" && a.text == "run") {
				var parts []string
				static := true
				for _, w := range args[i+1:] {
					if sub == "submodule" && strings.HasPrefix(w.text, "-") && len(parts) == 0 {
						continue // --recursive, --quiet
					}
					parts = append(parts, w.text)
					static = static && w.static
				}
				j.gitRuns(ws, strings.Join(parts, " "), static, depth)
				break
			}
		}
	case "checkout", "restore":
		for _, a := range args {
			if a.text == "." {
				j.warn("git %s . discards uncommitted changes", sub)
			}
		}
	case "stash":
		if len(args) > 0 && (args[0].text == "clear" || args[0].text == "drop") {
			j.warn("git stash %s discards stashed changes", args[0].text)
		}
	}
}

// gitRuns judges a command that git runs (rebase --exec, submodule
// foreach, bisect run): it is never automatic.
func (j *judge) gitRuns(ws []word, cmd string, static bool, depth int) {
	if !static {
		j.unjudgeable("git runs %s", cmd)
		return
	}
	j.ask(keyOf(ws), "git runs %q", cmd)
	before := j.parts
	j.source(cmd, depth+1)
	j.parts = before
}
