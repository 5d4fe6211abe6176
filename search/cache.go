package search

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/workspace"
)

// The search cache of a long-lived session (the LSP server; the one-shot
// call command never has one): a trigram index of every workspace root
// (index.go holds its data), with the file set a plain search walks, so
// that a search neither walks nor stats: the posting lists give the files
// that may match and only those are read and matched.
//
// What the index holds, per root: every regular file the plain search of
// the root reaches (the ignore files, .git, hidden directories, the size
// cap, paths.sensitive: the workspace's walk with Run's rules; files
// named with a leading '.' are kept, flagged, for --type which keeps
// them), with its stat data; the names of the ignored files of the
// directories it entered (never read: a glob may keep them); every
// directory entered, and those seen and not entered (hidden, ignored).
// Symlinks are never followed nor indexed; sensitive files are never read
// nor named. For each file read, its trigrams (three bytes, ASCII letters
// folded) are in one segment of posting lists.
//
// Staying current: every directory of the index is watched
// (workspace.DirWatcher, inotify). Before a search answers from the index
// it drains the watcher's queue (a write that completed before the search
// started has queued its event by then) and the changes the editor and
// the tools announced (Changed), and rescans each changed directory one
// level deep with the walk's rules: new, rewritten, deleted and renamed
// files and directories are indexed or dropped; a changed ignore file
// (.gitignore, .ignore, .rgignore) or a lost event (queue overflow) marks
// the root stale, to be built again in the background. A background
// goroutine drains the queue too, so that it does not overflow.
//
// When the index cannot answer a search exactly, the search walks as an
// uncached one does, and the index only lets it skip the files whose stat
// is unchanged since they were indexed and whose trigrams exclude a match:
// while the index builds or rebuilds, with include_ignored, with a glob
// that keeps a hidden or ignored directory, below a directory the index
// does not hold, below a root's .ignore outside a git repository (the
// walk of a subdirectory there reads no ignore file above it), and when
// there is no watcher (not Linux, or the inotify watches ran out: Status
// says so). A file whose mtime was less than racyWindow older than its
// read is never skipped by its stat (a write in the same clock tick could
// keep it; as git's "racily clean").
//
// Rescans and new directories are walked from the root, entering only the
// directory's ancestors, so that the ignore files above it apply as in the
// root's walk. The small segments updates leave are merged once there are
// more than a few (compactLocked).
//
// Memory: the posting lists and Bloom filters (index.go) take about a
// ninth of the text's size (on $(go env GOROOT)/src, 122 MB of files:
// 13.8 MB, 17 MB of heap in all; on 8 copies of it, 973 MB and 92k files:
// 110 MB, 135 MB of heap), plus about 100 bytes a file; file contents are
// never kept. At most maxIndexFiles files are
// indexed per root, with at most maxIndexBytes of posting lists; a larger
// root is searched by walking.

// Restarts: a build first reads the root's on-disk copy (persist.go) and
// takes from it the trigrams of every walked file whose stat is unchanged;
// the others are read.

// racyWindow is how much older than the read a file's mtime must be for its
// stat to vouch for its content.
const racyWindow = 2 * time.Second

// maxIndexFiles and maxIndexBytes bound one root's index: its files and
// the memory of its posting lists.
const (
	maxIndexFiles = 1 << 20
	maxIndexBytes = 1 << 30
)

// Cache is a session's search cache (Options.Cache). Its methods are safe
// for concurrent use, with each other and with the searches that use it;
// its background work (the builds, the watcher) ends with Close. The zero
// value is not usable: make one with NewCache.
type Cache struct {
	mu sync.Mutex
	// progress is SetProgress's function
	progress func(root string, files int, done bool)
	roots    map[string]*rootIndex // by absolute root
	ws       *workspace.Workspace  // the workspace the indexes are of
	ctx      context.Context       // Warm's
	watcher  *workspace.DirWatcher // nil: none
	// watchErr says why there is no watcher (Status)
	watchErr error
	// rootFDs are open roots that files are read beneath (never closed
	// before Close: a search may be reading through them).
	rootFDs map[string]*os.File

	// gen counts resets: a build of an older generation is dropped.
	gen atomic.Int64
	// skips counts the files searches skipped; indexed the searches the
	// index answered without walking (for tests).
	skips, indexed atomic.Int64
	// building: a build runs; rebuild: start it again when done
	building, rebuild atomic.Bool
	// closed: Close was called; wg counts the background goroutines.
	closed atomic.Bool
	wg     sync.WaitGroup
	// unfollow ends Follow's subscription; guarded by mu.
	unfollow func()
	// noWatch: make no watcher (tests of the stat path)
	noWatch bool
	// persistDir holds the indexes' on-disk copies (persist.go); "":
	// none. Guarded by mu.
	persistDir string
	// changes counts the changes applied and the builds (generation.go).
	changes atomic.Uint64
}

// rootIndex is the index of one root. Guarded by Cache.mu.
type rootIndex struct {
	root    string
	ready   bool              // built
	stale   bool              // to build again (an ignore file changed, events lost)
	tooMany bool              // over maxIndexFiles or maxIndexBytes: not indexed
	files   map[string]*entry // by path relative to root
	dirs    map[string]bool   // "" is the root
	pruned  map[string]bool   // directories seen and not entered: hidden or ignored
	segs    []*segment
	pending map[string]bool // absolute paths changed since the last update
	// inputs are the files outside the root that decide what its walk
	// ignores (workspace.IgnoreInputs), which the watcher does not watch;
	// stamps their stat (inputStamp) taken before the build read them.
	inputs []string
	stamps []workspace.Stamp
	sorted []*entry // files in ComparePaths order; nil: to sort
	max    int64    // the size cap it was built under
	sens   *sensitive
	bytes  int64 // the segments' memory
	dead   int   // files replaced or removed since built
	// loaded and read are the files whose trigrams the build took from
	// the on-disk copy, and those it read.
	loaded, read int
}

// entry is one file of an index.
type entry struct {
	rel   string
	st    workspace.Stamp
	flags uint8
	seg   *segment // where its trigrams are; nil: none (always read)
	local uint32   // its number in seg
	ord   int32    // its place in rootIndex.sorted
	dead  bool     // replaced or removed
}

const (
	fHidden   uint8 = 1 << iota // its name starts with '.'
	fTooLarge                   // over the size cap when indexed
	fRacy                       // its stat cannot vouch for its content
	fIgnored                    // ignored: only a glob keeps it (not read)
)

// stampOf returns the stamp of the regular file at path (a symlink is
// not followed, as the index's reads do not).
func stampOf(path string) (workspace.Stamp, bool) {
	fi, err := os.Lstat(path)
	if err != nil {
		return workspace.Stamp{}, false
	}
	return workspace.StampOf(fi)
}

// walkedStamp returns the stamp of the walked regular file f, stat-ed
// relative to its open directory (no path to look up again).
func walkedStamp(f *workspace.File) (workspace.Stamp, bool) {
	fi, err := f.Info()
	if err != nil {
		return workspace.Stamp{}, false
	}
	return workspace.StampOf(fi)
}

// inputStamp is the stamp of path of any kind (a symlink itself, not
// followed), with its type in the size's place for what is not a regular
// file; the zero stamp when it cannot be stat-ed (it does not exist).
func inputStamp(path string) workspace.Stamp {
	fi, err := os.Lstat(path)
	if err != nil {
		return workspace.Stamp{}
	}
	st, regular := workspace.StampOf(fi)
	if !regular {
		st.Size = -1 - int64(fi.Mode().Type()>>20)
	}
	return st
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{roots: map[string]*rootIndex{}, rootFDs: map[string]*os.File{}, persistDir: defaultPersistDir()}
}

// SetProgress makes the builds call f as they go (on the build's
// goroutines, one call at a time per root): the files of root indexed so
// far, and done at the end of its build. f must not block.
func (c *Cache) SetProgress(f func(root string, files int, done bool)) {
	c.mu.Lock()
	c.progress = f
	c.mu.Unlock()
}

// Status says what the cache holds: files indexed, memory, and whether
// searches answer from the index (false, with the reason, when there is
// no watcher).
type Status struct {
	Files, Segments int
	Bytes           int64
	Ready, Watching bool
	// Watches is the number of directories watched.
	Watches int
	// Loaded is the number of files whose trigrams the last builds took
	// from the indexes' on-disk copies instead of reading them.
	Loaded int
	// Degraded says why searches walk and stat instead ("" when they
	// do not).
	Degraded string
}

// Status returns the cache's status, after the changes the watcher has
// queued (so a root that one of them makes stale is not Ready).
func (c *Cache) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updateLocked()
	st := Status{Ready: len(c.roots) > 0, Watching: c.watcher != nil}
	for _, ri := range c.roots {
		st.Files += len(ri.files)
		st.Segments += len(ri.segs)
		st.Bytes += ri.bytes
		st.Loaded += ri.loaded
		st.Ready = st.Ready && (ri.ready || ri.tooMany) && !ri.stale
		if ri.tooMany {
			st.Degraded = "a root is over the index's bounds: " + ri.root
		}
	}
	if c.watcher != nil {
		st.Watches = c.watcher.Len()
	}
	if c.watchErr != nil && st.Degraded == "" {
		st.Degraded = c.watchErr.Error()
	}
	return st
}

// Follow keeps the cache current with what ws announces (workspace.Watch)
// until Close: a file changed on disk is looked at again before the next
// search; a reset (roots or configuration changed) drops the indexes and
// builds them again in the background, under ctx.
func (c *Cache) Follow(ctx context.Context, ws *workspace.Workspace) {
	stop := ws.Watch(func(e workspace.Event) {
		if e.Reset {
			c.Reset()
			c.Warm(ctx, ws)
			return
		}
		c.Changed(e.Path)
	})
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		stop()
		return
	}
	c.unfollow = stop
	c.mu.Unlock()
}

// Changed tells the cache that the file at the absolute path changed
// (saved, seen by the client's watcher, written by a tool).
func (c *Cache) Changed(path string) {
	c.mu.Lock()
	c.changedLocked(path)
	c.mu.Unlock()
}

// changedLocked queues path for the next update of its root's index.
func (c *Cache) changedLocked(p string) {
	c.changes.Add(1)
	for _, ri := range c.roots {
		if _, ok := workspace.Within(ri.root, p); ok {
			ri.pending[p] = true
		}
	}
}

// Reset drops the indexes (workspace folders or configuration changed); a
// build that runs stops. Searches walk until Warm builds them again.
func (c *Cache) Reset() {
	c.mu.Lock()
	c.gen.Add(1)
	c.roots = map[string]*rootIndex{}
	if c.watcher != nil {
		c.watcher.Close()
		c.watcher = nil
	}
	c.watchErr = nil
	c.mu.Unlock()
}

// Len returns the number of files the indexes hold.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, ri := range c.roots {
		n += len(ri.files)
	}
	return n
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

// Warm builds the indexes of ws's roots in the background (and starts the
// watcher), so that searches answer from them; searches that come first
// walk. It returns at once; the build stops when ctx ends, the cache is
// reset or closed. A Warm while one runs makes that one start again when
// done.
func (c *Cache) Warm(ctx context.Context, ws *workspace.Workspace) {
	c.mu.Lock()
	c.ws, c.ctx = ws, ctx
	c.mu.Unlock()
	if !c.building.CompareAndSwap(false, true) {
		c.rebuild.Store(true)
		return
	}
	c.goBackground(&c.building, func() {
		for {
			c.rebuild.Store(false)
			c.buildAll(ctx, ws)
			if !c.rebuild.Load() || ctx.Err() != nil || c.closed.Load() {
				return
			}
		}
	})
}

// ensure starts the build of ws's indexes when no Warm did: the first
// search through the cache walks, and the next ones use the index.
func (c *Cache) ensure(ws *workspace.Workspace) {
	c.mu.Lock()
	started := c.ws != nil
	c.mu.Unlock()
	if !started && !c.closed.Load() {
		c.Warm(context.Background(), ws)
	}
}

// buildAll builds the index of every root that has none, or a stale one,
// then follows the watcher until the cache is reset or closed.
func (c *Cache) buildAll(ctx context.Context, ws *workspace.Workspace) {
	gen := c.gen.Load()
	c.mu.Lock()
	if c.watcher == nil && c.watchErr == nil {
		if c.noWatch {
			c.watchErr = workspace.ErrWatchUnsupported
		} else {
			c.watcher, c.watchErr = workspace.NewDirWatcher()
		}
	}
	c.mu.Unlock()
	for {
		built := false
		for _, root := range ws.Roots() {
			c.mu.Lock()
			ri := c.roots[root]
			c.mu.Unlock()
			if ri != nil && !ri.stale {
				continue
			}
			if c.buildRoot(ctx, ws, root, gen) {
				built = true
			}
			if ctx.Err() != nil || c.gen.Load() != gen || c.closed.Load() {
				return
			}
		}
		_ = built
		// Follow the watcher: drain its queue and update the indexes,
		// until a root goes stale (build it again) or the cache resets.
		for {
			if ctx.Err() != nil || c.gen.Load() != gen || c.closed.Load() {
				return
			}
			c.mu.Lock()
			w := c.watcher
			c.mu.Unlock()
			if w == nil {
				return // no watcher: nothing to follow
			}
			w.Wait(200)
			c.mu.Lock()
			stale := false
			if c.gen.Load() == gen {
				c.updateLocked()
				for _, ri := range c.roots {
					stale = stale || ri.stale
				}
			}
			c.mu.Unlock()
			if stale {
				break
			}
		}
	}
}

// updateLocked drains the watcher and applies the pending changes to every
// index.
func (c *Cache) updateLocked() {
	if c.watcher != nil {
		c.watcher.Drain(func(e workspace.WatchEvent) {
			if e.Overflow {
				for _, ri := range c.roots {
					ri.stale = true
				}
				return
			}
			c.changedLocked(e.Path)
		})
	}
	for _, ri := range c.roots {
		if ri.ready && !ri.stale && !ri.inputsHold() {
			ri.stale = true
			c.changes.Add(1)
		}
		if ri.ready && !ri.stale && len(ri.pending) > 0 {
			c.applyLocked(ri)
		}
	}
}

// stampInputs records the stat of the root's ignore inputs, before a build
// reads them.
func (ri *rootIndex) stampInputs() {
	ri.inputs = workspace.IgnoreInputs(ri.root)
	ri.stamps = make([]workspace.Stamp, len(ri.inputs))
	for i, p := range ri.inputs {
		ri.stamps[i] = inputStamp(p)
	}
}

// inputsHold reports whether every ignore input of the root is as it was
// when the build began (a few stats: a search and the watcher's loop ask).
func (ri *rootIndex) inputsHold() bool {
	for i, p := range ri.inputs {
		if inputStamp(p) != ri.stamps[i] {
			return false
		}
	}
	return true
}

// indexFilter is the walk filter of an index below dir (a path relative
// to the root, "" for the root): paths.sensitive, and the files with a
// leading '.' kept (flagged: a plain search leaves them out). The entries
// it lets through go to seen (relative to the root); those the walk then
// does not report are the ignored files and the hidden or ignored
// directories (seen.left).
func (ri *rootIndex) indexFilter(dir string, seen *seenSet) func(string, bool) workspace.Verdict {
	return func(rel string, isDir bool) workspace.Verdict {
		if dir != "" {
			rel = dir + "/" + rel
		}
		if !ri.sens.empty() && ri.sens.match(rel, isDir) {
			return workspace.Skip
		}
		seen.add(rel, isDir)
		if !isDir {
			return workspace.KeepHidden
		}
		return 0
	}
}

// seenSet is what a walk's filter let through and the walk did not report
// yet. It is safe for concurrent use.
type seenSet struct {
	mu          sync.Mutex
	files, dirs map[string]bool
	// in, when set, says which entries to keep (walkDir's)
	in func(rel string) bool
}

func newSeenSet() *seenSet { return &seenSet{files: map[string]bool{}, dirs: map[string]bool{}} }

func (s *seenSet) add(rel string, isDir bool) {
	if s.in != nil && !s.in(rel) {
		return
	}
	s.mu.Lock()
	if isDir {
		s.dirs[rel] = true
	} else {
		s.files[rel] = true
	}
	s.mu.Unlock()
}

// reported removes an entry the walk reported.
func (s *seenSet) reported(rel string) {
	s.mu.Lock()
	delete(s.files, rel)
	delete(s.dirs, rel)
	s.mu.Unlock()
}

// left records what the walk did not report in ri: ignored files as
// entries without trigrams (a glob may keep them), the directories not
// entered in ri.pruned.
func (s *seenSet) left(ri *rootIndex) {
	for rel := range s.files {
		e := &entry{rel: rel, flags: fIgnored}
		if base := rel[strings.LastIndexByte(rel, '/')+1:]; base != "" && base[0] == '.' {
			e.flags |= fHidden
		}
		ri.removeFile(rel)
		ri.files[rel] = e
	}
	for rel := range s.dirs {
		ri.pruned[rel] = true
	}
}

// indexer reads files into segments; one per walk worker.
type indexer struct {
	ts  triSet
	b   segBuilder
	buf []byte
}

// indexFile reads the file f (at rel) into x's builder and returns its
// entry; segments that fill up go to done.
func (x *indexer) indexFile(f *workspace.File, rel string, done func(*segment)) *entry {
	e := &entry{rel: rel}
	if f.Name[0] == '.' {
		e.flags |= fHidden
	}
	st, ok := walkedStamp(f)
	if !ok {
		return e // no stat: always read
	}
	start := time.Now()
	data, err := f.Read(x.buf)
	if err != nil {
		if errors.Is(err, workspace.ErrTooLarge) {
			e.flags |= fTooLarge
		}
		return e
	}
	x.buf = data[:0]
	e.st = st
	if time.Unix(0, st.Mtime).Add(racyWindow).After(start) {
		e.flags |= fRacy
	}
	tris := x.ts.of(data)
	bin := bytes.IndexByte(data, 0) >= 0
	n := len(tris)
	if bin {
		n = 0 // a Bloom filter, no pairs
	}
	if x.b.full(n) {
		done(x.b.build())
	}
	x.b.add(e, tris, bin)
	return e
}

// buildRoot builds the index of root and installs it, unless the cache
// was reset meanwhile; it reports whether it did.
func (c *Cache) buildRoot(ctx context.Context, ws *workspace.Workspace, root string, gen int64) bool {
	cfg := ws.Config()
	ri := &rootIndex{
		root: root, files: map[string]*entry{}, dirs: map[string]bool{"": true}, pruned: map[string]bool{},
		pending: map[string]bool{}, max: int64(cfg.Limits.MaxFileBytes),
		sens: newSensitive(cfg.Paths.Sensitive),
	}
	ri.stampInputs()
	c.mu.Lock()
	progress, persistDir := c.progress, c.persistDir
	if p := cfg.Search.Persist; p != nil && !*p {
		persistDir = "" // search.persist: false
	}
	if c.gen.Load() != gen {
		c.mu.Unlock()
		return false
	}
	if old := c.roots[root]; old != nil {
		// The old index keeps answering by stat while this one builds.
		old.stale = true
	} else {
		// Events that come while it builds wait in pending.
		c.roots[root] = &rootIndex{root: root, pending: ri.pending, stale: true, files: map[string]*entry{}, dirs: map[string]bool{}, pruned: map[string]bool{}}
	}
	c.mu.Unlock()
	if !c.watchDir(root) {
		c.mu.Lock()
		c.watchErrLocked()
		c.mu.Unlock()
	}
	var prev *loaded
	if persistDir != "" {
		prev, _ = loadIndex(persistDir, root, ri.max) // none, or unusable: read every file
	}
	if prev != nil {
		ri.segs, ri.bytes, ri.dead = prev.segs, prev.bytes, prev.dead
	}
	workers := runtime.GOMAXPROCS(0)
	xs := make([]indexer, workers)
	for i := range xs {
		xs[i].b.reserve()
	}
	var segMu sync.Mutex
	var nFiles, nLoaded, nRead atomic.Int64
	var over atomic.Bool
	addSeg := func(s *segment) {
		segMu.Lock()
		ri.segs = append(ri.segs, s)
		ri.bytes += s.size()
		if ri.bytes > maxIndexBytes {
			over.Store(true)
		}
		segMu.Unlock()
	}
	var mu, progMu sync.Mutex
	seen := newSeenSet()
	opts := workspace.WalkOptions{
		Dirs: true, ReadContent: true, MaxFileBytes: ri.max, Filter: ri.indexFilter("", seen), Workers: workers,
	}
	_, err := ws.Walk(ctx, root, opts, func(f *workspace.File) error {
		if c.gen.Load() != gen || c.closed.Load() {
			return errBuildDone
		}
		seen.reported(f.Rel)
		if f.IsDir() {
			mu.Lock()
			ri.dirs[f.Rel] = true
			mu.Unlock()
			c.watchDir(f.Path)
			return nil
		}
		if !f.IsRegular() {
			return nil
		}
		n := nFiles.Add(1)
		if n > maxIndexFiles || over.Load() {
			over.Store(true)
			return errBuildDone
		}
		e := prev.reuse(f, ri.max)
		if e != nil {
			nLoaded.Add(1)
		} else {
			nRead.Add(1)
			e = xs[f.Worker].indexFile(f, f.Rel, addSeg)
		}
		mu.Lock()
		ri.files[f.Rel] = e
		mu.Unlock()
		if progress != nil && n%4096 == 0 {
			progMu.Lock()
			progress(root, int(n), false)
			progMu.Unlock()
		}
		return nil
	})
	for i := range xs {
		if s := xs[i].b.build(); s != nil {
			addSeg(s)
		}
	}
	seen.left(ri)
	ri.loaded, ri.read = int(nLoaded.Load()), int(nRead.Load())
	dropped := prev.dropUnused(ri)
	if over.Load() {
		ri.tooMany, err = true, nil
	}
	if progress != nil {
		progress(root, len(ri.files), true)
	}
	if err != nil || ctx.Err() != nil {
		return false
	}
	c.mu.Lock()
	if c.gen.Load() != gen || c.closed.Load() {
		c.mu.Unlock()
		return false
	}
	if old := c.roots[root]; old != nil {
		for p := range old.pending {
			ri.pending[p] = true
		}
	}
	ri.ready = !ri.tooMany
	if ri.tooMany {
		ri.files, ri.segs, ri.dirs, ri.pruned, ri.bytes = map[string]*entry{}, nil, map[string]bool{}, map[string]bool{}, 0
		if c.watcher != nil {
			c.watcher.RemoveTree(root)
		}
	}
	c.roots[root] = ri
	c.changes.Add(1)
	var snap []persistSeg
	if ri.ready && persistDir != "" && (prev == nil || ri.read > 0 || dropped > 0) {
		snap = ri.snapshotLocked()
	}
	c.mu.Unlock()
	if snap != nil {
		_ = saveIndex(persistDir, root, ri.max, snap) // a copy is only a shortcut
	}
	if len(ri.files) >= bigBuild {
		// The build's garbage (the files' bytes, the workers' pair
		// buffers) was many times the index: give it back to the system
		// now rather than keep it resident until the runtime scavenges.
		debug.FreeOSMemory()
	}
	return true
}

// bigBuild is the number of files from which a build returns its garbage
// to the system when it ends.
const bigBuild = 10000

var errBuildDone = errors.New("build stopped")

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
		Dirs: true, ReadContent: true, MaxFileBytes: ri.max, Filter: ri.indexFilter("", seen), Workers: 1,
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
			ri.files[rel] = x.indexFile(f, rel, func(s *segment) {
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
			ri.files[f.Rel] = x.indexFile(f, f.Rel, func(s *segment) {
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
	ri.sorted = s
	return s
}

// goBackground runs f, background work, on a goroutine that Close waits
// for, unless the cache is closed. The caller has set busy; it is cleared
// when f returns, or at once when f does not run.
func (c *Cache) goBackground(busy *atomic.Bool, f func()) {
	c.mu.Lock()
	closed := c.closed.Load()
	if !closed {
		c.wg.Add(1)
	}
	c.mu.Unlock()
	if closed {
		busy.Store(false)
		return
	}
	go func() {
		defer c.wg.Done()
		defer busy.Store(false)
		f()
	}()
}

// Close stops the cache's background work (a build, the watcher), waits
// for it to end and drops the indexes; searches that use it then walk.
// Close may be called more than once.
func (c *Cache) Close() {
	c.mu.Lock()
	c.closed.Store(true)
	unfollow := c.unfollow
	c.unfollow = nil
	c.mu.Unlock()
	if unfollow != nil {
		unfollow()
	}
	c.Reset()
	c.wg.Wait()
	c.mu.Lock()
	for p, f := range c.rootFDs {
		f.Close()
		delete(c.rootFDs, p)
	}
	c.mu.Unlock()
}
