package lsp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/lsp/lsptest"
)

// TestSearchCacheThroughServer runs grep through a server (whose session
// keeps a search cache) while files change on disk without notification,
// in open buffers (didOpen, didChange, didClose) and with didSave and
// didChangeWatchedFiles: every answer is what a fresh search gives.
func TestSearchCacheThroughServer(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, nil, nil)
	old := time.Now().Add(-time.Hour)
	put := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		put(fmt.Sprintf("f%d.go", i), fmt.Sprintf("package f\n\nfunc F%d() {}\n", i))
	}
	put("a.go", "package f // xyzzy\n")
	put("b.go", "package f // plugh\n")
	want := func(step string, files ...string) {
		t.Helper()
		for range 2 {
			res, err := c.ToolCall(ctx, "grep", map[string]any{"pattern": "xyzzy", "output_mode": "files_with_matches"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Structured.(map[string]any)["files"].([]any) {
				got = append(got, f.(string))
			}
			if !reflect.DeepEqual(got, files) {
				t.Fatalf("%s: grep found %v, want %v", step, got, files)
			}
		}
	}
	want("start", "a.go")
	time.Sleep(100 * time.Millisecond) // let the background fill run
	want("warm", "a.go")
	put("b.go", "package f // xyzzy\n") // same size, same mtime
	want("rewritten on disk", "a.go", "b.go")
	put("c.go", "package f // XYZZY xyzzy\n")
	os.Remove(filepath.Join(root, "a.go"))
	want("created and deleted on disk", "b.go", "c.go")

	b := filepath.Join(root, "b.go")
	uri := "file://" + b
	c.Open(ctx, b, "package f\n")
	want("opened", "c.go")
	c.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": "package f\n// xyzzy\n"}},
	})
	want("changed", "b.go", "c.go")
	put("b.go", "package f // saved\n")
	c.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
	want("saved, still open", "b.go", "c.go")
	c.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	want("closed", "c.go")
	put("c.go", "package f // nothing\n")
	c.Notify(ctx, "workspace/didChangeWatchedFiles", map[string]any{"changes": []any{map[string]any{"uri": "file://" + filepath.Join(root, "c.go"), "type": 2}}})
	want("watched change")
}

// TestSearchIndexProgress: a client that supports server-created progress
// sees the search index's build begin and end on its own token.
func TestSearchIndexProgress(t *testing.T) {
	t.Parallel()
	c, root := progressClient(t, map[string]string{"a.go": "package a\n", "b/b.go": "package b\n"})
	ctx := ctxT(t)
	if _, err := c.Initialize(ctx, root, lsptest.AgentlsCaps(), nil); err != nil {
		t.Fatal(err)
	}
	var tok struct{ Token string }
	if _, err := c.WaitFor(ctx, "window/workDoneProgress/create", func(p json.RawMessage) bool {
		json.Unmarshal(p, &tok)
		return strings.HasPrefix(tok.Token, "agentls/search-index/")
	}); err != nil {
		t.Fatal(err)
	}
	end := waitProgressEnd(ctx, t, c, tok.Token)
	if !strings.Contains(string(end.Params), "2 files indexed for search") {
		t.Errorf("end of the build: %s", end.Params)
	}
}
