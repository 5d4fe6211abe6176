package codeindex

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// A few of go vet's checks, the cheap ones with no false positives worth
// the name, run on every fully checked package: printf format strings
// against their arguments, Println calls with formatting directives, and
// self-assignments. They are warnings with source "vet".

// printfFuncs maps printf-like functions to the index of their format.
var printfFuncs = map[string]int{
	"fmt.Printf": 0, "fmt.Sprintf": 0, "fmt.Errorf": 0, "fmt.Fprintf": 1, "fmt.Appendf": 1,
	"log.Printf": 0, "log.Fatalf": 0, "log.Panicf": 0,
	"(*log.Logger).Printf": 0, "(*log.Logger).Fatalf": 0, "(*log.Logger).Panicf": 0,
	"(*testing.common).Errorf": 0, "(*testing.common).Fatalf": 0, "(*testing.common).Logf": 0, "(*testing.common).Skipf": 0,
}

// printlnFuncs are print-like functions that do not format.
var printlnFuncs = map[string]bool{
	"fmt.Println": true, "fmt.Sprintln": true, "fmt.Print": true, "fmt.Sprint": true, "fmt.Fprintln": true,
	"log.Println": true, "log.Print": true, "log.Fatal": true, "log.Fatalln": true, "log.Panic": true,
	"(*testing.common).Error": true, "(*testing.common).Fatal": true, "(*testing.common).Log": true,
}

// vet runs the checks on a unit's files.
func vet(fset *token.FileSet, u *goUnit) []Diagnostic {
	var out []Diagnostic
	report := func(pos token.Pos, format string, args ...any) {
		p := fset.PositionFor(pos, false)
		out = append(out, Diagnostic{Path: p.Filename, Line: p.Line, Column: p.Column,
			Severity: "warning", Message: fmt.Sprintf(format, args...), Source: "vet"})
	}
	for _, f := range u.files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				vetCall(u.info, n, report)
			case *ast.AssignStmt:
				if n.Tok != token.ASSIGN || len(n.Lhs) != len(n.Rhs) {
					break
				}
				for i, l := range n.Lhs {
					if pure(l) && types.ExprString(l) == types.ExprString(n.Rhs[i]) {
						report(l.Pos(), "self-assignment of %s to %s", types.ExprString(n.Rhs[i]), types.ExprString(l))
					}
				}
			}
			return true
		})
	}
	return out
}

// pure reports whether evaluating x twice reads the same variable: an
// identifier or a chain of field selections.
func pure(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name != "_"
	case *ast.SelectorExpr:
		return pure(x.X)
	}
	return false
}

// calleeName is the full name of a called function ("fmt.Printf",
// "(*log.Logger).Printf"), or "".
func calleeName(info *types.Info, call *ast.CallExpr) string {
	var id *ast.Ident
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		id = fn
	case *ast.SelectorExpr:
		id = fn.Sel
	default:
		return ""
	}
	f, ok := info.Uses[id].(*types.Func)
	if !ok {
		return ""
	}
	return f.Origin().FullName()
}

func vetCall(info *types.Info, call *ast.CallExpr, report func(token.Pos, string, ...any)) {
	name := calleeName(info, call)
	if name == "" || call.Ellipsis.IsValid() {
		return
	}
	if i, ok := printfFuncs[name]; ok && len(call.Args) > i {
		lit, format, ok := stringLit(call.Args[i])
		if !ok {
			return
		}
		want, ok := countVerbs(format)
		if !ok {
			return
		}
		if have := len(call.Args) - i - 1; have != want {
			report(call.Pos(), "%s format %s wants %d %s but the call has %d", short(name), lit.Value, want, plural(want, "argument"), have)
		}
		return
	}
	if printlnFuncs[name] && len(call.Args) > 0 {
		_, s, ok := stringLit(call.Args[0])
		if !ok {
			return
		}
		if d := directive(s); d != "" {
			report(call.Pos(), "%s call has possible Printf formatting directive %s", short(name), d)
		}
	}
}

func short(name string) string {
	if i := strings.LastIndex(name, ")."); i >= 0 {
		return name[i+2:]
	}
	return name
}

func plural(n int, w string) string {
	if n == 1 {
		return w
	}
	return w + "s"
}

// countVerbs counts the arguments a printf format reads; false when it
// uses explicit argument indexes (not checked).
func countVerbs(format string) (int, bool) {
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue
		}
		for i < len(format) && strings.IndexByte("+-# 0", format[i]) >= 0 {
			i++
		}
		for i < len(format) && (format[i] >= '0' && format[i] <= '9' || format[i] == '*' || format[i] == '.' || format[i] == '[') {
			switch format[i] {
			case '*':
				n++
			case '[':
				return 0, false
			}
			i++
		}
		if i >= len(format) {
			return n, true // a dangling % is vet's other message
		}
		n++
	}
	return n, true
}

// directive returns the first printf directive in s ("%d"), or "".
func directive(s string) string {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(s) && strings.IndexByte("+-# 0123456789.", s[j]) >= 0 {
			j++
		}
		if j < len(s) && strings.IndexByte("vTtbcdoOqxXUeEfFgGsp", s[j]) >= 0 && (j == i+1 || s[j] != ' ') {
			return s[i : j+1]
		}
	}
	return ""
}

// stringLit returns the string literal e and its value; ok is false when
// e is not one.
func stringLit(e ast.Expr) (lit *ast.BasicLit, value string, ok bool) {
	lit, ok = e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return nil, "", false
	}
	value, err := strconv.Unquote(lit.Value)
	return lit, value, err == nil
}
