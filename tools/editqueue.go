package tools

import (
	"context"
	"slices"
	"sync"

	"github.com/agentls/agentls/workspace"
)

// editQueue lets one call of a session edit a file at a time: a call that
// plans an edit of a file another call of the session is editing (waiting
// for its review, or writing) waits for it to end, then plans again on the
// result. So parallel edits of one file by one agent are reviewed one after
// another, each on the text the one before left, and STALE_FILE means a
// change from outside the session.
type editQueue struct {
	mu      sync.Mutex
	holders map[string]chan struct{} // by path: closed when its holder ends
	ended   uint64                   // how many holds ended
}

// generation counts the holds that ended: a plan made when it was g is
// out of date once it is not (an edit may have landed meanwhile).
func (q *editQueue) generation() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ended
}

func newEditQueue() *editQueue {
	return &editQueue{holders: map[string]chan struct{}{}}
}

// hold waits until no other call holds any of paths and holds them all
// until release is called. replan says whether a hold ended since
// generation since, when the caller planned: its plan may be out of date.
// It fails only when ctx ends.
func (q *editQueue) hold(ctx context.Context, paths []string, since uint64) (release func(), replan bool, err error) {
	for {
		q.mu.Lock()
		var busy chan struct{}
		for _, p := range paths {
			if ch, ok := q.holders[p]; ok {
				busy = ch
				break
			}
		}
		if busy == nil {
			replan = q.ended != since
			done := make(chan struct{})
			for _, p := range paths {
				q.holders[p] = done
			}
			q.mu.Unlock()
			return func() {
				q.mu.Lock()
				for _, p := range paths {
					if q.holders[p] == done {
						delete(q.holders, p)
					}
				}
				q.ended++
				q.mu.Unlock()
				close(done)
			}, replan, nil
		}
		q.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, true, ctx.Err()
		}
	}
}

// planPaths lists the files a plan changes, each once.
func planPaths(p *workspace.Plan) []string {
	var out []string
	for _, ch := range p.Changes {
		out = append(out, ch.Path)
		if ch.NewPath != "" {
			out = append(out, ch.NewPath)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
