package codeindex

import (
	"go/ast"
	"go/build"
	"go/token"
	"go/types"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
