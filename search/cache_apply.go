// Keeping the index current (cache.go): the watched directories, and the
// rescans that apply their changes and those the editor and the tools
// announce.

package search

import (
	"errors"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/workspace"
)

// watchDir adds a watch on dir; false when there is no watcher.
func (c *Cache) watchDir(dir string) bool {
	c.mu.Lock()
	w := c.watcher
	c.mu.Unlock()
	if w == nil {
		return false
	}
	if err := w.Add(dir); err != nil {
		c.mu.Lock()
		if c.watcher == w {
			// Out of watches (or the directory went away): trust stats
			// instead of a watcher that misses changes.
			if errors.Is(err, workspace.ErrWatchLimit) {
				c.watchErr = err
				w.Close()
				c.watcher = nil
			}
		}
		c.mu.Unlock()
		return !errors.Is(err, workspace.ErrWatchLimit)
	}
	return true
}

func (c *Cache) watchErrLocked() {
	if c.watchErr == nil {
		c.watchErr = errors.New("no directory watcher")
	}
}

// applyLocked brings ri up to date with its pending changes: each changed
// directory is rescanned one level deep for the changed names.
func (c *Cache) applyLocked(ri *rootIndex) {
	byDir := map[string]map[string]bool{}
	for p := range ri.pending {
		rel, ok := workspace.Within(ri.root, p)
		if !ok {
			continue
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			ri.stale = true
			continue
		}
		dir, name := path.Split(rel)
		dir = strings.TrimSuffix(dir, "/")
		if (name == ".gitignore" || name == ".ignore" || name == ".rgignore") && ri.dirs[dir] {
			// An ignore file changed (not only looked at: its stat
			// says): the rules of the whole tree below may have.
			// (A late event of a change the index was already built
			// after, such as a removal, changes nothing.)
			e := ri.files[rel]
			if st, ok := stampOf(p); (e != nil) != ok || ok && st != e.st {
				ri.stale = true
			}
		}
		if byDir[dir] == nil {
			byDir[dir] = map[string]bool{}
		}
		byDir[dir][name] = true
	}
	clear(ri.pending)
	if ri.stale {
		return
	}
	var x indexer
	var b segBuilder
	for dir, names := range byDir {
		if !ri.dirs[dir] {
			continue // not indexed (ignored, hidden, gone)
		}
		c.rescanLocked(ri, dir, names, &x)
	}
	b = x.b
	if s := b.build(); s != nil {
		ri.segs = append(ri.segs, s)
		ri.bytes += s.size()
	}
	ri.sorted = nil
	ri.compactLocked()
	if ri.dead > len(ri.files)+1024 {
		ri.stale = true // mostly dead: build again
	}
}

// parentOf returns the directory of rel ("" for the root's entries).
func parentOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// walkDir walks the directory dir of ri's root (the lock held) from the
// root itself, so that the ignore files above dir apply as in the root's
// walk (a walk of dir alone, outside a git repository, reads none of
// them): it enters only dir's ancestors and dir, and with deep everything
// below dir, and calls fn (on one goroutine) with the entries below dir,
// one level deep unless deep. seen gets the entries below dir the filter
// let through. It reports whether dir was reached.
func (c *Cache) walkDir(ri *rootIndex, dir string, deep bool, seen *seenSet, fn func(f *workspace.File)) bool {
	in := func(rel string) bool {
		if deep {
			return dir == "" || strings.HasPrefix(rel, dir+"/")
		}
		return parentOf(rel) == dir
	}
	seen.in = in
	opts := workspace.WalkOptions{
		Dirs: true, ReadContent: true, MaxFileBytes: ri.max, Filter: ri.indexFilter("", seen, nil), Workers: 1,
	}
	if !deep {
		opts.MaxDepth = 1
		if dir != "" {
			opts.MaxDepth = strings.Count(dir, "/") + 2
		}
	}
	if dir != "" {
		opts.Prune = func(rel string) bool {
			return rel == dir || strings.HasPrefix(dir, rel+"/") || in(rel)
		}
	}
	reached := dir == ""
	_, err := c.ws.Walk(c.ctx, ri.root, opts, func(f *workspace.File) error {
		if f.Rel == dir && f.IsDir() {
			reached = true
		}
		if in(f.Rel) {
			seen.reported(f.Rel)
			fn(f)
		}
		return nil
	})
	return reached && err == nil
}

// rescanLocked looks at the entries names of the directory dir again.
func (c *Cache) rescanLocked(ri *rootIndex, dir string, names map[string]bool, x *indexer) {
	join := func(name string) string {
		if dir == "" {
			return name
		}
		return dir + "/" + name
	}
	seen := map[string]bool{}
	filterSeen := newSeenSet()
	reached := c.walkDir(ri, dir, false, filterSeen, func(f *workspace.File) {
		if !names[f.Name] {
			return
		}
		rel := f.Rel
		switch {
		case f.IsDir():
			seen[f.Name] = true
			ri.removeFile(rel)
			delete(ri.pruned, rel)
			if !ri.dirs[rel] {
				c.indexTreeLocked(ri, rel, x)
			}
		case f.IsRegular():
			seen[f.Name] = true
			ri.removeDir(c, rel)
			ri.removeFile(rel)
			ri.files[rel], _ = x.indexFile(f, rel, func(s *segment) {
				ri.segs = append(ri.segs, s)
				ri.bytes += s.size()
			})
		}
	})
	if !reached {
		// The directory went away or cannot be read: its parent's
		// event (or the next build) takes care of it.
		ri.removeDir(c, dir)
		return
	}
	for name := range names {
		rel := join(name)
		if !seen[name] {
			ri.removeFile(rel)
			ri.removeDir(c, rel)
			delete(ri.pruned, rel)
		}
		if filterSeen.dirs[rel] {
			ri.pruned[rel] = true
		}
		if filterSeen.files[rel] {
			ri.removeFile(rel)
			e := &entry{rel: rel, flags: fIgnored}
			if name[0] == '.' {
				e.flags |= fHidden
			}
			ri.files[rel] = e
		}
	}
}

// indexTreeLocked indexes the new directory dir and everything below it.
func (c *Cache) indexTreeLocked(ri *rootIndex, dir string, x *indexer) {
	ri.dirs[dir] = true
	c.watchLocked(filepath.Join(ri.root, filepath.FromSlash(dir)))
	seen := newSeenSet()
	c.walkDir(ri, dir, true, seen, func(f *workspace.File) {
		if f.IsDir() {
			ri.dirs[f.Rel] = true
			c.watchLocked(f.Path)
			return
		}
		if f.IsRegular() {
			ri.removeFile(f.Rel)
			ri.files[f.Rel], _ = x.indexFile(f, f.Rel, func(s *segment) {
				ri.segs = append(ri.segs, s)
				ri.bytes += s.size()
			})
		}
	})
	seen.left(ri)
}

// watchLocked adds a watch on dir; when the watches run out the watcher
// is dropped (searches then walk and stat).
func (c *Cache) watchLocked(dir string) {
	if c.watcher == nil {
		return
	}
	if err := c.watcher.Add(dir); errors.Is(err, workspace.ErrWatchLimit) {
		c.watchErr = err
		c.watcher.Close()
		c.watcher = nil
	}
}

// removeFile drops the file at rel.
func (ri *rootIndex) removeFile(rel string) {
	if e := ri.files[rel]; e != nil {
		e.dead = true
		ri.dead++
		delete(ri.files, rel)
	}
}

// removeDir drops the directory at rel and everything below it.
func (ri *rootIndex) removeDir(c *Cache, rel string) {
	if !ri.dirs[rel] || rel == "" {
		return
	}
	for d := range ri.dirs {
		if d == rel || strings.HasPrefix(d, rel+"/") {
			delete(ri.dirs, d)
		}
	}
	for d := range ri.pruned {
		if strings.HasPrefix(d, rel+"/") {
			delete(ri.pruned, d)
		}
	}
	for f := range ri.files {
		if strings.HasPrefix(f, rel+"/") {
			ri.removeFile(f)
		}
	}
	if c.watcher != nil {
		c.watcher.RemoveTree(filepath.Join(ri.root, filepath.FromSlash(rel)))
	}
}

// sortLocked returns ri's files in path order.
func (ri *rootIndex) sortLocked() []*entry {
	if ri.sorted != nil {
		return ri.sorted
	}
	s := make([]*entry, 0, len(ri.files))
	for _, e := range ri.files {
		s = append(s, e)
	}
	sortEntries(s)
	for i, e := range s {
		e.ord = int32(i)
	}
	ri.sorted, ri.views = s, nil
	return s
}
