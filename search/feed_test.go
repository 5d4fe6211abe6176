package search

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// TestFeed: a tap is handed every regular file of the build it waited
// for, with its content (nil for a file over the size cap), and told of
// the sensitive entries left out; a Feed for a root whose index is built
// and current, or for a directory that is no root, is refused at once;
// Close releases a Feed that waits.
func TestFeed(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{
		"a.txt":         "alpha\n",
		".hidden":       "hidden\n",
		"sub/b.go":      "package b\n",
		"sub/big.txt":   string(make([]byte, 2048)),
		".ignore":       "ignored.txt\n",
		"ignored.txt":   "ignored\n",
		"secret/k.txt":  "key\n",
		"notes.secret":  "secret\n",
		".git/HEAD":     "ref: refs/heads/main\n",
		"sub/.dir/x.go": "package x\n",
	})
	ws := workspacetest.New(t, root)
	cfg := *ws.Config()
	cfg.Paths.Sensitive = []string{"secret/**", "secret", "*.secret"}
	cfg.Limits.MaxFileBytes = 1024
	ws.SetConfig(&cfg)
	cache := NewCache()
	defer cache.Close()

	var mu sync.Mutex
	files := map[string]string{}
	var skipped []string
	tap := Tap{
		File: func(f *workspace.File, data []byte) {
			mu.Lock()
			defer mu.Unlock()
			if data == nil {
				files[f.Rel] = "<nil>"
			} else {
				files[f.Rel] = string(data)
			}
		},
		Skipped: func(rel string, isDir bool) {
			mu.Lock()
			defer mu.Unlock()
			skipped = append(skipped, rel)
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if !cache.Feed(ctx, ws, root, tap) {
		t.Fatal("Feed of the first build: false")
	}
	want := map[string]string{"a.txt": "alpha\n", ".hidden": "hidden\n", "sub/b.go": "package b\n", "sub/big.txt": "<nil>", ".ignore": "ignored.txt\n"}
	if !maps.Equal(files, want) {
		t.Errorf("tap was handed %v, want %v", files, want)
	}
	slices.Sort(skipped)
	if !slices.Equal(skipped, []string{"notes.secret", "secret"}) {
		t.Errorf("tap was told of %v left out, want notes.secret and secret", skipped)
	}
	cacheReady(t, cache)
	if cache.Feed(ctx, ws, root, tap) {
		t.Error("Feed of a built root: true")
	}
	if cache.Feed(ctx, ws, t.TempDir(), tap) {
		t.Error("Feed of a directory that is no root: true")
	}

	// A Feed waiting for a build that Close ends first.
	other := NewCache()
	other.ExpectFeed()
	done := make(chan bool)
	other.Reset() // a reset generation: no build waits for the tap, none starts it
	other.mu.Lock()
	other.ws = ws // as if Warm had run, its build not yet at root
	other.mu.Unlock()
	go func() { done <- other.Feed(ctx, ws, root, tap) }()
	for {
		other.mu.Lock()
		n := len(other.taps[root])
		other.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	other.Close()
	if <-done {
		t.Error("Feed released by Close: true")
	}
}
