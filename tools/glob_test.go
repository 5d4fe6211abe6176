package tools

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestGlob(t *testing.T) {
	dir, ws := makeTree(t, grepTree)
	tests := []struct {
		name      string
		args      string
		want      []string
		truncated bool
	}{
		{"any depth", `{"pattern":"**/*.go"}`, []string{"deep/a/b/c/d.go", "main.go", "util.go", "util_test.go"}, false},
		{"top level", `{"pattern":"*.go"}`, []string{"main.go", "util.go", "util_test.go"}, false},
		{"braces", `{"pattern":"web/*.{ts,tsx}"}`, []string{"web/app.ts", "web/app.tsx"}, false},
		{"ignored", `{"pattern":"**/*.log"}`, []string{}, false},
		{"include ignored", `{"pattern":"**/*.log","include_ignored":true}`, []string{"debug.log"}, false},
		{"named hidden", `{"pattern":".hidden/**"}`, []string{".hidden/secret.go"}, false},
		{"path", `{"pattern":"**/*.go","path":"deep"}`, []string{"deep/a/b/c/d.go"}, false},
		{"middle double star", `{"pattern":"deep/**/skip/*.md"}`, []string{"deep/a/skip/keep.md"}, false},
		{"space", `{"pattern":"sub dir/*.txt"}`, []string{"sub dir/space.txt"}, false},
		{"class", `{"pattern":"[mu]*.go"}`, []string{"main.go", "util.go", "util_test.go"}, false},
		{"limit", `{"pattern":"**/*.go","limit":2}`, []string{"deep/a/b/c/d.go", "main.go"}, true},
		{"missing directory", `{"pattern":"nowhere/**"}`, []string{}, false},
		{"absolute", `{"pattern":"` + filepath.ToSlash(dir) + `/web/*.ts"}`, []string{"web/app.ts"}, false},
		{"alias", `{"pattern":"docs/*"}`, []string{"docs/notes.txt", "docs/readme.md"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runSearch(t, ws, "glob", tt.args, nil)
			if res.Status != StatusSuccess {
				t.Fatalf("%s: %s", res.Status, res.Content)
			}
			st := res.Structured.(map[string]any)
			if got := st["files"].([]string); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("files %q, want %q", got, tt.want)
			}
			if st["truncated"] != tt.truncated {
				t.Errorf("truncated %v", st["truncated"])
			}
		})
	}
	res := runSearch(t, ws, "searchFiles", `{"pattern":"*.go","limit":1}`, nil)
	if res.Status != StatusSuccess || res.Content != "main.go\n[1 of 3 files; narrow the pattern or raise limit]\n" {
		t.Errorf("alias searchFiles: %s %q", res.Status, res.Content)
	}
}

func TestGlobSortMtime(t *testing.T) {
	dir, ws := makeTree(t, map[string]string{"a.txt": "", "b.txt": "", "c.txt": ""})
	now := time.Now()
	for i, name := range []string{"b.txt", "c.txt", "a.txt"} {
		ts := now.Add(time.Duration(-i) * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, name), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	res := runSearch(t, ws, "glob", `{"pattern":"*.txt","sort":"mtime"}`, nil)
	if got := res.Structured.(map[string]any)["files"].([]string); !reflect.DeepEqual(got, []string{"b.txt", "c.txt", "a.txt"}) {
		t.Errorf("mtime order %q", got)
	}
}

func TestGlobErrors(t *testing.T) {
	_, ws := makeTree(t, grepTree)
	for _, tt := range []struct {
		args string
		code Code
	}{
		{`{"pattern":"[abc"}`, InvalidParams},
		{`{"pattern":"*","path":"missing"}`, FileNotFound},
		{`{"pattern":"*","path":"main.go"}`, NotADirectory},
		{`{"pattern":"*","path":"../x"}`, InvalidPath},
		{`{"pattern":"/etc/*"}`, InvalidPath},
		{`{"pattern":"*","sort":"size"}`, InvalidParams},
		{`{"pattern":"*","limit":0}`, InvalidParams},
	} {
		res := runSearch(t, ws, "glob", tt.args, nil)
		if res.Status != StatusError || res.Error.Code != tt.code {
			t.Errorf("%s: got %s %+v, want %s", tt.args, res.Status, res.Error, tt.code)
		}
	}
}
