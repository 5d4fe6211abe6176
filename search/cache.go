package search

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/workspace"
)

// The search cache of a long-lived session (the LSP server; the one-shot
// call command never has one): what searches learned about the files they
// read, so that the next search reads only the files that may match.
//
// For every file a search reads from the disk the cache keeps a small Bloom
// filter of the file's trigrams (three-byte sequences, ASCII letters folded
// to lower case, one hash, one to two bits per byte of text) and the stat
// data the bytes were read under (size, mtime, ctime, inode). A later search
// whose matcher has required literals (every match contains one of them,
// from regexp/syntax; see required) skips the files whose filter lacks a
// trigram of every literal, after checking that the file is unchanged: the
// Bloom filter can only say "maybe" too often, never "no" wrongly, so the
// answer is the same as reading every file. Everything else (the walk with
// its ignore rules, the open buffers, the matching itself) is unchanged:
// the walk runs every time, so created, deleted and renamed files and
// changed ignore files are seen as a fresh search sees them.
//
// Staleness: a file is skipped only when a stat made just before the skip
// equals the stat recorded before its bytes were read, and that recorded
// mtime was at least racyWindow older than the read (as git does with its
// "racily clean" entries: a write in the same clock tick as the read could
// otherwise keep the mtime). Notifications (didSave, watched files, our own
// tools' file changes) drop the file's entry (Changed); folder and config
// changes drop them all (Reset).
//
// Memory: the filters take an eighth to a quarter of the text's size (on
// $(go env GOROOT)/src, 157 MB on disk: 22 MB of filters for 11,466 files,
// and about 3 MB more for the entries); above
// searchCacheMaxBytes of filters no more files are added, and those are
// simply read on every search; hitting the cap also starts a sweep of the
// entries of deleted or changed files (sweepSoon).
//
// Filling: a search records the files it reads (building a filter costs
// about 2.5 ns a byte); a server also fills the cache in the background
// after initialized (Warm, one worker, at most warmMaxFiles files), so that
// its first search is already fast.

// searchCacheMaxBytes caps the memory of a session's Bloom filters.
const searchCacheMaxBytes = 256 << 20

// racyWindow is how much older than the read a file's mtime must be for its
// stat to vouch for its content.
const racyWindow = 2 * time.Second

// Cache is a session's search cache (Options.Cache). Its methods are safe
// for concurrent use, with each other and with the searches that use it;
// its background work (Warm, the sweeps of stale entries) ends with Close.
// The zero value is not usable: make one with NewCache.
type Cache struct {
	mu    sync.RWMutex
	files map[string]*cachedFile // by absolute path
	bytes int64                  // the filters' size
	// gen counts resets: an entry read under an older generation is not
	// stored.
	gen atomic.Int64
	// skips counts the files searches skipped (for tests).
	skips atomic.Int64
	// sweeping: a sweep runs; lastSweep: when the last one started
	sweeping  atomic.Bool
	lastSweep atomic.Int64
	// warming: a background fill runs; rewarm: start it again when done
	warming, rewarm atomic.Bool
	// closed: Close was called; wg counts the background goroutines.
	closed atomic.Bool
	wg     sync.WaitGroup
	// unfollow ends Follow's subscription; guarded by mu.
	unfollow func()
}

// cachedFile is what the cache knows of one file.
type cachedFile struct {
	st    fileStamp
	bloom []uint64
	shift uint8 // the filter has 1<<(32-shift) bits
}

// fileStamp is the stat data a file's content is vouched for by.
type fileStamp struct {
	size, mtime, ctime int64
	ino, dev           uint64
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{files: map[string]*cachedFile{}}
}

// Follow keeps the cache current with what ws announces (workspace.Watch)
// until Close: a file changed on disk loses its entry; a reset (roots or
// configuration changed) empties the cache and fills it again in the
// background, under ctx.
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
	if f, ok := c.files[path]; ok {
		c.bytes -= int64(len(f.bloom) * 8)
		delete(c.files, path)
	}
	c.mu.Unlock()
}

// Reset empties the cache (workspace folders or configuration changed). A
// background fill that runs stops; searches that run do not record what
// they read before the reset.
func (c *Cache) Reset() {
	c.mu.Lock()
	c.gen.Add(1)
	c.files = map[string]*cachedFile{}
	c.bytes = 0
	c.mu.Unlock()
}

// Len returns the number of files the cache holds.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.files)
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

// trigramBit is the filter bit of trigram t in a filter of 1<<(32-shift)
// bits.
func trigramBit(t uint32, shift uint8) uint32 {
	return (t * 0x9E3779B1) >> shift
}

// newBloom builds the trigram filter of data: a power of two of bits, one
// to two per byte.
func newBloom(data []byte) ([]uint64, uint8) {
	shift := uint8(32 - 6)
	for 1<<(32-shift) < len(data) && shift > 1 {
		shift--
	}
	bloom := make([]uint64, 1<<(32-6-shift))
	mask := uint32(len(bloom) - 1)
	var t uint32
	if len(data) >= 2 {
		t = uint32(lowerASCII[data[0]])<<8 | uint32(lowerASCII[data[1]])
	}
	for i := 2; i < len(data); i++ {
		t = (t<<8 | uint32(lowerASCII[data[i]])) & 0xFFFFFF
		bit := trigramBit(t, shift)
		bloom[(bit>>6)&mask] |= 1 << (bit & 63)
	}
	return bloom, shift
}

// cacheQuery is a search's question to the cache: files that may hold one
// of the literals (each a list of folded trigrams).
type cacheQuery struct {
	c     *Cache
	lits  [][]uint32
	start time.Time
	gen   int64
	max   int64 // the walk's file size cap
	// canSkip: the matcher's literals say which files may match
	canSkip bool
}

// newCacheQuery returns the query of matcher m, or nil without a cache.
// The query skips files only when every required literal has a trigram
// (canSkip); it records the files the search reads in any case.
func newCacheQuery(c *Cache, m *matcher, max int64) *cacheQuery {
	if c == nil || c.closed.Load() {
		return nil
	}
	q := &cacheQuery{c: c, start: time.Now(), gen: c.gen.Load(), max: max}
	q.canSkip = len(m.lits) > 0
	for _, l := range m.lits {
		if len(l.s) < 3 {
			q.canSkip, q.lits = false, nil
			break
		}
		var tris []uint32
		var t uint32
		for i, b := range l.s {
			if l.fold && b >= 0x80 {
				// never: fold literals are ASCII (foldSafe)
				q.canSkip = false
			}
			t = (t<<8 | uint32(lowerASCII[b])) & 0xFFFFFF
			if i >= 2 {
				tris = append(tris, t)
			}
		}
		q.lits = append(q.lits, tris)
	}
	return q
}

// visit is asked about a file the walk reached, before it is read. It
// stats the file (it never reads it) and says whether the search may skip
// it (skip: unchanged since the cache read it, and its filter lacks every
// literal), or else whether to record the bytes about to be read under st
// (record: not cached as is, and its mtime old enough to vouch for them).
func (q *cacheQuery) visit(path string) (skip bool, st fileStamp, record bool) {
	st, ok := stampOf(path)
	if !ok {
		return false, st, false
	}
	q.c.mu.RLock()
	f := q.c.files[path]
	q.c.mu.RUnlock()
	if f == nil || f.st != st {
		return false, st, !time.Unix(0, st.mtime).Add(racyWindow).After(q.start)
	}
	if !q.canSkip || (q.max > 0 && st.size > q.max) {
		return false, st, false
	}
	for _, tris := range q.lits {
		all := true
		for _, t := range tris {
			bit := trigramBit(t, f.shift)
			if f.bloom[bit>>6]&(1<<(bit&63)) == 0 {
				all = false
				break
			}
		}
		if all {
			return false, st, false
		}
	}
	q.c.skips.Add(1)
	return true, st, false
}

// store records the bytes of the file at path, read after the stat st.
func (q *cacheQuery) store(path string, st fileStamp, data []byte) {
	bloom, shift := newBloom(data)
	q.c.mu.Lock()
	defer q.c.mu.Unlock()
	if q.c.gen.Load() != q.gen || q.c.closed.Load() {
		return
	}
	old := q.c.files[path]
	size := int64(len(bloom) * 8)
	if old != nil {
		size -= int64(len(old.bloom) * 8)
	}
	if q.c.bytes+size > searchCacheMaxBytes {
		q.c.sweepSoon()
		return
	}
	q.c.bytes += size
	q.c.files[path] = &cachedFile{st: st, bloom: bloom, shift: shift}
}

// sweepSoon drops, in the background, the entries of files that are gone
// or changed (deleted without a notification, say), when the cap is hit:
// at most one sweep at a time and one a minute.
func (c *Cache) sweepSoon() {
	now := time.Now().UnixNano()
	if now-c.lastSweep.Load() < int64(time.Minute) || !c.sweeping.CompareAndSwap(false, true) {
		return
	}
	c.lastSweep.Store(now)
	c.goBackground(&c.sweeping, func() {
		c.mu.RLock()
		stale := make(map[string]*cachedFile)
		for p, f := range c.files {
			stale[p] = f
		}
		c.mu.RUnlock()
		for p, f := range stale {
			if c.closed.Load() {
				return
			}
			if st, ok := stampOf(p); ok && st == f.st {
				delete(stale, p)
			}
		}
		c.mu.Lock()
		for p, f := range stale {
			if c.files[p] == f {
				c.bytes -= int64(len(f.bloom) * 8)
				delete(c.files, p)
			}
		}
		c.mu.Unlock()
	})
}

// warmMaxFiles bounds the background fill, as the code index is bounded.
const warmMaxFiles = 50000

// Warm fills the cache in the background with the files a plain search of
// the workspace reads (the ignore rules, the size cap and paths.sensitive as
// Run has them), on one worker, so that the first search of a session does
// not pay for building the filters. It returns at once; the fill stops when
// ctx ends, the cache is reset or closed. A Warm while one runs makes that
// one start again when done. Searches that come first fill the cache
// themselves.
func (c *Cache) Warm(ctx context.Context, ws *workspace.Workspace) {
	if !c.warming.CompareAndSwap(false, true) {
		c.rewarm.Store(true)
		return
	}
	c.goBackground(&c.warming, func() {
		for {
			c.rewarm.Store(false)
			c.warm(ctx, ws)
			if !c.rewarm.Load() || ctx.Err() != nil || c.closed.Load() {
				return
			}
		}
	})
}

// warm is one background fill (Warm); it stops early when the cache is
// reset.
func (c *Cache) warm(ctx context.Context, ws *workspace.Workspace) {
	cfg := ws.Config()
	q := newCacheQuery(c, &matcher{}, int64(cfg.Limits.MaxFileBytes))
	if q == nil {
		return // closed
	}
	sens := newSensitive(cfg.Paths.Sensitive)
	var buf []byte
	n := 0
	for _, root := range ws.Roots() {
		// paths.sensitive as a search of the root applies it
		prefix := ""
		if rel := ws.RootRel(root); rel != "." {
			prefix = rel + "/"
		}
		var filter func(string, bool) workspace.Verdict
		if !sens.empty() {
			filter = func(rel string, isDir bool) workspace.Verdict {
				if sens.match(prefix+rel, isDir) {
					return workspace.Skip
				}
				return 0
			}
		}
		opts := workspace.WalkOptions{MaxFileBytes: q.max, ReadContent: true, Filter: filter, Workers: 1}
		workspace.Walk(ctx, root, opts, func(f *workspace.File) error {
			if !f.IsRegular() || ctx.Err() != nil {
				return ctx.Err()
			}
			if _, open := ws.Overlays.Get(f.Path); open {
				return nil
			}
			if n++; n > warmMaxFiles || c.gen.Load() != q.gen {
				return errWarmDone
			}
			if _, st, record := q.visit(f.Path); record {
				data, err := f.Read(buf)
				if err == nil {
					buf = data[:0]
					q.store(f.Path, st, data)
				}
			}
			return nil
		})
	}
}

var errWarmDone = errors.New("enough files")

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

// Close stops the cache's background work (Warm, a sweep), waits for it to
// end and drops every entry; the cache then records nothing more, and
// searches that use it read every file. Close may be called more than once.
func (c *Cache) Close() {
	c.mu.Lock()
	c.closed.Store(true)
	unfollow := c.unfollow
	c.unfollow = nil
	c.mu.Unlock()
	if unfollow != nil {
		unfollow()
	}
	c.Reset() // a fill stops at its next file (a new generation)
	c.wg.Wait()
}
