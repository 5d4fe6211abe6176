package mcp

import (
	"context"
	"fmt"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressQueue bounds the reports waiting to be sent for one call; past
// it, reports are dropped (Report must not block a tool on a slow client).
const progressQueue = 256

// progress sends a call's reports as notifications/progress on the
// client's progressToken. progress counts the reports (1, 2, …: MCP asks
// for a value that grows); a percentage, when the tool gives one, is in the
// message. Partial results are not streamed over MCP (progress is no
// tools.PartialStreamer), so a call's result always holds everything.
type progress struct {
	ctx   context.Context
	ss    *sdk.ServerSession
	token any
	ch    chan string
	done  chan struct{}

	mu      sync.Mutex // guards closed and the send on ch
	closed  bool
	dropped int
}

func newProgress(ctx context.Context, ss *sdk.ServerSession, token any) *progress {
	p := &progress{ctx: ctx, ss: ss, token: token, ch: make(chan string, progressQueue), done: make(chan struct{})}
	go p.send()
	return p
}

func (p *progress) send() {
	defer close(p.done)
	n := 0
	for msg := range p.ch {
		if p.ctx.Err() != nil {
			continue // the call ended: drain without sending
		}
		n++
		_ = p.ss.NotifyProgress(p.ctx, &sdk.ProgressNotificationParams{ProgressToken: p.token, Message: msg, Progress: float64(n)})
	}
}

// Report implements tools.Progress.
func (p *progress) Report(message string, percent int) {
	if percent >= 0 {
		message = fmt.Sprintf("%s (%d%%)", message, percent)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	select {
	case p.ch <- message:
	default:
		p.dropped++
	}
}

// Partial implements tools.Progress: partial results are not streamed.
func (p *progress) Partial(any) {}

// close waits until the reports queued so far are sent: they reach the
// client before the call's result.
func (p *progress) close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.ch)
	}
	p.mu.Unlock()
	<-p.done
}
