// This file holds the judging of programs that run other programs: the
// wrappers (env, sudo, xargs, ...), opaque wrappers, sh -c and bash -c,
// eval, watch, su -c and find -exec.

package approval

import (
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
