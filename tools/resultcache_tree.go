package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/workspace"
)

// Answers of tree tools (list_directory, glob, grep) in the result cache
// (resultcache.go). Such an answer depends on every directory its walk
// entered, which no list of stats could vouch for cheaply; the session's
// search cache can: its watcher watches the directories its index
// entered, and search.Cache.Generation says that nothing changed in them
// between two moments. So a tree answer is kept when:
//
//   - the search cache vouched for the walk's root before the walk
//     (Generation ok: a watcher, no lost event, the root's index built and
//     current) and, after it, for every directory the walk entered, at the
//     same count (dependsOnTree, treeWalk.done);
//   - the path argument names the walked directory itself: no symlink on
//     the way, whose swap outside the watched directories the watcher
//     would not see;
//   - what the walk's ignore rules read outside the watched directories is
//     stat'ed as dependencies: the .git entry of each directory from the
//     walk's root up to its repository's top (or /), the ignore files from
//     the top down to the root, .git/info/exclude, the user's git config
//     files and the global excludes file; a repository whose .git is a
//     file (a worktree, a submodule), or a git config that names its own
//     excludes file, is not vouched for: the answer is not kept;
//   - no ignore file of a directory the walk entered is a symlink (its
//     target may change without an event in the watched directories).
//
// list_directory records every directory it shows, entered or not: the
// mtime it shows moves with the directory's entries, which only the
// directory's own watch sees. grep keeps only to the index's directories
// with regular arguments (isRegularGrep), and a grep that streams is not
// kept. Buffers and the configuration are resultcache.go's: every change
// of a buffer drops every answer, and an answer is given only under its
// configuration.
//
// A hit asks Generation again for the walk's root: the same count means
// no event since the answer was computed, in any watched directory.

// treeWalk records the directories one walk of a cached call enters.
type treeWalk struct {
	c       *Call
	dir     string
	gen     uint64
	outside []cacheDep // ignoreDeps

	mu      sync.Mutex
	entered []string
}

// dependsOnTree declares that the call's answer depends on the tree below
// dir (absolute, resolved), which the call is about to walk; arg is the
// path argument that named it (relative to the workspace, or absolute).
// It returns the walk's recorder, nil when the call is not cached or the
// tree cannot be vouched for (then the answer is not kept).
func (c *Call) dependsOnTree(arg, dir string) *treeWalk {
	d := c.deps
	if d == nil {
		return nil
	}
	fail := func() *treeWalk {
		d.mu.Lock()
		d.failed = true
		d.mu.Unlock()
		return nil
	}
	if c.Session == nil || c.Session.Search == nil || !namesDir(c.Workspace, arg, dir) {
		return fail()
	}
	gen, ok := c.Session.Search.Generation(c.Workspace, dir)
	if !ok {
		return fail()
	}
	outside, ok := ignoreDeps(dir, d.racy)
	if !ok {
		return fail()
	}
	return &treeWalk{c: c, dir: dir, gen: gen, outside: outside}
}

// dependsOnGrep is dependsOnTree for a grep call with arguments a, whose
// walk (or the search index's answer) keeps to the directories the index
// entered only with regular arguments (isRegularGrep); a call that streams
// its results (they are not in its answer) is not kept.
func (c *Call) dependsOnGrep(a grepArgs) *treeWalk {
	if c.deps == nil {
		return nil
	}
	arg := a.Path
	if arg == "" {
		arg = "."
	}
	dir, err := c.Workspace.Resolve(arg)
	var fi os.FileInfo
	if err == nil {
		fi, err = c.Workspace.Stat(dir)
	}
	ps, streams := c.Progress.(PartialStreamer)
	if err != nil || !fi.IsDir() || streams && ps.StreamsPartial() || !isRegularGrep(c.Workspace, a, dir) {
		c.deps.mu.Lock()
		c.deps.failed = true
		c.deps.mu.Unlock()
		return nil
	}
	return c.dependsOnTree(arg, dir)
}

// namesDir reports whether the path argument arg names dir without a
// symlink on the way.
func namesDir(ws *workspace.Workspace, arg, dir string) bool {
	if arg == "" {
		arg = "."
	}
	lex := filepath.Clean(filepath.FromSlash(arg))
	if filepath.IsAbs(lex) {
		return lex == dir
	}
	return filepath.ToSlash(lex) == ws.Rel(dir) || filepath.Join(ws.Root(), lex) == dir
}

// enter records that the walk enters the directory at the absolute path.
// It is safe for concurrent use, and a no-op on nil.
func (t *treeWalk) enter(path string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.entered = append(t.entered, path)
	t.mu.Unlock()
}

// done ends the walk, complete or not (stopped early: its answer may
// depend on the walk's timing, and is not kept). A complete walk's answer
// is kept only when the search cache still vouches, at the same count, for
// every directory the walk entered.
func (t *treeWalk) done(complete bool) {
	if t == nil {
		return
	}
	d := t.c.deps
	t.mu.Lock()
	dirs := append([]string{t.dir}, t.entered...)
	t.mu.Unlock()
	complete = complete && !linkedIgnoreFiles(dirs)
	gen, ok := t.c.Session.Search.Generation(t.c.Workspace, dirs...)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !complete || !ok || gen != t.gen {
		d.failed = true
		return
	}
	d.deps = append(d.deps, t.outside...)
	d.deps = append(d.deps, cacheDep{path: t.dir, tree: true, gen: t.gen})
}

// linkedIgnoreFiles reports whether an ignore file of one of dirs is
// not a regular file: a symlink, whose target's changes the watcher of
// dirs would not see (the walk reads the target). Checked once, after the
// walk: the count of Generation says that no entry changed since.
func linkedIgnoreFiles(dirs []string) bool {
	for _, d := range dirs {
		for _, name := range workspace.IgnoreFiles {
			if fi, err := os.Lstat(filepath.Join(d, name)); err == nil && !fi.Mode().IsRegular() || err != nil && !os.IsNotExist(err) {
				return true
			}
		}
	}
	return false
}

// ignoreDeps returns the dependencies of a walk of dir outside the
// directories the watcher watches (the top of this file says which), and
// false when they cannot be vouched for.
func ignoreDeps(dir string, racy time.Duration) ([]cacheDep, bool) {
	configs, _ := workspace.GitGlobalFiles()
	var deps []cacheDep
	add := func(path string, lstat bool) (os.FileInfo, bool) {
		dep, fi, ok := outsideDep(path, lstat, racy)
		deps = append(deps, dep)
		return fi, ok
	}
	inRepo := false
	for _, p := range workspace.IgnoreInputs(dir) {
		switch {
		case filepath.Base(p) == ".git":
			fi, ok := add(p, true)
			if !ok || fi != nil && !fi.IsDir() {
				return nil, false // a gitdir file: not followed here
			}
			inRepo = inRepo || fi != nil
		case p == os.DevNull:
			// no configuration (tests, CI)
		default:
			if _, ok := add(p, false); !ok {
				return nil, false
			}
			if slices.Contains(configs, p) {
				if data, err := os.ReadFile(p); err == nil && bytes.Contains(bytes.ToLower(data), []byte("excludesfile")) {
					return nil, false
				}
			}
		}
	}
	if inRepo { // the walked directory's own ignore files, outside a repository none counts
		for _, name := range workspace.IgnoreFiles {
			if _, ok := add(filepath.Join(dir, name), false); !ok {
				return nil, false
			}
		}
	}
	return deps, true
}

// outsideDep is the dependency on the path outside the watched
// directories: absent, a directory (by identity), or a regular file (by
// its stamp; a racy one cannot be vouched for). fi is the path's stat, nil
// when it is absent; ok is false when it cannot be vouched for.
func outsideDep(path string, lstat bool, racy time.Duration) (dep cacheDep, fi os.FileInfo, ok bool) {
	dep = cacheDep{path: path, outside: true, lstat: lstat}
	fi, err := statOutside(path, lstat)
	switch {
	case os.IsNotExist(err):
		dep.absent = true
		return dep, nil, true
	case err != nil:
		return dep, nil, false
	case fi.IsDir():
		dep.dir = fi
		return dep, fi, true
	}
	st, ok := stampOf(fi)
	if !ok || time.Since(time.Unix(0, st.Ctime)) < racy {
		return dep, fi, false
	}
	dep.stamp = st
	return dep, fi, true
}

func statOutside(path string, lstat bool) (os.FileInfo, error) {
	if lstat {
		return os.Lstat(path)
	}
	return os.Stat(path)
}

// holdsOutside reports whether the outside dependency d still holds.
func (d *cacheDep) holdsOutside() bool {
	fi, err := statOutside(d.path, d.lstat)
	switch {
	case d.absent:
		return os.IsNotExist(err)
	case err != nil:
		return false
	case d.dir != nil:
		return fi.IsDir() && os.SameFile(fi, d.dir)
	}
	st, ok := stampOf(fi)
	return ok && st == d.stamp
}

// isRegularGrep reports whether a grep call's arguments keep to what the
// search cache's index holds, so that its walk (or the index's answer)
// enters only directories the index entered: no include_ignored, no glob
// that could keep an ignored or hidden directory (only "!" globs), and a
// directory in the same repository as its workspace root's (not a nested
// one, with rules of its own), which, outside a repository, has no .ignore
// or .rgignore above it below the root (a walk of it would not read them).
func isRegularGrep(ws *workspace.Workspace, a grepArgs, dir string) bool {
	if a.IncludeIgnored {
		return false
	}
	if a.Glob != "" {
		if strings.ContainsAny(a.Glob, "{}") {
			return false
		}
		for _, g := range strings.Split(a.Glob, ",") {
			if g = strings.TrimSpace(g); g != "" && !strings.HasPrefix(g, "!") {
				return false
			}
		}
	}
	root := ""
	for _, r := range ws.Roots() {
		if _, ok := workspace.Within(r, dir); ok {
			root = r
			break
		}
	}
	if root == "" {
		return false
	}
	top := workspace.FindRepo(dir)
	if top != workspace.FindRepo(root) {
		return false
	}
	if top == "" {
		for d := filepath.Dir(dir); dir != root; d = filepath.Dir(d) {
			for _, n := range []string{".ignore", ".rgignore"} {
				if _, err := os.Lstat(filepath.Join(d, n)); !os.IsNotExist(err) {
					return false
				}
			}
			if d == root || len(d) < len(root) {
				break
			}
		}
	}
	return true
}
