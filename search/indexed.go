package search

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentls/agentls/workspace"
)

// A search the index answers (cache.go): the index gives the files below
// the searched directory that the walk would reach, and which of them may
// match; only those are read, in path order, on GOMAXPROCS workers.

// plan is what a search reads when the index answers it.
type plan struct {
	work     []planFile // in path order
	skipped  int64      // files the index ruled out
	tooLarge int64
	root     *os.File // the index's root, that files are read beneath
	rootPath string
}

// planFile is one file to search: rel relative to the index's root, out
// the path in the result.
type planFile struct {
	rel, out string
	overlay  bool
}

// keepsIgnored reports whether a glob argument may keep files the ignore
// rules or the hidden rule leave out (a glob without '!': searchFilter).
func keepsIgnored(glob string) bool {
	for _, g := range splitGlobs(glob) {
		if !strings.HasPrefix(g, "!") {
			return true
		}
	}
	return false
}

// plan returns what a search of the directory root (prefix: the result
// paths' prefix; filter: Run's, filterKey: a name for all it is made of,
// under which its view is kept) reads, or nil when the index cannot
// answer it exactly (cache.go says when).
func (c *Cache) plan(ws *workspace.Workspace, root, prefix, glob string, filter func(string, bool) workspace.Verdict, filterKey string, m *matcher, overlays map[string]bool) *plan {
	if c == nil || c.closed.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ws != ws || c.watcher == nil {
		return nil
	}
	c.updateLocked()
	var ri *rootIndex
	sub := ""
	for _, r := range c.roots {
		if rel, ok := workspace.Within(r.root, root); ok {
			ri = r
			if rel != "." {
				sub = filepath.ToSlash(rel)
			}
			break
		}
	}
	if ri == nil || !ri.ready || ri.stale || !ri.dirs[sub] || c.watcher == nil {
		return nil
	}
	if sub != "" {
		top := workspace.FindRepo(root)
		if top != workspace.FindRepo(ri.root) {
			return nil // a nested repository: its own ignore rules
		}
		if top == "" {
			// Outside a repository a walk of sub reads no ignore file
			// above it: the index's rules are the root's.
			for d := sub; ; {
				if i := strings.LastIndexByte(d, '/'); i >= 0 {
					d = d[:i]
				} else {
					d = ""
				}
				for _, n := range []string{".ignore", ".rgignore"} {
					if d != "" {
						n = d + "/" + n
					}
					if ri.files[n] != nil {
						return nil
					}
				}
				if d == "" {
					break
				}
			}
		}
	}
	if keepsIgnored(glob) {
		// A glob that keeps a hidden or ignored directory makes the walk
		// enter it: the index does not hold what is below.
		for d := range ri.pruned {
			rel := d
			if sub != "" {
				if !strings.HasPrefix(d, sub+"/") {
					continue
				}
				rel = d[len(sub)+1:]
			}
			if v := filter(rel, true); v&workspace.Skip == 0 && v&(workspace.KeepHidden|workspace.KeepIgnored) != 0 {
				return nil
			}
		}
	}
	fd := c.rootFDLocked(ws, ri.root)
	if fd == nil {
		return nil
	}
	sorted := ri.sortLocked()
	v := ri.viewLocked(filterKey+"\x00"+sub, func() *view { return newView(sorted, sub, filter) })
	lits, narrow := litTrigrams(m)
	want := make(bitset, len(v.keep))
	copy(want, v.keep)
	if narrow {
		cand := ri.candidatesLocked(lits, len(sorted))
		for i := range want {
			want[i] &= cand[i] | v.always[i]
		}
	}
	// An open document is searched (in its buffer) whatever the index
	// says of it, even over the size cap.
	var open map[int32]bool
	openBig := 0
	for p := range overlays {
		rel, ok := workspace.Within(ri.root, p)
		if !ok {
			continue
		}
		e := ri.files[filepath.ToSlash(rel)]
		if e == nil || !v.keep.has(e.ord) && !v.big.has(e.ord) {
			continue
		}
		if open == nil {
			open = map[int32]bool{}
		}
		open[e.ord] = true
		if v.big.has(e.ord) {
			openBig++
		}
		want[e.ord>>6] |= 1 << (e.ord & 63)
	}
	pl := &plan{root: fd, rootPath: ri.root, work: make([]planFile, 0, want.count())}
	want.each(func(i int) {
		e := sorted[i]
		out := e.rel
		if sub != "" {
			out = out[len(sub)+1:]
		}
		pl.work = append(pl.work, planFile{rel: e.rel, out: prefix + out, overlay: open[int32(i)]})
	})
	pl.skipped = int64(v.nKeep - (len(pl.work) - openBig))
	pl.tooLarge = int64(v.nBig - openBig)
	c.skips.Add(pl.skipped)
	c.indexed.Add(1)
	return pl
}

// candidatesLocked returns the live entries of ri's segments (by ord, of
// n sorted entries) that may hold one of lits: the segments are shared
// among the processors, each setting bits of a set of its own (the
// caller's goroutine takes the first share: a root of one segment starts
// none).
func (ri *rootIndex) candidatesLocked(lits [][]uint32, n int) bitset {
	sets := make([]bitset, max(min(runtime.GOMAXPROCS(0), len(ri.segs)), 1))
	share := func(p int) {
		b := newBitset(n)
		for i := p; i < len(ri.segs); i += len(sets) {
			s := ri.segs[i]
			s.candidates(lits, func(e *entry) {
				if !e.dead && e.seg == s {
					b[e.ord>>6] |= 1 << (e.ord & 63)
				}
			})
		}
		sets[p] = b
	}
	var wg sync.WaitGroup
	for p := 1; p < len(sets); p++ {
		wg.Go(func() { share(p) })
	}
	share(0)
	wg.Wait()
	for _, b := range sets[1:] {
		sets[0].or(b)
	}
	return sets[0]
}

// A view is what a search's filter keeps of a root's sorted entries, by
// their ord: worked out once for a filter (its key) and kept until the
// entries change (sortLocked sorts them again), so that a query plans its
// candidates rather than every file of the tree.
type view struct {
	keep   bitset // kept: read when they may match
	big    bitset // kept but over the size cap when indexed: counted, not read
	always bitset // kept, without trigrams (no segment): always read
	nKeep  int
	nBig   int
}

// maxViews is the most views a root keeps; the least recently used goes.
const maxViews = 8

// viewLocked returns the view of key, made by mk when ri has none.
func (ri *rootIndex) viewLocked(key string, mk func() *view) *view {
	for i, kv := range ri.views {
		if kv.key == key {
			copy(ri.views[1:i+1], ri.views[:i])
			ri.views[0] = kv
			return kv.v
		}
	}
	v := mk()
	if len(ri.views) == maxViews {
		ri.views = ri.views[:maxViews-1]
	}
	ri.views = append([]keyedView{{key, v}}, ri.views...)
	return v
}

type keyedView struct {
	key string
	v   *view
}

// minViewPart is the fewest entries a worker of newView takes (a
// multiple of 64: the workers set bits of their own words).
const minViewPart = 4096

// newView works out the view of the sorted entries es below sub (relative
// to the root) that filter (Run's, relative to sub) keeps, the work
// shared by the workers in parts.
func newView(es []*entry, sub string, filter func(string, bool) workspace.Verdict) *view {
	v := &view{keep: newBitset(len(es)), big: newBitset(len(es)), always: newBitset(len(es))}
	parts := 1
	if len(es) >= minViewPart*2 {
		parts = min(runtime.GOMAXPROCS(0), len(es)/minViewPart)
	}
	per := (len(es)/parts + 63) &^ 63
	counts := make([][2]int, parts)
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := min(i*per, len(es)), min((i+1)*per, len(es))
		if i == parts-1 {
			hi = len(es)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i][0], counts[i][1] = v.fill(es, lo, hi, sub, filter)
		}()
	}
	wg.Wait()
	for _, c := range counts {
		v.nKeep += c[0]
		v.nBig += c[1]
	}
	return v
}

// fill sets the bits of the entries es[lo:hi] (in path order) and returns
// how many it kept and how many of those are too large.
func (v *view) fill(es []*entry, lo, hi int, sub string, filter func(string, bool) workspace.Verdict) (nKeep, nBig int) {
	dirSkip := map[string]bool{}
	// excluded reports whether Run's filter leaves out the directory d
	// (relative to sub) or one above it.
	var excluded func(d string) bool
	excluded = func(d string) bool {
		if d == "" {
			return false
		}
		if skip, ok := dirSkip[d]; ok {
			return skip
		}
		parent := ""
		if i := strings.LastIndexByte(d, '/'); i >= 0 {
			parent = d[:i]
		}
		skip := excluded(parent) || filter(d, true)&workspace.Skip != 0
		dirSkip[d] = skip
		return skip
	}
	// The entries come in path order: a directory's files one after
	// another, its verdict asked once for them.
	lastDir, lastExcluded := "", false
	for i := lo; i < hi; i++ {
		e := es[i]
		rel := e.rel
		if sub != "" {
			if len(rel) <= len(sub) || rel[len(sub)] != '/' || rel[:len(sub)] != sub {
				continue
			}
			rel = rel[len(sub)+1:]
		}
		var verdict workspace.Verdict
		if filter != nil {
			dir := ""
			if i := strings.LastIndexByte(rel, '/'); i >= 0 {
				dir = rel[:i]
			}
			if dir != lastDir {
				lastDir, lastExcluded = dir, excluded(dir)
			}
			if lastExcluded {
				continue
			}
			if verdict = filter(rel, false); verdict&workspace.Skip != 0 {
				continue
			}
		}
		if e.flags&fHidden != 0 && verdict&workspace.KeepHidden == 0 || e.flags&fIgnored != 0 && verdict&workspace.KeepIgnored == 0 {
			continue
		}
		bit := uint64(1) << (i & 63)
		switch {
		case e.flags&fTooLarge != 0 && e.flags&fIgnored == 0:
			v.big[i>>6] |= bit
			nBig++
		default:
			v.keep[i>>6] |= bit
			nKeep++
			if e.seg == nil {
				v.always[i>>6] |= bit
			}
		}
	}
	return nKeep, nBig
}

// rootFDLocked returns the open root dir (opened beneath the workspace's
// roots once, kept until Close).
func (c *Cache) rootFDLocked(ws *workspace.Workspace, root string) *os.File {
	if f, ok := c.rootFDs[root]; ok {
		return f
	}
	f, err := ws.Open(root)
	if err != nil {
		return nil
	}
	c.rootFDs[root] = f
	return f
}

// runPlan searches the files of pl (Run's walk, without the walk): each
// worker takes batchFiles files at a time, in path order, reads those it
// can in one go (batchReader: read_uring_linux.go), the others one by one
// (readBeneathRoot), then searches them in order.
func (s *state) runPlan(ctx context.Context, ws *workspace.Workspace, pl *plan, max int64) error {
	s.searched.Add(pl.skipped)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range s.matchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			br := newBatchReader()
			defer br.release()
			var batch [batchFiles]*planFile
			var seqs [batchFiles]int
			var rels [batchFiles]string
			for ctx.Err() == nil {
				lo := int(next.Add(batchFiles)) - batchFiles
				if lo >= len(pl.work) {
					return
				}
				// The files still wanted; a file of an open document is
				// read from its buffer.
				files, disk := batch[:0], rels[:0]
				for i := lo; i < min(lo+batchFiles, len(pl.work)); i++ {
					if f := &pl.work[i]; !s.skip(f.out) {
						seqs[len(files)] = i + 1
						files = append(files, f)
						if !f.overlay && br != nil {
							disk = append(disk, f.rel)
						}
					}
				}
				var read [][]byte
				if len(disk) > 1 {
					read = br.read(pl.root, disk, max)
				}
				for k, f := range files {
					var data []byte
					if f.overlay {
						if d, ok := ws.Overlays.Get(filepath.Join(pl.rootPath, filepath.FromSlash(f.rel))); ok {
							data = []byte(d.Text)
						}
					} else if len(read) > 0 {
						data, read = read[0], read[1:]
					}
					if data == nil {
						var err error
						data, err = readBeneathRoot(ws, pl.root, pl.rootPath, f.rel, s.bufs[w], max)
						if err != nil {
							if errors.Is(err, workspace.ErrTooLarge) {
								s.tooLarge.Add(1)
							} else {
								s.unreadable.Add(1)
							}
							continue
						}
						s.bufs[w] = data[:0]
					}
					s.searched.Add(1)
					if r := s.searchFile(s.matchers[w], data, f.out); r != nil {
						r.seq = seqs[k]
						s.add(r)
					}
				}
			}
		}()
	}
	wg.Wait()
	s.tooLarge.Add(pl.tooLarge)
	return ctx.Err()
}

// batchFiles is the most files a worker of runPlan takes at a time.
const batchFiles = 32

// sortEntries sorts entries by path (ComparePaths).
func sortEntries(es []*entry) {
	sort.Slice(es, func(i, j int) bool { return workspace.ComparePaths(es[i].rel, es[j].rel) < 0 })
}

// statQuery is a walking search's question to the index: may the search
// skip this file? Only when the file's stat is the one it was indexed
// under (and was not racy then) and its trigrams rule out a match.
type statQuery struct {
	c    *Cache
	ri   *rootIndex
	cand map[*segment]bitset
}

// statQuery returns the query of a walking search of root with matcher
// m, or nil when the index cannot narrow it.
func (c *Cache) statQuery(ws *workspace.Workspace, root string, m *matcher) *statQuery {
	if c == nil || c.closed.Load() {
		return nil
	}
	lits, narrow := litTrigrams(m)
	if !narrow {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ws != ws {
		return nil
	}
	c.updateLocked()
	q := &statQuery{c: c, cand: map[*segment]bitset{}}
	for _, r := range c.roots {
		if r.ready && (r.root == root || strings.HasPrefix(root, r.root+string(filepath.Separator))) {
			q.ri = r
		}
	}
	if q.ri == nil {
		return nil
	}
	for _, s := range q.ri.segs {
		b := newBitset(len(s.docs))
		s.candidates(lits, func(e *entry) { b[e.local>>6] |= 1 << (e.local & 63) })
		q.cand[s] = b
	}
	return q
}

// skip reports whether the search may skip the file at path.
func (q *statQuery) skip(path string) bool {
	rel, ok := workspace.Within(q.ri.root, path)
	if !ok {
		return false
	}
	rel = filepath.ToSlash(rel)
	q.c.mu.Lock()
	var e entry
	live := false
	if p := q.ri.files[rel]; p != nil && !p.dead {
		e, live = *p, true
	}
	q.c.mu.Unlock()
	if !live || e.seg == nil || e.flags&(fRacy|fTooLarge) != 0 {
		return false
	}
	if b := q.cand[e.seg]; b == nil || b[e.local>>6]&(1<<(e.local&63)) != 0 {
		return false
	}
	if st, ok := stampOf(path); !ok || st != e.st {
		q.c.Changed(path) // indexed again at the next update
		return false
	}
	q.c.skips.Add(1)
	return true
}

// lowerASCII folds ASCII letters to lower case, the trigrams' alphabet.
var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

// litTrigrams returns the trigrams of matcher m's required literals (one
// list per literal, any of which a match holds); ok is false when some
// literal has none (shorter than three bytes, or folded non-ASCII), so
// that the index cannot narrow the search.
func litTrigrams(m *matcher) (lits [][]uint32, ok bool) {
	if len(m.lits) == 0 {
		return nil, false
	}
	for _, l := range m.lits {
		if len(l.s) < 3 {
			return nil, false
		}
		var tris []uint32
		var t uint32
		for i, b := range l.s {
			if l.fold && b >= 0x80 {
				return nil, false
			}
			t = (t<<8 | uint32(lowerASCII[b])) & 0xFFFFFF
			if i >= 2 {
				tris = append(tris, t)
			}
		}
		lits = append(lits, tris)
	}
	return lits, true
}
