package lsp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/codeindex"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// The workspace index of a session: the same one the tools use (kept in the
// tools.Session), built in the background after initialized with
// $/progress on a server-created token when the client supports it, and
// kept current from the overlays (the index watches them itself), saves and
// watched-file events. When the diagnostics feature is on, the problems of
// open Go files are published after every change.

// indexState is a session's index machinery, kept in the tools.Session.
type indexState struct {
	once     sync.Once
	tokenSeq atomic.Int64

	mu      sync.Mutex
	pending map[string]bool // open files whose diagnostics are due
	timer   *time.Timer
	shown   map[string]bool // files with published diagnostics
}

var indexStateKey = tools.NewKey[*indexState]("lsp index state")

// idx returns the session's index machinery.
func (s *session) idx() *indexState {
	s.mu.Lock()
	env := s.env
	s.mu.Unlock()
	if env == nil {
		return &indexState{}
	}
	return tools.Update(env.Session, indexStateKey, func(old *indexState, ok bool) *indexState {
		if ok && old != nil {
			return old
		}
		return &indexState{}
	})
}

// index returns the session's workspace index (nil before initialize).
func (s *session) index() *codeindex.Index {
	s.mu.Lock()
	env := s.env
	s.mu.Unlock()
	if env == nil {
		return nil
	}
	return tools.IndexOf(env.Session, s.ws)
}

// startIndex builds the index in the background, once per session.
func (s *session) startIndex() {
	s.idx().once.Do(func() {
		ix := s.index()
		if ix == nil {
			return
		}
		stopWatch := s.ws.Overlays.Watch(func(d workspace.Document) { s.diagnosticsDue(d.Path) })
		go func() {
			<-s.ctx.Done()
			stopWatch()
			s.mu.Lock()
			env := s.env
			s.mu.Unlock()
			tools.CloseIndex(env.Session)
		}()
		go s.buildIndex(ix)
	})
}

// buildIndex starts the build with progress reports.
func (s *session) buildIndex(ix *codeindex.Index) {
	var token string
	if s.clientCaps().WorkDoneProgress {
		token = fmt.Sprintf("agentls/index/%d", s.idx().tokenSeq.Add(1))
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		_, err := s.conn.Call(ctx, "window/workDoneProgress/create", map[string]any{"token": token}, nil)
		cancel()
		if err != nil {
			s.log.Debug("workDoneProgress/create", "err", err)
			token = ""
		}
	}
	progress := func(value map[string]any) {
		if token == "" {
			return
		}
		if err := s.conn.Notify(context.Background(), "$/progress", map[string]any{"token": token, "value": value}); err != nil {
			s.log.Debug("$/progress", "err", err)
		}
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
				s.publishOpenDiagnostics()
			}
			return
		}
		pct := 0
		if total > 0 {
			pct = done * 100 / total
		}
		msg := "walking the workspace"
		if total > 0 {
			msg = fmt.Sprintf("%d/%d files", done, total)
		}
		progress(map[string]any{"kind": "report", "message": msg, "percentage": pct})
	})
	if !started {
		// a tool started it first: wait for it and close the progress
		ix.Wait(s.ctx)
		if ended.CompareAndSwap(false, true) {
			progress(map[string]any{"kind": "end", "message": fmt.Sprintf("indexed %d files", ix.Status().Files)})
		}
		s.publishOpenDiagnostics()
	}
}

// indexChanged tells the index that a file changed on disk (saved, or
// reported by the client's watcher).
func (s *session) indexChanged(path string) {
	if ix := s.index(); ix != nil {
		ix.Changed(path)
		if _, open := s.ws.Overlays.Get(path); open {
			s.diagnosticsDue(path)
		}
	}
}

// indexClosed re-reads a closed document from the disk and withdraws its
// published diagnostics.
func (s *session) indexClosed(path string) {
	st := s.idx()
	ix := s.index()
	if ix == nil {
		return
	}
	ix.Changed(path)
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
func (s *session) diagnosticsDue(path string) {
	st := s.idx()
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
func (s *session) publishOpenDiagnostics() {
	for _, p := range s.ws.Overlays.Paths() {
		s.diagnosticsDue(p)
	}
}

// flushDiagnostics computes and publishes the due diagnostics, with those
// of the other open files of the same packages.
func (s *session) flushDiagnostics() {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("diagnostics panicked", "panic", p)
		}
	}()
	st := s.idx()
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
func (s *session) publishDiagnostics(path string, ds []codeindex.Diagnostic) {
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
