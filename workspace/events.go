package workspace

import (
	"maps"
	"slices"
	"sync"
)

// An Event is news of the workspace that the session's services follow (the
// code index, the search cache): a file changed on disk, or everything may
// have changed. Changes to open buffers travel through Overlays.Watch.
type Event struct {
	// Path is the absolute path of a file that changed on disk (saved,
	// reported by the editor's watcher, written by a tool); "" with Reset.
	Path string
	// Reset says that the roots or the configuration changed: what a
	// service derived from the files or the rules may all be stale.
	Reset bool
}

// watchers are the functions registered to hear of changes of type T.
// The zero value has none; it is safe for concurrent use.
type watchers[T any] struct {
	mu      sync.Mutex
	nextID  int
	watches map[int]func(T)
}

// add registers f until stop is called.
func (c *watchers[T]) add(f func(T)) (stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watches == nil {
		c.watches = map[int]func(T){}
	}
	id := c.nextID
	c.nextID++
	c.watches[id] = f
	return func() {
		c.mu.Lock()
		delete(c.watches, id)
		c.mu.Unlock()
	}
}

// notify calls every registered function with ch, outside the lock, on
// the caller's goroutine.
func (c *watchers[T]) notify(ch T) {
	c.mu.Lock()
	fs := slices.Collect(maps.Values(c.watches))
	c.mu.Unlock()
	for _, f := range fs {
		f(ch)
	}
}

// Watch calls f with every Event until stop is called. f must not block
// for long; it runs on the goroutine that announced the change.
func (w *Workspace) Watch(f func(Event)) (stop func()) { return w.events.add(f) }

// Changed announces that the file at the absolute path changed on disk.
func (w *Workspace) Changed(path string) { w.announce(Event{Path: path}) }

func (w *Workspace) announce(ch Event) {
	w.sensitiveEvent(ch)
	w.events.notify(ch)
}
