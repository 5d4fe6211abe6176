package search

import (
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentls/agentls/workspace"
)

// A search without a Cache (the one-shot `agentls call grep`) and the
// on-disk copy of its root's index that a server left (persist.go):
// Options.DiskIndex. The copy is only read, never written nor taken over.
//
// The search walks and reads as it would without the copy; the copy only
// lets it skip a file, as a cache without a watcher does (statQuery): when
// the copy holds the file's trigrams under the stamp the file has now (its
// walked stat: size, mtime, ctime, inode, device; files that were racy when
// read were written dead) and they rule out a match. What is searched
// (ignore files, hidden files, the size cap, paths.sensitive) is decided by
// the walk under the rules in force now, so a copy built under other rules
// skips no file the walk would not reach; a file the copy does not hold
// (new, changed, written dead, too large or ignored then) is read. A
// skipped file counts as searched, as a file read without a match does
// (its binary data, had it any, is only counted at a match).
//
// Sensitive files: a file that is a sensitive file under another name
// (workspace/sensitive.go) is never skipped, so its read is refused as
// without the copy (File.Stamp checks it as File.Read does: by the
// identities, or by its name in a walk from the root of a tree where a
// file with one link has no other name).
//
// The copy is checked as a server's build checks it (loadIndex: a private
// directory and file, magic, version, root, size cap, checksum, the
// segments' structure), except that of the posting lists only those the
// query uses are decoded in full, before they are used; any problem, or
// search.persist false, and the search reads every file.

// diskQuery is a walking search's question to the copy of its root's
// index: may the search skip this file?
type diskQuery struct {
	root   string // the workspace root the copy is of
	prefix string // root, clean, and a separator
	ld     *loaded
	cand   map[*segment]bitset
}

// diskWait is a diskQuery being loaded on a goroutine of its own, so that
// loading it overlaps with what a search does first (resolving its path,
// which may walk the tree for the identities of the sensitive files, and
// opening and listing the first folders).
type diskWait struct {
	once sync.Once
	ch   chan *diskQuery
	q    *diskQuery
}

// startDiskQuery starts loading the query of a search with matcher m of
// the workspace's one root (with several, the searched path's root is not
// known yet: nil).
func startDiskQuery(ws *workspace.Workspace, m *matcher, persistDir string) *diskWait {
	roots := ws.Roots()
	if len(roots) != 1 {
		return nil
	}
	if persistDir == "" {
		persistDir = defaultPersistDir()
	}
	w := &diskWait{ch: make(chan *diskQuery, 1)}
	go func() { w.ch <- loadDiskQuery(ws, persistDir, roots[0], m) }()
	return w
}

// skip is diskQuery.skip once the query is loaded (false without one).
func (w *diskWait) skip(f *workspace.File) bool {
	if w == nil {
		return false
	}
	w.once.Do(func() { w.q = <-w.ch })
	return w.q != nil && w.q.skip(f)
}

// diskSkips counts the files searches skipped by a copy (for tests).
var diskSkips atomic.Int64

// loadDiskQuery returns the query of a walking search below the workspace
// root root with matcher m, from the copies in persistDir, or nil when
// there is no usable copy of root's index or the index cannot narrow the
// search (a literal shorter than three bytes, or none).
func loadDiskQuery(ws *workspace.Workspace, persistDir, root string, m *matcher) (q *diskQuery) {
	cfg := ws.Config()
	if persistDir == "" || cfg.Search.Persist != nil && !*cfg.Search.Persist {
		return nil
	}
	lits, narrow := litTrigrams(m)
	if !narrow {
		return nil
	}
	// The copy is mapped: a file cut short under the mapping faults
	// (its owner truncated it; a server replaces a copy by a rename):
	// then there is no query, as for a copy that does not check.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			q = nil
		}
	}()
	max := int64(cfg.Limits.MaxFileBytes)
	v, ok := takePrefetch(persistDir, root, max)
	if !ok {
		v = viewCopy(persistDir, root, max)
	}
	if v.ld == nil {
		return nil
	}
	defer v.done()
	return newDiskQuery(root, v.ld, lits)
}

// A copy decoded ahead. The one-shot `agentls call grep` knows the root it
// searches before its session is open and its tool runs: PrefetchCopy
// starts mapping and decoding that root's copy then, on a goroutine of its
// own, and the search takes it (loadDiskQuery) instead of loading the copy
// itself when it is of the same directory, root and size cap. A search
// that does not take it (another size cap in force, search.persist false,
// a pattern the index cannot narrow) loads what it needs as without it;
// release unmaps it.

// copyView is a copy mapped and decoded lazily (viewIndex); ld is nil for
// none.
type copyView struct {
	ld   *loaded
	done func()
}

// viewCopy is viewIndex, a fault of the mapping included (the copy cut
// short while it is decoded): none.
func viewCopy(dir, root string, max int64) (v copyView) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			v = copyView{}
		}
	}()
	ld, done, err := viewIndex(dir, root, max)
	if err != nil {
		return copyView{}
	}
	return copyView{ld: ld, done: done}
}

// prefetch is a copy being loaded by PrefetchCopy.
type prefetch struct {
	dir, root string
	max       int64
	ch        chan copyView // the view, once
	taken     atomic.Bool   // by a search, or dropped
}

// prefetched is the process's prefetch, if any.
var prefetched atomic.Pointer[prefetch]

// PrefetchCopy starts loading the copy of the index of the workspace root
// root (absolute and clean, as workspace.Workspace.SetFolders makes it)
// that a server built under the size cap max, from the default directory,
// for the search of p that is to come; release drops it if no search took
// it. It loads nothing for a pattern the index cannot narrow: the search
// would not use the copy.
func PrefetchCopy(root string, max int64, p Pattern) (release func()) {
	m, err := compile(p)
	if err != nil {
		return func() {}
	}
	if _, narrow := litTrigrams(m); !narrow {
		return func() {}
	}
	return prefetchCopy(defaultPersistDir(), root, max)
}

// prefetchCopy is PrefetchCopy from the directory dir.
func prefetchCopy(dir, root string, max int64) (release func()) {
	if dir == "" {
		return func() {}
	}
	p := &prefetch{dir: dir, root: root, max: max, ch: make(chan copyView, 1)}
	go func() { p.ch <- viewCopy(dir, root, max) }()
	if old := prefetched.Swap(p); old != nil {
		old.drop()
	}
	return func() {
		prefetched.CompareAndSwap(p, nil)
		p.drop()
	}
}

// drop unmaps p's copy, once loaded, unless a search took it.
func (p *prefetch) drop() {
	if p.taken.CompareAndSwap(false, true) {
		go func() {
			if v := <-p.ch; v.ld != nil {
				v.done()
			}
		}()
	}
}

// takePrefetch returns the prefetched copy of root in dir under the cap
// max, once loaded; ok is false when there is none of them.
func takePrefetch(dir, root string, max int64) (v copyView, ok bool) {
	p := prefetched.Load()
	if p == nil || p.dir != dir || p.root != root || p.max != max || !p.taken.CompareAndSwap(false, true) {
		return copyView{}, false
	}
	prefetched.CompareAndSwap(p, nil)
	return <-p.ch, true
}

// newDiskQuery returns the query of the literals' trigrams lits on the
// copy ld (decoded lazily) of root's index, or nil when a posting list it
// uses does not check.
func newDiskQuery(root string, ld *loaded, lits [][]uint32) *diskQuery {
	prefix := filepath.Clean(root)
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	q := &diskQuery{root: root, prefix: prefix, ld: ld, cand: make(map[*segment]bitset, len(ld.segs))}
	for _, s := range ld.segs {
		// The lists the query uses are checked whole first (the copy
		// was decoded lazily).
		for _, tris := range lits {
			for _, t := range tris {
				if p, ok := s.lookup(t); ok && !checkList(p, len(s.docs)) {
					return nil
				}
			}
		}
		b := newBitset(len(s.docs))
		s.candidates(lits, func(e *entry) { b[e.local>>6] |= 1 << (e.local & 63) })
		q.cand[s] = b
	}
	return q
}

// skip reports whether the search may skip the walked regular file f.
func (q *diskQuery) skip(f *workspace.File) bool {
	// A walked path is the clean root of the walk and clean names: below
	// the root as spelled, the rest is the path relative to it.
	rel, ok := strings.CutPrefix(f.Path, q.prefix)
	if !ok {
		if rel, ok = workspace.Within(q.root, f.Path); !ok {
			return false
		}
	}
	e := q.ld.files[filepath.ToSlash(rel)]
	if e == nil || e.dead || e.seg == nil || e.flags&(fRacy|fTooLarge|fIgnored) != 0 {
		return false
	}
	if b := q.cand[e.seg]; b == nil || b[e.local>>6]&(1<<(e.local&63)) != 0 {
		return false
	}
	st, ok, err := f.Stamp()
	if err != nil || !ok || st != e.st {
		return false // a refusal: the read is refused too
	}
	diskSkips.Add(1)
	return true
}
