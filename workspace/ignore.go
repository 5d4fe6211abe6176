package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// This file and wildmatch.go are a .gitignore matcher that follows git's
// own code (dir.c and wildmatch.c) rather than a description of it:
//
//   - A file is read line by line; a UTF-8 BOM is skipped, a CR before the
//     LF is dropped, lines starting with '#' are comments, trailing spaces
//     are dropped unless escaped with a backslash, blank lines are skipped.
//   - A leading '!' negates the pattern ("\!" is a literal '!'); a trailing
//     '/' makes it match directories only.
//   - A pattern with no other slash matches the base name at any depth
//     below the file's directory; one with a slash (leading or in the middle)
//     is anchored to that directory and matched against the path relative to
//     it, '*' and '?' and classes never matching '/', "**" matching across
//     directories only when it stands between slashes (or at an end).
//   - Character classes: ranges, '!' or '^' negation, POSIX [:name:] classes,
//     backslash escapes.
//   - Within one file the last matching rule decides; across files the
//     deepest directory's file decides, then .git/info/exclude.
//   - A path below an excluded directory is excluded, whatever the rules say
//     about the path itself: git never looks inside an excluded directory.
//
// Case is significant (core.ignoreCase is not read). The user's
// core.excludesFile (default $XDG_CONFIG_HOME/git/ignore) counts like
// .git/info/exclude, below it.

// ignoreRule is one pattern of an ignore file.
type ignoreRule struct {
	pattern string // without '!', the leading '/' of an anchored pattern and the trailing '/'
	negate  bool
	dirOnly bool
	noDir   bool // no slash: matched against the base name
	prefix  int  // length of the leading part without wildcards
}

// IgnoreRules are the rules of one ignore file, in order.
type IgnoreRules struct {
	rules []ignoreRule

	once sync.Once
	idx  *ruleIndex
}

// ruleIndex finds the candidate rules of a path without trying them all:
// a .gitignore of a hundred lines is mostly names and extensions.
type ruleIndex struct {
	names   map[string][]int // noDir literal patterns, by name
	paths   map[string][]int // anchored literal patterns, by path
	exts    map[string][]int // noDir "*.ext" patterns, by ".ext"
	general []int            // the others, in order
}

// index builds the rule index.
func (r *IgnoreRules) index() *ruleIndex {
	r.once.Do(func() {
		x := &ruleIndex{names: map[string][]int{}, paths: map[string][]int{}, exts: map[string][]int{}}
		for i, rule := range r.rules {
			p := rule.pattern
			switch {
			case rule.prefix == len(p) && rule.noDir:
				x.names[p] = append(x.names[p], i)
			case rule.prefix == len(p):
				x.paths[p] = append(x.paths[p], i)
			case rule.noDir && len(p) > 2 && p[0] == '*' && p[1] == '.' && simpleLength(p[1:]) == len(p)-1 && !strings.Contains(p[2:], "."):
				x.exts[p[1:]] = append(x.exts[p[1:]], i)
			default:
				x.general = append(x.general, i)
			}
		}
		r.idx = x
	})
	return r.idx
}

// ParseIgnore parses the text of a .gitignore (or .git/info/exclude, or
// .ignore) file.
func ParseIgnore(data []byte) *IgnoreRules {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	r := &IgnoreRules{}
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
			line = bytes.TrimSuffix(line, []byte("\r"))
		} else {
			// git only reads lines that end with a newline, but it appends
			// one to a file that lacks it.
			line, data = data, nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if rule, ok := parseRule(trimTrailingSpaces(string(line))); ok {
			r.rules = append(r.rules, rule)
		}
	}
	return r
}

// Len returns the number of rules.
func (r *IgnoreRules) Len() int {
	if r == nil {
		return 0
	}
	return len(r.rules)
}

// trimTrailingSpaces drops trailing spaces that are not escaped.
func trimTrailingSpaces(s string) string {
	lastSpace := -1
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if lastSpace < 0 {
				lastSpace = i
			}
		case '\\':
			i++
			if i == len(s) {
				return s
			}
			lastSpace = -1
		default:
			lastSpace = -1
		}
	}
	if lastSpace >= 0 {
		return s[:lastSpace]
	}
	return s
}

func parseRule(p string) (ignoreRule, bool) {
	var r ignoreRule
	if strings.HasPrefix(p, "!") {
		r.negate = true
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		r.dirOnly = true
		p = p[:len(p)-1]
	}
	r.noDir = !strings.Contains(p, "/")
	if !r.noDir && strings.HasPrefix(p, "/") {
		p = p[1:]
	}
	if p == "" {
		return r, false
	}
	r.pattern = p
	r.prefix = simpleLength(p)
	return r, true
}

// simpleLength is the length of the leading part of p without special
// characters.
func simpleLength(p string) int {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[', '\\':
			return i
		}
	}
	return len(p)
}

// matches reports whether the rule matches rel, a path relative to the
// directory of the rule's file.
func (r *ignoreRule) matches(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if r.noDir {
		base := rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			base = rel[i+1:]
		}
		if r.prefix == len(r.pattern) {
			return base == r.pattern
		}
		return wildmatch(r.pattern, base, false)
	}
	// git compares the literal prefix first and then wildmatches the rest,
	// so a "**" right after the prefix counts as standing at the start.
	pat, name := r.pattern, rel
	if r.prefix > 0 {
		if r.prefix > len(name) || pat[:r.prefix] != name[:r.prefix] {
			return false
		}
		pat, name = pat[r.prefix:], name[r.prefix:]
		if pat == "" {
			return name == ""
		}
	}
	return wildmatch(pat, name, true)
}

// Match returns the decision of the last rule that matches rel (relative to
// the directory of the file, forward slashes): matched is false when no rule
// matches; ignored is false when the deciding rule is a negation. Parent
// directories are not considered.
func (r *IgnoreRules) Match(rel string, isDir bool) (matched, ignored bool) {
	if r == nil {
		return false, false
	}
	if len(r.rules) <= 8 {
		for i := len(r.rules) - 1; i >= 0; i-- {
			if r.rules[i].matches(rel, isDir) {
				return true, !r.rules[i].negate
			}
		}
		return false, false
	}
	// The last rule that matches decides: the best candidate of each kind,
	// then the general rules after it.
	x := r.index()
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	best := -1
	last := func(idxs []int) {
		for j := len(idxs) - 1; j >= 0 && idxs[j] > best; j-- {
			if !r.rules[idxs[j]].dirOnly || isDir {
				best = idxs[j]
				return
			}
		}
	}
	last(x.names[base])
	last(x.paths[rel])
	if dot := strings.LastIndexByte(base, '.'); dot >= 0 {
		last(x.exts[base[dot:]])
	}
	for j := len(x.general) - 1; j >= 0 && x.general[j] > best; j-- {
		if r.rules[x.general[j]].matches(rel, isDir) {
			best = x.general[j]
			break
		}
	}
	if best < 0 {
		return false, false
	}
	return true, !r.rules[best].negate
}

// IgnoreStack is the ignore rules in force in one directory: the rules of
// the ignore files of the directory and of its parents up to the top of the
// repository (or of the walk), and of .git/info/exclude. A stack is
// immutable and shared by the directories below it.
type IgnoreStack struct {
	parent *IgnoreStack
	prefix string // the directory relative to the top, with a trailing '/' ("" at the top)
	rules  *IgnoreRules
	// exclude are the rules of .git/info/exclude, the same in every stack
	// of a repository.
	exclude *IgnoreRules
}

// NewIgnoreStack returns the stack at the top of a repository (or of a
// tree), with the rules of its ignore files (nil: none) and of
// .git/info/exclude (nil: none).
func NewIgnoreStack(top, exclude *IgnoreRules) *IgnoreStack {
	return &IgnoreStack{rules: top, exclude: exclude}
}

// Child returns the stack of directory dir (relative to the top, forward
// slashes, "" for the top itself) whose own ignore files hold rules (nil or
// empty: none).
func (s *IgnoreStack) Child(dir string, rules *IgnoreRules) *IgnoreStack {
	if rules.Len() == 0 {
		return s
	}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	return &IgnoreStack{parent: s, prefix: prefix, rules: rules, exclude: s.exclude}
}

// Ignored reports whether the rules ignore rel (relative to the top, forward
// slashes), looking at rel itself, not at its parent directories: the
// deepest file with a matching rule decides, then .git/info/exclude.
func (s *IgnoreStack) Ignored(rel string, isDir bool) bool {
	if s == nil {
		return false
	}
	for l := s; l != nil; l = l.parent {
		if l.rules.Len() == 0 || !strings.HasPrefix(rel, l.prefix) {
			continue
		}
		if matched, ignored := l.rules.Match(rel[len(l.prefix):], isDir); matched {
			return ignored
		}
	}
	matched, ignored := s.exclude.Match(rel, isDir)
	return matched && ignored
}

// IgnoreFiles are the names of the per-directory ignore files the walker
// reads, lowest precedence first: git's, then ripgrep's .ignore and
// .rgignore (which apply outside git repositories too).
var IgnoreFiles = []string{".gitignore", ".ignore", ".rgignore"}

// readIgnoreFiles reads the ignore files of dir whose names are in present
// (nil: try them all). gitignore says whether .gitignore counts (inside a
// git repository). It returns nil when there are no rules.
func readIgnoreFiles(dir string, present func(name string) bool, gitignore bool) *IgnoreRules {
	var all *IgnoreRules
	for _, name := range IgnoreFiles {
		if name == ".gitignore" && !gitignore {
			continue
		}
		if present != nil && !present(name) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		r := ParseIgnore(data)
		if r.Len() == 0 {
			continue
		}
		if all == nil {
			all = &IgnoreRules{}
		}
		all.rules = append(all.rules, r.rules...)
	}
	return all
}

// FindRepo returns the top of the git repository that holds dir (the
// nearest parent with a .git entry), or "" when there is none.
func FindRepo(dir string) string {
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// gitDir returns the git directory of the repository at top, following a
// "gitdir: " file (worktrees, submodules).
func gitDir(top string) string {
	p := filepath.Join(top, ".git")
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return p
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return p
	}
	line := strings.TrimSpace(string(data))
	if !strings.HasPrefix(line, "gitdir:") {
		return p
	}
	d := strings.TrimSpace(strings.TrimPrefix(line, "gitdir:"))
	if !filepath.IsAbs(d) {
		d = filepath.Join(top, d)
	}
	return d
}

// Ignorer answers whether any path of a tree is ignored, reading ignore
// files as it needs them. It serves one-off questions (is this file
// ignored?); walks use the stacks directly and read each file once.
type Ignorer struct {
	top   string
	git   bool
	stack *IgnoreStack
	cache map[string]*IgnoreStack // directory rel → stack in force there
}

// NewIgnorer returns an Ignorer for the tree at top. Inside a git
// repository top should be the repository's top; .gitignore files and
// .git/info/exclude count only in a git repository, like ripgrep.
func NewIgnorer(top string) *Ignorer {
	top = filepath.Clean(top)
	git := FindRepo(top) != ""
	var exclude *IgnoreRules
	if git {
		exclude = excludeRules(top)
	}
	s := NewIgnoreStack(readIgnoreFiles(top, nil, git), exclude)
	return &Ignorer{top: top, git: git, stack: s, cache: map[string]*IgnoreStack{"": s}}
}

// stackFor returns the stack in force in directory rel.
func (ig *Ignorer) stackFor(rel string) *IgnoreStack {
	if s, ok := ig.cache[rel]; ok {
		return s
	}
	parent := ""
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		parent = rel[:i]
	}
	s := ig.stackFor(parent).Child(rel, readIgnoreFiles(filepath.Join(ig.top, filepath.FromSlash(rel)), nil, ig.git))
	ig.cache[rel] = s
	return s
}

// Excluded reports whether rel (relative to the top, forward slashes) is
// excluded: ignored itself or below an ignored directory. A path inside a
// .git directory is always excluded.
func (ig *Ignorer) Excluded(rel string, isDir bool) bool {
	rel = strings.Trim(filepath.ToSlash(rel), "/")
	if rel == "" || rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	dir := ""
	for i, part := range parts {
		last := i == len(parts)-1
		if part == ".git" {
			return true
		}
		p := part
		if dir != "" {
			p = dir + "/" + part
		}
		if ig.stackFor(dir).Ignored(p, isDir || !last) {
			return true
		}
		dir = p
	}
	return false
}

// excludeRules are the rules of the repository at top that no directory
// holds: the user's core.excludesFile, then .git/info/exclude (which wins).
func excludeRules(top string) *IgnoreRules {
	all := &IgnoreRules{}
	for _, p := range []string{globalExcludesFile(), filepath.Join(gitDir(top), "info", "exclude")} {
		if p == "" {
			continue
		}
		if data, err := os.ReadFile(p); err == nil {
			all.rules = append(all.rules, ParseIgnore(data).rules...)
		}
	}
	if all.Len() == 0 {
		return nil
	}
	return all
}

// IgnoreInputs lists the files outside the tree at dir that decide what a
// walk of dir ignores, for a watcher of the tree to stat since it does not
// watch them: the .git entry of dir and of each directory above it up to
// the repository's top; inside a repository, the ignore files of the
// directories above dir up to the top, the repository's .git/info/exclude,
// the user's git config files (they may name core.excludesFile) and the
// global excludes file. Paths that do not exist are listed too: their
// coming changes the rules.
func IgnoreInputs(dir string) []string {
	dir = filepath.Clean(dir)
	var out, above []string
	top := ""
	for d := dir; ; {
		out = append(out, filepath.Join(d, ".git"))
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			top = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
		above = append(above, d)
	}
	if top == "" {
		return out
	}
	for _, d := range above {
		for _, name := range IgnoreFiles {
			out = append(out, filepath.Join(d, name))
		}
	}
	out = append(out, filepath.Join(gitDir(top), "info", "exclude"))
	configs, excludes := GitGlobalFiles()
	out = append(out, configs...)
	if excludes != "" {
		out = append(out, excludes)
	}
	return out
}

// gitGlobalConfigs returns the user's git config files
// ($XDG_CONFIG_HOME/git/config, ~/.gitconfig; GIT_CONFIG_GLOBAL replaces
// both) and $XDG_CONFIG_HOME ("" when there is no home).
func gitGlobalConfigs() (configs []string, xdg string) {
	home, _ := os.UserHomeDir()
	xdg = os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	configs = []string{filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig")}
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		configs = []string{g}
	}
	return configs, xdg
}

// GitGlobalFiles returns the user's git config files and the global
// excludes file they name (or its default), as the walk reads them.
func GitGlobalFiles() (configs []string, excludes string) {
	configs, _ = gitGlobalConfigs()
	return configs, globalExcludesFile()
}

// globalExcludesFile is core.excludesFile from the user's git config
// ($XDG_CONFIG_HOME/git/config, ~/.gitconfig; GIT_CONFIG_GLOBAL replaces
// both), or its default $XDG_CONFIG_HOME/git/ignore. Includes and
// conditional sections of the config are not followed.
func globalExcludesFile() string {
	home, _ := os.UserHomeDir()
	configs, xdg := gitGlobalConfigs()
	file := ""
	for _, c := range configs {
		if v := gitConfigValue(c, "core", "excludesfile"); v != "" {
			file = v // the later file wins
		}
	}
	if file == "" {
		if xdg == "" {
			return ""
		}
		return filepath.Join(xdg, "git", "ignore")
	}
	if strings.HasPrefix(file, "~/") && home != "" {
		file = filepath.Join(home, file[2:])
	}
	return file
}

// gitConfigValue reads one key of a git config file, simply: the last
// "key = value" line in a [section] header, case-insensitive names,
// optional double quotes around the value.
func gitConfigValue(path, section, key string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	in, value := false, ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			name := strings.TrimSpace(strings.Trim(line, "[]"))
			in = strings.EqualFold(name, section)
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if in && ok && strings.EqualFold(strings.TrimSpace(k), key) {
			value = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	return value
}
