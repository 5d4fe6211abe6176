package workspace

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"io"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/tools/go/ast/astutil"
)

// The precise Go half of the index: packages type-checked from source with
// go/types, the workspace's own files read through the overlays.
//
// Imports are resolved without the go command where possible: a path of the
// importing file's module maps to a directory of that module, a standard
// library path to GOROOT/src (or its vendor directory); anything else asks
// go/build, which runs `go list` for module dependencies. Imported packages
// are checked without function bodies and cached (only their *types.Package
// is kept); a change to a Go file of the workspace drops the workspace's
// packages, while the standard library and module dependencies stay. The
// package a query is about is checked fully, with its test files, and the
// last few such checks are kept with their syntax and type information.
//
// Objects are compared by the position of their declaration (file, line
// and column), so a reference found in a package checked separately still
// matches. Imported packages are parsed without their function bodies, and
// the packages a references query visits without the bodies that do not
// mention the name; the removal keeps every line and column in place.

// goChecker type-checks Go packages for the index. Its methods serialise on
// mu: one check at a time, sharing the cache.
type goChecker struct {
	ix    *Index
	dirty atomic.Bool // a workspace Go file changed since the last check

	mu    sync.Mutex
	fset  *token.FileSet
	ctxt  build.Context // reads through the overlays
	plain build.Context // the default context, for go list lookups
	deps  map[string]*goDep
	dirs  map[string]string // module dir + "\x00" + import path → package dir
	mods  map[string]goModule
	units []*goUnit // most recent first

	// depStrip prepares the source of imported packages (stripFuncBodies;
	// tests compare with nil, the whole source).
	depStrip func([]byte) []byte
}

// inWorkspace reports whether dir is inside one of the roots.
func (g *goChecker) inWorkspace(dir string) bool { return underAny(g.ix.ws.Roots(), dir) }

type goDep struct {
	pkg    *types.Package
	err    error
	busy   bool   // being checked: an import cycle
	stamps stamps // of a workspace package: its directory and files
}

// stamp tells whether a file changed: its overlay's version, or its size
// and modification time on disk.
type stamp struct {
	open      bool
	version   int32
	size, mod int64
}

// stamps are the stamps of a package's directory and files.
type stamps map[string]stamp

func (g *goChecker) stampOf(p string) stamp {
	if d, ok := g.ix.ws.Overlays.Get(p); ok {
		return stamp{open: true, version: d.Version}
	}
	fi, err := g.ix.ws.StatAny(p)
	if err != nil {
		return stamp{size: -1}
	}
	return stamp{size: fi.Size(), mod: fi.ModTime().UnixNano()}
}

func (g *goChecker) stampsOf(dir string, paths []string) stamps {
	s := stamps{dir: g.stampOf(dir)}
	for _, p := range paths {
		s[p] = g.stampOf(p)
	}
	return s
}

// fresh reports whether nothing stamped changed (a file written to disk
// behind the editor's back, or a file added to the directory).
func (g *goChecker) fresh(s stamps) bool {
	for p, st := range s {
		if g.stampOf(p) != st {
			return false
		}
	}
	return true
}

type goModule struct{ dir, path string }

// goUnit is a fully checked package: its files, types and errors.
type goUnit struct {
	key    string
	dir    string
	pkg    *types.Package
	info   *types.Info
	files  []*ast.File
	names  []string // the files' paths, parallel to files
	diags  []Diagnostic
	stamps stamps
}

const maxUnits = 4

// ReferencesBudget bounds the time one references query spends checking
// packages; the answer is partial past it.
var ReferencesBudget = 30 * time.Second

func newGoChecker(ix *Index) *goChecker {
	g := &goChecker{ix: ix, depStrip: stripFuncBodies}
	g.reset()
	return g
}

func (g *goChecker) reset() {
	g.fset = token.NewFileSet()
	g.plain = build.Default
	g.ctxt = build.Default
	g.ctxt.OpenFile = func(p string) (io.ReadCloser, error) {
		if d, ok := g.ix.ws.Overlays.Get(p); ok {
			return io.NopCloser(strings.NewReader(d.Text)), nil
		}
		return g.ix.ws.OpenAny(p)
	}
	g.deps = map[string]*goDep{}
	g.dirs = map[string]string{}
	g.mods = map[string]goModule{}
	g.units = nil
}

// invalidate records that a workspace Go file changed.
func (g *goChecker) invalidate() { g.dirty.Store(true) }

// refresh drops what a change may have made stale. Called with mu held.
func (g *goChecker) refresh() {
	if !g.dirty.Load() {
		// files written behind the editor's back have no notification
		for _, d := range g.deps {
			if d.stamps != nil && !g.fresh(d.stamps) {
				g.dirty.Store(true)
				break
			}
		}
		for _, u := range g.units {
			if !g.fresh(u.stamps) {
				g.dirty.Store(true)
				break
			}
		}
	}
	if !g.dirty.Swap(false) {
		return
	}
	g.units = nil
	for dir := range g.deps {
		if g.inWorkspace(dir) {
			delete(g.deps, dir)
		}
	}
	clear(g.mods)
	clear(g.dirs)
	// The file set only grows; start afresh once it is large.
	if g.fset.Base() > 1<<30 {
		g.reset()
	}
}

// moduleOf returns the module holding dir (the nearest go.mod above it).
func (g *goChecker) moduleOf(dir string) goModule {
	if m, ok := g.mods[dir]; ok {
		return m
	}
	var m goModule
	if data, err := g.readFile(filepath.Join(dir, "go.mod")); err == nil {
		m = goModule{dir: dir, path: modulePath(data)}
	} else if parent := filepath.Dir(dir); parent != dir {
		m = g.moduleOf(parent)
	}
	g.mods[dir] = m
	return m
}

// modulePath reads the module directive of a go.mod file.
func modulePath(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

func (g *goChecker) readFile(p string) ([]byte, error) {
	if d, ok := g.ix.ws.Overlays.Get(p); ok {
		return []byte(d.Text), nil
	}
	return g.ix.ws.ReadDiskAny(p)
}

func (g *goChecker) isDir(p string) bool {
	fi, err := g.ix.ws.StatAny(p)
	return err == nil && fi.IsDir()
}

// findDir resolves an import path seen in srcDir to a package directory.
func (g *goChecker) findDir(path, srcDir string) (string, error) {
	m := g.moduleOf(srcDir)
	key := m.dir + "\x00" + path
	if d, ok := g.dirs[key]; ok {
		return d, nil
	}
	d, err := g.lookDir(m, path, srcDir)
	if err == nil {
		g.dirs[key] = d
	}
	return d, err
}

func (g *goChecker) lookDir(m goModule, path, srcDir string) (string, error) {
	if m.path != "" && m.path != "std" && (path == m.path || strings.HasPrefix(path, m.path+"/")) {
		return filepath.Join(m.dir, filepath.FromSlash(strings.TrimPrefix(path, m.path))), nil
	}
	goroot := filepath.Join(g.plain.GOROOT, "src")
	first, _, _ := strings.Cut(path, "/")
	if !strings.Contains(first, ".") {
		if d := filepath.Join(goroot, filepath.FromSlash(path)); g.isDir(d) {
			return d, nil
		}
	} else if _, ok := within(goroot, srcDir); ok {
		for _, v := range []string{filepath.Join(goroot, "cmd", "vendor"), filepath.Join(goroot, "vendor")} {
			if _, in := within(filepath.Dir(v), srcDir); !in {
				continue
			}
			if d := filepath.Join(v, filepath.FromSlash(path)); g.isDir(d) {
				return d, nil
			}
		}
	}
	bp, err := g.plain.Import(path, srcDir, build.FindOnly)
	if err != nil {
		return "", fmt.Errorf("cannot find package %q: %w", path, err)
	}
	return bp.Dir, nil
}

// packageFiles lists the Go files of the package in dir that the build
// would use: non-test files, plus the package's own test files (tests) or
// only its external test files (xtest).
func (g *goChecker) packageFiles(dir string, variant string) []string {
	seen := map[string]bool{}
	var names []string
	if ents, err := g.ix.ws.ReadDirAny(dir); err == nil {
		for _, e := range ents {
			if !e.IsDir() {
				names = append(names, e.Name())
				seen[e.Name()] = true
			}
		}
	}
	for _, p := range g.ix.ws.Overlays.Paths() {
		if filepath.Dir(p) == dir && !seen[filepath.Base(p)] {
			names = append(names, filepath.Base(p))
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		if !strings.HasSuffix(n, ".go") || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
			continue
		}
		test := strings.HasSuffix(n, "_test.go")
		if test && variant == "" {
			continue
		}
		if ok, err := g.ctxt.MatchFile(dir, n); err != nil || !ok {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	return out
}

// parse parses files, keeping those of the package name most of them
// declare (or of want, when set). Parse errors become diagnostics.
//
// strip, when set, may remove function bodies first (see stripBlocks).
func (g *goChecker) parse(paths []string, mode parser.Mode, want func(name string, test bool) bool, strip func(src []byte) []byte) ([]*ast.File, []string, []Diagnostic) {
	type parsed struct {
		f     *ast.File
		diags []Diagnostic
	}
	results := make([]parsed, len(paths))
	one := func(i int) {
		p := paths[i]
		src, err := g.readFile(p)
		if err != nil {
			return
		}
		if strip != nil {
			src = strip(src)
		}
		f, err := parser.ParseFile(g.fset, p, src, mode|parser.SkipObjectResolution)
		var el scanner.ErrorList
		if errors.As(err, &el) {
			for _, e := range el {
				results[i].diags = append(results[i].diags, Diagnostic{Path: e.Pos.Filename, Line: e.Pos.Line,
					Column: e.Pos.Column, Severity: "error", Message: e.Msg, Source: "go/parser"})
			}
		}
		results[i].f = f
	}
	// The files of a package are parsed in parallel (a FileSet is safe for
	// concurrent use).
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(paths); i = int(next.Add(1)) - 1 {
				one(i)
			}
		}()
	}
	wg.Wait()
	var files []*ast.File
	var names []string
	var diags []Diagnostic
	for i, r := range results {
		diags = append(diags, r.diags...)
		if r.f == nil || r.f.Name == nil {
			continue
		}
		if want != nil && !want(r.f.Name.Name, strings.HasSuffix(paths[i], "_test.go")) {
			continue
		}
		files = append(files, r.f)
		names = append(names, paths[i])
	}
	return files, names, diags
}

// mainName is the package name most non-test files of a directory declare.
func (g *goChecker) mainName(paths []string) string {
	count := map[string]int{}
	best, n := "", 0
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		name := g.packageClause(p)
		if name == "" || name == "documentation" {
			continue
		}
		count[name]++
		if count[name] > n || count[name] == n && name < best {
			best, n = name, count[name]
		}
	}
	return best
}

// packageClause reads a file's package name.
func (g *goChecker) packageClause(p string) string {
	src, err := g.readFile(p)
	if err != nil {
		return ""
	}
	f, err := parser.ParseFile(token.NewFileSet(), p, src, parser.PackageClauseOnly)
	if err != nil || f == nil || f.Name == nil {
		return ""
	}
	return f.Name.Name
}

// importer resolves the imports of one check.
type goImporter struct {
	g   *goChecker
	ctx context.Context
	// test, when set, is the scope of an external test package's check.
	test *testScope
}

// testScope makes an external test package (package x_test) see what the
// go command gives it: the test variant of package x (with its _test.go
// files, where export_test.go files export internals), and every imported
// package that depends on x checked again against that variant.
type testScope struct {
	dir, path string                    // the package under test
	variant   *types.Package            // its test variant
	pkgs      map[string]*types.Package // dir → checked again
	deps      map[*types.Package]bool   // memo of dependsOn
}

func (im goImporter) Import(path string) (*types.Package, error) {
	return im.ImportFrom(path, "", 0)
}

func (im goImporter) ImportFrom(path, srcDir string, _ types.ImportMode) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	if err := im.ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := im.g.findDir(path, srcDir)
	if err != nil {
		return nil, err
	}
	t := im.test
	if t == nil {
		return im.g.dep(im.ctx, path, dir)
	}
	if dir == t.dir {
		return t.variant, nil
	}
	if p, ok := t.pkgs[dir]; ok {
		if p == nil {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		return p, nil
	}
	base, err := im.g.dep(im.ctx, path, dir)
	if err != nil || base == nil || !t.dependsOn(base) {
		return base, err
	}
	t.pkgs[dir] = nil // busy
	p, err := im.g.checkDep(im.ctx, path, dir, im)
	t.pkgs[dir] = p
	return p, err
}

// dependsOn reports whether p imports the package under test, directly or
// not.
func (t *testScope) dependsOn(p *types.Package) bool {
	if v, ok := t.deps[p]; ok {
		return v
	}
	t.deps[p] = false // cycles end here
	for _, q := range p.Imports() {
		if q.Path() == t.path || t.dependsOn(q) {
			t.deps[p] = true
			return true
		}
	}
	return false
}

// dep checks the package in dir for importers, without function bodies.
func (g *goChecker) dep(ctx context.Context, path, dir string) (*types.Package, error) {
	if d, ok := g.deps[dir]; ok {
		if d.busy {
			return nil, fmt.Errorf("import cycle through %s", path)
		}
		return d.pkg, d.err
	}
	d := &goDep{busy: true}
	g.deps[dir] = d
	if g.inWorkspace(dir) {
		d.stamps = g.stampsOf(dir, g.packageFiles(dir, ""))
	}
	pkg, err := g.checkDep(ctx, path, dir, goImporter{g: g, ctx: ctx})
	d.busy, d.pkg, d.err = false, pkg, err
	if ctx.Err() != nil {
		delete(g.deps, dir) // a cancelled check may be incomplete
		return pkg, ctx.Err()
	}
	return pkg, err
}

// checkDep checks the package in dir as an importer sees it.
func (g *goChecker) checkDep(ctx context.Context, path, dir string, imp goImporter) (*types.Package, error) {
	paths := g.packageFiles(dir, "")
	name := g.mainName(paths)
	files, _, _ := g.parse(paths, 0, func(n string, _ bool) bool { return n == name }, g.depStrip)
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files for %s in %s", path, dir)
	}
	conf := types.Config{
		Importer: imp, FakeImportC: true, IgnoreFuncBodies: true,
		Error: func(error) {}, Sizes: types.SizesFor("gc", runtime.GOARCH),
	}
	pkg, _ := conf.Check(path, g.fset, files, nil)
	return pkg, nil
}

// testVariant checks the package in dir with its in-package test files, as
// the external test package sees it.
func (g *goChecker) testVariant(ctx context.Context, path, dir string) (*types.Package, error) {
	all := g.packageFiles(dir, "tests")
	name := g.mainName(all)
	files, _, _ := g.parse(all, 0, func(n string, _ bool) bool { return n == name }, g.depStrip)
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files of package %s in %s", name, dir)
	}
	conf := types.Config{
		Importer: goImporter{g: g, ctx: ctx}, FakeImportC: true, IgnoreFuncBodies: true,
		Error: func(error) {}, Sizes: types.SizesFor("gc", runtime.GOARCH),
	}
	pkg, _ := conf.Check(path, g.fset, files, nil)
	return pkg, ctx.Err()
}

// importPath guesses the import path of the package in dir.
func (g *goChecker) importPath(dir string) string {
	m := g.moduleOf(dir)
	if m.path != "" {
		if rel, ok := within(m.dir, dir); ok {
			if m.path == "std" {
				return filepath.ToSlash(rel)
			}
			if rel == "." {
				return m.path
			}
			return m.path + "/" + filepath.ToSlash(rel)
		}
	}
	if rel, ok := within(filepath.Join(g.plain.GOROOT, "src"), dir); ok {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(dir)
}

// unitFor returns the full check of the package a Go file belongs to: the
// package with its in-package tests, or its external test package.
func (g *goChecker) unitFor(ctx context.Context, file string) (*goUnit, error) {
	dir := filepath.Dir(file)
	variant := "tests"
	if strings.HasSuffix(file, "_test.go") {
		main := g.mainName(g.packageFiles(dir, ""))
		if name := g.packageClause(file); strings.HasSuffix(name, "_test") && name != main && main != "" {
			variant = "xtest"
		}
	}
	u, err := g.unit(ctx, dir, variant, true)
	if err != nil {
		return nil, err
	}
	for _, n := range u.names {
		if n == file {
			return u, nil
		}
	}
	return nil, fmt.Errorf("%s is not part of its directory's package for %s/%s (build constraints)", filepath.Base(file), g.ctxt.GOOS, g.ctxt.GOARCH)
}

// stripFuncBodies empties what an importer does not need: the bodies of
// function declarations, and the composite literals of variable
// initialisers (big tables are most of a package's checking time). An
// array literal [...]T{…} keeps its length: its elements become
// {N-1: *new(T)}; one with keyed elements is kept whole.
func stripFuncBodies(src []byte) []byte {
	return stripBlocks(src, func(open, close int, body bool) (bool, []byte) {
		if body {
			return true, nil
		}
		start := bytes.LastIndexByte(src[:open], '\n') + 1
		i := bytes.Index(src[start:open], []byte("[...]"))
		if i < 0 {
			return true, nil
		}
		elem := bytes.TrimSpace(src[start+i+5 : open])
		if len(elem) == 0 || bytes.ContainsAny(elem, "{}\"`'/") {
			return false, nil
		}
		n := countElements(src[open+1 : close])
		switch {
		case n < 0:
			return false, nil
		case n == 0:
			return true, nil
		}
		fill := fmt.Appendf(nil, "%d: *new(%s)", n-1, elem)
		in := src[open+1 : close]
		room := len(in) // the bytes stripBlocks may overwrite
		if nl := bytes.LastIndexByte(in, '\n'); nl >= 0 {
			room = nl - bytes.Count(in, []byte("\n")) + 1
		}
		return len(fill) <= room, fill
	})
}

// countElements counts the elements of a composite literal's contents, or
// returns -1 when they are keyed (or cannot be counted).
func countElements(b []byte) int {
	n, depth, pending := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case ' ', '\t', '\r', '\n':
		case '/':
			switch {
			case i+1 < len(b) && b[i+1] == '/':
				for i < len(b) && b[i] != '\n' {
					i++
				}
			case i+1 < len(b) && b[i+1] == '*':
				i = skipBlockComment(b, i)
			default:
				pending = true
			}
		case '"', '\'', '`':
			i = skipQuoted(b, i)
			pending = true
		case '(', '[', '{':
			depth++
			pending = true
		case ')', ']', '}':
			depth--
			if depth < 0 {
				return -1
			}
		case ',':
			if depth == 0 {
				n++
				pending = false
			}
		case ':':
			if depth == 0 {
				return -1
			}
		default:
			pending = true
		}
	}
	if depth != 0 {
		return -1
	}
	if pending {
		n++
	}
	return n
}

// unit checks the package in dir fully (variant "tests" or "xtest").
func (g *goChecker) unit(ctx context.Context, dir, variant string, keep bool) (*goUnit, error) {
	return g.unitOf(ctx, dir, variant, keep, "")
}

// unitOf is unit; with a word, the bodies of functions that do not
// mention it are left out (a search for that word's uses needs no more).
func (g *goChecker) unitOf(ctx context.Context, dir, variant string, keep bool, word string) (*goUnit, error) {
	key := dir + "\x00" + variant
	if word != "" {
		keep = false
		key += "\x00" + word
	}
	for i, u := range g.units {
		if u.key == key {
			copy(g.units[1:i+1], g.units[:i])
			g.units[0] = u
			return u, nil
		}
	}
	all := g.packageFiles(dir, variant)
	name := g.mainName(all)
	if name == "" && variant == "tests" && len(all) > 0 {
		// a directory of test files only: their package is the unit
		name = g.packageClause(all[0])
	}
	want := func(n string, test bool) bool {
		if variant == "xtest" {
			return test && n == name+"_test"
		}
		return n == name || name == "" && !test
	}
	var strip func([]byte) []byte
	if word != "" {
		strip = func(src []byte) []byte {
			return stripBlocks(src, func(open, close int, body bool) (bool, []byte) {
				return body && !containsWord(src[open:close], word), nil
			})
		}
	}
	files, names, diags := g.parse(all, parser.ParseComments, want, strip)
	if len(files) == 0 {
		return nil, fmt.Errorf("no Go files of package %s in %s", name, dir)
	}
	u := &goUnit{key: key, dir: dir, files: files, names: names, diags: diags, stamps: g.stampsOf(dir, all)}
	u.info = &types.Info{
		Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Implicits: map[ast.Node]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	path := g.importPath(dir)
	imp := goImporter{g: g, ctx: ctx}
	cgo := false
	for _, f := range files {
		for _, is := range f.Imports {
			cgo = cgo || is.Path.Value == `"C"`
		}
	}
	if variant == "xtest" {
		if tv, err := g.testVariant(ctx, path, dir); err == nil && tv != nil {
			imp.test = &testScope{dir: dir, path: path, variant: tv,
				pkgs: map[string]*types.Package{}, deps: map[*types.Package]bool{}}
		}
		path += "_test"
	}
	conf := types.Config{
		Importer: imp, FakeImportC: true, Sizes: types.SizesFor("gc", runtime.GOARCH),
		Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) {
				if cgo && strings.Contains(te.Msg, "invalid type") {
					return // cgo's C names have no types here (FakeImportC)
				}
				p := te.Fset.PositionFor(te.Pos, false)
				u.diags = append(u.diags, Diagnostic{Path: p.Filename, Line: p.Line, Column: p.Column,
					Severity: "error", Message: te.Msg, Source: "go/types"})
			}
		},
	}
	u.pkg, _ = conf.Check(path, g.fset, files, u.info)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if word == "" {
		u.diags = append(u.diags, vet(g.fset, u)...)
	}
	g.diagnosticRanges(files, u.diags)
	sortDiagnostics(u.diags)
	if keep {
		g.units = append([]*goUnit{u}, g.units...)
		if len(g.units) > maxUnits {
			g.units = g.units[:maxUnits]
		}
	}
	return u, nil
}

// diagnosticRanges gives every diagnostic without an end (go/parser,
// go/types and vet report a position) the range of the offending
// expression or identifier: the smallest expression of the syntax tree
// that encloses the position (for vet's reports, which name a call or an
// operand by its start, the largest that starts there), cut at the end of
// its first line; where no
// expression encloses it (a statement, a parse error), the token at the
// position, or the character before it at the end of a line. Editors then
// mark the code itself instead of guessing from an empty range.
func (g *goChecker) diagnosticRanges(files []*ast.File, ds []Diagnostic) {
	byName := map[string]*ast.File{}
	for _, f := range files {
		if tf := g.fset.File(f.Pos()); tf != nil {
			byName[tf.Name()] = f
		}
	}
	srcs := map[string][]byte{}
	for i := range ds {
		d := &ds[i]
		if d.EndLine > 0 || d.Line <= 0 || d.Column <= 0 {
			continue
		}
		src, ok := srcs[d.Path]
		if !ok {
			src, _ = g.readFile(d.Path)
			srcs[d.Path] = src
		}
		lineStart, lineEnd, ok := lineBounds(src, d.Line)
		if !ok {
			continue
		}
		off := lineStart + d.Column - 1
		if off > lineEnd {
			continue
		}
		end := -1
		if f := byName[d.Path]; f != nil {
			end = exprEnd(g.fset, f, src, off, lineEnd, d.Source == "vet")
		}
		if end < 0 {
			off, end = tokenAt(src, off, lineStart, lineEnd)
			d.Column = off - lineStart + 1
		}
		if end <= off {
			continue
		}
		d.EndLine, d.EndColumn = d.Line, end-lineStart+1
	}
}

// lineBounds returns the byte offsets of the start and end (before the
// line break) of a 1-based line.
func lineBounds(src []byte, line int) (start, end int, ok bool) {
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(src[start:], '\n')
		if i < 0 {
			return 0, 0, false
		}
		start += i + 1
	}
	end = len(src)
	if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
		end = start + i
	}
	if end > start && src[end-1] == '\r' {
		end--
	}
	return start, end, true
}

// exprEnd returns the end offset (at most lineEnd) of the smallest
// expression of f that encloses the byte offset off (with largest, the
// largest expression that starts there), or -1.
func exprEnd(fset *token.FileSet, f *ast.File, src []byte, off, lineEnd int, largest bool) int {
	tf := fset.File(f.Pos())
	if tf == nil || tf.Size() != len(src) || off >= tf.Size() {
		return -1 // the tree is not of this text (a stripped or changed file)
	}
	pos := tf.Pos(off)
	path, _ := astutil.PathEnclosingInterval(f, pos, pos)
	var found ast.Node
	for _, n := range path {
		if _, ok := n.(ast.Expr); !ok || n.Pos() > pos || !n.End().IsValid() {
			break
		}
		if found != nil && (!largest || n.Pos() != found.Pos()) {
			break
		}
		found = n
	}
	if found == nil {
		return -1
	}
	return min(tf.Offset(found.End()), lineEnd)
}

// tokenAt returns the range of the token at off on its line: an
// identifier or number, an operator or bracket character, or, at the end of
// the line or on a blank, the character before (the one a parser complains
// after).
func tokenAt(src []byte, off, lineStart, lineEnd int) (int, int) {
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	if off >= lineEnd || src[off] == ' ' || src[off] == '\t' {
		// At the end of the line or on a blank: the last character before.
		e := min(off, lineEnd)
		for e > lineStart && (src[e-1] == ' ' || src[e-1] == '\t') {
			e--
		}
		if e == lineStart {
			return off, off
		}
		_, size := utf8.DecodeLastRune(src[lineStart:e])
		return e - size, e
	}
	if !isWord(src[off]) {
		_, size := utf8.DecodeRune(src[off:lineEnd])
		return off, off + size
	}
	end := off
	for end < lineEnd && isWord(src[end]) {
		end++
	}
	return off, end
}

func sortDiagnostics(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// identAt finds the identifier at a 1-based line and byte column of a
// unit's file (the column may also be just after the identifier).
func (u *goUnit) identAt(fset *token.FileSet, file string, line, col int) (*ast.File, *ast.Ident, error) {
	var f *ast.File
	for i, n := range u.names {
		if n == file {
			f = u.files[i]
		}
	}
	if f == nil {
		return nil, nil, fmt.Errorf("%s is not in the checked package", file)
	}
	tf := fset.File(f.Pos())
	if line < 1 || line > tf.LineCount() {
		return nil, nil, fmt.Errorf("line %d is out of range (the file has %d lines)", line, tf.LineCount())
	}
	start := tf.LineStart(line)
	off := tf.Offset(start) + col - 1
	if col < 1 || off > tf.Size() {
		return nil, nil, fmt.Errorf("column %d is out of range", col)
	}
	pos := tf.Pos(off)
	var hit *ast.Ident
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil || hit != nil || n.Pos() > pos || n.End() < pos {
			return false
		}
		if id, ok := n.(*ast.Ident); ok {
			hit = id
			return false
		}
		return true
	})
	if hit == nil {
		return f, nil, fmt.Errorf("no identifier at line %d, column %d%s", line, col, identsOnLine(fset, f, line))
	}
	return f, hit, nil
}

// identsOnLine lists the identifiers of a line, to help a caller whose
// column missed.
func identsOnLine(fset *token.FileSet, f *ast.File, line int) string {
	var parts []string
	ast.Inspect(f, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if p := fset.PositionFor(id.Pos(), false); p.Line == line && len(parts) < 12 {
				parts = append(parts, fmt.Sprintf("%s at column %d", id.Name, p.Column))
			}
		}
		return true
	})
	if len(parts) == 0 {
		return ""
	}
	return "; identifiers on that line: " + strings.Join(parts, ", ")
}

// objectOf returns the object an identifier denotes or declares.
func (u *goUnit) objectOf(id *ast.Ident) types.Object {
	if o := u.info.Uses[id]; o != nil {
		return o
	}
	if o := u.info.Defs[id]; o != nil {
		return o
	}
	// the name of a type switch guard declares one object per clause
	for n, o := range u.info.Implicits {
		if _, ok := n.(*ast.CaseClause); ok && o.Name() == id.Name && o.Pos() == id.Pos() {
			return o
		}
	}
	return nil
}

// origin returns the generic declaration of an instantiated object.
func origin(o types.Object) types.Object {
	switch o := o.(type) {
	case *types.Func:
		return o.Origin()
	case *types.Var:
		return o.Origin()
	}
	return o
}

// objKeyIn identifies a declaration: its file, line and column (which
// survive the stripping of function bodies, unlike offsets), read in fset.
func objKeyIn(fset *token.FileSet, o types.Object) string {
	o = origin(o)
	if !o.Pos().IsValid() {
		return "builtin:" + o.Name()
	}
	p := fset.PositionFor(o.Pos(), false)
	return fmt.Sprintf("%s:%d:%d", p.Filename, p.Line, p.Column)
}

// location is the location of a name at a position of the checker's files.
func (g *goChecker) location(pos token.Pos, name string) Location {
	return locationIn(g.fset, pos, name)
}

// locationIn is the location of a name at a position of fset.
func locationIn(fset *token.FileSet, pos token.Pos, name string) Location {
	p := fset.PositionFor(pos, false)
	return Location{Path: p.Filename, Line: p.Line, Column: p.Column, EndLine: p.Line, EndColumn: p.Column + len(name)}
}

// kindOf names an object's kind like the outline does.
func kindOf(o types.Object) string {
	switch o := o.(type) {
	case *types.Func:
		if sig, ok := o.Type().(*types.Signature); ok && sig.Recv() != nil {
			return "method"
		}
		return "function"
	case *types.Var:
		if o.IsField() {
			return "field"
		}
		if o.Kind() == types.ParamVar || o.Kind() == types.RecvVar || o.Kind() == types.ResultVar {
			return "parameter"
		}
		return "variable"
	case *types.Const:
		return "constant"
	case *types.TypeName:
		switch o.Type().Underlying().(type) {
		case *types.Struct:
			return "struct"
		case *types.Interface:
			return "interface"
		}
		if o.IsAlias() {
			return "type"
		}
		return "type"
	case *types.PkgName:
		return "package"
	case *types.Label:
		return "label"
	case *types.Builtin:
		return "function"
	case *types.Nil:
		return "constant"
	}
	return "symbol"
}

// resolve checks the file's package and finds the object at a position.
func (g *goChecker) resolve(ctx context.Context, file string, line, col int) (*goUnit, *ast.Ident, types.Object, error) {
	g.refresh()
	u, err := g.unitFor(ctx, file)
	if err != nil {
		return nil, nil, nil, err
	}
	_, id, err := u.identAt(g.fset, file, line, col)
	if err != nil {
		for _, d := range u.diags {
			if d.Path == file && d.Source == "go/parser" {
				// the parser may have lost the identifier: answer by name
				return u, nil, nil, fmt.Errorf("%s has syntax errors (line %d: %s)", filepath.Base(file), d.Line, d.Message)
			}
		}
		return u, nil, nil, err
	}
	obj := u.objectOf(id)
	if obj == nil {
		return u, id, nil, fmt.Errorf("%s at line %d, column %d declares or denotes nothing the type checker knows", id.Name, line, col)
	}
	return u, id, obj, nil
}

// builtinLocation finds a predeclared identifier in GOROOT/src/builtin.
func (g *goChecker) builtinLocation(name string) (Location, *ast.File, bool) {
	p := filepath.Join(g.plain.GOROOT, "src", "builtin", "builtin.go")
	src, err := g.ix.ws.ReadDiskAny(p)
	if err != nil {
		return Location{}, nil, false
	}
	f, err := parser.ParseFile(g.fset, p, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return Location{}, nil, false
	}
	var loc Location
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if found {
			return false
		}
		var id *ast.Ident
		switch d := n.(type) {
		case *ast.FuncDecl:
			id = d.Name
		case *ast.TypeSpec:
			id = d.Name
		case *ast.ValueSpec:
			for _, n := range d.Names {
				if n.Name == name {
					id = n
				}
			}
		}
		if id != nil && id.Name == name {
			loc, found = g.location(id.Pos(), name), true
		}
		return true
	})
	return loc, f, found
}

// definition resolves the identifier at a position to its declaration.
func (g *goChecker) definition(ctx context.Context, file string, line, col int) (*Answer, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, id, obj, err := g.resolve(ctx, file, line, col)
	if err != nil {
		return nil, err
	}
	a := &Answer{Name: id.Name, Kind: kindOf(obj), Precision: PrecisionType, Language: "go"}
	if !obj.Pos().IsValid() {
		if loc, _, ok := g.builtinLocation(obj.Name()); ok {
			a.Locations = []Location{loc}
		}
		a.Note = obj.Name() + " is predeclared"
		return a, nil
	}
	if pn, ok := obj.(*types.PkgName); ok {
		if loc, _, ok := g.packageClause2(pn.Imported().Path(), filepath.Dir(g.fset.PositionFor(id.Pos(), false).Filename)); ok {
			a.Locations = []Location{loc}
			return a, nil
		}
	}
	a.Locations = []Location{g.location(origin(obj).Pos(), obj.Name())}
	return a, nil
}

// packageClause2 locates the package clause of an imported package: the
// one with the package's doc comment, else the first file's. It returns
// the doc comment too.
func (g *goChecker) packageClause2(path, srcDir string) (Location, string, bool) {
	dir, err := g.findDir(path, srcDir)
	if err != nil {
		return Location{}, "", false
	}
	var first Location
	found := false
	for _, p := range g.packageFiles(dir, "") {
		src, err := g.readFile(p)
		if err != nil {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil || f.Name == nil {
			continue
		}
		pos := fset.PositionFor(f.Name.Pos(), false)
		loc := Location{Path: p, Line: pos.Line, Column: pos.Column, EndLine: pos.Line, EndColumn: pos.Column + len(f.Name.Name)}
		if f.Doc != nil {
			return loc, strings.TrimSpace(f.Doc.Text()), true
		}
		if !found {
			first, found = loc, true
		}
	}
	return first, "", found
}

// hover describes the identifier at a position: its declaration and doc.
func (g *goChecker) hover(ctx context.Context, file string, line, col int) (*Answer, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	u, id, obj, err := g.resolve(ctx, file, line, col)
	if err != nil {
		return nil, err
	}
	a := &Answer{Name: id.Name, Kind: kindOf(obj), Precision: PrecisionType, Language: "go"}
	qual := func(p *types.Package) string {
		if p == nil || p == u.pkg || p.Path() == u.pkg.Path() {
			return ""
		}
		return p.Name()
	}
	a.Signature = types.ObjectString(obj, qual)
	if c, ok := obj.(*types.Const); ok && !strings.Contains(a.Signature, "=") {
		a.Signature += " = " + c.Val().ExactString()
	}
	if !obj.Pos().IsValid() {
		if loc, f, ok := g.builtinLocation(obj.Name()); ok {
			a.Locations = []Location{loc}
			a.Doc = docAt(g.fset, f, loc)
		}
		return a, nil
	}
	if pn, ok := obj.(*types.PkgName); ok {
		if loc, doc, ok := g.packageClause2(pn.Imported().Path(), u.dir); ok {
			a.Locations, a.Doc = []Location{loc}, doc
			a.Signature = fmt.Sprintf("package %s (%q)", pn.Imported().Name(), pn.Imported().Path())
			return a, nil
		}
	}
	loc := g.location(origin(obj).Pos(), obj.Name())
	a.Locations = []Location{loc}
	if src, err := g.readFile(loc.Path); err == nil {
		fset := token.NewFileSet()
		if f, _ := parser.ParseFile(fset, loc.Path, src, parser.ParseComments|parser.SkipObjectResolution); f != nil {
			a.Doc = docAt(fset, f, loc)
			if tn, ok := obj.(*types.TypeName); ok && !tn.IsAlias() {
				if decl := typeDeclAt(fset, f, src, loc); decl != "" {
					a.Signature = decl
				}
				a.Signature += methodList(tn, u.pkg, qual)
			}
		}
	}
	return a, nil
}

// docAt returns the doc comment of the declaration whose name is at loc.
func docAt(fset *token.FileSet, f *ast.File, loc Location) string {
	var doc *ast.CommentGroup
	at := func(id *ast.Ident) bool {
		p := fset.PositionFor(id.Pos(), false)
		return p.Line == loc.Line && p.Column == loc.Column
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if doc != nil {
			return false
		}
		switch d := n.(type) {
		case *ast.FuncDecl:
			if at(d.Name) {
				doc = d.Doc
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				var ids []*ast.Ident
				var sdoc, comment *ast.CommentGroup
				switch s := s.(type) {
				case *ast.TypeSpec:
					ids, sdoc, comment = []*ast.Ident{s.Name}, s.Doc, s.Comment
				case *ast.ValueSpec:
					ids, sdoc, comment = s.Names, s.Doc, s.Comment
				}
				for _, id := range ids {
					if at(id) {
						doc = firstDoc(sdoc, comment)
						if doc == nil && len(d.Specs) == 1 {
							doc = d.Doc
						}
						if doc == nil {
							doc = d.Doc
						}
					}
				}
			}
		case *ast.Field:
			for _, id := range d.Names {
				if at(id) {
					doc = firstDoc(d.Doc, d.Comment)
				}
			}
		}
		return doc == nil
	})
	if doc == nil {
		return ""
	}
	return strings.TrimSpace(doc.Text())
}

func firstDoc(gs ...*ast.CommentGroup) *ast.CommentGroup {
	for _, g := range gs {
		if g != nil {
			return g
		}
	}
	return nil
}

// methodList lists the methods of a named non-interface type (of *T) that
// from can call, one declaration a line, at most 40.
func methodList(tn *types.TypeName, from *types.Package, qual types.Qualifier) string {
	named, ok := tn.Type().(*types.Named)
	if !ok || types.IsInterface(named) {
		return ""
	}
	ms := types.NewMethodSet(types.NewPointer(named))
	var lines []string
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i).Obj()
		if !m.Exported() && m.Pkg() != from {
			continue
		}
		if len(lines) == 40 {
			lines = append(lines, "// …")
			break
		}
		lines = append(lines, types.ObjectString(m, qual))
	}
	if len(lines) == 0 {
		return ""
	}
	return "\n\n" + strings.Join(lines, "\n")
}

// typeDeclAt returns the source of the type declaration named at loc, cut
// at 40 lines.
func typeDeclAt(fset *token.FileSet, f *ast.File, src []byte, loc Location) string {
	var out string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || out != "" {
			return out == ""
		}
		p := fset.PositionFor(ts.Name.Pos(), false)
		if p.Line == loc.Line && p.Column == loc.Column {
			a, b := fset.Position(ts.Pos()).Offset, fset.Position(ts.End()).Offset
			lines := strings.Split(string(src[a:b]), "\n")
			if len(lines) > 40 {
				lines = append(lines[:40], "\t// …")
				lines = append(lines, "}")
			}
			out = "type " + strings.Join(lines, "\n")
		}
		return true
	})
	return out
}

// references finds the uses of the object at a position in the packages
// of the workspace: the declaring package for unexported objects, every
// package whose files mention the name otherwise.
func (g *goChecker) references(ctx context.Context, file string, line, col int, includeDecl bool) (*Answer, error) {
	// The lock is taken per package, so that other queries (an editor's
	// hovers) are not held up by a long search.
	g.mu.Lock()
	u, id, obj, err := g.resolve(ctx, file, line, col)
	fset := g.fset
	if err != nil {
		g.mu.Unlock()
		return nil, err
	}
	a := &Answer{Name: id.Name, Kind: kindOf(obj), Precision: PrecisionType, Language: "go"}
	key := objKeyIn(fset, obj)
	name := obj.Name()
	seen := map[Location]bool{}
	collect := func(u *goUnit, fset *token.FileSet) {
		for ident, o := range u.info.Uses {
			if ident.Name == name && objKeyIn(fset, o) == key {
				seen[locationIn(fset, ident.Pos(), name)] = true
			}
		}
		if includeDecl {
			for ident, o := range u.info.Defs {
				if o != nil && ident.Name == name && objKeyIn(fset, o) == key {
					seen[locationIn(fset, ident.Pos(), name)] = true
				}
			}
		}
	}
	local := obj.Pkg() != nil && obj.Parent() != nil && obj.Parent() != obj.Pkg().Scope() && obj.Parent() != types.Universe
	if _, ok := obj.(*types.PkgName); ok {
		local = true
	}
	declDir := filepath.Dir(fset.PositionFor(obj.Pos(), false).Filename)
	switch {
	case local:
		collect(u, fset)
		g.mu.Unlock()
	case !obj.Exported() && obj.Pkg() != nil:
		collect(u, fset)
		if u.key != declDir+"\x00tests" {
			if du, err := g.unitOf(ctx, declDir, "tests", false, name); err == nil {
				collect(du, fset)
			}
		}
		g.mu.Unlock()
	default:
		g.mu.Unlock()
		// A package-level object is used only where its package is
		// imported; a method or field also where values of its type flow.
		importPath := ""
		if obj.Pkg() != nil && obj.Parent() == obj.Pkg().Scope() {
			importPath = obj.Pkg().Path()
		}
		dirs, partial := g.mentioning(ctx, name, importPath, declDir)
		a.Partial = partial
		// The declaring package first, then the others until the budget
		// is spent.
		for i, d := range dirs {
			if d == declDir {
				copy(dirs[1:i+1], dirs[:i])
				dirs[0] = declDir
			}
		}
		deadline := time.Now().Add(ReferencesBudget)
		for i, dir := range dirs {
			if ctx.Err() != nil || time.Now().After(deadline) {
				a.Partial = true
				a.Note = fmt.Sprintf("searched %d of the %d packages that mention %s (time budget %s); narrow the question: a qualified symbol, or a position",
					i, len(dirs), name, ReferencesBudget)
				break
			}
			for _, variant := range []string{"tests", "xtest"} {
				g.mu.Lock()
				g.refresh()
				var du *goUnit
				err := errors.New("no external tests")
				if variant == "tests" || g.hasXTest(dir) {
					du, err = g.unitOf(ctx, dir, variant, false, name)
				}
				fset := g.fset
				g.mu.Unlock()
				if err == nil {
					collect(du, fset)
				}
			}
		}
	}
	for loc := range seen {
		a.Locations = append(a.Locations, loc)
	}
	sortLocations(a.Locations)
	return a, nil
}

func (g *goChecker) hasXTest(dir string) bool {
	main := g.mainName(g.packageFiles(dir, ""))
	for _, p := range g.packageFiles(dir, "xtest") {
		if strings.HasSuffix(p, "_test.go") && g.packageClause(p) == main+"_test" {
			return true
		}
	}
	return false
}

// mentioning lists the directories of the workspace's Go files that
// contain name as a word (and, when importPath is set, import it, unless
// they are declDir), and whether the list may be incomplete.
func (g *goChecker) mentioning(ctx context.Context, name, importPath, declDir string) ([]string, bool) {
	quoted := []byte(strconv.Quote(importPath))
	partial := g.ix.partial()
	dirs := map[string]bool{}
	for _, p := range g.ix.filesOf("go") {
		if ctx.Err() != nil {
			return keysSorted(dirs), true
		}
		if dirs[filepath.Dir(p)] {
			continue
		}
		src, err := g.readFile(p)
		if err != nil || !containsWord(src, name) {
			continue
		}
		if importPath == "" || filepath.Dir(p) == declDir || bytes.Contains(src, quoted) {
			dirs[filepath.Dir(p)] = true
		}
	}
	return keysSorted(dirs), partial
}

func keysSorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// containsWord reports whether src holds w with no identifier character on
// either side.
func containsWord(src []byte, w string) bool {
	for i := 0; ; {
		j := bytes.Index(src[i:], []byte(w))
		if j < 0 {
			return false
		}
		s := i + j
		e := s + len(w)
		if (s == 0 || !isIdentByte(src[s-1])) && (e == len(src) || !isIdentByte(src[e])) {
			return true
		}
		i = s + 1
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func sortLocations(ls []Location) {
	sort.Slice(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// diagnostics checks the package of a Go file, or of every Go package in a
// directory tree, and returns the problems of the files asked for.
func (g *goChecker) diagnostics(ctx context.Context, file string) ([]Diagnostic, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refresh()
	u, err := g.unitFor(ctx, file)
	if err != nil {
		return nil, err
	}
	var out []Diagnostic
	for _, d := range u.diags {
		if d.Path == file {
			out = append(out, d)
		}
	}
	return out, nil
}

// packageDiagnostics checks the package in dir (with its tests) and
// returns all its problems.
func (g *goChecker) packageDiagnostics(ctx context.Context, dir string) ([]Diagnostic, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refresh()
	var out []Diagnostic
	for _, variant := range []string{"tests", "xtest"} {
		if variant == "xtest" && !g.hasXTest(dir) {
			continue
		}
		u, err := g.unit(ctx, dir, variant, false)
		if err != nil {
			if variant == "tests" {
				return nil, err
			}
			continue
		}
		out = append(out, u.diags...)
	}
	sortDiagnostics(out)
	return out, nil
}
