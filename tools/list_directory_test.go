package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

func TestListDirectory(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	os.Mkdir(filepath.Join(root, ".git"), 0o755) // a repository: .gitignore applies
	testenv.WriteFiles(t, root, map[string]string{
		".gitignore": "build/\n*.log\n", "main.go": "package main\n", "app.log": "log\n",
		"build/out.bin": "x", ".hidden": "h", "src/a.go": "package src\n", "src/deep/b.go": "package deep\n",
		"src/.cache/c": "c",
	})
	os.Symlink("main.go", filepath.Join(root, "link.go"))
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"the root's own entries", map[string]any{}, "link.go -> main.go\nmain.go\nsrc/\n[2 ignored by .gitignore not shown; 2 hidden not shown (include_hidden)]\n"},
		{"hidden", map[string]any{"include_hidden": true}, ".gitignore\n.hidden\nlink.go -> main.go\nmain.go\nsrc/\n[2 ignored by .gitignore not shown]\n"},
		{"recursive", map[string]any{"recursive": true}, "link.go -> main.go\nmain.go\nsrc/\nsrc/a.go\nsrc/deep/\nsrc/deep/b.go\n[2 ignored by .gitignore not shown; 3 hidden not shown (include_hidden)]\n"},
		{"max_depth 2 implies recursive", map[string]any{"path": "src", "max_depth": 2}, "src/a.go\nsrc/deep/\nsrc/deep/b.go\n[1 hidden not shown (include_hidden)]\n"},
		{"a subdirectory", map[string]any{"path": "src/deep"}, "src/deep/b.go\n"},
		{"aliases' path form", map[string]any{"path": "./src/../src/deep/"}, "src/deep/b.go\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ftCall(t, env, "list_directory", tt.args)
			wantSuccess(t, res)
			if res.Content != tt.want {
				t.Errorf("content:\n%s\nwant:\n%s", res.Content, tt.want)
			}
		})
	}
	res := ftCall(t, env, "ls", map[string]any{"path": "src", "recursive": true})
	wantSuccess(t, res)
	var s struct {
		Path      string
		Entries   []ListEntry
		Truncated bool
		Total     int
	}
	decode(t, res, &s)
	if s.Path != "src" || s.Total != 3 || s.Truncated || len(s.Entries) != 3 {
		t.Fatalf("structured = %+v", s)
	}
	if e := s.Entries[0]; e.Path != "src/a.go" || e.Type != "file" || e.Size == nil || *e.Size != 12 || e.Depth != 1 {
		t.Errorf("entry = %+v", e)
	}
	if e := s.Entries[1]; e.Type != "directory" || e.Size != nil || e.Name != "deep" {
		t.Errorf("entry = %+v", e)
	}
	wantError(t, ftCall(t, env, "listFiles", map[string]any{"path": "main.go"}), NotADirectory)
	wantError(t, ftCall(t, env, "list_directory", map[string]any{"path": "nope"}), FileNotFound)
}

func TestListDirectoryCapAndEmpty(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	files := map[string]string{}
	for i := 0; i < listMaxEntries+5; i++ {
		files[fmt.Sprintf("many/f%04d.txt", i)] = ""
	}
	testenv.WriteFiles(t, root, files)
	os.Mkdir(filepath.Join(root, "empty"), 0o755)
	res := ftCall(t, env, "list_directory", map[string]any{"path": "many"})
	wantSuccess(t, res)
	var s struct {
		Entries   []ListEntry
		Truncated bool
		Total     int
	}
	decode(t, res, &s)
	if len(s.Entries) != listMaxEntries || !s.Truncated || s.Total != listMaxEntries+5 || s.Entries[0].Path != "many/f0000.txt" {
		t.Errorf("entries %d, truncated %v, total %d", len(s.Entries), s.Truncated, s.Total)
	}
	res = ftCall(t, env, "list_directory", map[string]any{"path": "empty"})
	wantSuccess(t, res)
	if res.Content != "empty/ is empty.\n" {
		t.Errorf("content = %q", res.Content)
	}
	testenv.WriteFiles(t, root, map[string]string{"empty/.hidden": ""})
	res = ftCall(t, env, "list_directory", map[string]any{"path": "empty"})
	if res.Content != "empty/ is empty (apart from hidden or ignored entries).\n[1 hidden not shown (include_hidden)]\n" {
		t.Errorf("content = %q", res.Content)
	}
}
