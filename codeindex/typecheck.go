// Type-checking Go packages for the index: the importer, cached
// dependencies, test variants and the full check of a queried package.

package codeindex

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/types"
	"path/filepath"
	"runtime"
	"strings"
)

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
	pkg, _, ok := g.checkDecls(path, dir, "", imp)
	if !ok {
		return nil, fmt.Errorf("no Go files for %s in %s", path, dir)
	}
	return pkg, nil
}

// checkDecls checks the declarations, not the function bodies, of the
// package in dir (which as for packageFiles), type errors ignored. It
// returns the package's name, and ok false when it has no Go files.
func (g *goChecker) checkDecls(path, dir, which string, imp goImporter) (pkg *types.Package, name string, ok bool) {
	paths := g.packageFiles(dir, which)
	name = g.mainName(paths)
	files, _, _ := g.parse(paths, 0, func(n string, _ bool) bool { return n == name }, g.depStrip)
	if len(files) == 0 {
		return nil, name, false
	}
	conf := types.Config{
		Importer: imp, FakeImportC: true, IgnoreFuncBodies: true,
		Error: func(error) {}, Sizes: types.SizesFor("gc", runtime.GOARCH),
	}
	pkg, _ = conf.Check(path, g.fset, files, nil)
	return pkg, name, true
}

// testVariant checks the package in dir with its in-package test files, as
// the external test package sees it.
func (g *goChecker) testVariant(ctx context.Context, path, dir string) (*types.Package, error) {
	pkg, name, ok := g.checkDecls(path, dir, "tests", goImporter{g: g, ctx: ctx})
	if !ok {
		return nil, fmt.Errorf("no Go files of package %s in %s", name, dir)
	}
	return pkg, ctx.Err()
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
