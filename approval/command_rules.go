// This file holds the tables of the shell command judge and the matching
// against them: the allow and deny lists, program groups, risky environment
// variables, top-level folders, and the wrappers and their options.

package approval

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

func patterns(entries []string) [][]string {
	var out [][]string
	for _, e := range entries {
		if f := strings.Fields(e); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// keyOf is what "always" remembers of a part: program and first argument
// (for git, the subcommand after the global options).
func keyOf(ws []word) string {
	if filepath.Base(ws[0].text) == "git" {
		ws = gitNormal(ws)
	}
	k := ws[0].text
	if len(ws) > 1 {
		k += " " + ws[1].text
	}
	return k
}

// matches reports whether the words start with one of the patterns, word by
// word. The program matches by its name as written, or by its base name when
// base is set (for the deny list, so /bin/rm is rm).
func matches(pats [][]string, ws []word, base bool) []string {
	for _, p := range pats {
		if len(ws) < len(p) {
			continue
		}
		ok := true
		for i, pw := range p {
			w := ws[i]
			if !w.static {
				ok = false
				break
			}
			t := w.text
			if i == 0 && base {
				t, pw = filepath.Base(t), filepath.Base(pw)
			}
			if t != pw {
				ok = false
				break
			}
		}
		if ok {
			return p
		}
	}
	return nil
}

// Programs grouped by how they are judged.
var (
	shells       = set("sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish", "csh", "tcsh")
	interpreters = set("python", "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "lua", "deno", "bun")
	downloaders  = set("curl", "wget", "fetch", "aria2c", "http", "https", "xh")
	// noPaths are programs whose arguments are not paths: their dynamic
	// arguments are harmless.
	noPaths  = set("echo", "printf", "true", "false", ":", "sleep", "expr", "seq", "test", "[", "basename", "dirname", "exit", "return")
	powerOff = set("shutdown", "reboot", "halt", "poweroff", "kexec", "telinit")
	// blockWriters write to the devices their arguments name.
	blockWriters = set("cp", "mv", "tee", "shred", "wipefs", "blkdiscard", "fdisk", "sfdisk", "cfdisk", "parted",
		"sgdisk", "gdisk", "mkswap", "badblocks", "install", "pv", "ddrescue", "cat")
	// topLevel are folders whose recursive removal ruins the system.
	topLevel = set("/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt", "/proc",
		"/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/Users", "/System", "/Library", "/Applications")
	// riskyEnv are variables whose assignment changes which programs run or
	// what they execute.
	riskyEnv = []string{"PATH", "LD_*", "DYLD_*", "BASH_ENV", "ENV", "IFS", "PS4", "PROMPT_COMMAND", "SHELLOPTS",
		"BASHOPTS", "CDPATH", "GLOBIGNORE", "BASH_FUNC_*", "GIT_*", "GOFLAGS", "GOTOOLCHAIN", "NODE_OPTIONS",
		"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "EDITOR",
		"VISUAL", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS", "*_COMMAND", "HOME",
		// XDG_CONFIG_HOME moves the "global" configuration of git and many
		// others; the rest name programs or options that build tools run.
		"XDG_*", "npm_config_*", "NPM_CONFIG_*", "CARGO_*", "RUSTC_WRAPPER", "RUSTFLAGS", "GOENV", "CC", "CXX",
		"MAKEFLAGS", "PIP_*", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "MAVEN_OPTS", "GRADLE_OPTS",
		"SHELL"}
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// blockDevice matches the paths of disks and partitions.
var blockDevice = regexp.MustCompile(`^/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|md\d|dm-\d|loop\d|sr\d|disk/|mapper/)`)

// harmlessTarget are redirection targets that write no file.
var harmlessTarget = set("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2")

// harmlessSource are files that may be read without asking.
var harmlessSource = set("/dev/zero", "/dev/urandom", "/dev/random", "/dev/stdin", "/dev/fd/0")

// RiskyEnv reports whether setting the environment variable changes which
// programs run or what they execute (PATH, LD_PRELOAD, BASH_ENV, GIT_*,
// NODE_OPTIONS, ...). A command that sets one is never automatic.
func RiskyEnv(name string) bool {
	for _, pat := range riskyEnv {
		if ok, _ := filepath.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// harmlessPrograms are shell builtins that change nothing: they need no
// place on shell.allow (their path arguments are still checked).
var harmlessPrograms = set("true", "false", ":", "test", "[", "exit")

// harmless reports whether a part is a builtin that changes nothing: one of
// harmlessPrograms, or set with only options (set -e, set -o pipefail).
func harmless(prog string, ws []word) bool {
	if harmlessPrograms[prog] {
		return true
	}
	if prog != "set" || len(ws) < 2 {
		return false
	}
	for _, w := range ws[1:] {
		if !w.static {
			return false
		}
		switch w.text {
		case "-e", "-u", "-x", "-o", "+o", "-eu", "-ex", "-eux", "-euo", "-eo", "+e", "+x", "+u", "pipefail", "errexit", "nounset", "xtrace":
		default:
			return false
		}
	}
	return true
}

// execOptions are options whose value is a program another program runs
// (go test -exec, go build -toolexec, git --upload-pack, tar
// --to-command, ssh -o ProxyCommand=...).
var execOptions = set("-exec", "--exec", "-toolexec", "--toolexec", "-vettool", "--vettool", "--upload-pack",
	"--receive-pack", "--to-command", "--use-compress-program", "--rsh", "--checkpoint-action", "--script-shell",
	"--info-script", "--new-volume-script")

// Programs that change the files their arguments name: every argument, or
// the last one (the destination).
var (
	writesAll  = set("rm", "rmdir", "unlink", "tee", "touch", "mkdir", "chmod", "chown", "chgrp", "truncate", "shred")
	writesLast = set("cp", "mv", "ln", "install", "rsync", "scp")
)

func isName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isShortFlags(s string) bool { return len(s) > 1 && s[0] == '-' && s[1] != '-' }

// varPath matches a path that is only a variable: $X, $X/, $X/*.
var varPath = regexp.MustCompile(`^\$\w+(/\*?)?$`)

// rootLike reports whether removing p recursively ruins the system or the
// home folder: /, /*, ~, $HOME, top-level system folders.
func rootLike(p string) bool {
	if p == "" {
		return false
	}
	for {
		q := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(p, "/*"), "/."), "/")
		if q == p {
			break
		}
		p = q
	}
	switch p {
	case "", "~", "$HOME", "/.*":
		return true
	}
	if strings.HasPrefix(p, "~") && !strings.Contains(p, "/") {
		return true // ~user
	}
	if strings.HasPrefix(p, "/") {
		c := filepath.Clean(p)
		return c == "/" || topLevel[c] || topLevel[strings.TrimSuffix(c, "/*")]
	}
	return false
}

// gitValueOpts are git's global options that take a separate value.
var gitValueOpts = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"}

// gitNormal drops git's global options so that "git -C x push" matches
// "git push".
func gitNormal(ws []word) []word {
	_, sub := gitGlobals(ws)
	return append([]word{ws[0]}, ws[sub:]...)
}

// gitGlobals reads the global options of the git command ws: it returns
// them (without their values) and the index of the subcommand, len(ws)
// when there is none.
func gitGlobals(ws []word) (opts []string, sub int) {
	for i := 1; i < len(ws); i++ {
		t := ws[i].text
		switch {
		case slices.Contains(gitValueOpts, t):
			opts = append(opts, t)
			i++
		case strings.HasPrefix(t, "-"):
			opts = append(opts, t)
		default:
			return opts, i
		}
	}
	return opts, len(ws)
}

// opaqueWrappers run a program given on their command line after options
// this judge does not parse.
var opaqueWrappers = set("strace", "ltrace", "valgrind", "gdb", "perf", "chroot", "flock", "unshare", "nsenter",
	"firejail", "bwrap", "systemd-run", "taskset", "chrt", "numactl", "cpulimit", "prlimit", "runuser", "sg",
	"torsocks", "proxychains", "proxychains4", "parallel", "entr", "caffeinate", "catchsegv", "faketime", "fakeroot",
	"script", "tsp", "ts", "daemonize", "start-stop-daemon", "dbus-run-session", "xvfb-run", "with-contenv")

// wrapperSpec describes a program that runs another program.
type wrapperSpec struct {
	valueOpts  string   // short options that take a value
	longValues []string // long options that take a value when given without =
	positional int      // arguments before the program (timeout's duration)
	assigns    bool     // NAME=VALUE arguments before the program (env)
	stringOpts string   // short options whose value is a command string (env -S)
}

var wrappers = map[string]wrapperSpec{
	"env":     {valueOpts: "uCS", longValues: []string{"--unset", "--chdir", "--split-string"}, assigns: true, stringOpts: "S"},
	"sudo":    {valueOpts: "CDghpRrtTUu", longValues: []string{"--user", "--group", "--chdir", "--prompt", "--close-from", "--host", "--role", "--type", "--command-timeout", "--other-user", "--chroot"}},
	"doas":    {valueOpts: "uC"},
	"nohup":   {},
	"timeout": {valueOpts: "sk", longValues: []string{"--signal", "--kill-after"}, positional: 1},
	"nice":    {valueOpts: "n", longValues: []string{"--adjustment"}},
	"ionice":  {valueOpts: "cn", longValues: []string{"--class", "--classdata"}},
	"command": {},
	"builtin": {},
	"exec":    {valueOpts: "a"},
	"time":    {valueOpts: "fo", longValues: []string{"--format", "--output"}},
	"stdbuf":  {valueOpts: "ioe", longValues: []string{"--input", "--output", "--error"}},
	"setsid":  {},
	"xargs": {valueOpts: "adEILnPs", longValues: []string{"--arg-file", "--delimiter", "--max-lines", "--max-args",
		"--max-procs", "--max-chars", "--process-slot-var"}},
	"busybox":  {},
	"chronic":  {},
	"unbuffer": {},
}

// unwrap returns the program a wrapper runs, the options it gave the
// wrapper (name → value), and false when it cannot tell.
func (s wrapperSpec) unwrap(args []word) ([]word, map[string]string, bool) {
	opts := map[string]string{}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !a.static {
			return nil, opts, false
		}
		t := a.text
		if t == "--" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			name, v, hasValue := strings.Cut(t, "=")
			if !hasValue && slices.Contains(s.longValues, name) && i+1 < len(args) {
				i++
				v = args[i].text
			}
			opts[name] = v
			continue
		}
		if len(t) > 1 && t[0] == '-' {
			for k := 1; k < len(t); k++ {
				c := t[k]
				if strings.IndexByte(s.valueOpts, c) < 0 {
					opts["-"+string(c)] = ""
					continue
				}
				v := t[k+1:]
				if v == "" && i+1 < len(args) {
					i++
					v = args[i].text
				}
				opts["-"+string(c)] = v
				break
			}
			continue
		}
		if s.assigns {
			if k, _, ok := strings.Cut(t, "="); ok && isName(k) {
				opts[k+"="] = ""
				continue
			}
		}
		break
	}
	for range s.positional {
		if i < len(args) {
			i++
		}
	}
	if i > len(args) {
		i = len(args)
	}
	return args[i:], opts, true
}
