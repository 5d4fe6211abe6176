package tools

import (
	"container/list"
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/workspace"
)

// The result cache of a long-lived session: models read the same file
// again and again, and a repeated call of a tool marked Cacheable (read-only
// and idempotent) is answered from the result the session kept, marked
// Result.Cached. A cached answer is always the answer the call would give
// now; when that cannot be known, the call runs.
//
// What an answer depends on is declared by the tool while it runs: the
// files it read, each by the stat data it was read under (dependsOnFile:
// size, mtime, ctime, inode, device), and whether it read the editor's
// buffer of a path or the disk (dependsOnBuffer). A call that declares
// nothing, or something it cannot vouch for, is not kept. Before a kept
// answer is given, every dependency is checked again: the file is stat'ed
// through the workspace's confined Stat (so a path that now leads outside
// the workspace, or to a sensitive file, is not answered from the cache),
// its stat must be the one recorded, and the buffer must be open with the
// same text, or closed, as it was. So a change nobody announced (a shell
// command, another program) is seen as well as one that was.
//
// Racy stats: a file whose ctime was less than racyWindow before the read
// is not vouched for (as git does with its "racily clean" entries): a write
// in the same clock tick could leave its stat unchanged. Every change moves
// ctime forward, so an older ctime that still holds means no change.
//
// Invalidation: every announcement of the workspace (a file changed on
// disk: saved, seen by the editor's watcher, written by a tool; folders or
// configuration changed) and every change of an open buffer drops every
// kept answer; an answer computed while one happened is not kept. A kept
// answer is given only under the configuration it was computed under. The
// cache never answers a call that would ask: it is consulted after the
// approval policy decided that the call runs (Runner.run), so rules,
// sensitive paths and questions apply as to any call. The events and the
// history still record the call, with cached: true.
//
// Cacheable are the tools whose answers depend on a few files they can
// name (read_file), and the tree tools list_directory, glob and grep,
// whose answers depend on whole trees and their ignore files: they are
// kept only while the session's search cache watches every directory
// their walk entered (resultcache_tree.go says how). A git status or the
// code index always run.
//
// Memory: at most resultCacheMaxBytes per session, least recently used
// answers dropped first; an answer over an eighth of it is not kept.

// resultCacheMaxBytes caps the memory of a session's kept answers.
const resultCacheMaxBytes = 32 << 20

// racyWindow is how much older than the read a file's ctime must be for its
// stat to vouch for its content.
const racyWindow = 2 * time.Second

// resultCache is a session's result cache. It is safe for concurrent use.
type resultCache struct {
	mu      sync.Mutex
	entries map[string]*list.Element // of *cachedResult, by key
	lru     list.List                // most recently used first
	bytes   int64
	max     int64
	// gen counts the changes: an answer computed across one is not kept.
	gen uint64
	// racy is racyWindow; tests shorten it.
	racy time.Duration
}

// cachedResult is one kept answer.
type cachedResult struct {
	key   string
	res   Result // Structured is its JSON (json.RawMessage)
	deps  []cacheDep
	reads []cachedRead
	cfg   *workspace.Config
	size  int64
}

// cacheDep is one thing an answer depends on: the file at path with stat
// stamp, or (buffer) the editor's buffer of path, open with text or closed.
type cacheDep struct {
	path   string
	buffer bool
	open   bool
	text   string
	stamp  workspace.Stamp
	// outside: a path outside the workspace's watched directories that a
	// walk's ignore rules read (resultcache_tree.go), stat'ed with os.Stat
	// (os.Lstat when lstat): absent, a directory (dir, by identity) or a
	// regular file (stamp).
	outside, lstat, absent bool
	dir                    os.FileInfo
	// tree: the directories a walk of path entered, unchanged while the
	// search cache's Generation of path is gen.
	tree bool
	gen  uint64
}

// cachedRead is a read the call recorded (recordRead), recorded again by a
// cached answer: the model has read the file again.
type cachedRead struct {
	path string
	rec  readRecord
}

// cacheDeps collects the dependencies of one running call.
type cacheDeps struct {
	mu     sync.Mutex
	deps   []cacheDep
	reads  []cachedRead
	failed bool // something could not be vouched for
	racy   time.Duration
}

func newResultCache() *resultCache {
	c := &resultCache{entries: map[string]*list.Element{}, max: resultCacheMaxBytes, racy: racyWindow}
	c.lru.Init()
	return c
}

// changed drops every kept answer: the workspace changed.
func (rc *resultCache) changed() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.gen++
	rc.entries = map[string]*list.Element{}
	rc.lru.Init()
	rc.bytes = 0
}

// follow keeps the cache current with what ws announces, until the
// returned func is called.
func (rc *resultCache) follow(ws *workspace.Workspace) (stop func()) {
	stopWs := ws.Watch(func(workspace.Event) { rc.changed() })
	stopBuf := ws.Overlays.Watch(func(workspace.Document) { rc.changed() })
	return func() { stopWs(); stopBuf() }
}

// dependsOnFile declares that the call's answer depends on the content of
// the file at the absolute path, of which fi is the stat taken before it
// was read (the open file's). It is a no-op when the call is not cached.
func (c *Call) dependsOnFile(path string, fi os.FileInfo) {
	d := c.deps
	if d == nil {
		return
	}
	st, ok := stampOf(fi)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !ok || time.Since(time.Unix(0, st.Ctime)) < d.racy {
		d.failed = true
		return
	}
	d.deps = append(d.deps, cacheDep{path: path, stamp: st})
}

// dependsOnBuffer declares that the call's answer depends on whether the
// editor holds path open (open) and, when it does, on its text.
func (c *Call) dependsOnBuffer(path string, open bool, text string) {
	d := c.deps
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deps = append(d.deps, cacheDep{path: path, buffer: true, open: open, text: text})
}

// recordRead remembers in the session what the model read of path
// (STALE_FILE), and in the call's dependencies, so that a cached answer
// remembers it again.
func (c *Call) recordRead(path string, rec readRecord) {
	recordRead(c.Session, path, rec)
	if d := c.deps; d != nil {
		d.mu.Lock()
		d.reads = append(d.reads, cachedRead{path: path, rec: rec})
		d.mu.Unlock()
	}
}

// valid reports whether every dependency of e still holds; sc is the
// session's search cache (nil: none).
func (e *cachedResult) valid(ws *workspace.Workspace, sc *search.Cache) bool {
	if ws.Config() != e.cfg {
		return false
	}
	for _, d := range e.deps {
		if d.tree {
			if gen, ok := sc.Generation(ws, d.path); !ok || gen != d.gen {
				return false
			}
			continue
		}
		if d.outside {
			if !d.holdsOutside() {
				return false
			}
			continue
		}
		if d.buffer {
			doc, open := ws.Overlays.Get(d.path)
			if open != d.open || open && doc.Text != d.text {
				return false
			}
			continue
		}
		fi, err := ws.Stat(d.path)
		if err != nil {
			return false
		}
		if st, ok := stampOf(fi); !ok || st != d.stamp {
			return false
		}
	}
	return true
}

// cacheKey is what identifies a call's answer: the tool, the agent and
// the arguments as prepared (aliases renamed, defaults applied).
func cacheKey(tool, agent string, args json.RawMessage) string {
	return tool + "\x00" + agent + "\x00" + string(args)
}

// lookup returns a copy of the answer kept under key when it still holds.
func (rc *resultCache) lookup(key string, ws *workspace.Workspace, sc *search.Cache) (*cachedResult, bool) {
	rc.mu.Lock()
	el, ok := rc.entries[key]
	if !ok {
		rc.mu.Unlock()
		return nil, false
	}
	e := el.Value.(*cachedResult)
	rc.lru.MoveToFront(el)
	rc.mu.Unlock()
	// Checked outside the lock: stats take time. An entry dropped meanwhile
	// was valid when the check began, like a fresh read at that moment.
	if !e.valid(ws, sc) {
		rc.mu.Lock()
		if cur, ok := rc.entries[key]; ok && cur == el {
			rc.remove(el)
		}
		rc.mu.Unlock()
		return nil, false
	}
	return e, true
}

// generation is the count of changes so far.
func (rc *resultCache) generation() uint64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.gen
}

// store keeps res under key, unless the workspace changed since gen or the
// call could not vouch for its answer.
func (rc *resultCache) store(key string, gen uint64, res *Result, d *cacheDeps, cfg *workspace.Config) {
	d.mu.Lock()
	failed, deps, reads := d.failed, d.deps, d.reads
	d.mu.Unlock()
	if failed || len(deps) == 0 || res.Status != StatusSuccess {
		return
	}
	e := &cachedResult{key: key, res: *res, deps: deps, reads: reads, cfg: cfg}
	e.res.CallID, e.res.DurationMs, e.res.ApprovedBy, e.res.Tool = "", 0, "", ""
	if res.Structured != nil {
		b := res.structuredJSON
		if b == nil {
			var err error
			if b, err = encodeJSON(res.Structured); err != nil {
				return
			}
			// The call's answer is encoded once: here, and copied
			// into the response (AppendJSON).
			res.structuredJSON = b
		}
		e.res.Structured, e.res.structuredJSON = json.RawMessage(b), b
	}
	e.size = int64(len(key) + len(res.Content) + len(res.Display) + 256)
	if s, ok := e.res.Structured.(json.RawMessage); ok {
		e.size += int64(len(s))
	}
	for _, dep := range deps {
		e.size += int64(len(dep.path) + 64) // a buffer's text is the one the editor holds
	}
	if e.size > rc.max/8 {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.gen != gen {
		return
	}
	if old, ok := rc.entries[key]; ok {
		rc.remove(old)
	}
	rc.entries[key] = rc.lru.PushFront(e)
	rc.bytes += e.size
	for rc.bytes > rc.max {
		rc.remove(rc.lru.Back())
	}
}

// remove drops one entry; rc.mu is held.
func (rc *resultCache) remove(el *list.Element) {
	e := rc.lru.Remove(el).(*cachedResult)
	delete(rc.entries, e.key)
	rc.bytes -= e.size
}

// executeCached is execute with the session's result cache: a call of a
// Cacheable tool is answered from it when a kept answer still holds, and
// its successful answer is kept. It runs after the approval policy allowed
// the call (by is who did).
func (r *Runner) executeCached(c *Call, env *Env, cfg *workspace.Config, args json.RawMessage, typed any, by string) *Result {
	var rc *resultCache
	if env.Session != nil {
		rc = env.Session.results
	}
	if rc == nil || !c.Tool.Cacheable || !cfg.Tools.ResultCache || c.Ctx.Err() != nil {
		return r.execute(c, cfg, typed, by) // a cancelled call is cancelled
	}
	key := cacheKey(c.Tool.Name, c.Agent, args)
	if e, ok := rc.lookup(key, env.Workspace, env.Session.Search); ok {
		for _, rd := range e.reads {
			recordRead(c.Session, rd.path, rd.rec)
		}
		res := e.res
		res.Cached, res.ApprovedBy = true, by
		return &res
	}
	gen := rc.generation()
	c.deps = &cacheDeps{racy: rc.racy}
	res := r.execute(c, cfg, typed, by)
	rc.store(key, gen, res, c.deps, cfg)
	return res
}
