package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
)

// raceCalls is how many tool calls TestSymlinkRace makes while the links
// are swapped (a standing adversarial suite: 0 of them may get outside
// bytes or names).
const raceCalls = 5000

// TestSymlinkRace attacks the check-then-use gap: while one goroutine keeps
// swapping, between an inside and an outside target,
//   - a symlinked file (f.txt),
//   - a symlinked directory (d),
//   - and a real directory for a symlink to the outside folder (w: the
//     walk lists it as a directory, then must not enter the link),
//
// read_file, grep, list_directory and glob are called through the Runner
// raceCalls times. The outside folder's file contents and names carry a
// marker that no result may contain. Calls that meet the inside target must
// still succeed, so the test cannot pass by refusing everything.
func TestSymlinkRace(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	outside := t.TempDir()
	marker := fmt.Sprintf("OUTSIDE%dMARKER", time.Now().UnixNano())
	testenv.WriteFiles(t, outside, map[string]string{
		"target.txt":           marker + " secret bytes\n",
		marker + ".txt":        marker + "\n",
		"sub/" + marker + ".c": marker + "\n",
	})
	testenv.WriteFiles(t, root, map[string]string{
		"real/target.txt":   "inside bytes\n",
		"real/inside.txt":   "inside\n",
		"w/target.txt":      "inside w\n",
		"w/sub/inside.c":    "inside\n",
		"other/normal.txt":  "normal\n",
		"other/more/x.txt":  "x\n",
		"other/more/y.txt":  "y\n",
		"other/more/z/w.go": "package z\n",
	})
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("real/target.txt", "f.txt")
	link("real", "d")
	link(outside, "w.link")

	w, wReal, wLink := filepath.Join(root, "w"), filepath.Join(root, "w.real"), filepath.Join(root, "w.link")
	swap := func(i int) {
		if i%2 == 0 {
			swapLink(root, filepath.Join(outside, "target.txt"), "f.txt")
			swapLink(root, outside, "d")
			os.Rename(w, wReal)
			os.Rename(wLink, w)
		} else {
			swapLink(root, "real/target.txt", "f.txt")
			swapLink(root, "real", "d")
			os.Rename(w, wLink)
			os.Rename(wReal, w)
		}
	}
	settle := func() { // leave w a real directory
		if _, err := os.Stat(wReal); err == nil {
			os.Rename(w, wLink)
			os.Rename(wReal, w)
		}
	}
	calls := []raceCall{
		{"read_file", map[string]any{"path": "f.txt"}, "inside bytes"},
		{"read_file", map[string]any{"path": "d/target.txt"}, "inside bytes"},
		{"read_file", map[string]any{"path": "w/target.txt"}, "inside w"},
		{"grep", map[string]any{"pattern": "inside|" + marker, "path": ".", "include_ignored": true}, "inside"},
		{"grep", map[string]any{"pattern": "inside|" + marker, "path": "d"}, "inside"},
		{"grep", map[string]any{"pattern": "inside|" + marker, "path": "w"}, "inside"},
		{"grep", map[string]any{"pattern": "bytes", "path": "f.txt"}, "inside bytes"},
		{"list_directory", map[string]any{"path": ".", "recursive": true}, "real/inside.txt"},
		{"list_directory", map[string]any{"path": "d"}, "inside.txt"},
		{"list_directory", map[string]any{"path": "w", "recursive": true}, "inside.c"},
		{"glob", map[string]any{"pattern": "**/*"}, "real/inside.txt"},
		{"glob", map[string]any{"pattern": "d/*"}, "inside.txt"},
		{"glob", map[string]any{"pattern": "w/**/*"}, "inside.c"},
	}
	race{name: "symlink race", calls: calls, n: raceCalls, minShare: 10, marker: marker, swap: swap, settle: settle,
		call: func(c raceCall) *Result { return ftCall(t, env, c.tool, c.args) }}.run(t)
}

// swapLink points the link root/name at target in one step: a new link
// beside it is renamed over it, so that no reader finds the name missing.
func swapLink(root, target, name string) error {
	tmp := filepath.Join(root, name+".tmp")
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(root, name))
}

// raceCall is a call of a race test and what is in its answer when it met
// the inside targets.
type raceCall struct {
	tool string
	args map[string]any
	ok   string
}

// race makes n calls (round robin over calls, from two workers) while swap
// runs again and again, with a growing i, in a goroutine of its own; settle
// runs once after the last swap. The test fails when any result holds
// marker, when fewer than 10 swaps happened during the calls (the race was
// not run), or when fewer than n/minShare calls succeeded with their inside
// answer (so it cannot pass by refusing everything).
type race struct {
	name     string
	calls    []raceCall
	n        int
	minShare int
	marker   string
	call     func(raceCall) *Result
	swap     func(i int)
	settle   func()
}

func (r race) run(t *testing.T) {
	t.Helper()
	stop := make(chan struct{})
	var swaps atomic.Int64
	var swapper sync.WaitGroup
	swapper.Add(1)
	go func() {
		defer swapper.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				if r.settle != nil {
					r.settle()
				}
				return
			default:
			}
			r.swap(i)
			swaps.Add(1)
		}
	}()
	var tried, leaked, succeeded atomic.Int64
	var leakMu sync.Mutex
	var leaks []string
	var wg sync.WaitGroup
	const workers = 2
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < r.n; i += workers {
				c := r.calls[i%len(r.calls)]
				res := r.call(c)
				tried.Add(1)
				b, _ := json.Marshal(res)
				text := string(b)
				if strings.Contains(text, r.marker) {
					leaked.Add(1)
					leakMu.Lock()
					if len(leaks) < 5 {
						leaks = append(leaks, fmt.Sprintf("%s %v: %.400s", c.tool, c.args, text))
					}
					leakMu.Unlock()
				}
				if res.Status == StatusSuccess && strings.Contains(text, c.ok) {
					succeeded.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	swapper.Wait()
	t.Logf("%s: %d calls tried, %d got outside bytes or names, %d succeeded with inside content, %d swaps",
		r.name, tried.Load(), leaked.Load(), succeeded.Load(), swaps.Load())
	if tried.Load() != int64(r.n) {
		t.Fatalf("tried %d calls, want %d", tried.Load(), r.n)
	}
	if leaked.Load() != 0 {
		t.Fatalf("%d of %d calls returned outside content, for example:\n%s", leaked.Load(), tried.Load(), strings.Join(leaks, "\n"))
	}
	if swaps.Load() < 10 {
		t.Fatalf("only %d swaps happened during the calls: the race was not run", swaps.Load())
	}
	if succeeded.Load() < int64(r.n/r.minShare) {
		t.Fatalf("only %d of %d calls succeeded with inside content: the tools refuse too much", succeeded.Load(), tried.Load())
	}
}
