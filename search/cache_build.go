// Building a root's index (cache.go says what the index holds): the walk
// that reads and indexes each file, in parallel, resumed from the on-disk
// copy where a file's stat is unchanged.

package search

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/internal/hugepages"
	"github.com/agentls/agentls/workspace"
)

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
// directories (seen.left). skipped, when set, is told of the sensitive
// entries it leaves out.
func (ri *rootIndex) indexFilter(dir string, seen *seenSet, skipped func(rel string, isDir bool)) func(string, bool) workspace.Verdict {
	return func(rel string, isDir bool) workspace.Verdict {
		if dir != "" {
			rel = dir + "/" + rel
		}
		if !ri.sens.empty() && ri.sens.match(rel, isDir) {
			if skipped != nil {
				skipped(rel, isDir)
			}
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
	// full says to reserve the room of a full segment (segBuilder.reserve)
	// at the first file: a build's workers do so on their own goroutines,
	// side by side, not before the walk begins.
	full bool
}

// indexFile reads the file f (at rel) into x's builder and returns its
// entry and its content (nil when not read; valid until the next call);
// segments that fill up go to done.
func (x *indexer) indexFile(f *workspace.File, rel string, done func(*segment)) (*entry, []byte) {
	e := &entry{rel: rel}
	if f.Name[0] == '.' {
		e.flags |= fHidden
	}
	// The stamp is the stat the read takes of the file it opened, before
	// its bytes (no stat of its own).
	start := time.Now()
	data, st, ok, err := f.ReadStamped(x.buf)
	if err != nil {
		if errors.Is(err, workspace.ErrTooLarge) {
			e.flags |= fTooLarge
		}
		return e, nil
	}
	x.buf = data[:0]
	if x.full {
		x.full = false
		x.b.reserve()
	}
	if !ok {
		// No stat came with the read (a system whose reads take none):
		// the stat now, which a change since start makes racy below.
		if st, ok = walkedStamp(f); !ok {
			return e, nil // no stat: always read
		}
	}
	e.st = st
	if time.Unix(0, st.Mtime).Add(racyWindow).After(start) {
		e.flags |= fRacy
	}
	cut := binaryCutoff(data) // len(data) without a NUL
	bin := cut < len(data)
	var tris []uint32
	if cut > 0 {
		tris = x.ts.of(data)
	}
	// else no search shows a match of the file (its first buffer holds a
	// NUL: ripgrep does not search it, searchFile neither), so a binary
	// one has an empty filter: no query with a trigram reads it. Such files were a
	// seventh of the bytes of $(go env GOROOT)/src and, their trigrams
	// spread over the whole bit set, a quarter of its trigram time.
	n := len(tris)
	if bin {
		n = 0 // a Bloom filter, no pairs
	}
	if x.b.full(n) {
		done(x.b.build())
	}
	x.b.add(e, tris, bin)
	return e, data
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
	c.awaitTap(ctx, root)
	defer hugepages.Build()() // the build's fresh memory in huge pages
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
	// The taps waiting for this build take part in it (feed.go).
	taps := c.takeTapsLocked(root)
	whole := false
	endTaps := sync.OnceFunc(func() { c.endTaps(root, taps, whole) })
	defer endTaps()
	if old := c.roots[root]; old != nil {
		// The old index keeps answering by stat while this one builds.
		old.stale = true
	} else {
		// Events that come while it builds wait in pending.
		c.roots[root] = &rootIndex{root: root, pending: ri.pending, stale: true, files: map[string]*entry{}, dirs: map[string]bool{}, pruned: map[string]bool{}}
	}
	c.mu.Unlock()
	if progress != nil {
		progress(root, 0, false) // the build begins
	}
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
		xs[i].full = true
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
	var skipped func(string, bool)
	if len(taps) > 0 {
		skipped = func(rel string, isDir bool) {
			for _, t := range taps {
				t.Skipped(rel, isDir)
			}
		}
	}
	opts := workspace.WalkOptions{
		Dirs: true, ReadContent: true, MaxFileBytes: ri.max, Filter: ri.indexFilter("", seen, skipped), Workers: workers,
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
		var data []byte
		if e != nil {
			nLoaded.Add(1)
		} else {
			nRead.Add(1)
			e, data = xs[f.Worker].indexFile(f, f.Rel, addSeg)
		}
		mu.Lock()
		ri.files[f.Rel] = e
		mu.Unlock()
		for _, t := range taps {
			t.File(f, data)
		}
		if progress != nil && n%4096 == 0 {
			progMu.Lock()
			progress(root, int(n), false)
			progMu.Unlock()
		}
		return nil
	})
	// The walk is over: the taps had every file of the root when it ran
	// to its end within the bounds, and need not wait for the rest.
	whole = err == nil && ctx.Err() == nil && !over.Load() && c.gen.Load() == gen && !c.closed.Load()
	endTaps()
	// The workers' last segments are built side by side, as the others
	// were (the build's tail).
	var tail sync.WaitGroup
	for i := range xs {
		tail.Add(1)
		go func() {
			defer tail.Done()
			if s := xs[i].b.build(); s != nil {
				addSeg(s)
			}
		}()
	}
	tail.Wait()
	seen.left(ri)
	ri.loaded, ri.read = int(nLoaded.Load()), int(nRead.Load())
	dropped := prev.dropUnused(ri)
	if over.Load() {
		ri.tooMany, err = true, nil
	}
	// The end of the build is reported once its index answers (or it
	// will not be installed).
	nIndexed := len(ri.files)
	ended := func() {
		if progress != nil {
			progress(root, nIndexed, true)
		}
	}
	if err != nil || ctx.Err() != nil {
		ended()
		return false
	}
	c.mu.Lock()
	if c.gen.Load() != gen || c.closed.Load() {
		c.mu.Unlock()
		ended()
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
	c.mu.Unlock()
	ended()
	// The progress callback may have readied a goroutine to send the end
	// (lsp/searchindex.go's): the scheduler runs it once this goroutine
	// stops, which would first write the on-disk copy below; without yielding,
	// the end reached the editor 8 to 22 ms late (until the runtime
	// preempted this goroutine), measured from the server's own clock.
	runtime.Gosched()
	// The on-disk copy is written after the end: it is only a shortcut
	// for the next session's build.
	var snap []persistSeg
	if ri.ready && persistDir != "" && (prev == nil || ri.read > 0 || dropped > 0) {
		c.mu.Lock()
		if c.gen.Load() == gen && !c.closed.Load() && c.roots[root] == ri {
			snap = ri.snapshotLocked()
		}
		c.mu.Unlock()
	}
	if snap != nil {
		_ = saveIndex(persistDir, root, ri.max, snap) // a copy is only a shortcut
	}
	c.finished.Add(1)
	// The build's garbage is left to the runtime, whose scavenger hands
	// back what the heap's goal will not use again. Handing it all back
	// at once (debug.FreeOSMemory) made the next large searches fault
	// the same memory in again, 4 KB at a time: on the benchmark's
	// virtual machine about 16 µs a page, 4,200 pages (a quarter of its
	// CPU) for each output-heavy grep of the 92k-file tree.
	return true
}

var errBuildDone = errors.New("build stopped")
