package lsp_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestResultCacheThroughServer reads one file again and again through a
// server while it changes: in an open buffer (didOpen, didChange,
// didClose), on disk with didChangeWatchedFiles, and on disk unannounced.
// A repeated read is answered from the session's result cache (cached),
// and every read gives what the file holds at that moment.
func TestResultCacheThroughServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the result cache keeps answers on Linux only")
	}
	t.Parallel()
	c, root, ctx := started(t, nil, nil)
	p := filepath.Join(root, "a.txt")
	put := func(content string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(step, want string, cached bool) {
		t.Helper()
		res, err := c.ToolCall(ctx, "read_file", map[string]any{"path": "a.txt"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != "success" || !strings.Contains(res.Content, "\t"+want+"\n") || res.Cached != cached {
			t.Fatalf("%s: read gave %s %q cached=%v; want %q cached=%v", step, res.Status, res.Content, res.Cached, want, cached)
		}
	}
	// The cache vouches for a file whose ctime is 2 s older than the read.
	age := func() { time.Sleep(2100 * time.Millisecond) }
	put("alpha\n")
	age()
	read("first", "alpha", false)
	read("again", "alpha", true)

	uri := "file://" + p
	c.Open(ctx, p, "bravo\n")
	read("opened", "bravo", false)
	read("opened, again", "bravo", true)
	c.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": "charlie\n"}},
	})
	read("changed", "charlie", false)
	read("changed, again", "charlie", true)
	c.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	read("closed", "alpha", false)
	read("closed, again", "alpha", true)

	// An announcement drops the answer even when the stat holds.
	c.Notify(ctx, "workspace/didChangeWatchedFiles", map[string]any{"changes": []any{map[string]any{"uri": uri, "type": 2}}})
	read("announced, unchanged", "alpha", false)
	read("announced, again", "alpha", true)
	put("delta\n")
	c.Notify(ctx, "workspace/didChangeWatchedFiles", map[string]any{"changes": []any{map[string]any{"uri": uri, "type": 2}}})
	read("changed on disk, announced", "delta", false)
	age()
	read("aged", "delta", false)
	read("aged, again", "delta", true)
	put("kilo!\n") // the same size, never announced
	read("changed on disk, unannounced", "kilo!", false)
}
