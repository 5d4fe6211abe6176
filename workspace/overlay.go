package workspace

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/agentls/agentls/internal/watch"
)

// Document is the editor's view of an open file.
type Document struct {
	URI        string
	Path       string // absolute, cleaned
	LanguageID string
	Version    int32
	Text       string
	// Closed is set in the Document a watcher gets when the editor closed
	// it: tools read the disk again.
	Closed bool
}

// Change is one content change of textDocument/didChange: a replacement of
// Range, or of the whole text when Range is nil.
type Change struct {
	Range *Range `json:"range,omitempty"`
	Text  string `json:"text"`
}

// Overlays holds the documents open in the editor, keyed by path. Tools read
// an open document from here instead of the disk.
type Overlays struct {
	mu       sync.RWMutex
	docs     map[string]*Document
	watchers watch.Set[Document]
}

// NewOverlays returns an empty store.
func NewOverlays() *Overlays {
	return &Overlays{docs: map[string]*Document{}}
}

// Open records a document the editor opened.
func (o *Overlays) Open(d Document) {
	o.mu.Lock()
	o.docs[d.Path] = &d
	o.mu.Unlock()
	o.notify(d)
}

// Change applies content changes in order and records the client's version.
// A change to a document that is not open is an error.
func (o *Overlays) Change(path string, version int32, changes []Change) error {
	o.mu.Lock()
	d, ok := o.docs[path]
	if !ok {
		o.mu.Unlock()
		return fmt.Errorf("change to %s, which is not open", path)
	}
	text := d.Text
	for i, c := range changes {
		if c.Range == nil {
			text = c.Text
			continue
		}
		start, err := Offset(text, c.Range.Start)
		if err != nil {
			o.mu.Unlock()
			return fmt.Errorf("change %d to %s: %w", i, path, err)
		}
		end, err := Offset(text, c.Range.End)
		if err != nil {
			o.mu.Unlock()
			return fmt.Errorf("change %d to %s: %w", i, path, err)
		}
		if end < start {
			o.mu.Unlock()
			return fmt.Errorf("change %d to %s: range ends before it starts", i, path)
		}
		text = text[:start] + c.Text + text[end:]
	}
	nd := *d
	nd.Text, nd.Version = text, version
	o.docs[path] = &nd
	o.mu.Unlock()
	o.notify(nd)
	return nil
}

// Close forgets a document; tools read the disk again. Watchers get a
// Document with only Path and Closed set.
func (o *Overlays) Close(path string) {
	o.mu.Lock()
	_, open := o.docs[path]
	delete(o.docs, path)
	o.mu.Unlock()
	if open {
		o.notify(Document{Path: path, Closed: true})
	}
}

// Get returns the open document at path.
func (o *Overlays) Get(path string) (Document, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	d, ok := o.docs[path]
	if !ok {
		return Document{}, false
	}
	return *d, true
}

// Paths lists the open documents' paths.
func (o *Overlays) Paths() []string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return slices.Collect(maps.Keys(o.docs))
}

// Watch calls f after every open, change or close, with the new document. f must
// not block; it runs on the caller's goroutine, outside the store's lock.
func (o *Overlays) Watch(f func(Document)) (stop func()) { return o.watchers.Add(f) }

func (o *Overlays) notify(d Document) { o.watchers.Notify(d) }
