package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// WatchEvent is one change a DirWatcher reports: a directory entry
// created, written, deleted, moved, or its attributes changed. Path is the
// absolute path of the entry (the watched directory itself when it was
// deleted or moved). Overflow: events were lost.
type WatchEvent struct {
	Path     string
	Overflow bool
}

// ErrWatchUnsupported is NewDirWatcher's error where there is no watcher.
var ErrWatchUnsupported = errors.New("no directory watcher on this system")

// TreeWatcher follows a workspace's roots on disk by itself, so that a
// front end need not ask its client to watch files: every directory of
// every root that the walk enters (not hidden, not ignored, not .git: the
// directories whose files the indexes read, the ignore files included) has
// a watch of one DirWatcher, and each change the kernel reports is handed
// to the caller's function on the watcher's goroutine. Its rules:
//
//   - Sync watches the roots the workspace has now (a root added since is
//     walked, a root removed is let go) and reports whether the watcher
//     covers every one of them. A root it cannot watch (missing, not a
//     directory) is tried again at the next Sync; while one is not watched,
//     Sync reports false.
//   - A directory created (or moved in) below a watched one is watched in
//     turn unless hidden or ignored, and every file already in it is
//     reported, so a file written before its directory's watch existed is
//     not missed. A changed ignore file makes its root be walked again (a
//     directory it no longer ignores is watched).
//   - A lost event (the kernel's queue overflowed) is reported as an
//     Overflow event: anything may have changed.
//   - When the system's watches run out (ErrWatchLimit) the watcher stops
//     for good: it closes, lost is called once, and Sync reports false from
//     then on; where there is no watcher (not Linux) WatchTree fails.
//
// A file written while its directory is first walked may be missed, as
// with any watcher that adds its watches after the directory exists.
type TreeWatcher struct {
	ws      *Workspace
	changed func(WatchEvent)
	lost    func()

	mu     sync.Mutex
	w      *DirWatcher      // nil once stopped
	roots  map[string]error // root → nil when watched, else why not
	rescan map[string]bool  // roots to walk again (an ignore file changed)
	done   chan struct{}
	closed bool
}

// WatchTree starts a watcher of ws's roots, which watches nothing until
// the first Sync. changed gets each change (a path, or Overflow); lost,
// when set, is called once if the watcher stops covering the roots. Both
// run on the watcher's goroutine and must not call Sync.
func WatchTree(ws *Workspace, changed func(WatchEvent), lost func()) (*TreeWatcher, error) {
	w, err := NewDirWatcher()
	if err != nil {
		return nil, err
	}
	t := &TreeWatcher{ws: ws, changed: changed, lost: lost, w: w,
		roots: map[string]error{}, rescan: map[string]bool{}, done: make(chan struct{})}
	go t.run()
	return t, nil
}

// Sync brings the watches in step with the workspace's roots and reports
// whether every root is watched. It walks the roots not watched yet, so it
// may take a while on a large tree.
func (t *TreeWatcher) Sync() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.syncLocked()
}

// syncLocked is Sync under t.mu.
func (t *TreeWatcher) syncLocked() bool {
	if t.w == nil {
		return false
	}
	roots := t.ws.Roots()
	for r := range t.roots {
		if slices.Contains(roots, r) {
			continue
		}
		delete(t.roots, r)
		t.w.RemoveTree(r)
		// A root inside the one let go, or around it, lost watches too.
		for o := range t.roots {
			if _, in := Within(r, o); in {
				delete(t.roots, o)
			} else if _, in := Within(o, r); in {
				delete(t.roots, o)
			}
		}
	}
	all := true
	for _, r := range roots {
		if err, known := t.roots[r]; known && err == nil && !t.rescan[r] {
			continue
		}
		delete(t.rescan, r)
		err := t.addTreeLocked(r, nil)
		if errors.Is(err, ErrWatchLimit) {
			t.stopLocked()
			return false
		}
		t.roots[r] = err
		all = all && err == nil
	}
	return all
}

// addTreeLocked watches dir and the directories below it that the walk
// enters; the files met are appended to files when it is not nil.
func (t *TreeWatcher) addTreeLocked(dir string, files *[]string) error {
	if err := t.w.Add(dir); err != nil {
		return err
	}
	var mu sync.Mutex
	var limit error
	Walk(context.Background(), dir, WalkOptions{Dirs: true}, func(f *File) error {
		if f.IsDir() {
			if err := t.w.Add(f.Path); errors.Is(err, ErrWatchLimit) {
				mu.Lock()
				limit = err
				mu.Unlock()
				return err
			}
			return nil
		}
		if files != nil {
			mu.Lock()
			*files = append(*files, f.Path)
			mu.Unlock()
		}
		return nil
	})
	return limit
}

// stopLocked gives the watcher up (its watches ran out).
func (t *TreeWatcher) stopLocked() {
	if t.w != nil {
		t.w.Close()
		t.w = nil
	}
}

// Close stops the watcher and releases its watches.
func (t *TreeWatcher) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.closed = true
		close(t.done)
		t.stopLocked()
	}
}

// run follows the kernel's queue until Close or the watcher stops.
func (t *TreeWatcher) run() {
	for {
		select {
		case <-t.done:
			return
		default:
		}
		t.mu.Lock()
		w, closed := t.w, t.closed
		t.mu.Unlock()
		if closed {
			return
		}
		if w == nil {
			if t.lost != nil {
				t.lost()
			}
			return
		}
		w.Wait(500)
		t.pump(w)
	}
}

// pump handles what the queue holds now: new directories are watched,
// gone ones let go, and every change is handed on, each path once.
func (t *TreeWatcher) pump(w *DirWatcher) {
	var events []WatchEvent
	seen := map[string]bool{}
	overflow := false
	w.Drain(func(e WatchEvent) {
		if e.Overflow {
			overflow = true
			return
		}
		if !seen[e.Path] {
			seen[e.Path] = true
			events = append(events, e)
		}
	})
	if len(events) == 0 && !overflow {
		return
	}
	var found []string
	t.mu.Lock()
	if t.w != nil {
		for _, e := range events {
			if t.w == nil {
				break // the watches ran out
			}
			t.lookLocked(e.Path, &found)
		}
		if overflow {
			for r := range t.roots {
				t.rescan[r] = true
			}
		}
		if len(t.rescan) > 0 {
			t.syncLocked()
		}
	}
	t.mu.Unlock()
	if overflow {
		t.changed(WatchEvent{Overflow: true})
	}
	for _, e := range events {
		t.changed(e)
	}
	for _, p := range found {
		if !seen[p] {
			seen[p] = true
			t.changed(WatchEvent{Path: p})
		}
	}
}

// lookLocked acts on a change at p: a directory that is new to the watcher
// is watched (with what is below it), a path that is gone is let go, and an
// ignore file's root is walked again.
func (t *TreeWatcher) lookLocked(p string, found *[]string) {
	root, rel, ok := t.rootOfLocked(p)
	if !ok {
		return
	}
	if slices.Contains(IgnoreFiles, filepath.Base(p)) {
		t.rescan[root] = true
	}
	fi, err := os.Lstat(p)
	if err != nil {
		if t.w.Watching(p) { // a directory deleted or moved away
			t.w.RemoveTree(p)
		}
		return
	}
	if !fi.IsDir() || t.w.Watching(p) || excludedDir(root, rel) {
		return
	}
	if err := t.addTreeLocked(p, found); errors.Is(err, ErrWatchLimit) {
		t.stopLocked()
	}
}

// rootOfLocked returns the watched root holding p (the innermost) and p
// relative to it.
func (t *TreeWatcher) rootOfLocked(p string) (root, rel string, ok bool) {
	for r, err := range t.roots {
		if err != nil {
			continue
		}
		if x, in := Within(r, p); in && (!ok || len(r) > len(root)) {
			root, rel, ok = r, x, true
		}
	}
	return root, rel, ok
}

// excludedDir reports whether the directory at rel (below root) is one the
// walk does not enter: hidden, .git, or ignored.
func excludedDir(root, rel string) bool {
	rel = filepath.ToSlash(rel)
	if rel == "." || rel == "" {
		return false
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	top := root
	if repo := FindRepo(root); repo != "" {
		top = repo
	}
	r, ok := Within(top, filepath.Join(root, filepath.FromSlash(rel)))
	return ok && NewIgnorer(top).Excluded(r, true)
}
