package search

import (
	"path/filepath"

	"github.com/agentls/agentls/workspace"
)

// Generation drains the watcher, applies the pending changes and returns
// the cache's change count: it moves on every change the cache takes in
// (an event of the watcher, a path given to Changed) and every build of a
// root's index. An answer computed from the directories dirs (absolute)
// between two calls that return the same count, both ok, is the answer a
// computation would give at the second: nothing changed in them, not
// even by a program nobody announced, since every change of a watched
// directory queues an event before the write returns.
//
// ok is false when the cache cannot vouch for dirs: it is closed, has no
// watcher (not Linux, the watches ran out), indexes another workspace
// than ws, or some directory of dirs is not one that the index of a
// built, current root (not stale: no lost event, no changed ignore file)
// entered and watches. The files outside a root that decide its ignore
// rules (workspace.IgnoreInputs: the ignore files above it,
// .git/info/exclude, the global excludes file) are stat-ed here, and their
// change counts as one; the buffers of the editor are the caller's to
// check.
func (c *Cache) Generation(ws *workspace.Workspace, dirs ...string) (gen uint64, ok bool) {
	if c == nil || c.closed.Load() {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ws != ws || c.watcher == nil {
		return 0, false
	}
	c.updateLocked()
	if c.watcher == nil {
		return 0, false
	}
	for _, d := range dirs {
		if !c.watchesLocked(d) {
			return 0, false
		}
	}
	return c.changes.Load(), true
}

// watchesLocked reports whether the index of a built, current root holds
// the directory dir (absolute), and so watches it.
func (c *Cache) watchesLocked(dir string) bool {
	for _, ri := range c.roots {
		rel, ok := workspace.Within(ri.root, dir)
		if !ok || !ri.ready || ri.stale || ri.tooMany {
			continue
		}
		sub := ""
		if rel != "." {
			sub = filepath.ToSlash(rel)
		}
		if ri.dirs[sub] {
			return true
		}
	}
	return false
}
