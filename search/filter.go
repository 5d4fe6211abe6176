package search

import (
	"strings"

	"github.com/agentls/agentls/workspace"
	"github.com/bmatcuk/doublestar/v4"
)

// searchFilter builds the walk's filter from the glob and type options, with ripgrep's precedence: a glob that matches keeps the file
// even if it is ignored or hidden, a "!" glob leaves it out, a file no glob
// matches is left out when there are globs to match; then a file must be of
// the type (which keeps it even if hidden). Globs match the path relative
// to the workspace root (prefix is the walked directory's).
func searchFilter(globArg, typeArg, prefix string) (func(string, bool) workspace.Verdict, error) {
	var globs *workspace.IgnoreRules
	whitelists := 0
	if strings.TrimSpace(globArg) != "" {
		var lines []string
		for _, g := range splitGlobs(globArg) {
			for _, e := range expandBraces(g) {
				lines = append(lines, e)
				if !strings.HasPrefix(e, "!") {
					whitelists++
				}
			}
		}
		globs = workspace.ParseIgnore([]byte(strings.Join(lines, "\n") + "\n"))
	}
	var types *workspace.IgnoreRules
	if strings.TrimSpace(typeArg) != "" {
		g, ok := lookupType(typeArg)
		if !ok {
			return nil, argErrorf("unknown file type %q; known types: %s", typeArg, strings.Join(typeNames(), ", "))
		}
		types = workspace.ParseIgnore([]byte(strings.Join(g, "\n") + "\n"))
	}
	if globs == nil && types == nil {
		return nil, nil
	}
	return func(rel string, isDir bool) workspace.Verdict {
		full := prefix + rel
		var v workspace.Verdict
		if globs != nil {
			matched, white := globs.Match(full, isDir)
			switch {
			case matched && !white:
				return workspace.Skip
			case matched:
				v = workspace.KeepIgnored | workspace.KeepHidden
			case !isDir && whitelists > 0:
				return workspace.Skip
			}
		}
		if types != nil && !isDir {
			if matched, _ := types.Match(full, false); !matched {
				return workspace.Skip
			}
			v |= workspace.KeepHidden
		}
		return v
	}, nil
}

// splitGlobs splits comma-separated globs, leaving commas inside braces.
func splitGlobs(s string) []string {
	var globs []string
	for _, g := range splitCommas(s) {
		if g = strings.TrimSpace(g); g != "" {
			globs = append(globs, g)
		}
	}
	return globs
}

// splitCommas splits s at the commas outside braces; a backslash escapes
// the byte after it.
func splitCommas(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// expandBraces expands the first {a,b} group of a glob, recursively.
func expandBraces(g string) []string {
	depth, open := 0, -1
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			var out []string
			for _, a := range splitCommas(g[open+1 : i]) {
				out = append(out, expandBraces(g[:open]+a+g[i+1:])...)
			}
			return out
		}
	}
	return []string{g}
}

// sensitive matches paths against the paths.sensitive globs, fast enough to
// ask about every entry of a walk: a glob without a slash, or "**/" and a
// name, matches the base name; "**/name/**" a directory's name; any other
// glob the whole path (doublestar). Directories are asked first, so what is
// below a matching directory is never reached.
type sensitive struct {
	names []workspace.NameGlob // base names of files and directories
	dirs  []workspace.NameGlob // directory names
	paths []pathGlob           // whole relative paths
}

// pathGlob is a doublestar glob of whole paths, with the literal pieces
// every path it matches contains (none when it has classes, braces or
// escapes): a path without one of them is not matched, so the glob need
// not run on it (the index asks about every file of a tree).
type pathGlob struct {
	glob string
	lits []string
}

func newPathGlob(g string) pathGlob {
	pg := pathGlob{glob: g}
	if strings.ContainsAny(g, "[]{}\\") {
		return pg
	}
	for _, piece := range strings.FieldsFunc(g, func(r rune) bool { return r == '*' || r == '?' }) {
		// "**/" may match nothing, taking the slash beside it along.
		if piece = strings.Trim(piece, "/"); piece != "" {
			pg.lits = append(pg.lits, piece)
		}
	}
	return pg
}

// match reports whether the glob matches path.
func (pg *pathGlob) match(path string) bool {
	for _, l := range pg.lits {
		if !strings.Contains(path, l) {
			return false
		}
	}
	ok, _ := doublestar.Match(pg.glob, path)
	return ok
}

func newSensitive(globs []string) *sensitive {
	s := &sensitive{}
	for _, g := range globs {
		g = strings.TrimPrefix(g, "/")
		rest, deep := strings.CutPrefix(g, "**/")
		switch {
		case !strings.Contains(g, "/"):
			s.names = append(s.names, workspace.NewNameGlob(g))
		case deep && !strings.Contains(rest, "/"):
			s.names = append(s.names, workspace.NewNameGlob(rest))
		case deep && strings.HasSuffix(rest, "/**") && !strings.Contains(strings.TrimSuffix(rest, "/**"), "/"):
			s.dirs = append(s.dirs, workspace.NewNameGlob(strings.TrimSuffix(rest, "/**")))
		default:
			s.paths = append(s.paths, newPathGlob(g))
		}
	}
	return s
}

func (s *sensitive) empty() bool { return len(s.names)+len(s.dirs)+len(s.paths) == 0 }

func (s *sensitive) match(rel string, isDir bool) bool {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for _, p := range s.names {
		if p.Match(name) {
			return true
		}
	}
	if isDir {
		for _, p := range s.dirs {
			if p.Match(name) {
				return true
			}
		}
	}
	for i := range s.paths {
		g := &s.paths[i]
		if g.match(rel) || isDir && strings.HasSuffix(g.glob, "/**") && g.match(rel+"/x") {
			return true
		}
	}
	return false
}
