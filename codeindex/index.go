package codeindex

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/internal/hugepages"
	"github.com/agentls/agentls/workspace"
)

// The workspace index: the symbols of every source file of the roots, kept
// current from the editor's overlays and from saves, and the precise Go
// answers of check.go on top of it.
//
//   - Start walks the roots with the shared walker (ignore rules, hidden
//     files, size cap), then extracts each file's outline on a few
//     goroutines, one extractor each; with a Feed (SetFeed: the session's
//     search index) it takes the files, and their contents, from that
//     index's build instead of walking and reading the tree a second
//     time. Go files are read by the fast reader
//     of goscan.go (go/parser, after their function bodies and literals are
//     cut out by stripBodies, when it gives up), and only the symbols are
//     kept, packed (pack.go), not the syntax trees; other languages go
//     through the line-based extractors of lang.go.
//   - The index answers while it builds; every answer says whether it is
//     partial. When the workspace's roots change, the next query starts a
//     rebuild.
//   - Changed queues a file for re-indexing (the overlay watcher calls it on
//     every open and change; the LSP server on saves and watched-file
//     events). A Go change also invalidates the type-checked packages of the
//     workspace.
//   - Positions are 1-based lines and 1-based byte columns, as go/token and
//     grep report them.

// DefaultMaxFiles caps how many files a build indexes (the table keeps
// about 2 MB of packed symbols per 1,000 Go files; GOROOT/src has 5,700).
// Past it the index says it is partial.
const DefaultMaxFiles = 1_000_000

// indexMaxFileBytes is the largest file the index reads.
const indexMaxFileBytes = 2 << 20

// Precision says how an answer was found.
const (
	// PrecisionType: resolved by the type checker.
	PrecisionType = "type"
	// PrecisionName: matched by name only; it may include unrelated symbols
	// that share the name.
	PrecisionName = "name"
)

// Symbol is one declaration of a file's outline.
type Symbol struct {
	Name string `json:"name"`
	// Kind is function, method, struct, interface, type, field, constant,
	// variable, class, enum, module, macro or heading.
	Kind string `json:"kind"`
	// Path is absolute inside the index; tools make it relative.
	Path string `json:"path"`
	// Line and Column locate the name (1-based, byte column).
	Line   int `json:"line"`
	Column int `json:"column"`
	// EndLine is the last line of the whole declaration.
	EndLine int `json:"end_line,omitempty"`
	// EndColumn is the byte column just after the declaration's end.
	EndColumn int `json:"-"`
	// Container is the enclosing declaration: the package of a top-level Go
	// declaration, the receiver type of a method, the type of a field.
	Container string `json:"container"`
	// Detail is a short signature.
	Detail   string   `json:"detail,omitempty"`
	Children []Symbol `json:"children,omitempty"`
}

// Location is a range of a file: 1-based lines and byte columns, the end
// exclusive.
type Location struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line"`
	EndColumn int    `json:"end_column"`
}

// Diagnostic is a problem of a file.
type Diagnostic struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Column    int    `json:"column"`
	EndLine   int    `json:"end_line,omitempty"`
	EndColumn int    `json:"end_column,omitempty"`
	Severity  string `json:"severity"` // error, warning, information
	Message   string `json:"message"`
	Source    string `json:"source"` // go/parser, go/types
}

// Answer is the index's answer to a definition, references or hover query.
type Answer struct {
	Locations []Location
	// Precision is PrecisionType or PrecisionName.
	Precision string
	// Partial: the index was still building, or a search was cut short.
	Partial bool
	// Name and Kind describe the identifier the query resolved.
	Name, Kind string
	// Signature and Doc are hover's: the declaration and its doc comment.
	Signature, Doc string
	// Language of Signature's code (go, python, …).
	Language string
	// Note explains a fallback (why the answer is by name).
	Note string
}

// Status is the state of the index.
type Status struct {
	Building  bool // a build is running
	Complete  bool // a build finished and nothing is queued
	Files     int  // files indexed
	Total     int  // files the running build found (0 while it walks)
	Truncated bool // the build stopped at the file cap
	// Fed is the number of roots the last build took from its Feed
	// (SetFeed) instead of walking them itself.
	Fed int
}

// Index is a workspace index. It is safe for concurrent use.
type Index struct {
	ws *workspace.Workspace
	// MaxFiles caps a build (0: DefaultMaxFiles). Set it before Start.
	MaxFiles int

	mu        sync.RWMutex
	files     map[string]*indexFile // absolute path → outline
	building  bool
	built     bool          // a build finished
	roots     []string      // the roots of the last build
	buildDone chan struct{} // closed when the running build ends
	total     int
	truncated bool

	started   atomic.Bool
	indexed   atomic.Int64
	pendMu    sync.Mutex
	pending   map[string]bool
	kick      chan struct{}
	workerOn  bool
	ctx       context.Context
	cancel    context.CancelFunc
	stopWatch func()

	goc *goChecker
	// feed, when set, is the walk a build takes its files from (SetFeed);
	// fedRoots counts the roots the last build took from it.
	feed     Feed
	fedRoots int
}

// Feed is another index's build of root that the index's build can take
// part in, so that the tree is walked and its files read once for both
// (the session gives the search index's: search.Cache.Feed). It calls file
// with every regular file the walk reports (the walk's rules: ignore
// files, no hidden directory, no symlink followed; files named with a
// leading '.' are reported too) and its content as read, valid only during
// the call (nil when not read: file reads it itself), and skipped with
// each entry the walk left out by its own rules beyond the index's
// (paths.sensitive). Both run on the walk's goroutines, several at a time.
// Feed reports whether the walk covered the whole root; when it did not,
// the build walks the root itself.
type Feed func(ctx context.Context, root string, file func(f *workspace.File, data []byte), skipped func(rel string, isDir bool)) bool

// SetFeed makes the builds take their files from feed (nil: they walk the
// roots themselves). Set it before Start.
func (ix *Index) SetFeed(feed Feed) {
	ix.mu.Lock()
	ix.feed = feed
	ix.mu.Unlock()
}

// New returns an empty index of ws's roots that follows ws's overlays and
// the changes on disk it announces (workspace.Watch). Start builds it; Close
// stops its goroutines and the subscriptions.
func New(ws *workspace.Workspace) *Index {
	ctx, cancel := context.WithCancel(context.Background())
	ix := &Index{
		ws: ws, files: map[string]*indexFile{}, pending: map[string]bool{},
		kick: make(chan struct{}, 1), ctx: ctx, cancel: cancel, buildDone: make(chan struct{}),
	}
	ix.goc = newGoChecker(ix)
	stopBuffers := ws.Overlays.Watch(func(d workspace.Document) { ix.Changed(d.Path) })
	stopDisk := ws.Watch(func(e workspace.Event) {
		if e.Path != "" {
			ix.Changed(e.Path)
		}
	})
	ix.stopWatch = func() { stopBuffers(); stopDisk() }
	return ix
}

// Close stops the index's goroutines. Queries still answer from what was
// indexed.
func (ix *Index) Close() {
	ix.cancel()
	if ix.stopWatch != nil {
		ix.stopWatch()
	}
}

// Start builds the index in the background, once; later calls do nothing and
// return false. report, when set, is called as the build progresses (total
// is 0 while the roots are walked) and once more with done == total at the
// end.
func (ix *Index) Start(report func(done, total int)) bool {
	if !ix.started.CompareAndSwap(false, true) {
		return false
	}
	ix.mu.Lock()
	ix.building = true
	ix.mu.Unlock()
	go ix.build(ix.ctx, ix.ws.Roots(), report)
	return true
}

// syncRoots rebuilds the index in the background when the workspace's roots
// changed since the last build (folders added or removed); the files of
// removed roots leave at once. Queries call it, and answer partially until
// the rebuild is done.
func (ix *Index) syncRoots() {
	if !ix.started.Load() {
		return
	}
	roots := ix.ws.Roots()
	ix.mu.Lock()
	if ix.building || slices.Equal(roots, ix.roots) {
		ix.mu.Unlock()
		return
	}
	ix.building, ix.built, ix.truncated = true, false, false
	ix.buildDone = make(chan struct{})
	for p := range ix.files {
		if !underAny(roots, p) {
			delete(ix.files, p)
		}
	}
	ix.mu.Unlock()
	ix.goc.invalidate()
	go ix.build(ix.ctx, roots, nil)
}

func underAny(roots []string, p string) bool {
	for _, r := range roots {
		if _, ok := workspace.Within(r, p); ok {
			return true
		}
	}
	return false
}

// Wait waits until the first build finished or ctx ends, and reports
// whether the build finished.
func (ix *Index) Wait(ctx context.Context) bool {
	ix.mu.RLock()
	ch := ix.buildDone
	ix.mu.RUnlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// Status returns the state of the index.
func (ix *Index) Status() Status {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	ix.pendMu.Lock()
	queued := len(ix.pending)
	ix.pendMu.Unlock()
	return Status{Building: ix.building, Complete: ix.built && !ix.building && queued == 0,
		Files: len(ix.files), Total: ix.total, Truncated: ix.truncated, Fed: ix.fedRoots}
}

// partial reports whether answers built from the file table are partial.
func (ix *Index) partial() bool {
	ix.syncRoots()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return !ix.built || ix.truncated
}

// build walks the roots and indexes every source file.
func (ix *Index) build(ctx context.Context, roots []string, report func(done, total int)) error {
	ix.mu.Lock()
	ix.roots, ix.total = roots, 0
	ix.mu.Unlock()
	ix.indexed.Store(0)
	// The build's fresh memory in huge pages (internal/hugepages).
	endHuge := hugepages.Build()
	defer func() {
		endHuge()
		ix.mu.Lock()
		ix.building, ix.built = false, true
		done := ix.buildDone
		ix.mu.Unlock()
		n := int(ix.indexed.Load())
		if report != nil {
			report(n, n) // before Wait returns
		}
		close(done)
		// The build's garbage is left to the runtime's scavenger, as
		// the search index's is (search/cache_build.go says why).
	}()
	max := ix.MaxFiles
	if max <= 0 {
		max = DefaultMaxFiles
	}
	// Each file is read and extracted on the walk's goroutines as it is
	// found, through its open directory; the total is known (and
	// reported) when the walk ends.
	var mu sync.Mutex
	found := 0
	lastReport := atomic.Int64{}
	// one extractor a walk goroutine, dropped with the build (a sync.Pool
	// would keep them, file buffers and all, until two collections)
	workers := runtime.GOMAXPROCS(0)
	xs := make([]*extractor, workers)
	for i := range xs {
		xs[i] = &extractor{pk: newPacker()}
	}
	var spareMu sync.Mutex
	spare := &extractor{pk: newPacker()} // for a feed's worker beyond xs
	// visit indexes a file the walk found, with its content when the walk
	// read it.
	visit := func(f *workspace.File, data []byte, fed bool) error {
		if !f.IsRegular() || languageOf(f.Name) == "" {
			return nil
		}
		mu.Lock()
		full := found >= max
		if !full {
			found++
		}
		mu.Unlock()
		if full {
			return errIndexFull
		}
		var ok bool
		if f.Worker < len(xs) {
			ok = xs[f.Worker].index(ix, f, data, fed)
		} else {
			spareMu.Lock()
			ok = spare.index(ix, f, data, fed)
			spareMu.Unlock()
		}
		if !ok {
			return nil
		}
		n := ix.indexed.Add(1)
		if report != nil {
			now := time.Now().UnixMilli()
			if last := lastReport.Load(); now-last >= 200 && lastReport.CompareAndSwap(last, now) {
				report(int(n), 0)
			}
		}
		return nil
	}
	ix.mu.Lock()
	feed := ix.feed
	ix.fedRoots = 0
	ix.mu.Unlock()
	for _, root := range roots {
		var err error
		if feed != nil && ix.fed(ctx, feed, root, visit, &found, &mu) {
			ix.mu.Lock()
			ix.fedRoots++
			ix.mu.Unlock()
		} else {
			_, err = workspace.Walk(ctx, root, workspace.WalkOptions{MaxFileBytes: indexMaxFileBytes, ReadContent: true, Prune: pruneIndexDir, Workers: workers},
				func(f *workspace.File) error { return visit(f, nil, false) })
		}
		if errors.Is(err, errIndexFull) {
			ix.mu.Lock()
			ix.truncated = true
			ix.mu.Unlock()
			break
		} else if err != nil && ctx.Err() != nil {
			return err
		}
	}
	ix.mu.Lock()
	ix.total = found
	ix.mu.Unlock()
	return ctx.Err()
}

var errIndexFull = errors.New("index: file cap reached")

// fed indexes root's files from feed and reports whether that covered the
// root as the index's own walk would: the walk was whole, and left out no
// entry (a sensitive one) that the index's walk would have taken. The
// files come as the index's walk (pruneIndexDir, no hidden file) would
// give them. When it did not, the files and the count of the ones handed
// so far are taken back (found, under mu), and the caller walks the root.
func (ix *Index) fed(ctx context.Context, feed Feed, root string, visit func(*workspace.File, []byte, bool) error, found *int, mu *sync.Mutex) bool {
	mu.Lock()
	found0 := *found
	mu.Unlock()
	indexed0 := ix.indexed.Load()
	var missed atomic.Bool
	whole := feed(ctx, root, func(f *workspace.File, data []byte) {
		if f.Name == "" || f.Name[0] == '.' || !prunedPathOK(f.Rel) {
			return
		}
		if visit(f, data, true) != nil {
			missed.Store(true) // the cap: the caller's walk says so
		}
	}, func(rel string, isDir bool) {
		name := path.Base(rel)
		if strings.HasPrefix(name, ".") || !prunedPathOK(rel) {
			return // the index's walk leaves it out too
		}
		if isDir || languageOf(name) != "" {
			missed.Store(true)
		}
	})
	if whole && !missed.Load() {
		return true
	}
	mu.Lock()
	*found = found0
	mu.Unlock()
	ix.indexed.Store(indexed0)
	return false
}

// prunedPathOK reports whether no directory of rel (a file's path relative
// to its root) is one pruneIndexDir prunes.
func prunedPathOK(rel string) bool {
	for dir := path.Dir(rel); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if !pruneIndexDir(dir) {
			return false
		}
	}
	return true
}

// extractor indexes files, on one goroutine at a time: its buffer and
// packer are reused from file to file.
type extractor struct {
	buf []byte
	pk  *packer
	gs  goScanner
}

// index reads a file found by the walk (its overlay when it is open) and
// stores its outline; false when the file could not be read as text.
// fed says f comes from a Feed's walk, and data, when not nil, is its
// content as that walk read it.
func (x *extractor) index(ix *Index, f *workspace.File, data []byte, fed bool) bool {
	var src []byte
	if d, ok := ix.ws.Overlays.Get(f.Path); ok {
		src = []byte(d.Text)
	} else if data != nil {
		if len(data) > indexMaxFileBytes || workspace.IsBinary(data) {
			return false
		}
		src = data
	} else {
		data, err := f.Read(x.buf)
		if fed && errors.Is(err, workspace.ErrTooLarge) {
			// the feed's walk's cap may be below the index's
			data, err = ix.ws.ReadLimited(f.Path, x.buf, indexMaxFileBytes)
		}
		if err != nil || len(data) > indexMaxFileBytes || workspace.IsBinary(data) {
			return false
		}
		x.buf, src = data[:0], data
	}
	if Language(f.Path) == "go" && x.gs.withSymbols(f.Path, src, true, func(syms []Symbol) {
		ix.store(f.Path, x.pk.pack("go", syms))
	}) {
		return true // packed from the fast reader's buffers, not copied first
	}
	ix.store(f.Path, x.pk.pack(outline(f.Path, src)))
	return true
}

func (ix *Index) store(p string, f *indexFile) {
	ix.mu.Lock()
	if f == nil {
		delete(ix.files, p)
	} else {
		ix.files[p] = f
	}
	ix.mu.Unlock()
}

// extract returns the packed outline of a file, or nil for a language the
// index does not know.
func extract(p string, src []byte) *indexFile {
	return packFile(outline(p, src))
}

// outline returns the language and the outline of a file ("" for a
// language the index does not know).
func outline(p string, src []byte) (lang string, syms []Symbol) {
	lang = languageOf(filepath.Base(p))
	defer func() {
		if recover() != nil {
			// an extractor failed on strange input: index the file empty
			// rather than lose the process
			syms = nil
		}
	}()
	switch lang {
	case "":
		return "", nil
	case "go":
		syms = goSymbols(p, src)
	default:
		syms = langSymbols(lang, p, src)
	}
	return lang, syms
}

func countSymbols(syms []Symbol) int {
	n := len(syms)
	for _, s := range syms {
		n += countSymbols(s.Children)
	}
	return n
}

// pruneIndexDir skips the directories no index wants: dependencies and test
// fixtures. Build outputs (target, dist) are left to the ignore files,
// since a package may be named build.
func pruneIndexDir(rel string) bool {
	switch path.Base(rel) {
	case "node_modules", "vendor", "testdata", "__pycache__":
		return rel == "" // never prune the root itself
	}
	return true
}

// Changed queues path for re-indexing: its overlay, its file on disk, or its
// removal. It never blocks.
func (ix *Index) Changed(p string) {
	if strings.HasSuffix(p, ".go") || filepath.Base(p) == "go.mod" {
		ix.goc.invalidate()
	}
	if languageOf(filepath.Base(p)) == "" {
		return
	}
	ix.pendMu.Lock()
	ix.pending[p] = true
	start := !ix.workerOn
	ix.workerOn = true
	ix.pendMu.Unlock()
	if start {
		go ix.updater()
	}
	select {
	case ix.kick <- struct{}{}:
	default:
	}
}

// updater re-indexes queued files, a little after the last change.
func (ix *Index) updater() {
	for {
		select {
		case <-ix.ctx.Done():
			return
		case <-ix.kick:
		}
		select { // debounce bursts of keystrokes
		case <-ix.ctx.Done():
			return
		case <-time.After(30 * time.Millisecond):
		}
		ix.Flush()
	}
}

// Flush re-indexes the queued files now.
func (ix *Index) Flush() {
	ix.pendMu.Lock()
	ps := make([]string, 0, len(ix.pending))
	for p := range ix.pending {
		ps = append(ps, p)
	}
	clear(ix.pending)
	ix.pendMu.Unlock()
	for _, p := range ps {
		ix.Update(p)
	}
}

// Update re-indexes one file now: from its overlay when it is open, from the
// disk otherwise; a file that is gone leaves the index.
func (ix *Index) Update(p string) {
	if strings.HasSuffix(p, ".go") {
		ix.goc.invalidate()
	}
	if !ix.inRoots(p) {
		ix.store(p, nil) // a file outside the roots, opened in the editor
		return
	}
	if d, ok := ix.ws.Overlays.Get(p); ok {
		ix.store(p, extract(p, []byte(d.Text)))
		return
	}
	data, err := ix.ws.ReadLimited(p, nil, indexMaxFileBytes)
	if err != nil || workspace.IsBinary(data) {
		ix.store(p, nil)
		return
	}
	ix.store(p, extract(p, data))
}

func (ix *Index) inRoots(p string) bool { return underAny(ix.ws.Roots(), p) }

// Outline returns the symbols of one file, nested. It reads the file again
// (its overlay or the disk), so the answer is current even when the file
// changed without a notification, and refreshes the index with it.
func (ix *Index) Outline(p string) ([]Symbol, error) {
	if languageOf(filepath.Base(p)) == "" {
		return nil, fmt.Errorf("%s: no symbol extractor for this kind of file", filepath.Base(p))
	}
	src, err := ix.ws.ReadFile(p)
	if err != nil {
		return nil, err
	}
	lang, syms := outline(p, src)
	if ix.inRoots(p) {
		ix.store(p, packFile(lang, syms))
	}
	return syms, nil
}

// Language returns the index's language name for a path ("" when unknown).
func Language(p string) string { return languageOf(filepath.Base(p)) }

// readSource reads a file as the tools see it: the overlay or the disk.
func (ix *Index) readSource(p string) ([]byte, error) {
	if d, ok := ix.ws.Overlays.Get(p); ok {
		return []byte(d.Text), nil
	}
	return ix.ws.ReadFile(p)
}
