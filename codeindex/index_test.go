package codeindex

import (
	"context"
	"flag"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/index/*.txtar")

// newTestIndex writes files into a temporary root and builds an index of it.
func newTestIndex(t testing.TB, files map[string]string) (*Index, *workspace.Workspace, string) {
	t.Helper()
	return newTestIndexIn(t, t.TempDir(), files)
}

// newTestIndexIn is newTestIndex with the root given.
func newTestIndexIn(t testing.TB, root string, files map[string]string) (*Index, *workspace.Workspace, string) {
	t.Helper()
	testenv.WriteFiles(t, root, files)
	ws := workspacetest.New(t, root)
	ix := New(ws)
	t.Cleanup(ix.Close)
	ix.Start(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !ix.Wait(ctx) {
		t.Fatal("index build did not finish")
	}
	return ix, ws, root
}

// TestIndexTxtar runs the queries of each testdata/index/*.txtar file
// against an index of its files and compares the answers with its want
// section (rewritten with -update).
func TestIndexTxtar(t *testing.T) {
	t.Parallel()
	for _, c := range testenv.Txtars(t, "testdata/index/*.txtar") {
		t.Run(c.Name, func(t *testing.T) {
			files := c.Sections() // the tree, but for the queries and their answers
			queries, want := files["queries"], files["want"]
			delete(files, "queries")
			delete(files, "want")
			ix, ws, root := newTestIndex(t, files)
			var out strings.Builder
			for _, q := range strings.Split(strings.TrimSpace(queries), "\n") {
				fmt.Fprintf(&out, "## %s\n", q)
				out.WriteString(runQuery(t, ix, ws, root, q))
			}
			got := out.String()
			if *update {
				for i := range c.Archive.Files {
					if c.Archive.Files[i].Name == "want" {
						c.Archive.Files[i].Data = []byte(got)
					}
				}
				if err := os.WriteFile(c.Path, txtar.Format(c.Archive), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("answers differ from %s (run with -update to accept):\n%s", c.Path, lineDiff(want, got))
			}
		})
	}
}

// lineDiff shows the first differing lines.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, a, c)
			if b.Len() > 2000 {
				break
			}
		}
	}
	return b.String()
}

// position parses path:line:word into a file and a 1-based line and byte
// column (the word's first occurrence on that line); path:line:#col gives
// the column itself.
func position(t *testing.T, root, spec string) (string, int, int) {
	parts := strings.SplitN(spec, ":", 3)
	if len(parts) != 3 {
		t.Fatalf("bad position %q", spec)
	}
	p := filepath.Join(root, filepath.FromSlash(parts[0]))
	line, _ := strconv.Atoi(parts[1])
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	text := string(lineOf(src, line))
	if col, err := strconv.Atoi(strings.TrimPrefix(parts[2], "#")); err == nil && strings.HasPrefix(parts[2], "#") {
		return p, line, col
	}
	i := strings.Index(text, parts[2])
	if i < 0 {
		t.Fatalf("%q is not on line %d of %s: %q", parts[2], line, parts[0], text)
	}
	return p, line, i + 1
}

func runQuery(t *testing.T, ix *Index, ws *workspace.Workspace, root, q string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	verb, arg, _ := strings.Cut(q, " ")
	rel := func(p string) string {
		if r, ok := workspace.Within(filepath.Join(runtime.GOROOT(), "src"), p); ok {
			return "$GOROOT/src/" + filepath.ToSlash(r)
		}
		return ws.Rel(p)
	}
	var b strings.Builder
	answer := func(a *Answer, err error) {
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
			return
		}
		fmt.Fprintf(&b, "precision=%s kind=%s name=%s partial=%v\n", a.Precision, a.Kind, a.Name, a.Partial)
		for _, l := range a.Locations {
			fmt.Fprintf(&b, "%s:%d:%d-%d:%d\n", rel(l.Path), l.Line, l.Column, l.EndLine, l.EndColumn)
		}
		if a.Signature != "" {
			fmt.Fprintf(&b, "signature: %s\n", a.Signature)
		}
		if a.Doc != "" {
			fmt.Fprintf(&b, "doc: %s\n", strings.ReplaceAll(a.Doc, "\n", "\n     "))
		}
	}
	switch verb {
	case "outline":
		syms, err := ix.Outline(filepath.Join(root, arg))
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		var walk func([]Symbol, string)
		walk = func(syms []Symbol, indent string) {
			for _, s := range syms {
				fmt.Fprintf(&b, "%s%s %s %d:%d-%d container=%s detail=%q\n", indent, s.Kind, s.Name, s.Line, s.Column, s.EndLine, s.Container, s.Detail)
				walk(s.Children, indent+"  ")
			}
		}
		walk(syms, "")
	case "symbols":
		syms, partial := ix.Search(arg, 5)
		fmt.Fprintf(&b, "partial=%v\n", partial)
		for _, s := range syms {
			fmt.Fprintf(&b, "%s %s.%s %s:%d:%d\n", s.Kind, s.Container, s.Name, rel(s.Path), s.Line, s.Column)
		}
	case "definition":
		p, l, c := position(t, root, arg)
		answer(ix.Definition(ctx, p, l, c))
	case "references":
		p, l, c := position(t, root, arg)
		answer(ix.References(ctx, p, l, c, true))
	case "hover":
		p, l, c := position(t, root, arg)
		answer(ix.Hover(ctx, p, l, c))
	case "diagnostics":
		ds, partial, err := ix.Diagnostics(ctx, filepath.Join(root, arg))
		if err != nil {
			fmt.Fprintf(&b, "error: %v\n", err)
		}
		fmt.Fprintf(&b, "partial=%v\n", partial)
		for _, d := range ds {
			fmt.Fprintf(&b, "%s:%d:%d-%d:%d %s %s: %s\n", rel(d.Path), d.Line, d.Column, d.EndLine, d.EndColumn, d.Severity, d.Source, d.Message)
		}
	default:
		t.Fatalf("unknown query %q", q)
	}
	return b.String()
}

// TestIndexIncremental checks that overlay changes and removals reach the
// outline, the search and the type checker.
func TestIndexIncremental(t *testing.T) {
	t.Parallel()
	ix, ws, root := newTestIndex(t, map[string]string{
		"go.mod":   "module m\n\ngo 1.22\n",
		"p/p.go":   "package p\n\nfunc Old() int { return 1 }\n",
		"q/q.go":   "package q\n\nimport \"m/p\"\n\nvar V = p.Old()\n",
		"notes.md": "# Notes\n",
	})
	p := filepath.Join(root, "p", "p.go")
	q := filepath.Join(root, "q", "q.go")
	ctx := context.Background()
	if ds, _, err := ix.Diagnostics(ctx, q); err != nil || len(ds) != 0 {
		t.Fatalf("diagnostics before the change = %v, %v; want none", ds, err)
	}
	// The editor renames Old to New in an unsaved buffer.
	ws.Overlays.Open(workspace.Document{Path: p, Version: 1, Text: "package p\n\nfunc New() int { return 1 }\n"})
	ix.Flush()
	if syms, _ := ix.Search("New", 5); len(syms) != 1 || syms[0].Path != p {
		t.Errorf("search New after the change = %+v", syms)
	}
	if syms, _ := ix.Search("Old", 5); len(syms) != 0 {
		t.Errorf("search Old after the change = %+v, want nothing", syms)
	}
	ds, _, err := ix.Diagnostics(ctx, q)
	if err != nil || len(ds) != 1 || !strings.Contains(ds[0].Message, "Old") {
		t.Errorf("diagnostics after the change = %+v, %v; want one about Old", ds, err)
	}
	// A file written behind the editor's back (no notification) is seen by
	// the type checker and the outline.
	ws.Overlays.Close(p)
	ix.Changed(p)
	ix.Flush()
	if ds, _, _ := ix.Diagnostics(ctx, q); len(ds) != 0 {
		t.Errorf("diagnostics after close = %+v, want none (the disk has Old)", ds)
	}
	time.Sleep(10 * time.Millisecond) // a distinct modification time
	os.WriteFile(p, []byte("package p\n\nfunc Newer() int { return 1 }\n"), 0o644)
	if ds, _, _ := ix.Diagnostics(ctx, q); len(ds) != 1 {
		t.Errorf("diagnostics after a silent write = %+v, want one about Old", ds)
	}
	if syms, _ := ix.Outline(p); len(syms) != 1 || syms[0].Name != "Newer" {
		t.Errorf("outline after a silent write = %+v", syms)
	}
	// A file removed from disk leaves the index.
	os.Remove(filepath.Join(root, "notes.md"))
	ix.Changed(filepath.Join(root, "notes.md"))
	ix.Flush()
	if syms, _ := ix.Search("Notes", 5); len(syms) != 0 {
		t.Errorf("search Notes after removal = %+v", syms)
	}
}

// TestIndexPartial checks that answers before the build finished say so.
func TestIndexPartial(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i := range 50 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.py", i)), []byte(fmt.Sprintf("def f%d():\n    pass\n", i)), 0o644)
	}
	ws := workspacetest.New(t, root)
	ix := New(ws)
	defer ix.Close()
	if _, partial := ix.Search("f1", 5); !partial {
		t.Error("search before any build is not partial")
	}
	if st := ix.Status(); st.Complete {
		t.Errorf("status before build = %+v", st)
	}
	var reports []int
	ix.Start(func(done, total int) { reports = append(reports, done) })
	ix.Wait(context.Background())
	if syms, partial := ix.Search("f1", 5); partial || len(syms) == 0 || syms[0].Name != "f1" {
		t.Errorf("search after build = %+v partial=%v", syms, partial)
	}
	if st := ix.Status(); !st.Complete || st.Files != 50 {
		t.Errorf("status after build = %+v", st)
	}
	if len(reports) == 0 || reports[len(reports)-1] != 50 {
		t.Errorf("progress reports = %v, want to end at 50", reports)
	}
}

// TestIndexPositionErrors checks that bad positions are errors that name
// the identifiers of the line.
func TestIndexPositionErrors(t *testing.T) {
	t.Parallel()
	ix, _, root := newTestIndex(t, map[string]string{
		"go.mod": "module m\n\ngo 1.22\n",
		"a.go":   "package m\n\nfunc F() {}\n",
		"x.py":   "def g():\n    pass\n",
	})
	ctx := context.Background()
	tests := []struct {
		file      string
		line, col int
		want      string
	}{
		{"a.go", 3, 5, "F at column 6"},
		{"a.go", 30, 1, "out of range"},
		{"x.py", 1, 8, "no identifier"},
		{"x.py", 9, 1, "out of range"},
	}
	for _, tt := range tests {
		_, err := ix.Definition(ctx, filepath.Join(root, tt.file), tt.line, tt.col)
		if _, ok := err.(*PositionError); !ok || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:%d:%d: err = %v, want a PositionError containing %q", tt.file, tt.line, tt.col, err, tt.want)
		}
	}
}

// TestIndexMatcher checks the ranking of the fuzzy search.
func TestIndexMatcher(t *testing.T) {
	t.Parallel()
	m := newMatcher("NewReader")
	order := []string{"NewReader", "newreader", "NewReaderSize", "newReaderFrom", "MyNewReader", "NewRecordReader"}
	prev := 1 << 30
	for _, name := range order {
		s := m.score(name)
		if s <= 0 || s > prev {
			t.Errorf("score(%q) = %d after %d: out of order", name, s, prev)
		}
		prev = s
	}
	if s := m.score("Reader"); s != 0 {
		t.Errorf("score(Reader) = %d, want 0", s)
	}
	ab := newMatcher("NR")
	if a, b := ab.score("NewReader"), ab.score("nret"); a <= b {
		t.Errorf("initials: score(NewReader) = %d, not above score(nret) = %d", a, b)
	}
	if s := newMatcher("rf").score("read_file"); s < 70 {
		t.Errorf("initials: score(read_file) = %d", s)
	}
}

// TestIndexGOROOT indexes the Go source tree and finds bufio.NewReader by
// name and, precisely, from a use in another package.
func TestIndexGOROOT(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("indexes the whole Go source tree")
	}
	src := testenv.GoSrc(t)
	ws := workspacetest.New(t, src)
	ix := New(ws)
	defer ix.Close()
	start := time.Now()
	ix.Start(nil)
	ix.Wait(context.Background())
	st := ix.Status()
	t.Logf("indexed %d files of %s in %s", st.Files, src, time.Since(start))
	syms, partial := ix.Search("NewReader", 10)
	found := false
	for _, s := range syms {
		if s.Name == "NewReader" && s.Container == "bufio" && ws.Rel(s.Path) == "bufio/bufio.go" {
			found = true
		}
	}
	if !found || partial {
		t.Errorf("symbols NewReader = %+v (partial %v); want bufio.NewReader", syms, partial)
	}
	if syms, _ := ix.Search("bufio.NewReader", 1); len(syms) != 1 || syms[0].Container != "bufio" {
		t.Errorf("symbols bufio.NewReader = %+v", syms)
	}
	// definition of bufio.NewReader from a use in net/http (type-checked)
	// (not every Go version uses it in client.go; then the transport)
	var p string
	line, col := 0, 0
	for _, name := range []string{"client.go", "transport.go"} {
		p = filepath.Join(src, "net", "http", name)
		data, _ := os.ReadFile(p)
		for i, l := range strings.Split(string(data), "\n") {
			if j := strings.Index(l, "bufio.NewReader"); j >= 0 {
				line, col = i+1, j+len("bufio.")+1
				break
			}
		}
		if line != 0 {
			break
		}
	}
	if line == 0 {
		t.Skip("no use of bufio.NewReader found in net/http")
	}
	start = time.Now()
	a, err := ix.Definition(context.Background(), p, line, col)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("definition from %s:%d:%d in %s", ws.Rel(p), line, col, time.Since(start))
	if a.Precision != PrecisionType || len(a.Locations) != 1 || ws.Rel(a.Locations[0].Path) != "bufio/bufio.go" {
		t.Errorf("definition = %+v", a)
	}
}

// benchWorkspace returns the workspace of the benchmarks' tree:
// $(go env GOROOT)/src, or the tree AGENTLS_BENCH_TREE names.
func benchWorkspace(b *testing.B) (*workspace.Workspace, string) {
	src := os.Getenv("AGENTLS_BENCH_TREE")
	if src == "" {
		src = testenv.GoSrc(b)
	}
	ws := workspacetest.New(b, src)
	return ws, src
}

// BenchmarkIndexGOROOT measures a full build of the index of
// $(go env GOROOT)/src and prints its wall time, the CPU time it used (a
// steadier figure on a busy machine) and the heap the index keeps:
//
//	go test -bench Index -run '^$' -benchtime 3x ./codeindex
//
// AGENTLS_BENCH_TREE names another tree (the monorepo tree of
// scripts/monorepo-tree.sh).
func BenchmarkIndexGOROOT(b *testing.B) {
	ws, src := benchWorkspace(b)
	var files, syms int
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cpu0 := testenv.CPUTime()
		ix := New(ws)
		start := time.Now()
		ix.Start(nil)
		ix.Wait(context.Background())
		d := time.Since(start)
		cpu := testenv.CPUTime() - cpu0
		st := ix.Status()
		files = st.Files
		syms = 0
		ix.mu.RLock()
		for _, f := range ix.files {
			syms += f.nsyms()
		}
		ix.mu.RUnlock()
		runtime.GC()
		runtime.ReadMemStats(&after)
		kept := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		fmt.Printf("index build of %s: %d files, %d symbols in %s (cpu %s, GOMAXPROCS %d); index heap %.1f MB\n",
			src, files, syms, d.Round(time.Millisecond), cpu.Round(time.Millisecond), runtime.GOMAXPROCS(0), float64(kept)/(1<<20))
		runtime.KeepAlive(ix)
		ix.Close()
	}
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(syms), "symbols")
}

// TestIndexStripBodies checks on the Go source tree that removing function
// bodies and literals before parsing changes no outline.
func TestIndexStripBodies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("reads the whole Go source tree")
	}
	src := testenv.GoSrc(t)
	var n atomic.Int64
	workspace.Walk(context.Background(), src, workspace.WalkOptions{Prune: pruneIndexDir}, func(f *workspace.File) error {
		if !strings.HasSuffix(f.Name, ".go") {
			return nil
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			return nil
		}
		want := fmt.Sprintf("%+v", parseGoSymbols(f.Path, append([]byte(nil), data...)))
		got := fmt.Sprintf("%+v", goSymbols(f.Path, data))
		if got != want {
			t.Errorf("%s: outline changes when bodies are stripped", f.Rel)
		}
		n.Add(1)
		return nil
	})
	t.Logf("%d files compared", n.Load())
}

// TestIndexRoots checks that the index follows the workspace folders.
func TestIndexRoots(t *testing.T) {
	t.Parallel()
	ix, ws, a := newTestIndex(t, map[string]string{"one.py": "def in_a():\n    pass\n"})
	b := t.TempDir()
	os.WriteFile(filepath.Join(b, "two.py"), []byte("def in_b():\n    pass\n"), 0o644)
	ws.SetRoots([]string{a, b})
	// Right after a root is added an answer is either marked partial or
	// already has the new root: never a complete answer without it. (The
	// rebuild of a tree this small may be done before the search runs.)
	if syms, partial := ix.Search("in_b", 5); !partial && len(syms) != 1 {
		t.Errorf("search right after a root was added = %+v, neither partial nor complete", syms)
	}
	ix.Wait(context.Background())
	if syms, partial := ix.Search("in_b", 5); len(syms) != 1 || partial {
		t.Errorf("search in the added root = %+v (partial %v)", syms, partial)
	}
	ws.SetRoots([]string{b})
	if syms, _ := ix.Search("in_a", 5); len(syms) != 0 {
		t.Errorf("search in a removed root = %+v", syms)
	}
}

// TestIndexReferencesBudget checks that a references query out of time
// says it is partial.
func TestIndexReferencesBudget(t *testing.T) {
	// Not parallel: it sets the package's ReferencesBudget.
	ix, _, root := newTestIndex(t, map[string]string{
		"go.mod": "module m\n\ngo 1.22\n",
		"p/p.go": "package p\n\nfunc F() {}\n",
		"q/q.go": "package q\n\nimport \"m/p\"\n\nfunc G() { p.F() }\n",
	})
	defer func(b time.Duration) { ReferencesBudget = b }(ReferencesBudget)
	for _, tt := range []struct {
		budget  time.Duration
		partial bool
		n       int
	}{{time.Minute, false, 2}, {0, true, 0}} {
		ReferencesBudget = tt.budget
		a, err := ix.References(context.Background(), filepath.Join(root, "p", "p.go"), 3, 6, true)
		if err != nil || a.Partial != tt.partial || len(a.Locations) != tt.n || tt.partial && !strings.Contains(a.Note, "time budget") {
			t.Errorf("budget %s: %+v, %v", tt.budget, a, err)
		}
	}
}

// TestIndexLanguages checks the line-based extractors on constructs the
// txtar files do not show.
func TestIndexLanguages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, src string
		want      []string // kind name container, depth-first
	}{
		{"a.py", "@decorator\nasync def fetch(url):\n    def inner():\n        pass\n    return 1\n\nclass A(B):\n    @property\n    def x(self):\n        return self._x\n",
			[]string{"function fetch ", "function inner fetch", "class A ", "method x A"}},
		{"a.ts", "export default class Store<T> {\n  private items: T[] = [];\n  async load(id: string): Promise<T> {\n    return this.items[0];\n  }\n}\nexport const handler = async (req: Req) => {\n  return 1;\n};\n",
			[]string{"class Store ", "property items Store", "method load Store", "function handler "}},
		{"a.rs", "pub mod net {\n    pub(crate) async fn connect() {}\n}\nimpl<T: Clone> From<T> for Wrapper<T> {\n    fn from(t: T) -> Self { Wrapper(t) }\n}\n",
			[]string{"module net ", "function connect net", "impl Wrapper ", "method from Wrapper"}},
		{"a.hpp", "namespace geo {\nclass Point {\npublic:\n    double x;\n    double norm() const;\n};\n}\n",
			[]string{"module geo ", "class Point geo", "field x Point", "method norm Point"}},
		{"a.cc", "#include \"a.hpp\"\n\ndouble geo::Point::norm() const {\n    return x;\n}\n",
			[]string{"method norm geo::Point"}},
		{"A.java", "public interface Shape {\n    double area();\n    default String name() {\n        return \"shape\";\n    }\n}\n",
			[]string{"interface Shape ", "method name Shape"}},
		{"a.md", "Title\n=====\n\n# One\n```\n# not\n```\n## Two ##\n",
			[]string{"heading One ", "heading Two One"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			var got []string
			var walk func([]Symbol)
			walk = func(syms []Symbol) {
				for _, s := range syms {
					got = append(got, s.Kind+" "+s.Name+" "+s.Container)
					walk(s.Children)
				}
			}
			walk(langSymbols(languageOf(tt.file), tt.file, []byte(tt.src)))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("symbols:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// FuzzIndexExtract feeds arbitrary text to every extractor and to the Go
// block stripper, which must neither panic nor move a line.
func FuzzIndexExtract(f *testing.F) {
	for _, s := range []string{"package p\nfunc F() { x := struct{}{}; _ = x }\n", "class A:\n  def f(self): pass\n",
		"fn main() { let s = '{'; }\n", "# T\n```\n# x\n", "int main(void) {\n/* { */ return 0; }\n", "var x = `{`\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, name := range []string{"a.go", "a.py", "a.ts", "a.rs", "A.java", "a.c", "a.cpp", "a.sh", "a.md"} {
			if name == "a.go" {
				goSymbols(name, []byte(s))
				stripped := stripBodies([]byte(s))
				if strings.Count(string(stripped), "\n") != strings.Count(s, "\n") {
					t.Fatalf("stripBodies changed the number of lines of %q", s)
				}
				continue
			}
			langSymbols(languageOf(name), name, []byte(s))
		}
	})
}

// TestIndexDepStripping checks that what an importer sees of a package is
// the same whether its bodies and literals were stripped or not.
func TestIndexDepStripping(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("type-checks part of the standard library twice")
	}
	src := testenv.GoSrc(t)
	api := func(strip bool, path string) map[string]string {
		ws := workspacetest.New(t, t.TempDir())
		ix := New(ws)
		defer ix.Close()
		g := ix.goc
		if !strip {
			g.depStrip = nil
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		dir, err := g.findDir(path, filepath.Join(src, "net"))
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := g.dep(context.Background(), path, dir)
		if err != nil || pkg == nil {
			t.Fatalf("%s: %v", path, err)
		}
		qual := func(p *types.Package) string { return p.Path() }
		out := map[string]string{}
		for _, name := range pkg.Scope().Names() {
			obj := pkg.Scope().Lookup(name)
			out[name] = types.ObjectString(obj, qual)
			if tn, ok := obj.(*types.TypeName); ok {
				ms := types.NewMethodSet(types.NewPointer(tn.Type()))
				for i := 0; i < ms.Len(); i++ {
					out[name+"."+ms.At(i).Obj().Name()] = types.ObjectString(ms.At(i).Obj(), qual)
				}
			}
		}
		return out
	}
	for _, path := range []string{"unicode", "unicode/utf8", "strconv", "time", "html", "net/http", "crypto/tls", "golang.org/x/net/idna", "golang.org/x/text/unicode/norm"} {
		a, b := api(true, path), api(false, path)
		if len(a) != len(b) {
			t.Errorf("%s: %d declarations stripped, %d whole", path, len(a), len(b))
		}
		for k, v := range b {
			if a[k] != v {
				t.Errorf("%s: %s is %q stripped, %q whole", path, k, a[k], v)
			}
		}
	}
}

// TestIndexMatcherLongNames checks names longer than the matcher's buffer.
func TestIndexMatcherLongNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("VeryLongName", 30)
	for _, q := range []string{"VLN", "verylong", "Name", "vln"} {
		if s := newMatcher(q).score(long); s <= 0 {
			t.Errorf("score(%q) of a %d-byte name = %d", q, len(long), s)
		}
	}
}

// TestIndexAnswersWhileBuilding: a query during the build answers from the
// files indexed so far, marked partial; a build stopped at the file cap
// stays partial.
func TestIndexAnswersWhileBuilding(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i := range 50 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.py", i)), []byte(fmt.Sprintf("def f%d():\n    pass\n", i)), 0o644)
	}
	for _, tc := range []struct {
		name         string
		max          int
		wantFiles    int
		wantComplete bool
	}{
		{"whole", 0, 50, true},
		{"capped", 10, 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspacetest.New(t, root)
			ix := New(ws)
			defer ix.Close()
			ix.MaxFiles = tc.max
			blocked, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			ix.Start(func(done, total int) {
				// the first report comes from the build's goroutines,
				// which wait here until the query below was answered
				once.Do(func() { close(blocked); <-release })
			})
			<-blocked
			st := ix.Status()
			syms, partial := ix.Search("f", 100)
			close(release)
			if !st.Building || st.Files == 0 || !partial || len(syms) == 0 {
				t.Errorf("during the build: status %+v, %d symbols, partial=%v", st, len(syms), partial)
			}
			ix.Wait(context.Background())
			syms, partial = ix.Search("f", 100)
			st = ix.Status()
			if st.Files != tc.wantFiles || len(syms) != tc.wantFiles || partial == tc.wantComplete || st.Truncated == tc.wantComplete {
				t.Errorf("after the build: status %+v, %d symbols, partial=%v", st, len(syms), partial)
			}
		})
	}
}
