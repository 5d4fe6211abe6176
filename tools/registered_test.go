package tools

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// toolDefinition is a package-level variable of a non-test file of tools/
// whose value defines a tool; File is the file's name.
type toolDefinition struct {
	Var, Name, Pos, File string
}

// toolDefinitions parses the non-test Go files of dir and returns every
// package-level variable whose value defines a tool: a Tool literal
// (&Tool{...}), a Def literal (Def[A]{...}) or a call of Define or builtin,
// however wrapped (editTool(...), withPatchNotes(...)). The tool's name is
// the Name field of that literal's Spec, which must be a string literal.
func toolDefinitions(t *testing.T, dir string) []toolDefinition {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var defs []toolDefinition
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, v := range vs.Values {
					lit, found := findToolLiteral(v)
					if !found {
						continue
					}
					def := toolDefinition{Var: vs.Names[i].Name, Pos: fset.Position(v.Pos()).String(), File: name}
					if lit != nil {
						def.Name = literalName(lit)
					}
					defs = append(defs, def)
				}
			}
		}
	}
	return defs
}

// findToolLiteral reports whether e defines a tool, and the composite
// literal that holds its fields when there is one. Function literals are
// not entered: a tool made inside a function is not a package-level
// definition.
func findToolLiteral(e ast.Expr) (lit *ast.CompositeLit, found bool) {
	ast.Inspect(e, func(n ast.Node) bool {
		if found && lit != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if name := funcName(n.Fun); name == "Define" || name == "builtin" {
				found = true
			}
		case *ast.CompositeLit:
			if isToolType(n.Type) {
				found, lit = true, n
				return false
			}
		}
		return true
	})
	return lit, found
}

// funcName is the name of a called function, its type arguments dropped.
func funcName(e ast.Expr) string {
	switch f := e.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.IndexExpr:
		return funcName(f.X)
	case *ast.IndexListExpr:
		return funcName(f.X)
	}
	return ""
}

// isToolType reports whether a composite literal's type is Tool or Def[A].
func isToolType(e ast.Expr) bool {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name == "Tool"
	case *ast.IndexExpr:
		id, ok := t.X.(*ast.Ident)
		return ok && id.Name == "Def"
	}
	return false
}

// literalName is the string literal of the Name field of the literal's
// Spec, or "".
func literalName(lit *ast.CompositeLit) string {
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		k, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		if spec, ok := kv.Value.(*ast.CompositeLit); ok && k.Name == "Spec" {
			return literalName(spec)
		}
		if k.Name != "Name" {
			continue
		}
		if b, ok := kv.Value.(*ast.BasicLit); ok && b.Kind == token.STRING {
			s, err := strconv.Unquote(b.Value)
			if err == nil {
				return s
			}
		}
	}
	return ""
}

// TestEveryToolIsRegistered: a tool defined in a file of tools/ and left out
// of the built-in registry would be dead code that looks alive; every
// definition must be registered, under the name it defines.
func TestEveryToolIsRegistered(t *testing.T) {
	t.Parallel()
	defs := toolDefinitions(t, ".")
	if len(defs) < 30 {
		t.Fatalf("found only %d tool definitions in tools/: the parser misses a form of definition", len(defs))
	}
	reg := NewBuiltinRegistry()
	builtins := map[string]bool{}
	for _, tool := range Builtins() {
		builtins[tool.Name] = true
	}
	var missing []string
	for _, d := range defs {
		switch {
		case d.Name == "":
			t.Errorf("%s: tool %s: its Name is not a string literal, so this test cannot check it", d.Pos, d.Var)
		case !builtins[d.Name]:
			missing = append(missing, d.Name+" ("+d.Var+", "+d.Pos+")")
		default:
			if got, ok := reg.Lookup(d.Name); !ok || got.Name != d.Name {
				t.Errorf("%s: tool %s is in Builtins but the registry finds %v", d.Pos, d.Name, got)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("tools defined but not registered (add them to the built-in tools):\n  %s", strings.Join(missing, "\n  "))
	}
	if len(defs) != len(builtins) {
		t.Errorf("%d tool definitions in tools/, %d built-in tools", len(defs), len(builtins))
	}
}

// TestEveryToolHasItsFile: one file per tool, named after it. Each built-in
// tool is defined in tools/<name>.go (its Name literal is there), and a
// file defines one tool at the most, so that a tool's code is found by its
// name. (A file that defines a tool the registry lacks fails
// TestEveryToolIsRegistered.)
func TestEveryToolHasItsFile(t *testing.T) {
	t.Parallel()
	checkToolFiles(t, toolDefinitions(t, "."), Builtins())
}

// checkToolFiles reports the built-in tools that are not defined in a file
// named after them, and the files that define more than one tool.
func checkToolFiles(t testing.TB, defs []toolDefinition, builtins []*Tool) {
	t.Helper()
	byName := map[string][]toolDefinition{}
	perFile := map[string][]string{}
	for _, d := range defs {
		byName[d.Name] = append(byName[d.Name], d)
		perFile[d.File] = append(perFile[d.File], d.Name)
	}
	for _, tool := range builtins {
		want := tool.Name + ".go"
		switch ds := byName[tool.Name]; {
		case len(ds) == 0:
			t.Errorf("built-in tool %s: no definition with Name %q in the files of tools/; define it in %s", tool.Name, tool.Name, want)
		case len(ds) > 1:
			t.Errorf("tool %s is defined %d times: %v", tool.Name, len(ds), ds)
		case ds[0].File != want:
			t.Errorf("%s: tool %s is defined in %s; define it in %s (one file per tool, named after it)", ds[0].Pos, tool.Name, ds[0].File, want)
		}
	}
	for _, f := range slices.Sorted(maps.Keys(perFile)) {
		if names := perFile[f]; len(names) > 1 {
			t.Errorf("%s defines %d tools (%s); give each its own file, named after it", f, len(names), strings.Join(names, ", "))
		}
	}
}

// TestCheckToolFilesFails: the check above fails for a tool defined in a
// file of another name, for a file that defines two tools, and for a
// built-in tool with no definition, and passes for the real layout.
func TestCheckToolFilesFails(t *testing.T) {
	t.Parallel()
	tool := func(name string) *Tool { return &Tool{Spec: Spec{Name: name}} }
	for _, tt := range []struct {
		name     string
		defs     []toolDefinition
		builtins []*Tool
		fails    bool
	}{
		{"named after it", []toolDefinition{{Name: "glob", File: "glob.go"}}, []*Tool{tool("glob")}, false},
		{"another file", []toolDefinition{{Name: "shell_kill", File: "shell_background.go"}}, []*Tool{tool("shell_kill")}, true},
		{"two in a file", []toolDefinition{{Name: "glob", File: "glob.go"}, {Name: "grep", File: "glob.go"}},
			[]*Tool{tool("glob"), tool("grep")}, true},
		{"not defined", nil, []*Tool{tool("glob")}, true},
	} {
		rec := &failRecorder{TB: t}
		checkToolFiles(rec, tt.defs, tt.builtins)
		if rec.failed != tt.fails {
			t.Errorf("%s: failed %v, want %v (%q)", tt.name, rec.failed, tt.fails, rec.msgs)
		}
	}
}

// failRecorder records the failures of a check instead of failing the test.
type failRecorder struct {
	testing.TB
	failed bool
	msgs   []string
}

func (r *failRecorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// TestEveryToolHasACategory: each built-in tool names its category (one of
// Categories, custom being for the configuration's tools).
func TestEveryToolHasACategory(t *testing.T) {
	t.Parallel()
	for _, tl := range NewBuiltinRegistry().List(nil) {
		if tl.Category == "" || tl.Category == "custom" || !slices.Contains(Categories, tl.Category) {
			t.Errorf("%s: category %q", tl.Name, tl.Category)
		}
	}
	bad := Define(Def[json.RawMessage]{Spec: Spec{Name: "x", Category: "misc", Annotations: Annotations{Approval: "auto"}},
		Execute: func(*Call, json.RawMessage) (*Result, error) { return Success("", nil), nil }})
	if err := NewRegistry(nil).Register(bad); err == nil {
		t.Error("a tool of an unknown category was registered")
	}
}
