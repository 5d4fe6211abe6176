package testenv

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyTestsImport: no file of the module but a test, or the tests'
// harness lsp/lsptest that only tests import, imports this package (its doc
// comment's rule).
func TestOnlyTestsImport(t *testing.T) {
	t.Parallel()
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "..", "..")
	const path = "github.com/agentls/agentls/internal/testenv"
	const harness = "github.com/agentls/agentls/lsp/lsptest"
	harnessDir := filepath.Join(root, "lsp", "lsptest")
	checked := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			v, _ := strconv.Unquote(imp.Path.Value)
			if v == path && filepath.Dir(p) != harnessDir || v == harness {
				t.Errorf("%s imports %s, which only tests may", p, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked %d files: not the module's tree", checked)
	}
}
