// This file holds the judging of one part of a command: assignments,
// declarations, functions, redirections, pipelines and the simple command
// itself, with the options and arguments that make it run other code.

package approval

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
