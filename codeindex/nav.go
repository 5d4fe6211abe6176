// Definitions and references from the Go index: the identifier at a
// position, its object, and where it is declared and used.

package codeindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

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

// typeAnswer starts the type checker's answer about the identifier id,
// which denotes obj.
func typeAnswer(id *ast.Ident, obj types.Object) *Answer {
	return &Answer{Name: id.Name, Kind: kindOf(obj), Precision: PrecisionType, Language: "go"}
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
	a := typeAnswer(id, obj)
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
	a := typeAnswer(id, obj)
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

// mentioning lists the directories of the workspace's Go files that
// contain name as a word (and, when importPath is set, import it, unless
// they are declDir), and whether the list may be incomplete.
func (g *goChecker) mentioning(ctx context.Context, name, importPath, declDir string) ([]string, bool) {
	quoted := []byte(strconv.Quote(importPath))
	partial := g.ix.partial()
	dirs := map[string]bool{}
	for _, p := range g.ix.filesOf("go") {
		if ctx.Err() != nil {
			return slices.Sorted(maps.Keys(dirs)), true
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
	return slices.Sorted(maps.Keys(dirs)), partial
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
	sortByPlace(ls, func(l Location) (string, int, int) { return l.Path, l.Line, l.Column })
}
