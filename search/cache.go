package search

import (
	"context"
	"os"
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
//
// Another index can take part in a build (Feed, feed.go): the build hands
// it every file it walks with the content it read, so that the session's
// code index neither walks nor reads the tree a second time.

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
	// index answered without walking; finished the builds that installed
	// their index and ended, their on-disk copy written or not (for tests).
	skips, indexed, finished atomic.Int64
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
	// taps wait for the next build of their root, and feeding are the
	// roots whose build feeds taps now (feed.go). Guarded by mu.
	taps    map[string][]*tapped
	feeding map[string]bool
	// expectFeed: ExpectFeed was called; waited are the roots whose
	// build waited for a tap; tapped, when set, is closed when a tap comes
	// (a build waits for it). Guarded by mu.
	expectFeed bool
	waited     map[string]bool
	tapped     chan struct{}
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
	sorted []*entry    // files in ComparePaths order; nil: to sort
	views  []keyedView // of sorted, most recently used first (indexed.go)
	max    int64       // the size cap it was built under
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
	return &Cache{roots: map[string]*rootIndex{}, rootFDs: map[string]*os.File{}, persistDir: defaultPersistDir(),
		taps: map[string][]*tapped{}, feeding: map[string]bool{}, waited: map[string]bool{}}
}

// SetProgress makes the builds call f as they go (on the build's
// goroutines, one call at a time per root): 0 files when the build of
// root begins, the files indexed so far as it goes, and done at the end of
// its build. f must not block.
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
	c.dropTapsLocked()
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
