// Hover text from the Go index: the declaration, its doc comment and
// a type's methods.

package codeindex

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
)

// hover describes the identifier at a position: its declaration and doc.
func (g *goChecker) hover(ctx context.Context, file string, line, col int) (*Answer, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	u, id, obj, err := g.resolve(ctx, file, line, col)
	if err != nil {
		return nil, err
	}
	a := typeAnswer(id, obj)
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
