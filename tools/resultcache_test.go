package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

// cacheRacy is the racy window of the tests' result caches: a file is
// vouched for once its ctime is that old.
const cacheRacy = 40 * time.Millisecond

// newCacheRig is a rig whose session has a result cache, with the events
// of its calls recorded and a history file.
func newCacheRig(t *testing.T) (*rig, *eventLog) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the result cache vouches for files by inode and ctime, read on Linux only")
	}
	g := newRig(t, "")
	g.env.Session.Close()
	g.env.Session = NewSession(g.ws, SessionOptions{ResultCache: true})
	g.env.Session.results.racy = cacheRacy
	g.env.History = NewHistory(filepath.Join(t.TempDir(), "history.jsonl"))
	events := &eventLog{}
	g.env.Events = events
	t.Cleanup(func() { g.env.Session.Close() })
	return g, events
}

// eventLog records the events of calls.
type eventLog struct {
	mu  sync.Mutex
	all []Event
}

func (l *eventLog) Event(e Event) {
	l.mu.Lock()
	l.all = append(l.all, e)
	l.mu.Unlock()
}

// results returns the result events so far.
func (l *eventLog) results() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.all {
		if e.Kind == "result" {
			out = append(out, e)
		}
	}
	return out
}

// settle waits until the files written so far are older than the racy
// window, so that the cache may vouch for them.
func settle() { time.Sleep(cacheRacy + 20*time.Millisecond) }

// readAt reads rel (whole) through the rig and fails unless it succeeds.
func readAt(t *testing.T, g *rig, rel string) *Result {
	t.Helper()
	res := g.call("read_file", map[string]any{"path": rel})
	wantSuccess(t, res)
	return res
}

// newWarmRig is a cache rig whose file rel holds "alpha", read twice
// (readTwice).
func newWarmRig(t *testing.T, rel string) *rig {
	t.Helper()
	g, _ := newCacheRig(t)
	g.write(rel, "alpha\n")
	settle()
	readTwice(t, g, rel, "alpha")
	return g
}

// readTwice reads rel twice and checks that the second read gave content
// from the cache.
func readTwice(t *testing.T, g *rig, rel, content string) {
	t.Helper()
	readAt(t, g, rel)
	wantRead(t, readAt(t, g, rel), content, true)
}

// wantRead checks that res is a read of content, cached or not.
func wantRead(t *testing.T, res *Result, content string, cached bool) {
	t.Helper()
	if !strings.Contains(res.Content, "\t"+content+"\n") {
		t.Errorf("read gave %q, want the line %q", res.Content, content)
	}
	if res.Cached != cached {
		t.Errorf("cached = %v, want %v (content %q)", res.Cached, cached, res.Content)
	}
}

func TestResultCacheRepeatedRead(t *testing.T) {
	g, events := newCacheRig(t)
	g.write("a.txt", "alpha\n")
	settle()
	first := readAt(t, g, "a.txt")
	wantRead(t, first, "alpha", false)
	second := readAt(t, g, "a.txt")
	wantRead(t, second, "alpha", true)
	// The same call with its arguments spelled otherwise (an alias, a
	// default given) is the same call.
	third := g.call("readFile", map[string]any{"file_path": "a.txt", "offset": 1})
	wantSuccess(t, third)
	wantRead(t, third, "alpha", true)
	if second.CallID == first.CallID || second.Tool != "read_file" || second.ApprovedBy != "auto" {
		t.Errorf("a cached result has its own call: id %q (first %q), tool %q, approvedBy %q", second.CallID, first.CallID, second.Tool, second.ApprovedBy)
	}
	if fmt.Sprint(first.Structured) == "" || first.Content != second.Content {
		t.Errorf("cached content differs:\n%s\nvs\n%s", second.Content, first.Content)
	}
	// Another range is another answer.
	other := g.call("read_file", map[string]any{"path": "a.txt", "limit": 1})
	wantSuccess(t, other)
	if other.Cached {
		t.Error("a read of another range was answered from the cache")
	}
	evs := events.results()
	if len(evs) != 4 || evs[0].Cached || !evs[1].Cached || !evs[2].Cached || evs[3].Cached {
		t.Errorf("result events = %+v, want cached on the second and third", evs)
	}
	log, err := g.env.History.Read(10, "read_file")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range log {
		if e.Cached {
			n++
		}
	}
	if len(log) != 4 || n != 2 {
		t.Errorf("history: %d entries, %d cached; want 4 and 2: %+v", len(log), n, log)
	}
	// A cancelled call is cancelled, kept answer or not.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := g.r.Run(ctx, g.env, Request{Name: "read_file", Arguments: []byte(`{"path":"a.txt"}`)}, nil); res.Status != StatusCancelled || res.Cached {
		t.Errorf("a cancelled call gave %s cached=%v", res.Status, res.Cached)
	}
}

// TestResultCacheFresh changes the file in each way it can change between
// two reads: the second read must give the new content, never the kept one.
func TestResultCacheFresh(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, g *rig)
		want   string
	}{
		{"write_file", func(t *testing.T, g *rig) {
			wantSuccess(t, g.call("write_file", map[string]any{"path": "a.txt", "content": "gamma\n"}))
		}, "gamma"},
		{"edit_file", func(t *testing.T, g *rig) {
			wantSuccess(t, g.call("edit_file", map[string]any{"path": "a.txt", "old_string": "alpha", "new_string": "omega"}))
		}, "omega"},
		{"shell_exec, unannounced", func(t *testing.T, g *rig) {
			wantSuccess(t, g.call("shell_exec", map[string]any{"command": "printf 'delta\\n' > a.txt"}))
		}, "delta"},
		{"disk, same size, unannounced", func(t *testing.T, g *rig) {
			g.write("a.txt", "bravo\n")
		}, "bravo"},
		{"disk, same size and mtime, unannounced", func(t *testing.T, g *rig) {
			g.writeKeepingMtime("a.txt", "bravo\n")
		}, "bravo"},
		{"replaced by a rename", func(t *testing.T, g *rig) {
			g.write("b.tmp", "hotel\n")
			if err := os.Rename(filepath.Join(g.root, "b.tmp"), filepath.Join(g.root, "a.txt")); err != nil {
				t.Fatal(err)
			}
		}, "hotel"},
		{"disk, announced (didChangeWatchedFiles)", func(t *testing.T, g *rig) {
			g.write("a.txt", "echo\n")
			g.ws.Changed(filepath.Join(g.root, "a.txt"))
		}, "echo"},
		{"buffer opened", func(t *testing.T, g *rig) {
			g.ws.Overlays.Open(workspace.Document{Path: filepath.Join(g.root, "a.txt"), Version: 1, Text: "foxtrot\n"})
		}, "foxtrot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newWarmRig(t, "a.txt")
			tt.change(t, g)
			wantRead(t, readAt(t, g, "a.txt"), tt.want, false)
		})
	}
}

// TestResultCacheBuffer reads an open buffer: kept while its text is the
// same, fresh after didChange and after didClose (the disk again).
func TestResultCacheBuffer(t *testing.T) {
	g, _ := newCacheRig(t)
	g.write("a.txt", "disk\n")
	settle()
	p := filepath.Join(g.root, "a.txt")
	g.ws.Overlays.Open(workspace.Document{Path: p, Version: 1, Text: "one\n"})
	wantRead(t, readAt(t, g, "a.txt"), "one", false)
	wantRead(t, readAt(t, g, "a.txt"), "one", true)
	if err := g.ws.Overlays.Change(p, 2, []workspace.Change{{Text: "two\n"}}); err != nil {
		t.Fatal(err)
	}
	wantRead(t, readAt(t, g, "a.txt"), "two", false)
	wantRead(t, readAt(t, g, "a.txt"), "two", true)
	g.ws.Overlays.Close(p)
	wantRead(t, readAt(t, g, "a.txt"), "disk", false)
	wantRead(t, readAt(t, g, "a.txt"), "disk", true)
}

// TestResultCacheAnnouncement: an announced change drops the kept answers
// even when nothing changed on disk; so does a new configuration.
func TestResultCacheAnnouncement(t *testing.T) {
	g := newWarmRig(t, "a.txt")
	g.ws.Changed(filepath.Join(g.root, "other.txt"))
	wantRead(t, readAt(t, g, "a.txt"), "alpha", false)
	wantRead(t, readAt(t, g, "a.txt"), "alpha", true)
	g.config(nil)
	wantRead(t, readAt(t, g, "a.txt"), "alpha", false)
}

// TestResultCacheRules: the cache answers only calls the policy lets run.
// A rule that asks still asks on every call; a path made sensitive, or a
// symlink that now leads outside, is refused as a fresh call refuses it.
func TestResultCacheRules(t *testing.T) {
	t.Run("ask", func(t *testing.T) {
		g, _ := newCacheRig(t)
		g.config(func(c *workspace.Config) { c.Approval.Tools = map[string]string{"read_file": "ask"} })
		g.write("a.txt", "alpha\n")
		settle()
		wantRead(t, readAt(t, g, "a.txt"), "alpha", false)
		res := readAt(t, g, "a.txt")
		wantRead(t, res, "alpha", true)
		if res.ApprovedBy != "user" {
			t.Errorf("approvedBy = %q, want user", res.ApprovedBy)
		}
		if q := g.questions(); len(q) != 2 {
			t.Errorf("asked %d times, want once per call (2)", len(q))
		}
		g.answer = always(approval.Reject)
		res = g.call("read_file", map[string]any{"path": "a.txt"})
		if res.Status != StatusRejected || strings.Contains(res.Content, "alpha") || res.Cached {
			t.Errorf("a rejected call gave %+v", res)
		}
	})
	t.Run("turned off", func(t *testing.T) {
		g := newWarmRig(t, "a.txt")
		g.config(func(c *workspace.Config) { c.Tools.ResultCache = false })
		for range 2 {
			wantRead(t, readAt(t, g, "a.txt"), "alpha", false)
		}
		g.config(func(c *workspace.Config) { c.Tools.ResultCache = true })
		readTwice(t, g, "a.txt", "alpha")
	})
	t.Run("sensitive", func(t *testing.T) {
		g := newWarmRig(t, "secret.txt")
		g.config(func(c *workspace.Config) { c.Paths.Sensitive = append(c.Paths.Sensitive, "secret.txt") })
		for range 2 {
			res := g.call("read_file", map[string]any{"path": "secret.txt"})
			wantError(t, res, SensitivePath)
			if res.Cached {
				t.Error("a refusal was cached")
			}
		}
	})
	t.Run("symlink swapped", func(t *testing.T) {
		g, _ := newCacheRig(t)
		outside := t.TempDir()
		if err := os.WriteFile(filepath.Join(outside, "x.txt"), []byte("alpha\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		g.write("b.txt", "alpha\n")
		link := filepath.Join(g.root, "a.txt")
		if err := os.Symlink("b.txt", link); err != nil {
			t.Fatal(err)
		}
		settle()
		readTwice(t, g, "a.txt", "alpha")
		// Same content, same size: only the place differs.
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "x.txt"), link); err != nil {
			t.Fatal(err)
		}
		res := g.call("read_file", map[string]any{"path": "a.txt"})
		wantError(t, res, InvalidPath)
	})
}

// TestResultCacheRacyWrites writes the file again and again, in the same
// clock tick as the reads or not, the same size each time, while readers
// run: every read that starts after a write completed gives that write's
// text, cached or not.
func TestResultCacheRacyWrites(t *testing.T) {
	g, _ := newCacheRig(t)
	p := filepath.Join(g.root, "a.txt")
	version := func(i int) string { return fmt.Sprintf("v%04d", i) }
	g.write("a.txt", version(0)+"\n")
	settle()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 2 { // concurrent readers, for the race detector
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				res := g.r.Run(ctx, g.env, Request{Name: "read_file", Arguments: []byte(`{"path":"a.txt"}`)}, nil)
				if res.Status != StatusSuccess && ctx.Err() == nil {
					t.Errorf("concurrent read: %+v", res)
					return
				}
			}
		}()
	}
	cached := 0
	for i := 1; i <= 40; i++ {
		if err := os.WriteFile(p, []byte(version(i)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			res := readAt(t, g, "a.txt")
			if !strings.Contains(res.Content, "\t"+version(i)+"\n") {
				t.Fatalf("after write %d, read gave %q (cached %v)", i, res.Content, res.Cached)
			}
		}
		if i%8 == 0 { // let the file age so that the cache vouches for it
			settle()
			readAt(t, g, "a.txt")
			res := readAt(t, g, "a.txt")
			wantRead(t, res, version(i), true)
			if res.Cached {
				cached++
			}
		}
	}
	cancel()
	wg.Wait()
	if cached == 0 {
		t.Error("no read was answered from the cache")
	}
}

// TestResultCacheBounded: the kept answers stay within the cache's bytes,
// the least recently used dropped first.
func TestResultCacheBounded(t *testing.T) {
	g, _ := newCacheRig(t)
	rc := g.env.Session.results
	rc.max = 64 << 10 // an answer of at most 8 KiB is kept
	line := strings.Repeat("x", 2000) + "\n"
	for i := range 40 {
		g.write(fmt.Sprintf("f%02d.txt", i), strings.Repeat(line, 2))
	}
	g.write("big.txt", strings.Repeat(line, 10))
	settle()
	for i := range 40 {
		readAt(t, g, fmt.Sprintf("f%02d.txt", i))
		rc.mu.Lock()
		bytes, n := rc.bytes, len(rc.entries)
		rc.mu.Unlock()
		if bytes > rc.max || n == 0 {
			t.Fatalf("after %d reads: %d bytes in %d entries, over %d", i+1, bytes, n, rc.max)
		}
	}
	if res := readAt(t, g, "f39.txt"); !res.Cached {
		t.Error("the most recent answer was dropped")
	}
	if res := readAt(t, g, "f00.txt"); res.Cached {
		t.Error("the least recently used answer was kept past the cap")
	}
	readAt(t, g, "big.txt")
	if res := readAt(t, g, "big.txt"); res.Cached {
		t.Error("an answer over an eighth of the cap was kept")
	}
}

// TestResultCacheOnlyCacheable: a tool not marked Cacheable runs every
// time, and so does a tree tool in a session without a search cache (no
// watcher vouches for its tree: resultcache_tree.go).
func TestResultCacheOnlyCacheable(t *testing.T) {
	g, _ := newCacheRig(t)
	g.git("init", "-q")
	g.write("a.txt", "alpha\n")
	settle()
	for _, tool := range []string{"git_status", "list_directory"} {
		for range 2 {
			res := g.call(tool, map[string]any{})
			wantSuccess(t, res)
			if res.Cached {
				t.Errorf("%s was answered from the cache", tool)
			}
		}
	}
}

// TestCacheableIsReadOnly: a tool that changes something is never kept.
func TestCacheableIsReadOnly(t *testing.T) {
	t.Parallel()
	def := func(readOnly bool) *Tool {
		return Define(Def[struct{}]{
			Spec: Spec{
				Name: "t", Description: "a cacheable tool", Cacheable: true,
				Annotations: Annotations{ReadOnly: readOnly, Approval: "auto"},
			},
			Execute: func(*Call, struct{}) (*Result, error) { return Success("", nil), nil },
		})
	}
	if err := NewRegistry(nil).Register(def(false)); err == nil {
		t.Error("a cacheable tool that is not read-only was registered")
	}
	if err := NewRegistry(nil).Register(def(true)); err != nil {
		t.Errorf("a read-only cacheable tool: %v", err)
	}
}
