package codeindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/workspace"
)

// The workspace index: the symbols of every source file of the roots, kept
// current from the editor's overlays and from saves, and the precise Go
// answers of index_check.go on top of it.
//
//   - Start walks the roots with the shared walker (ignore rules, hidden
//     files, size cap), then extracts each file's outline on a few
//     goroutines. Go files are parsed with go/parser after their function
//     bodies and literals are cut out (stripBodies), and only the symbols
//     are kept, not the syntax trees; other languages go through the
//     line-based extractors of index_lang.go.
//   - The index answers while it builds; every answer says whether it is
//     partial. When the workspace's roots change, the next query starts a
//     rebuild.
//   - Changed queues a file for re-indexing (the overlay watcher calls it on
//     every open and change; the LSP server on saves and watched-file
//     events). A Go change also invalidates the type-checked packages of the
//     workspace.
//   - Positions are 1-based lines and 1-based byte columns, as go/token and
//     grep report them.

// DefaultMaxFiles caps how many files a build indexes (about 10 MB of
// symbols per 1,000 Go files at most; GOROOT/src has 5,700). Past it the
// index says it is partial.
const DefaultMaxFiles = 50_000

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
}

type indexFile struct {
	lang    string
	symbols []Symbol
	nsyms   int // number of symbols, children included
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
}

// NewIndex returns an empty index of ws's roots that follows ws's overlays.
// Start builds it; Close stops its goroutines.
func New(ws *workspace.Workspace) *Index {
	ctx, cancel := context.WithCancel(context.Background())
	ix := &Index{
		ws: ws, files: map[string]*indexFile{}, pending: map[string]bool{},
		kick: make(chan struct{}, 1), ctx: ctx, cancel: cancel, buildDone: make(chan struct{}),
	}
	ix.goc = newGoChecker(ix)
	ix.stopWatch = ws.Overlays.Watch(func(d workspace.Document) { ix.Changed(d.Path) })
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
		Files: len(ix.files), Total: ix.total, Truncated: ix.truncated}
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
	ix.roots = roots
	ix.mu.Unlock()
	ix.indexed.Store(0)
	defer func() {
		ix.mu.Lock()
		ix.building, ix.built = false, true
		done := ix.buildDone
		ix.mu.Unlock()
		if report != nil {
			n := int(ix.indexed.Load())
			report(n, n) // before Wait returns
		}
		close(done)
	}()
	max := ix.MaxFiles
	if max <= 0 {
		max = DefaultMaxFiles
	}
	// Walk first (fast), then extract in parallel with known totals.
	var paths []string
	var mu sync.Mutex
	for _, root := range roots {
		_, err := workspace.Walk(ctx, root, workspace.WalkOptions{MaxFileBytes: indexMaxFileBytes, Prune: pruneIndexDir},
			func(f *workspace.File) error {
				if !f.IsRegular() || languageOf(f.Name) == "" {
					return nil
				}
				mu.Lock()
				defer mu.Unlock()
				if len(paths) >= max {
					return errIndexFull
				}
				paths = append(paths, f.Path)
				return nil
			})
		if errors.Is(err, errIndexFull) {
			ix.mu.Lock()
			ix.truncated = true
			ix.mu.Unlock()
		} else if err != nil && ctx.Err() != nil {
			return err
		}
	}
	ix.mu.Lock()
	ix.total = len(paths)
	ix.mu.Unlock()
	if report != nil {
		report(0, len(paths))
	}
	return ix.indexPaths(ctx, paths, report)
}

var errIndexFull = errors.New("index: file cap reached")

// indexPaths extracts the symbols of paths on GOMAXPROCS goroutines.
func (ix *Index) indexPaths(ctx context.Context, paths []string, report func(done, total int)) error {
	workers := max(1, min(4, runtimeProcs()))
	next := atomic.Int64{}
	var wg sync.WaitGroup
	lastReport := atomic.Int64{}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				i := int(next.Add(1)) - 1
				if i >= len(paths) || ctx.Err() != nil {
					return
				}
				p := paths[i]
				var src []byte
				if d, ok := ix.ws.Overlays.Get(p); ok {
					src = []byte(d.Text)
				} else {
					data, err := ix.ws.ReadLimited(p, buf, indexMaxFileBytes)
					if err != nil || workspace.IsBinary(data) {
						continue
					}
					buf, src = data[:0], data
				}
				ix.store(p, extract(p, src))
				n := ix.indexed.Add(1)
				if report != nil {
					now := time.Now().UnixMilli()
					if last := lastReport.Load(); now-last >= 200 && lastReport.CompareAndSwap(last, now) {
						report(int(n), len(paths))
					}
				}
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
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

// extract returns the outline of a file, or nil for a language the index
// does not know.
func extract(p string, src []byte) (f *indexFile) {
	lang := languageOf(filepath.Base(p))
	defer func() {
		if recover() != nil {
			// an extractor failed on strange input: index the file empty
			// rather than lose the process
			f = &indexFile{lang: lang}
		}
	}()
	var syms []Symbol
	switch lang {
	case "":
		return nil
	case "go":
		syms = goSymbols(p, src)
	default:
		syms = langSymbols(lang, p, src)
	}
	return &indexFile{lang: lang, symbols: syms, nsyms: countSymbols(syms)}
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
	f := extract(p, src)
	if ix.inRoots(p) {
		ix.store(p, f)
	}
	return f.symbols, nil
}

// Language returns the index's language name for a path ("" when unknown).
func Language(p string) string { return languageOf(filepath.Base(p)) }

// scored is a search hit: a symbol of the table (never modified in place,
// so it may be read after the lock is released) and its score.
type scored struct {
	sym   *Symbol
	score int
}

// better orders hits: higher scores, then shorter paths, then by place.
func better(a, b scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if len(a.sym.Path) != len(b.sym.Path) {
		return len(a.sym.Path) < len(b.sym.Path)
	}
	if a.sym.Path != b.sym.Path {
		return a.sym.Path < b.sym.Path
	}
	return a.sym.Line < b.sym.Line
}

// topK keeps the k best hits in a heap whose root is the worst of them.
type topK struct {
	k    int
	hits []scored
}

func (t *topK) add(h scored) {
	if len(t.hits) < t.k {
		t.hits = append(t.hits, h)
		for i := len(t.hits) - 1; i > 0; {
			parent := (i - 1) / 2
			if !better(t.hits[parent], t.hits[i]) {
				break
			}
			t.hits[parent], t.hits[i] = t.hits[i], t.hits[parent]
			i = parent
		}
		return
	}
	if !better(h, t.hits[0]) {
		return
	}
	t.hits[0] = h
	for i := 0; ; {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(t.hits) && better(t.hits[worst], t.hits[l]) {
			worst = l
		}
		if r < len(t.hits) && better(t.hits[worst], t.hits[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		t.hits[i], t.hits[worst] = t.hits[worst], t.hits[i]
		i = worst
	}
}

// Search finds symbols whose name matches query fuzzily, best first: exact
// matches, then case-insensitive ones, prefixes, substrings and
// subsequences; exported and shallower declarations first among equals. A
// query "pkg.Name" or "Type.Method" also matches the container. It returns
// at most limit symbols (without children) and whether the answer is
// partial.
func (ix *Index) Search(query string, limit int) ([]Symbol, bool) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, ix.partial()
	}
	if limit <= 0 {
		limit = 100
	}
	container, name := "", query
	if i := strings.LastIndexByte(query, '.'); i > 0 && i < len(query)-1 {
		container, name = query[:i], query[i+1:]
	}
	m := newMatcher(name)
	top := &topK{k: limit}
	ix.syncRoots()
	ix.mu.RLock()
	for p, f := range ix.files {
		penalty := 0
		if strings.Contains(p, "/internal/") || strings.HasSuffix(p, "_test.go") {
			penalty = 4
		}
		var walk func(syms []Symbol, depth int)
		walk = func(syms []Symbol, depth int) {
			for i := range syms {
				s := &syms[i]
				if sc := m.score(s.Name); sc > 0 {
					if container != "" {
						c := containerScore(container, s.Container, p)
						if c == 0 {
							goto children
						}
						sc += c
					}
					sc -= depth*3 + penalty
					if s.Kind == "field" || s.Kind == "variable" || s.Kind == "constant" {
						sc -= 2
					}
					top.add(scored{s, sc})
				}
			children:
				walk(s.Children, depth+1)
			}
		}
		walk(f.symbols, 0)
	}
	ix.mu.RUnlock()
	hits := top.hits
	sort.Slice(hits, func(i, j int) bool { return better(hits[i], hits[j]) })
	out := make([]Symbol, len(hits))
	for i, h := range hits {
		out[i] = *h.sym
		out[i].Children = nil
	}
	return out, ix.partial()
}

// containerScore matches the qualifier of a query: the symbol's container
// or the name of its file's directory (a Go package's path element).
func containerScore(q, container, p string) int {
	if i := strings.LastIndexByte(q, '.'); i > 0 {
		// pkg.Type.Method: the type is the container, pkg the directory
		c := containerScore(q[i+1:], container, p)
		if c == 0 || containerScore(q[:i], "", p) == 0 {
			return 0
		}
		return c + 5
	}
	switch {
	case q == container, q == "*"+container:
		return 20
	case strings.EqualFold(q, container):
		return 15
	case q == filepath.Base(filepath.Dir(p)) || strings.HasSuffix(filepath.ToSlash(filepath.Dir(p)), "/"+q):
		return 12
	}
	return 0
}

// matcher scores names against a fuzzy query.
type matcher struct {
	q, lower string
	lb       []byte // lower as bytes
}

func newMatcher(q string) matcher {
	l := strings.ToLower(q)
	return matcher{q: q, lower: l, lb: []byte(l)}
}

// lowerASCII lowers the ASCII letters of s into buf.
func lowerASCII(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

// initials returns the lowered first letters of a name's words (camel
// humps and _-separated parts): "nr" for NewReader, "rf" for read_file.
func initials(name string, buf []byte) string {
	for i := 0; i < len(name); i++ {
		c := name[i]
		start := i == 0 && c != '_' ||
			c >= 'A' && c <= 'Z' && (i == 0 || name[i-1] < 'A' || name[i-1] > 'Z') ||
			i > 0 && name[i-1] == '_' && c != '_'
		if start {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf = append(buf, c)
		}
	}
	return string(buf)
}

// score is 0 for no match, higher for better ones.
func (m matcher) score(name string) int {
	if len(name) < len(m.q) {
		return 0
	}
	if name == m.q {
		return 100
	}
	var buf [128]byte
	lname := lowerASCII(buf[:0], name)
	lq := m.lower
	extra := min(len(name)-len(m.q), 20)
	switch {
	case string(lname) == lq:
		return 90
	case strings.HasPrefix(name, m.q):
		return 80 - extra
	case bytes.HasPrefix(lname, m.lb):
		return 70 - extra
	case len(lq) >= 2 && initials(name, lname[len(lname):]) == lq:
		return 75 - extra/4 // NR for NewReader
	case strings.Contains(name, m.q):
		return 60 - extra
	case bytes.Contains(lname, m.lb):
		return 50 - extra
	}
	// subsequence, favouring matches at word starts (camel humps, _)
	j, bonus := 0, 0
	for i := 0; i < len(lname) && j < len(lq); i++ {
		if lname[i] == lq[j] {
			if i == 0 || name[i] >= 'A' && name[i] <= 'Z' || name[i-1] == '_' {
				bonus++
			}
			j++
		}
	}
	if j < len(lq) {
		return 0
	}
	return max(1, 20+bonus*2-min(len(name)-len(m.q), 18))
}

// family groups languages whose files refer to each other's names: C and
// C++ (headers), JavaScript and TypeScript.
func family(lang string) string {
	switch lang {
	case "cpp":
		return "c"
	case "typescript":
		return "javascript"
	}
	return lang
}

// filesOf lists the indexed files of a language (or of its family), sorted.
func (ix *Index) filesOf(lang string) []string {
	ix.syncRoots()
	ix.mu.RLock()
	out := make([]string, 0, len(ix.files))
	for p, f := range ix.files {
		if lang == "" || family(f.lang) == family(lang) {
			out = append(out, p)
		}
	}
	ix.mu.RUnlock()
	sort.Strings(out)
	return out
}

// SymbolsNamed returns the symbols (children included) named exactly name,
// those of path's file first, then of its language.
func (ix *Index) SymbolsNamed(name, near string) []Symbol {
	lang := Language(near)
	var same, langs, others []Symbol
	ix.syncRoots()
	ix.mu.RLock()
	for p, f := range ix.files {
		var walk func([]Symbol)
		walk = func(syms []Symbol) {
			for _, s := range syms {
				if s.Name == name {
					s.Children = nil
					switch {
					case p == near:
						same = append(same, s)
					case family(f.lang) == family(lang):
						langs = append(langs, s)
					default:
						others = append(others, s)
					}
				}
				walk(s.Children)
			}
		}
		walk(f.symbols)
	}
	ix.mu.RUnlock()
	for _, l := range [][]Symbol{same, langs, others} {
		sort.Slice(l, func(i, j int) bool {
			if l[i].Path != l[j].Path {
				return l[i].Path < l[j].Path
			}
			return l[i].Line < l[j].Line
		})
	}
	return append(append(same, langs...), others...)
}

// readSource reads a file as the tools see it: the overlay or the disk.
func (ix *Index) readSource(p string) ([]byte, error) {
	if d, ok := ix.ws.Overlays.Get(p); ok {
		return []byte(d.Text), nil
	}
	return ix.ws.ReadFile(p)
}
