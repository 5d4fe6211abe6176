// Finding and reading the Go packages of the index: modules and go.mod,
// import paths to directories, a package's files, parsing them (with
// function bodies stripped where they are not needed).

package codeindex

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/scanner"
	"go/token"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentls/agentls/workspace"
)

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
	} else if _, ok := workspace.Within(goroot, srcDir); ok {
		for _, v := range []string{filepath.Join(goroot, "cmd", "vendor"), filepath.Join(goroot, "vendor")} {
			if _, in := workspace.Within(filepath.Dir(v), srcDir); !in {
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

// importPath guesses the import path of the package in dir.
func (g *goChecker) importPath(dir string) string {
	m := g.moduleOf(dir)
	if m.path != "" {
		if rel, ok := workspace.Within(m.dir, dir); ok {
			if m.path == "std" {
				return filepath.ToSlash(rel)
			}
			if rel == "." {
				return m.path
			}
			return m.path + "/" + filepath.ToSlash(rel)
		}
	}
	if rel, ok := workspace.Within(filepath.Join(g.plain.GOROOT, "src"), dir); ok {
		return filepath.ToSlash(rel)
	}
	return filepath.Base(dir)
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

func (g *goChecker) hasXTest(dir string) bool {
	main := g.mainName(g.packageFiles(dir, ""))
	for _, p := range g.packageFiles(dir, "xtest") {
		if strings.HasSuffix(p, "_test.go") && g.packageClause(p) == main+"_test" {
			return true
		}
	}
	return false
}
