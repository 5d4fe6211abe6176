package testenv

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Txtar is one txtar file of a test's data: where it is, its name for a
// subtest (the file's name without .txtar) and what it holds.
type Txtar struct {
	Path    string
	Name    string
	Archive *txtar.Archive
}

// Sections maps the name of each file of the archive to its text; of two
// files with one name, the later one wins.
func (x Txtar) Sections() map[string]string {
	sec := make(map[string]string, len(x.Archive.Files))
	for _, f := range x.Archive.Files {
		sec[f.Name] = string(f.Data)
	}
	return sec
}

// Txtars parses every file that pattern (a filepath.Glob pattern) matches,
// in the order of their names, and fails the test when none matches or one
// does not parse.
func Txtars(t testing.TB, pattern string) []Txtar {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no test data %s: %v", pattern, err)
	}
	out := make([]Txtar, 0, len(paths))
	for _, p := range paths {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Txtar{Path: p, Name: strings.TrimSuffix(filepath.Base(p), ".txtar"), Archive: ar})
	}
	return out
}
