package workspace

import (
	"go/ast"
	"go/parser"
	"go/token"
	"runtime"
	"strings"
)

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// goSymbols parses a Go file and returns its outline: functions, methods
// (container: the receiver's type), types with their fields or interface
// methods as children, constants and variables. A file with syntax errors
// gives what the parser recovered.
func goSymbols(p string, src []byte) []Symbol {
	fset := token.NewFileSet()
	f, _ := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
	if f == nil || f.Name == nil {
		return nil
	}
	tf := fset.File(f.Pos())
	e := goExtractor{p: p, src: src, tf: tf, pkg: f.Name.Name}
	var out []Symbol
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			s := e.sym(d.Name, "function", e.pkg, d.Pos(), d.End())
			end := d.End()
			if d.Body != nil {
				end = d.Body.Lbrace
			}
			s.Detail = e.text(d.Pos(), end, 160)
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind = "method"
				s.Container = recvTypeName(d.Recv.List[0].Type)
			}
			out = append(out, s)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				out = append(out, e.spec(d, spec)...)
			}
		}
	}
	return out
}

type goExtractor struct {
	p   string
	src []byte
	tf  *token.File
	pkg string
}

func (e *goExtractor) sym(id *ast.Ident, kind, container string, start, end token.Pos) Symbol {
	pos := e.tf.PositionFor(id.Pos(), false)
	endPos := e.tf.PositionFor(end, false)
	return Symbol{Name: id.Name, Kind: kind, Path: e.p, Line: pos.Line, Column: pos.Column,
		EndLine: endPos.Line, EndColumn: endPos.Column, Container: container}
}

// text returns the source between two positions with runs of white space
// made one space, cut at max bytes.
func (e *goExtractor) text(from, to token.Pos, max int) string {
	a, b := e.tf.Offset(from), e.tf.Offset(to)
	if a < 0 || b > len(e.src) || a >= b {
		return ""
	}
	s := strings.Join(strings.Fields(string(e.src[a:b])), " ")
	if len(s) > max {
		n := max
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

func (e *goExtractor) spec(d *ast.GenDecl, spec ast.Spec) []Symbol {
	switch s := spec.(type) {
	case *ast.TypeSpec:
		kind := "type"
		var children []Symbol
		switch t := s.Type.(type) {
		case *ast.StructType:
			kind = "struct"
			children = e.fields(t.Fields, "field", s.Name.Name)
		case *ast.InterfaceType:
			kind = "interface"
			children = e.fields(t.Methods, "method", s.Name.Name)
		}
		sym := e.sym(s.Name, kind, e.pkg, s.Pos(), s.End())
		switch kind {
		case "struct", "interface":
			sym.Detail = "type " + s.Name.Name + " " + kind
		default:
			sym.Detail = "type " + e.text(s.Pos(), s.End(), 120)
		}
		sym.Children = children
		return []Symbol{sym}
	case *ast.ValueSpec:
		kind := "variable"
		if d.Tok == token.CONST {
			kind = "constant"
		}
		var out []Symbol
		for _, n := range s.Names {
			if n.Name == "_" {
				continue
			}
			sym := e.sym(n, kind, e.pkg, s.Pos(), s.End())
			sym.Detail = d.Tok.String() + " " + e.text(s.Pos(), s.End(), 120)
			out = append(out, sym)
		}
		return out
	}
	return nil
}

// fields lists a struct's fields or an interface's methods; embedded ones
// are named after their type.
func (e *goExtractor) fields(fl *ast.FieldList, kind, container string) []Symbol {
	if fl == nil {
		return nil
	}
	var out []Symbol
	for _, f := range fl.List {
		detail := e.text(f.Pos(), f.End(), 120)
		if len(f.Names) == 0 {
			id := embeddedName(f.Type)
			if id == nil {
				continue
			}
			k := kind
			if kind == "method" {
				k = "interface" // an embedded interface or type set
			}
			s := e.sym(id, k, container, f.Pos(), f.End())
			s.Detail = detail
			out = append(out, s)
			continue
		}
		for _, n := range f.Names {
			s := e.sym(n, kind, container, f.Pos(), f.End())
			s.Detail = detail
			out = append(out, s)
		}
	}
	return out
}

// embeddedName returns the type name of an embedded field (T, *T, p.T, T[X]).
func embeddedName(x ast.Expr) *ast.Ident {
	for {
		switch t := x.(type) {
		case *ast.Ident:
			return t
		case *ast.StarExpr:
			x = t.X
		case *ast.SelectorExpr:
			return t.Sel
		case *ast.IndexExpr:
			x = t.X
		case *ast.IndexListExpr:
			x = t.X
		default:
			return nil
		}
	}
}

// recvTypeName returns the receiver's base type name: T for T, *T, T[K].
func recvTypeName(x ast.Expr) string {
	if id := embeddedName(x); id != nil {
		return id.Name
	}
	return ""
}

// languageOf names the language of a file by its name, or "" for files the
// index does not read.
func languageOf(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		switch name {
		case "Makefile", "makefile", "GNUmakefile":
			return ""
		}
		return ""
	}
	switch strings.ToLower(name[i+1:]) {
	case "go":
		return "go"
	case "py", "pyi":
		return "python"
	case "js", "jsx", "mjs", "cjs":
		return "javascript"
	case "ts", "tsx", "mts", "cts":
		return "typescript"
	case "rs":
		return "rust"
	case "java":
		return "java"
	case "c", "h":
		return "c"
	case "cc", "cpp", "cxx", "hpp", "hh", "hxx":
		return "cpp"
	case "sh", "bash", "zsh":
		return "shell"
	case "md", "markdown":
		return "markdown"
	}
	return ""
}
