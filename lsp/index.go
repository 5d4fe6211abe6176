package lsp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/codeindex"
	"github.com/agentls/agentls/redact"
	"github.com/agentls/agentls/workspace"
)

// The code index of the session (the one the tools use, a service of the
// session that follows the overlays and the changes on disk by itself) is
// built in the background from initialize on, with $/progress on a
// server-created token, asked for once initialized came, when the client
// supports it. When the diagnostics feature is on, the problems of open Go
// files are published after every change.

// indexState is the server's diagnostics bookkeeping.
type indexState struct {
	once     sync.Once
	tokenSeq atomic.Int64
	// started is set when the first build of the code index starts;
	// built is closed when it ended, searchBuilt when a build of the
	// search index ended
	started            atomic.Bool
	built, searchBuilt latch
	// initialized is closed when the client's initialized came: the
	// builds, which start at initialize, ask for their progress tokens
	// (window/workDoneProgress/create) only then.
	initialized latch

	mu      sync.Mutex
	pending map[string]bool // open files whose diagnostics are due
	timer   *time.Timer
	shown   map[string]bool // files with published diagnostics
}

// index returns the session's code index (nil before initialize).
func (s *server) index() *codeindex.Index {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return nil
	}
	return sess.Index()
}

// latch is a channel closed once, by the first close; its zero value is
// ready to use.
type latch struct {
	opened, closed sync.Once
	ch             chan struct{}
}

// done returns the channel close closes.
func (l *latch) done() chan struct{} {
	l.opened.Do(func() { l.ch = make(chan struct{}) })
	return l.ch
}

// closeOnce closes the channel, the first time only.
func (l *latch) closeOnce() { l.closed.Do(func() { close(l.done()) }) }

// redactWait is how long loadRedaction waits for a build to start.
const redactWait = 2 * time.Second

// loadRedaction loads the redaction rules whole (redact.Load: about a
// fifth of a second of CPU) for the calls to come, once the first build
// of the code index ended and the search index's too (which ends a little
// after it, at most redactWait later), or at redactWait when no build
// started by then: not beside the builds, whose walk takes every core of
// a small machine. Meanwhile redaction reads the rules lazily, finding
// the same secrets (redact/gitleaks.go).
func (s *server) loadRedaction() {
	t := time.NewTimer(redactWait)
	defer t.Stop()
	select {
	case <-s.idx.built.done():
		t.Reset(redactWait)
		select {
		case <-s.idx.searchBuilt.done():
		case <-t.C:
		case <-s.ctx.Done():
			return
		}
	case <-t.C:
		if s.idx.started.Load() {
			select {
			case <-s.idx.built.done():
			case <-s.ctx.Done():
				return
			}
		}
	case <-s.ctx.Done():
		return
	}
	redact.Load()
}

// startIndex builds the index in the background, once per session.
func (s *server) startIndex() {
	s.idx.once.Do(func() {
		ix := s.index()
		if ix == nil {
			s.idx.built.closeOnce()
			return
		}
		s.idx.started.Store(true)
		stopWatch := s.ws.Overlays.Watch(func(d workspace.Document) {
			if !d.Closed {
				s.diagnosticsDue(d.Path)
			}
		})
		go func() {
			<-s.ctx.Done()
			stopWatch()
		}()
		go s.buildIndex(ix)
	})
}

// buildIndex starts the build with progress reports. The build does not
// wait for the client to grant the progress token: its reports wait
// instead (serverProgress), so that the tree's walk, which the search
// index's build shares, starts at once.
func (s *server) buildIndex(ix *codeindex.Index) {
	var progress func(value map[string]any)
	if s.clientCaps().WorkDoneProgress {
		progress = s.serverProgress(fmt.Sprintf("agentls/index/%d", s.idx.tokenSeq.Add(1)))
	} else {
		progress = func(map[string]any) {}
	}
	progress(map[string]any{"kind": "begin", "title": "agentls: indexing the workspace", "cancellable": false, "percentage": 0})
	start := time.Now()
	var ended atomic.Bool
	started := ix.Start(func(done, total int) {
		if ended.Load() {
			return
		}
		if !ix.Status().Building {
			if ended.CompareAndSwap(false, true) {
				progress(map[string]any{"kind": "end", "message": fmt.Sprintf("indexed %d files in %s", done, time.Since(start).Round(time.Millisecond))})
				s.log.Info("workspace indexed", "files", done, "ms", time.Since(start).Milliseconds())
				s.idx.built.closeOnce()
				s.publishOpenDiagnostics()
			}
			return
		}
		// the total is known once the walk, which feeds the build, ended
		report := map[string]any{"kind": "report", "message": fmt.Sprintf("%d files", done)}
		if total > 0 {
			report["message"], report["percentage"] = fmt.Sprintf("%d/%d files", done, total), min(done*100/total, 100)
		}
		progress(report)
	})
	if !started {
		// a tool started it first: wait for it and close the progress
		ix.Wait(s.ctx)
		s.idx.built.closeOnce()
		if ended.CompareAndSwap(false, true) {
			progress(map[string]any{"kind": "end", "message": fmt.Sprintf("indexed %d files", ix.Status().Files)})
		}
		s.publishOpenDiagnostics()
	}
}

// awaitInitialized waits for the client's initialized; false when the
// connection ended first.
func (s *server) awaitInitialized() bool {
	select {
	case <-s.idx.initialized.done():
		return true
	case <-s.ctx.Done():
		return false
	}
}

// serverProgress creates token with window/workDoneProgress/create, in
// the background, and returns the function that sends a $/progress value
// on it. Values given before the client answered wait, in order (a report
// replaced by the next one), and are sent once it granted the token; none
// is sent when it did not.
func (s *server) serverProgress(token string) func(value map[string]any) {
	var mu sync.Mutex
	granted, failed := false, false
	var queue []map[string]any
	send := func(value map[string]any) {
		if err := s.conn.Notify(context.Background(), "$/progress", map[string]any{"token": token, "value": value}); err != nil {
			s.log.Debug("$/progress", "err", err)
		}
	}
	go func() {
		if !s.awaitInitialized() {
			return
		}
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		_, err := s.conn.Call(ctx, "window/workDoneProgress/create", map[string]any{"token": token}, nil)
		cancel()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			s.log.Debug("workDoneProgress/create", "err", err)
			failed, queue = true, nil
			return
		}
		granted = true
		for _, v := range queue {
			send(v)
		}
		queue = nil
	}()
	return func(value map[string]any) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case failed:
		case granted:
			send(value)
		case len(queue) > 0 && value["kind"] == "report" && queue[len(queue)-1]["kind"] == "report":
			queue[len(queue)-1] = value
		default:
			queue = append(queue, value)
		}
	}
}

// diagnosticsWithdrawn withdraws the published diagnostics of a closed
// document (the index reads it from the disk again by itself).
func (s *server) diagnosticsWithdrawn(path string) {
	st := &s.idx
	st.mu.Lock()
	shown := st.shown[path]
	delete(st.shown, path)
	delete(st.pending, path)
	st.mu.Unlock()
	if shown {
		s.publishDiagnostics(path, nil)
	}
}

// diagnosticsDue schedules the diagnostics of an open file, a little after
// the last change. It never blocks (it runs in the overlay watcher).
func (s *server) diagnosticsDue(path string) {
	st := &s.idx
	if !s.feature("diagnostics") || codeindex.Language(path) != "go" {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.pending == nil {
		st.pending = map[string]bool{}
	}
	st.pending[path] = true
	if st.timer == nil {
		st.timer = time.AfterFunc(300*time.Millisecond, s.flushDiagnostics)
	} else {
		st.timer.Reset(300 * time.Millisecond)
	}
}

// publishOpenDiagnostics schedules the diagnostics of every open Go file.
func (s *server) publishOpenDiagnostics() {
	for _, p := range s.ws.Overlays.Paths() {
		s.diagnosticsDue(p)
	}
}

// flushDiagnostics computes and publishes the due diagnostics, with those
// of the other open files of the same packages.
func (s *server) flushDiagnostics() {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("diagnostics panicked", "panic", p)
		}
	}()
	st := &s.idx
	st.mu.Lock()
	due := st.pending
	st.pending = nil
	st.mu.Unlock()
	ix := s.index()
	if ix == nil || s.ctx.Err() != nil || !s.feature("diagnostics") {
		return
	}
	ix.Flush()
	for _, p := range s.ws.Overlays.Paths() {
		for d := range due {
			if codeindex.Language(p) == "go" && sameDir(p, d) {
				due[p] = true
			}
		}
	}
	for p := range due {
		if _, open := s.ws.Overlays.Get(p); !open {
			continue
		}
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		ds, _, err := ix.Diagnostics(ctx, p)
		cancel()
		if err != nil {
			s.log.Debug("diagnostics", "path", p, "err", err)
			continue
		}
		st.mu.Lock()
		if st.shown == nil {
			st.shown = map[string]bool{}
		}
		st.shown[p] = len(ds) > 0
		st.mu.Unlock()
		s.publishDiagnostics(p, ds)
	}
}

// publishDiagnostics sends textDocument/publishDiagnostics for one file.
func (s *server) publishDiagnostics(path string, ds []codeindex.Diagnostic) {
	text := s.text(path)
	out := make([]lspDiagnostic, 0, len(ds))
	for _, d := range ds {
		start := lspPos(text, d.Line, d.Column)
		end := start
		if d.EndLine > 0 {
			end = lspPos(text, d.EndLine, d.EndColumn)
		}
		out = append(out, lspDiagnostic{Range: lspRange{start, end}, Severity: severity(d.Severity), Source: "agentls " + d.Source, Message: d.Message})
	}
	params := map[string]any{"uri": workspace.PathToURI(path), "diagnostics": out}
	if d, ok := s.ws.Overlays.Get(path); ok {
		params["version"] = d.Version
	}
	if err := s.conn.Notify(context.Background(), "textDocument/publishDiagnostics", params); err != nil {
		s.log.Debug("publishDiagnostics", "err", err)
	}
}

type lspDiagnostic struct {
	Range    lspRange `json:"range"`
	Severity int      `json:"severity"`
	Source   string   `json:"source"`
	Message  string   `json:"message"`
}

func severity(s string) int {
	switch s {
	case "warning":
		return 2
	case "information":
		return 3
	case "hint":
		return 4
	}
	return 1
}
