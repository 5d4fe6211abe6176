package workspace

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

// Watch calls f with every Event until stop is called. f must not block
// for long; it runs on the goroutine that announced the change.
func (w *Workspace) Watch(f func(Event)) (stop func()) { return w.events.Add(f) }

// Changed announces that the file at the absolute path changed on disk.
func (w *Workspace) Changed(path string) { w.announce(Event{Path: path}) }

func (w *Workspace) announce(ch Event) {
	w.sensitiveEvent(ch)
	w.events.Notify(ch)
}
