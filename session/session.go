// Package session is one agentls session: a workspace with its layered
// configuration, the services its tools share (tools.Session: the code
// index, the search cache, the processes the tools started), the remembered
// "always" answers, the execution log, and the pipeline that runs calls.
//
// The front ends (the LSP server, the call command, the MCP server) make a
// session with New, tell it what they learn (roots, settings, files changed
// on disk), run calls through it and end it with Close. None of them
// reaches into a tool or a service: the services follow the workspace's
// events themselves (workspace.Watch, Overlays.Watch), and a file a tool
// changed is announced to them by the session before the front end hears of
// it.
package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/codeindex"
	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// Options are what a front end knows when it opens a session.
type Options struct {
	// Folders are the workspace roots; the first is the default.
	Folders []workspace.Folder
	// UserConfig is the user's configuration file (--config); "" for the
	// default location.
	UserConfig string
	// Settings is the front end's own configuration layer
	// (initializationOptions.config), or nil.
	Settings json.RawMessage
	// Agent is the default agent of calls that name none; Model the model
	// the client declared.
	Agent string
	Model tools.Model
	// Approver asks the person; nil: calls that need approval are rejected.
	Approver approval.Approver
	// Editor applies edits in the person's editor; nil: the server writes
	// files itself.
	Editor tools.Editor
	// Events receives the calls' events (tool/event), after the session
	// has seen them; nil: none are sent.
	Events tools.Events
	// Runner runs the calls: the registry and the pipeline.
	Runner *tools.Runner
	// SearchCache keeps file contents between searches (a long-lived
	// server); a one-shot call does without.
	SearchCache bool
	// OneShot: the session serves one call and ends with it (`agentls
	// call`), so the tools hand out nothing to come back to later.
	OneShot bool
	// Watch, when set, makes the session follow its roots on disk itself
	// (workspace.TreeWatcher): see DiskWatch. nil: changes on disk are
	// only what the front end reports (FileChanged).
	Watch *DiskWatch
	Log   *slog.Logger
}

// DiskWatch is what a long-lived front end hears of the session's own
// watcher. Every change it sees is handled as FileChanged (the services
// follow it; a changed configuration file is read again) before Changed
// is called; an Overflow (events lost) reloads the configuration, which
// makes every service start over (a workspace reset). Both functions run
// on the watcher's goroutine.
type DiskWatch struct {
	// Changed is called after each change was handled, with the
	// configuration files that were not valid; path is "" after an
	// Overflow.
	Changed func(path string, errs []error)
	// Lost is called once if the watcher stops covering the roots (the
	// system's watches ran out); Watching reports false from then on.
	Lost func()
}

// Session is one session. Its methods are safe for concurrent use.
type Session struct {
	ws      *workspace.Workspace
	runner  *tools.Runner
	env     *tools.Env
	log     *slog.Logger
	mu      sync.Mutex // guards configs
	configs workspace.ConfigStack
	closed  sync.Once
	watcher *workspace.TreeWatcher // nil: none
	unwatch func()                 // stops following the roots
}

// New opens a session. The errors are configuration files or settings that
// were not valid: the session uses the last valid configuration (the
// defaults, at first) and the front end tells the person. An error in
// Folders fails New.
func New(o Options) (*Session, []error, error) {
	ws, err := workspace.New()
	if err != nil {
		return nil, nil, err
	}
	if err := ws.SetFolders(o.Folders); err != nil {
		return nil, nil, err
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Session{ws: ws, runner: o.Runner, log: log}
	s.configs.UserFile = o.UserConfig
	var loaded map[string]workspace.Stamp // the configuration files read now, for the watcher
	if o.Watch != nil {
		loaded = s.configStamps()
	}
	_, errs := s.configs.LoadFiles(ws.Roots())
	if len(o.Settings) > 0 {
		if _, err := s.configs.Set(workspace.LayerInit, "initializationOptions.config", o.Settings); err != nil {
			errs = append(errs, err)
		}
	}
	ws.SetConfig(s.configs.Merged())
	cfg := ws.Config()
	memFile := ""
	if cfg.Approval.PersistAlways {
		memFile = workspace.StateFile(ws.Roots(), "always", ".json")
	}
	histFile := cfg.History.File
	if histFile == "" {
		histFile = tools.HistoryFile(ws.Roots())
	}
	// The result cache checks each answer against the files it read before
	// giving it, so every session has one, told of changes or not
	// (tools/resultcache.go); announcements only drop answers sooner.
	ts := tools.NewSession(ws, tools.SessionOptions{SearchCache: o.SearchCache, ResultCache: true, OneShot: o.OneShot})
	if c := ts.Search; c != nil {
		// The code index's build takes its files from the search index's
		// (which it starts when no WarmUp did): one walk of the tree, each
		// file read once, for both.
		c.ExpectFeed()
		ts.Index.SetFeed(func(ctx context.Context, root string, file func(*workspace.File, []byte), skipped func(string, bool)) bool {
			return c.Feed(ctx, ws, root, search.Tap{File: file, Skipped: skipped})
		})
	}
	s.env = &tools.Env{
		Workspace: ws,
		Session:   ts,
		Model:     o.Model,
		Agent:     o.Agent,
		Approver:  o.Approver,
		Memory:    approval.NewMemory(memFile),
		History:   tools.NewHistory(histFile),
		Events:    tools.EventsFunc(func(e tools.Event) { s.event(e, o.Events) }),
		Editor:    o.Editor,
	}
	if o.Watch != nil {
		s.watch(o.Watch, loaded)
	}
	return s, errs, nil
}

// watch starts the session's watcher of its roots (none where the system
// has none: Watching then reports false). It watches the roots in the
// background, and the roots of every change of folders. loaded are the
// stamps of the configuration files as they were read.
func (s *Session) watch(dw *DiskWatch, loaded map[string]workspace.Stamp) {
	saw := func(e workspace.WatchEvent) {
		var errs []error
		if e.Overflow {
			errs = s.ReloadConfig()
		} else {
			errs = s.FileChanged(e.Path)
		}
		if dw.Changed != nil {
			dw.Changed(e.Path, errs)
		}
	}
	t, err := workspace.WatchTree(s.ws, saw, dw.Lost)
	if err != nil {
		s.log.Info("no watcher of the roots", "err", err)
		return
	}
	s.watcher = t
	stop := s.ws.Watch(func(e workspace.Event) {
		if e.Reset {
			// a no-op unless the roots changed
			go s.syncWatch(t, saw, s.configStamps())
		}
	})
	s.unwatch = func() { stop(); t.Close() }
	go s.syncWatch(t, saw, loaded)
}

// syncWatch watches the roots not watched yet, then hands saw the
// configuration files that changed since they were read (before): a change
// made before its root's watch was in place has no event of its own.
func (s *Session) syncWatch(t *workspace.TreeWatcher, saw func(workspace.WatchEvent), before map[string]workspace.Stamp) {
	t.Sync()
	for p, st := range s.configStamps() {
		if was, ok := before[p]; ok && was != st {
			saw(workspace.WatchEvent{Path: p})
		}
	}
}

// configStamps returns the stamp of each root's configuration file (zero
// when there is none).
func (s *Session) configStamps() map[string]workspace.Stamp {
	m := map[string]workspace.Stamp{}
	for _, r := range s.ws.Roots() {
		p := filepath.Join(r, workspace.ConfigFileName)
		fi, _ := os.Lstat(p)
		m[p], _ = workspace.StampOf(fi)
	}
	return m
}

// Watching reports whether the session's own watcher follows every root
// now, watching the roots it does not watch yet first (so it may take a
// while on a large tree). False without a watcher, when a root cannot be
// watched (missing, not a directory) or when the system's watches ran out:
// then only the changes the front end reports are seen.
func (s *Session) Watching() bool {
	return s.watcher != nil && s.watcher.Sync()
}

// event announces a file a tool changed to the services, then passes the
// event on to the front end.
func (s *Session) event(e tools.Event, next tools.Events) {
	if e.Kind == "fileChanged" && e.Path != "" {
		if p, err := s.ws.Resolve(e.Path); err == nil {
			s.ws.Changed(p)
		}
	}
	if next != nil {
		next.Event(e)
	}
}

// WarmUp starts the session's background work that a long-lived front end
// wants done before the first call: filling the search cache.
func (s *Session) WarmUp() { s.env.Session.WarmUp() }

// SearchCache is the session's search index (nil without one: a one-shot
// session).
func (s *Session) SearchCache() *search.Cache { return s.env.Session.Search }

// Workspace is the session's workspace: roots, configuration, overlays.
func (s *Session) Workspace() *workspace.Workspace { return s.ws }

// Agent is the default agent of the session's calls.
func (s *Session) Agent() string { return s.env.Agent }

// Runner is the pipeline the session runs calls through.
func (s *Session) Runner() *tools.Runner { return s.runner }

// Run runs one call and always returns a result. progress may be nil.
func (s *Session) Run(ctx context.Context, req tools.Request, progress tools.Progress) *tools.Result {
	return s.runner.Run(ctx, s.env, req, progress)
}

// Tools lists the tools agent may call under the configuration in force
// ("" for the session's agent).
func (s *Session) Tools(agent string) []*tools.Tool {
	if agent == "" {
		agent = s.env.Agent
	}
	return s.runner.Available(s.ws.Config(), agent)
}

// Index is the session's code index.
func (s *Session) Index() *codeindex.Index { return s.env.Session.Index }

// History is the session's execution log.
func (s *Session) History() *tools.History { return s.env.History }

// Memory holds the session's remembered "always" answers.
func (s *Session) Memory() *approval.Memory { return s.env.Memory }

// SetFolders replaces the roots and reads their configuration files again.
// The errors are configuration files that were not valid.
func (s *Session) SetFolders(folders []workspace.Folder) ([]error, error) {
	if err := s.ws.SetFolders(folders); err != nil {
		return nil, err
	}
	return s.ReloadConfig(), nil
}

// SetSettings replaces the layer of the editor's settings
// (workspace/didChangeConfiguration). An invalid layer is refused and the
// configuration in force stays.
func (s *Session) SetSettings(source string, raw json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg, err := s.configs.Set(workspace.LayerSettings, source, raw)
	if err != nil {
		return err
	}
	s.ws.SetConfig(cfg)
	return nil
}

// ReloadConfig reads the configuration files again. The errors are files
// that were not valid: their last valid content stays in force.
func (s *Session) ReloadConfig() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg, errs := s.configs.LoadFiles(s.ws.Roots())
	s.ws.SetConfig(cfg)
	return errs
}

// FileChanged tells the services that a file changed on disk (the editor
// saved it, or its watcher saw it change). A change to a configuration
// file reloads the configuration; the errors are files that were not valid.
func (s *Session) FileChanged(path string) []error {
	s.ws.Changed(path)
	if filepath.Base(path) == workspace.ConfigFileName {
		return s.ReloadConfig()
	}
	return nil
}

// Close ends the session: the calls' context, the processes the tools
// started, the index and the search cache. It is idempotent.
func (s *Session) Close() {
	s.closed.Do(func() {
		if s.unwatch != nil {
			s.unwatch()
		}
		s.env.Session.Close()
		if s.env.History != nil {
			s.env.History.Close() // its append handle
		}
	})
}
