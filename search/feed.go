// Handing the files a build reads to another index (the code index), so
// that the tree is walked and each file read once for both.

package search

import (
	"context"
	"time"

	"github.com/agentls/agentls/workspace"
)

// Tap receives the files of one build of a root (Cache.Feed). Its
// functions run on the build's goroutines, several at a time.
type Tap struct {
	// File is called with every regular file the build's walk reports
	// (the walk's rules: ignore files, no hidden directory, no symlink
	// followed; files named with a leading '.' are reported) and data,
	// its content as the build read it, valid only during the call; nil
	// when the build did not read it (unchanged since the on-disk copy,
	// over the size cap, unreadable): File then reads it itself, with
	// f.Read, if it needs it.
	File func(f *workspace.File, data []byte)
	// Skipped is called with each entry the walk left out because it
	// matches paths.sensitive (rel as in workspace.File.Rel): a directory
	// is not entered, a file not reported.
	Skipped func(rel string, isDir bool)
}

// tapped is a Tap waiting for its build, or in one.
type tapped struct {
	Tap
	done chan bool
}

// Feed hands tap the files of the next build of root's index, started
// by ws's Warm (which Feed calls when no Warm did), and reports whether
// that build walked the whole root: true means tap was given every file
// of it. False, at once or at the end, when there is no such build to
// take part in (root is not one of ws's roots, or its index is built
// and current, or being built already), the build stopped (a reset, the
// index's bounds, ctx, Close), or ctx ended first: the caller then walks
// the root itself (tap may have been given some of its files).
func (c *Cache) Feed(ctx context.Context, ws *workspace.Workspace, root string, tap Tap) bool {
	if c.closed.Load() {
		return false
	}
	t := &tapped{Tap: tap, done: make(chan bool, 1)}
	c.mu.Lock()
	ri := c.roots[root]
	ok := (c.ws == nil || c.ws == ws) && !c.closed.Load() && !c.feeding[root] && (ri == nil || ri.stale)
	if ok {
		in := false
		for _, r := range ws.Roots() {
			in = in || r == root
		}
		ok = in
	}
	if ok {
		c.taps[root] = append(c.taps[root], t)
		if c.tapped != nil {
			close(c.tapped) // a build waiting for it goes on
			c.tapped = nil
		}
	}
	c.mu.Unlock()
	if !ok {
		return false
	}
	c.ensure(ws)
	select {
	case done := <-t.done:
		return done
	case <-ctx.Done():
		c.untap(root, t)
		return false
	}
}

// ExpectFeed says that a Feed will come for the first build of each root
// (the session's code index, whose build starts beside the search index's):
// that build waits for it, at most feedWait, rather than walk the tree
// alone while the other index walks it too. The builds after a reset, or
// of a root built before, do not wait.
func (c *Cache) ExpectFeed() {
	c.mu.Lock()
	c.expectFeed = true
	c.mu.Unlock()
}

// feedWait is how long the first build of a root waits for an expected
// Feed.
const feedWait = time.Second

// awaitTap waits, for the first build of root, until a tap for it came,
// feedWait passed or ctx ended, when a Feed is expected.
func (c *Cache) awaitTap(ctx context.Context, root string) {
	c.mu.Lock()
	first := c.expectFeed && c.gen.Load() == 0 && !c.waited[root]
	c.waited[root] = true
	c.mu.Unlock()
	if !first {
		return
	}
	timer := time.NewTimer(feedWait)
	defer timer.Stop()
	for {
		c.mu.Lock()
		if len(c.taps[root]) > 0 || c.roots[root] != nil || c.gen.Load() != 0 || c.closed.Load() {
			c.mu.Unlock()
			return
		}
		if c.tapped == nil {
			c.tapped = make(chan struct{})
		}
		ch := c.tapped
		c.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// untap drops t if no build took it yet; a build that did sends on its
// done channel (buffered) and nobody reads it.
func (c *Cache) untap(root string, t *tapped) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ts := c.taps[root]
	for i, x := range ts {
		if x == t {
			c.taps[root] = append(ts[:i:i], ts[i+1:]...)
			return
		}
	}
}

// takeTapsLocked takes the taps waiting for root's build, which begins.
func (c *Cache) takeTapsLocked(root string) []*tapped {
	ts := c.taps[root]
	delete(c.taps, root)
	c.feeding[root] = true
	return ts
}

// endTaps tells the taps of root's build whether it walked the whole
// root.
func (c *Cache) endTaps(root string, ts []*tapped, whole bool) {
	c.mu.Lock()
	delete(c.feeding, root)
	c.mu.Unlock()
	for _, t := range ts {
		t.done <- whole
	}
}

// dropTapsLocked releases every waiting tap (a reset or Close: the builds
// they wait for will not come as they were asked for).
func (c *Cache) dropTapsLocked() {
	for root, ts := range c.taps {
		for _, t := range ts {
			t.done <- false
		}
		delete(c.taps, root)
	}
}
