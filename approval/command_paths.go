// This file holds the checks of the paths a command names: its arguments,
// the folders it cds into, and each path resolved against the workspace.

package approval

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentls/agentls/workspace"
)

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
	for _, p := range j.places(w.text) {
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
	}
}

// places are the absolute paths a path a command names may stand for:
// itself when absolute; a relative path is taken from every folder the
// command may be in when it runs, the starting one and those it cds into.
func (j *judge) places(path string) []string {
	if filepath.IsAbs(path) {
		return []string{path}
	}
	out := make([]string, 0, 1+len(j.cdDirs))
	for _, dir := range append([]string{j.dir}, j.cdDirs...) {
		out = append(out, filepath.Join(dir, path))
	}
	return out
}

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
	for _, p := range j.places(target.text) {
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
