package approval

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"

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
	keys := make([]string, 0, len(j.keys))
	for k := range j.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
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

func patterns(entries []string) [][]string {
	var out [][]string
	for _, e := range entries {
		if f := strings.Fields(e); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
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

// source parses and judges shell source.
func (j *judge) source(src string, depth int) {
	if depth > maxDepth {
		j.unjudgeable("shell strings nested more than %d deep", maxDepth)
		return
	}
	if forkBomb(src) {
		j.block("fork bomb")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		j.unjudgeable("the command does not parse: %v", err)
		return
	}
	j.file(f, depth)
}

// forkBombText matches f(){ f|f& } with spaces removed.
var forkBombText = regexp.MustCompile(`([^(){}|&;]+)\(\)\{([^(){}|&;]+)\|([^(){}|&;]+)&;?\}`)

// forkBomb finds the classic fork bomb in text, even where it does not parse.
func forkBomb(src string) bool {
	for _, m := range forkBombText.FindAllStringSubmatch(strings.Join(strings.Fields(src), ""), -1) {
		if m[1] == m[2] && m[2] == m[3] {
			return true
		}
	}
	return false
}

// file judges every statement of a parsed program, however nested.
func (j *judge) file(f *syntax.File, depth int) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			var stdin *syntax.Word
			for _, r := range n.Redirs {
				j.redirect(r)
				switch r.Op {
				case syntax.Hdoc, syntax.DashHdoc:
					stdin = r.Hdoc
				case syntax.WordHdoc:
					stdin = r.Word
				}
			}
			if call, ok := n.Cmd.(*syntax.CallExpr); ok {
				j.assigns(call.Assigns)
				if len(call.Args) > 0 {
					j.command(words(call.Args), stdin, depth)
				}
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				j.pipe(n)
			}
		case *syntax.FuncDecl:
			j.function(n)
		case *syntax.DeclClause:
			j.decl(n)
		case *syntax.CoprocClause:
			j.ask("coproc", "starts a coprocess")
		case *syntax.TestDecl:
			j.ask("@test", "declares a test function")
		case *syntax.ArithmExp:
			j.arith(n.X)
		case *syntax.ArithmCmd:
			j.arith(n.X)
		case *syntax.LetClause:
			for _, x := range n.Exprs {
				j.arith(x)
			}
		case *syntax.CStyleLoop:
			j.arith(n.Init)
			j.arith(n.Cond)
			j.arith(n.Post)
		case *syntax.ParamExp:
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && strings.Contains(n.Exp.Word.Lit(), "P") {
				j.unjudgeable("${%s@P} expands a prompt string, which runs command substitutions", paramName(n))
			}
			j.arith(n.Index)
			if n.Slice != nil {
				j.arith(n.Slice.Offset)
				j.arith(n.Slice.Length)
			}
		case *syntax.BinaryTest:
			if n.Op >= syntax.TsEql && n.Op <= syntax.TsGtr {
				j.reEval = true // [[ a -eq b ]] evaluates both sides as arithmetic
			}
		case *syntax.Word:
			if codeText(n) {
				j.codeText = true
			}
		}
		return true
	})
}

func paramName(p *syntax.ParamExp) string {
	if p.Param != nil {
		return p.Param.Value
	}
	return "…"
}

// arith notes arithmetic that reads variables: bash evaluates a variable's
// value as arithmetic again, and an array subscript in it
// (a[$(cmd)]) runs commands.
func (j *judge) arith(x syntax.ArithmExpr) {
	if x == nil || j.reEval {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			j.reEval = true
		case *syntax.Word:
			if l := n.Lit(); l == "" || !isNumber(l) {
				j.reEval = true
			}
		}
		return !j.reEval
	})
}

func isNumber(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '#' || c == 'x' || c == 'X' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// codeText reports whether a word's literal text holds a command
// substitution that a later evaluation would run ('$(cmd)', '`cmd`').
func codeText(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			if CodeLike(p.Value) {
				return true
			}
		case *syntax.Lit:
			if CodeLike(unescape(p.Value, "")) {
				return true
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok && CodeLike(unescape(l.Value, "$`\"\\\n")) {
					return true
				}
			}
		}
	}
	return false
}

// CodeLike reports whether a value holds text that bash would run if it
// evaluated the value again: a command substitution.
func CodeLike(v string) bool {
	return strings.Contains(v, "$(") || strings.Contains(v, "`")
}

// word is one shell word after quote removal. A word that is not static
// holds a rendering of its expansions ($NAME, $(…)).
type word struct {
	text   string
	static bool
	glob   bool // an unquoted *, ? or [ (the shell would expand it)
	raw    *syntax.Word
}

func words(ws []*syntax.Word) []word {
	out := make([]word, len(ws))
	for i, w := range ws {
		out[i] = render(w)
	}
	return out
}

// globChars matches the pattern characters of a glob: *, ? or [...].
var globChars = regexp.MustCompile(`[*?]|\[.*\]`)

// braceExpansion matches an unquoted {a,b} or {1..3}.
var braceExpansion = regexp.MustCompile(`\{[^{}]*(,|\.\.)[^{}]*\}`)

// render removes quotes from a word and reports whether its value is known.
func render(w *syntax.Word) word {
	out := word{static: true, raw: w}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if globChars.MatchString(unescapedOnly(v)) {
				out.glob = true
			}
			if braceExpansion.MatchString(unescapedOnly(v)) {
				out.static = false
			}
			b.WriteString(unescape(v, ""))
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				out.static = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, "$`\"\\\n"))
					continue
				}
				out.static = false
				b.WriteString(renderDynamic(q))
			}
		case *syntax.ExtGlob:
			out.glob = true
			b.WriteString(p.Op.String() + p.Pattern.Value + ")")
		default:
			out.static = false
			b.WriteString(renderDynamic(p))
		}
	}
	out.text = b.String()
	return out
}

func renderDynamic(p syntax.WordPart) string {
	switch p := p.(type) {
	case *syntax.ParamExp:
		if p.Param != nil {
			return "$" + p.Param.Value
		}
		return "${…}"
	case *syntax.CmdSubst:
		return "$(…)"
	case *syntax.ArithmExp:
		return "$((…))"
	case *syntax.ProcSubst:
		return "/dev/fd/…"
	}
	return "…"
}

// unescape removes backslashes; in double quotes (special != "") only those
// before a special character.
func unescape(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (special == "" || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapedOnly drops escaped characters, leaving those the shell interprets.
func unescapedOnly(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
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

// assigns judges variable assignments (FOO=x cmd, or FOO=x alone).
func (j *judge) assigns(as []*syntax.Assign) {
	for _, a := range as {
		if a.Name == nil {
			continue
		}
		j.envName(a.Name.Value)
	}
}

func (j *judge) envName(name string) {
	if RiskyEnv(name) {
		j.ask(name+"=", "sets %s, which changes what programs run", name)
	}
}

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

// decl judges declare, export, local, readonly, typeset.
func (j *judge) decl(d *syntax.DeclClause) {
	j.parts++
	variant := d.Variant.Value
	ws := []word{{text: variant, static: true}}
	harmless := variant != "nameref"
	for _, a := range d.Args {
		switch {
		case a.Name != nil:
			j.envName(a.Name.Value)
			ws = append(ws, word{text: a.Name.Value, static: true})
		case a.Value != nil:
			w := render(a.Value)
			ws = append(ws, w)
			if !w.static {
				j.unjudgeable("%s of an expansion", variant)
				continue
			}
			if strings.HasPrefix(w.text, "-") || strings.HasPrefix(w.text, "+") {
				if strings.Contains(w.text, "n") {
					harmless = false // a nameref assigns through another name
				}
				if strings.Contains(w.text, "i") {
					j.reEval = true // integer variables evaluate what is assigned
				}
				continue
			}
			name, _, _ := strings.Cut(w.text, "=")
			j.envName(name)
		}
	}
	if j.first == "" {
		j.first = keyOf(ws)
	}
	if matches(j.deny, ws, true) != nil {
		j.block("%s is denied by shell.deny", strings.Join(texts(ws), " "))
	}
	// export, declare, local, readonly and typeset of ordinary variables
	// change nothing outside the shell, like plain assignments.
	if !harmless && matches(j.allow, ws, false) == nil {
		j.ask(keyOf(ws), "%s %s assigns through another variable", variant, strings.Join(texts(ws[1:]), " "))
	}
}

// function judges a function declaration: its body is judged by the walk;
// defining functions is never automatic, and a function that calls itself
// in a pipeline or in the background is a fork bomb.
func (j *judge) function(f *syntax.FuncDecl) {
	if f.Name == nil {
		j.ask("function", "defines a function")
		return
	}
	name := f.Name.Value
	j.ask(name+"()", "defines a function %s", name)
	selfCall, fanout := false, false
	syntax.Walk(f.Body, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background {
				fanout = true
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				fanout = true
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 && n.Args[0].Lit() == name {
				selfCall = true
			}
		}
		return true
	})
	if selfCall && fanout {
		j.block("fork bomb: function %s calls itself in a pipeline or in the background", name)
	}
}

// redirect judges one redirection.
func (j *judge) redirect(r *syntax.Redirect) {
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return
	}
	w := render(r.Word)
	if (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && w.static && isFD(w.text) {
		return // 2>&1, <&0, >&-
	}
	write := r.Op != syntax.RdrIn && r.Op != syntax.DplIn
	if !w.static {
		if write {
			j.ask(">"+w.text, "redirects output to %s, which cannot be known before it runs", w.text)
		} else {
			j.ask("<"+w.text, "reads from %s, which cannot be known before it runs", w.text)
		}
		return
	}
	if write {
		if harmlessTarget[w.text] {
			return
		}
		if blockDevice.MatchString(w.text) {
			j.block("writes to the block device %s", w.text)
			return
		}
		j.ask(">"+w.text, "writes to the file %s", w.text)
	}
	j.path(w, write)
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// pipe judges a pipeline: a download fed into a shell or interpreter runs
// code nobody has seen.
func (j *judge) pipe(b *syntax.BinaryCmd) {
	right := firstCall(b.Y)
	if right == nil || !readsScript(right) {
		return
	}
	if containsDownload(b.X) {
		j.danger("pipes a download into %s: runs code nobody has seen", right[0].text)
		return
	}
	j.unjudgeable("%s runs a script made by the command before it in the pipe", right[0].text)
}

// firstCall returns the program words a statement runs, wrappers removed.
func firstCall(s *syntax.Stmt) []word {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return nil
	}
	ws := words(call.Args)
	for range maxDepth {
		if len(ws) == 0 || !ws[0].static {
			return ws
		}
		base := filepath.Base(ws[0].text)
		spec, ok := wrappers[base]
		if !ok {
			return ws
		}
		inner, _, _ := spec.unwrap(ws[1:])
		if len(inner) == 0 {
			return ws
		}
		ws = inner
	}
	return ws
}

// readsScript reports whether a program runs a script it reads from stdin.
func readsScript(ws []word) bool {
	base := filepath.Base(ws[0].text)
	if !shells[base] && !interpreters[base] {
		return false
	}
	for _, w := range ws[1:] {
		switch {
		case w.text == "-" || w.text == "-s":
			return true
		case strings.HasPrefix(w.text, "-c") || w.text == "-e":
			return false
		case !strings.HasPrefix(w.text, "-"):
			return false // a script file
		}
	}
	return true
}

func containsDownload(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if s, ok := n.(*syntax.Stmt); ok {
			if ws := firstCall(s); len(ws) > 0 && downloaders[filepath.Base(ws[0].text)] {
				found = true
			}
		}
		return !found
	})
	return found
}

// command judges one simple command given as words. stdin is a here-document
// or here-string fed to it, if any.
func (j *judge) command(ws []word, stdin *syntax.Word, depth int) {
	if len(ws) == 0 {
		return
	}
	j.parts++
	if j.first == "" {
		j.first = keyOf(ws)
	}
	prog := ws[0]
	if !prog.static || prog.glob {
		j.unjudgeable("the program %s is an expansion", prog.text)
		return
	}
	base := filepath.Base(prog.text)
	if p := matches(j.deny, ws, true); p != nil {
		j.block("%q is denied by shell.deny", strings.Join(p, " "))
	}
	if base == "git" {
		if p := matches(j.deny, gitNormal(ws), true); p != nil {
			j.block("%q is denied by shell.deny", strings.Join(p, " "))
		}
	}
	j.builtin(base, ws, depth)

	if base == prog.text && (base == "command" || base == "type") && lookupOnly(ws) {
		return // command -v, type: looks a name up, runs nothing
	}
	if spec, ok := wrappers[base]; ok {
		j.wrapper(base, spec, ws, stdin, depth)
		return
	}
	if opaqueWrappers[base] {
		j.opaque(ws, depth)
	}
	switch {
	case shells[base]:
		if j.shell(ws, stdin, depth) {
			return
		}
	case base == "eval":
		j.eval(ws, depth)
		return
	case base == "watch":
		j.watch(ws, depth)
		return
	case base == "su":
		j.danger("su runs commands as another user")
		j.su(ws, depth)
		return
	case base == "find":
		j.find(ws, stdin, depth)
	case base == "source" || base == ".":
		j.ask(keyOf(ws), "runs the script %s in the shell", argText(ws, 1))
	}
	if shells[base] || interpreters[base] || base == "source" || base == "." {
		if hasDownloadSubst(ws[1:]) {
			j.danger("%s runs a download: code nobody has seen", base)
		} else if script := scriptArg(ws); script != nil && generated(*script) {
			j.unjudgeable("%s runs a script made while the command runs (%s)", base, script.text)
		}
	}
	if downloaders[base] {
		j.downloads = true
	}
	if strings.Contains(prog.text, "/") || base == "source" || base == "." || ((shells[base] || interpreters[base]) && runsFile(ws)) {
		j.runsLocal = true
	}
	if base == prog.text && (base == "cd" || base == "pushd" || base == "popd") {
		j.cd(base, ws)
		return
	}
	if matches(j.allow, ws, false) == nil && !harmless(prog.text, ws) {
		j.ask(keyOf(ws), "")
	}
	j.execOptions(base, ws, depth)
	j.args(base, ws)
}

// lookupOnly reports whether command or type only looks names up
// (command -v, command -V, type).
func lookupOnly(ws []word) bool {
	if ws[0].text == "type" {
		return true
	}
	for _, w := range ws[1:] {
		if !strings.HasPrefix(w.text, "-") {
			return false
		}
		if strings.ContainsAny(w.text, "vV") {
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

// execOptions judges the programs that options of an allowed program run:
// the call is never automatic, and denied or catastrophic programs in them
// are blocked.
func (j *judge) execOptions(base string, ws []word, depth int) {
	if base == "find" {
		return // judged by find
	}
	for i := 1; i < len(ws); i++ {
		t := ws[i].text
		name, value, hasValue := strings.Cut(t, "=")
		proxy := strings.Contains(strings.ToLower(t), "proxycommand") || strings.Contains(strings.ToLower(t), "localcommand")
		if !execOptions[name] && !proxy {
			continue
		}
		if !hasValue && execOptions[name] && i+1 < len(ws) {
			i++
			value = ws[i].text
			if !ws[i].static {
				j.unjudgeable("%s %s of %s", base, name, value)
				continue
			}
		}
		if proxy {
			_, value, _ = strings.Cut(t, "=")
		}
		j.ask(keyOf(ws), "%s %s runs the program %q", base, name, value)
		if value != "" {
			before := j.parts
			j.source(strings.TrimPrefix(value, "exec="), depth+1)
			j.parts = before
		}
	}
}

func argText(ws []word, i int) string {
	if i < len(ws) {
		return ws[i].text
	}
	return ""
}

// hasDownloadSubst reports whether an argument substitutes a download:
// bash <(curl …), python -c "$(curl …)".
func hasDownloadSubst(ws []word) bool {
	for _, w := range ws {
		if w.raw != nil && containsDownload(w.raw) {
			return true
		}
	}
	return false
}

// scriptArg returns the script file argument of a shell, interpreter or
// source, if any.
func scriptArg(ws []word) *word {
	if base := filepath.Base(ws[0].text); base == "source" || base == "." {
		if len(ws) > 1 {
			return &ws[1]
		}
		return nil
	}
	for i, w := range ws[1:] {
		switch {
		case strings.HasPrefix(w.text, "-c") || w.text == "-e" || w.text == "-m" || w.text == "--eval":
			return nil
		case !strings.HasPrefix(w.text, "-"):
			return &ws[i+1]
		}
	}
	return nil
}

// generated reports whether a script path names a stream made while the
// command runs (a process substitution, stdin, a file descriptor).
func generated(w word) bool {
	if w.raw != nil {
		for _, p := range w.raw.Parts {
			if _, ok := p.(*syntax.ProcSubst); ok {
				return true
			}
		}
	}
	return w.text == "/dev/stdin" || strings.HasPrefix(w.text, "/dev/fd/") || strings.HasPrefix(w.text, "/proc/self/fd/")
}

// runsFile reports whether a shell or interpreter runs a script file.
func runsFile(ws []word) bool {
	for _, w := range ws[1:] {
		switch {
		case strings.HasPrefix(w.text, "-c") || w.text == "-e" || w.text == "-m" || w.text == "--eval":
			return false
		case !strings.HasPrefix(w.text, "-"):
			return true
		}
	}
	return false
}

// args checks the paths that a program's arguments name.
func (j *judge) args(base string, ws []word) {
	if noPaths[base] {
		return
	}
	last := -1 // the destination of cp, mv, ...
	if writesLast[base] {
		for i := len(ws) - 1; i > 0; i-- {
			if !strings.HasPrefix(ws[i].text, "-") {
				last = i
				break
			}
		}
	}
	inPlace := base == "sed" && slices.ContainsFunc(ws[1:], func(w word) bool {
		return w.text == "--in-place" || strings.HasPrefix(w.text, "--in-place=") || (isShortFlags(w.text) && strings.Contains(w.text, "i"))
	})
	for i, w := range ws[1:] {
		if !w.static {
			j.ask(keyOf(ws), "the argument %s of %s cannot be known before it runs; its path is not checked", w.text, base)
			continue
		}
		t := w.text
		if strings.HasPrefix(t, "-") {
			// --file=path: check the value.
			_, v, ok := strings.Cut(t, "=")
			if !ok || !strings.HasPrefix(t, "--") {
				continue
			}
			t = v
		} else if k, v, ok := strings.Cut(t, "="); ok && isName(k) {
			t = v // dd of=path, make VAR=value
		}
		write := writesAll[base] || i+1 == last || inPlace
		j.path(word{text: t, static: true, glob: w.glob}, write)
		// HEAD:.env, host:path: the part after the colon may be a path.
		if i := strings.LastIndexByte(t, ':'); i >= 0 && !strings.Contains(t, "://") && j.ws != nil && j.ws.IsSensitive(filepath.Clean(t[i+1:])) {
			j.danger("names the sensitive path %s (paths.sensitive)", t[i+1:])
		}
	}
}

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

// path applies the file tools' path rules to a path a command names: a
// sensitive path is dangerous, a path outside the roots asks.
func (j *judge) path(w word, write bool) {
	if j.ws == nil || w.text == "" || w.text == "-" {
		return
	}
	if strings.HasPrefix(w.text, "~") {
		if write {
			j.danger("writes to %s, outside the workspace", w.text)
		} else {
			j.ask("outside:"+w.text, "names %s, outside the workspace", w.text)
		}
		return
	}
	// A relative path is checked from every folder the command may be in
	// when it runs: the starting one and those it cds into.
	for _, dir := range j.dirs() {
		p := w.text
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		inside := j.resolve(w.text, p, write)
		switch {
		case !inside || !w.glob:
			// A pattern outside already asks: it is not expanded.
		case globDepth(p) > 3:
			j.ask("pattern:"+w.text, "the pattern %s is too broad to check the paths it names", w.text)
		default:
			matched, _ := filepath.Glob(p)
			hidden := strings.HasPrefix(filepath.Base(p), ".")
			for i, m := range matched {
				if i >= 200 {
					break
				}
				if !hidden && strings.HasPrefix(filepath.Base(m), ".") {
					continue
				}
				j.resolve(w.text, m, write)
			}
		}
		if filepath.IsAbs(w.text) {
			return
		}
	}
}

func (j *judge) dirs() []string { return append([]string{j.dir}, j.cdDirs...) }

// cd judges cd, pushd and popd: moving to a folder inside the workspace is
// harmless, and the later relative paths are checked from there too.
func (j *judge) cd(base string, ws []word) {
	var target *word
	for i := 1; i < len(ws); i++ {
		if ws[i].text == "--" || (strings.HasPrefix(ws[i].text, "-") && len(ws[i].text) > 1) {
			continue
		}
		target = &ws[i]
		break
	}
	switch {
	case base == "popd":
		return
	case target == nil:
		j.ask(keyOf(ws), "%s goes to the home folder, outside the workspace", base)
		return
	case !target.static || target.glob || target.text == "-":
		j.ask(keyOf(ws), "%s goes to %s, which cannot be known before it runs", base, target.text)
		return
	}
	before := j.notAuto
	j.path(*target, false)
	if j.ws == nil || j.notAuto && !before {
		j.ask(keyOf(ws), "")
		return
	}
	for _, dir := range j.dirs() {
		p := target.text
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if !slices.Contains(j.cdDirs, p) && len(j.cdDirs) < 16 {
			j.cdDirs = append(j.cdDirs, p)
		}
	}
}

// resolve checks one absolute path and reports whether it is inside the
// workspace.
func (j *judge) resolve(arg, abs string, write bool) bool {
	if harmlessTarget[abs] || (!write && harmlessSource[abs]) {
		return true
	}
	_, err := j.ws.Resolve(abs)
	var pe *workspace.PathError
	if !errors.As(err, &pe) {
		return true
	}
	if pe.Code == "SENSITIVE_PATH" {
		j.danger("names the sensitive path %s (paths.sensitive)", arg)
		return true
	}
	if write {
		j.danger("writes to %s, outside the workspace", arg)
		return false
	}
	j.ask("outside:"+arg, "names %s, outside the workspace", arg)
	return false
}

// globDepth counts the path elements of a pattern that hold glob
// characters.
func globDepth(p string) int {
	n := 0
	for _, el := range strings.Split(p, string(filepath.Separator)) {
		if globChars.MatchString(el) {
			n++
		}
	}
	return n
}

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

func isShortFlags(s string) bool { return len(s) > 1 && s[0] == '-' && s[1] != '-' }

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
	out := []word{ws[0]}
	i := 1
	for ; i < len(ws); i++ {
		t := ws[i].text
		switch {
		case slices.Contains(gitValueOpts, t):
			i++
		case strings.HasPrefix(t, "-"):
		default:
			return append(out, ws[i:]...)
		}
	}
	return out
}

// git warns on history-destroying git commands.
func (j *judge) git(ws []word, depth int) {
	for i := 1; i < len(ws); i++ {
		t := ws[i].text
		if t == "-c" || strings.HasPrefix(t, "--config-env") || strings.HasPrefix(t, "--exec-path") {
			j.ask(keyOf(ws), "git %s can make git run arbitrary commands", t)
		}
		switch {
		case slices.Contains(gitValueOpts, t):
			i++
		case strings.HasPrefix(t, "-"):
		default:
			i = len(ws)
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

// opaqueWrappers run a program given on their command line after options
// this judge does not parse.
var opaqueWrappers = set("strace", "ltrace", "valgrind", "gdb", "perf", "chroot", "flock", "unshare", "nsenter",
	"firejail", "bwrap", "systemd-run", "taskset", "chrt", "numactl", "cpulimit", "prlimit", "runuser", "sg",
	"torsocks", "proxychains", "proxychains4", "parallel", "entr", "caffeinate", "catchsegv", "faketime", "fakeroot",
	"script", "tsp", "ts", "daemonize", "start-stop-daemon", "dbus-run-session", "xvfb-run", "with-contenv")

// opaque judges what an opaque wrapper may run: every tail of its words
// that starts with a non-option is judged as a command of its own, and only
// what blocks or is dangerous there counts (the wrapper itself asks unless
// it is allowed).
func (j *judge) opaque(ws []word, depth int) {
	if depth >= maxDepth {
		return
	}
	for i := 1; i < min(len(ws), 32); i++ {
		if strings.HasPrefix(ws[i].text, "-") {
			continue
		}
		sub := &judge{ws: j.ws, dir: j.dir, cdDirs: j.cdDirs, allow: j.allow, deny: j.deny, keys: map[string]bool{}}
		sub.command(ws[i:], nil, depth+1)
		if sub.blocked != "" {
			j.block("%s", sub.blocked)
		}
		if sub.dangerous {
			j.danger("%s", strings.Join(sub.warnings, "; "))
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

// wrapper judges a program that runs another: the wrapped program is judged
// as if it ran alone, and the wrapper is transparent to the allow list.
func (j *judge) wrapper(base string, spec wrapperSpec, ws []word, stdin *syntax.Word, depth int) {
	inner, opts, ok := spec.unwrap(ws[1:])
	if !ok {
		j.unjudgeable("the options of %s are expansions", base)
		return
	}
	for k := range opts {
		if strings.HasSuffix(k, "=") {
			j.envName(strings.TrimSuffix(k, "="))
		}
		if spec.stringOpts != "" && (k == "-S" || k == "--split-string") {
			j.unjudgeable("%s -S splits a command string", base)
			return
		}
	}
	if base == "env" {
		if d, ok := opts["-C"]; ok {
			j.path(word{text: d, static: true}, false)
		}
	}
	if base == "time" {
		if o, ok := opts["-o"]; ok {
			j.ask(">"+o, "time -o writes to %s", o)
			j.path(word{text: o, static: true}, true)
		}
	}
	if base == "xargs" {
		if f, ok := opts["-a"]; ok {
			j.path(word{text: f, static: true}, false)
		}
		if len(inner) == 0 {
			inner = []word{{text: "echo", static: true}}
		}
		// -I R replaces R in the words with each input line.
		rs := ""
		for _, k := range []string{"-I", "--replace", "-i"} {
			if v, ok := opts[k]; ok {
				rs = v
				if rs == "" {
					rs = "{}"
				}
			}
		}
		if rs != "" {
			inner = slices.Clone(inner)
			for i := range inner {
				if strings.Contains(inner[i].text, rs) {
					inner[i].static = false
				}
			}
		}
		if !inner[0].static || !noPaths[filepath.Base(inner[0].text)] {
			j.ask("xargs "+inner[0].text, "xargs passes its input as arguments to %s; those paths cannot be checked", inner[0].text)
		}
	}
	if base == "sudo" {
		if _, ok := opts["-e"]; ok {
			j.ask("sudoedit", "sudo -e edits files as root")
		}
	}
	if len(inner) == 0 {
		if (base == "sudo" || base == "doas") && (hasKey(opts, "-s") || hasKey(opts, "-i")) {
			j.ask(base+" -s", "%s opens a root shell", base)
			return
		}
		// The wrapper alone (env, nohup) is a program of its own.
		if matches(j.allow, ws, false) == nil {
			j.ask(keyOf(ws), "")
		}
		return
	}
	j.parts--
	j.command(inner, stdin, depth)
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// shell judges sh/bash -c STRING by parsing the string. It reports false
// when the shell runs a script file or stdin, to be judged as a program.
func (j *judge) shell(ws []word, stdin *syntax.Word, depth int) bool {
	args := ws[1:]
	hasC := false
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if !args[i].static {
			if hasC {
				break
			}
			j.unjudgeable("the options of %s are expansions", ws[0].text)
			return true
		}
		if t == "--" || t == "-" {
			i++
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
			continue
		}
		if (strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+")) && len(t) > 1 {
			if strings.ContainsRune(t[1:], 'c') {
				hasC = true
			}
			if strings.ContainsAny(t[1:], "oO") {
				i++
			}
			continue
		}
		break
	}
	if !hasC {
		if stdin != nil {
			// The script is judged as text: its expansions appear as $NAME
			// and $(…), so an expanded program name stays unjudgeable.
			j.source(render(stdin).text, depth+1)
			j.ask(keyOf(ws), "%s runs a script from a here-document", ws[0].text)
		} else if i >= len(args) {
			j.ask(keyOf(ws), "%s runs a script from its input", ws[0].text)
		}
		return false
	}
	if i >= len(args) {
		j.unjudgeable("%s -c without a command", ws[0].text)
		return true
	}
	if !args[i].static {
		j.unjudgeable("%s -c of %s", ws[0].text, args[i].text)
		return true
	}
	j.parts--
	j.source(args[i].text, depth+1)
	return true
}

// eval parses the words eval joins.
func (j *judge) eval(ws []word, depth int) {
	var parts []string
	for _, w := range ws[1:] {
		if !w.static {
			j.unjudgeable("eval of %s", w.text)
			return
		}
		parts = append(parts, w.text)
	}
	j.parts--
	j.source(strings.Join(parts, " "), depth+1)
}

// watch runs its arguments through sh -c.
func (j *judge) watch(ws []word, depth int) {
	i := 1
	for ; i < len(ws); i++ {
		t := ws[i].text
		if t == "--" {
			i++
			break
		}
		if !strings.HasPrefix(t, "-") {
			break
		}
		if t == "-n" || t == "--interval" || t == "-q" || t == "--equexit" {
			i++
		}
	}
	if matches(j.allow, ws, false) == nil {
		j.ask("watch", "")
	}
	var parts []string
	for _, w := range ws[i:] {
		if !w.static {
			j.unjudgeable("watch of %s", w.text)
			return
		}
		parts = append(parts, w.text)
	}
	j.source(strings.Join(parts, " "), depth+1)
}

// su -c STRING.
func (j *judge) su(ws []word, depth int) {
	j.ask(keyOf(ws), "")
	for i := 1; i+1 < len(ws); i++ {
		if ws[i].text == "-c" || ws[i].text == "--command" {
			if !ws[i+1].static {
				j.unjudgeable("su -c of %s", ws[i+1].text)
				return
			}
			j.source(ws[i+1].text, depth+1)
		}
	}
}

// find judges the commands find runs (-exec, -execdir, -ok, -okdir) and its
// deletions and file writes.
func (j *judge) find(ws []word, stdin *syntax.Word, depth int) {
	for i := 1; i < len(ws); i++ {
		switch ws[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
			k := i + 1
			for k < len(ws) && ws[k].text != ";" && ws[k].text != "+" {
				k++
			}
			inner := make([]word, 0, k-i-1)
			for _, w := range ws[i+1 : k] {
				if strings.Contains(w.text, "{}") {
					w.static = false // a found path
				}
				inner = append(inner, w)
			}
			j.command(inner, stdin, depth)
			i = k
		case "-delete":
			j.ask("find -delete", "find -delete deletes files")
			for _, w := range ws[1:] {
				if !strings.HasPrefix(w.text, "-") && rootLike(w.text) {
					j.block("find %s -delete", w.text)
				}
				if strings.HasPrefix(w.text, "-") {
					break
				}
			}
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(ws) {
				j.ask("find "+ws[i].text, "find %s writes to %s", ws[i].text, ws[i+1].text)
			}
		}
	}
}
