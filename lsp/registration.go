package lsp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/codeindex"
	"github.com/agentls/agentls/workspace"
)

// Dynamic registrations (client/registerCapability), kept in step with
// the configuration:
//
//   - workspace/didChangeWatchedFiles, only when the session's own watcher
//     (session.Watching: inotify, on Linux) does not follow every root,
//     for a client that supports its dynamic registration: not on this
//     system, a root it cannot watch (missing, not a folder), the system's
//     watches ran out. Then with the globs of the files the server follows
//     (watchGlobs): the configuration files, the ignore files, the source
//     files the index reads and the sensitive files (whose identities
//     workspace keeps). Not every file: a client such as eglot watches a
//     folder for each file a glob can match (eglot even watches the folder
//     of every project file, whatever the globs), which is why the server
//     watches by itself when it can. A registration made while a root
//     could not be watched is withdrawn once every root is watched.
//   - each language feature of lsp.features (features.go) that was not
//     advertised at initialize and is enabled later (a settings change,
//     .agentls.json), for a client that supports that feature's dynamic
//     registration; a feature registered this way and disabled again is
//     unregistered. A feature advertised at initialize stays advertised
//     (the request is then refused while it is off).
//
// Registrations change after initialized and after every configuration or
// folder change (a workspace reset), one change at a time.

// registrations is what the server registered with the client.
type registrations struct {
	mu       sync.Mutex
	static   map[string]bool // features advertised at initialize
	watchID  string          // the didChangeWatchedFiles registration, "" for none
	globs    []string        // its globs
	watchN   int             // registrations of watched files made so far
	features map[string]bool // features registered dynamically
}

// dynamicFeatures are the lsp.features a client can register later, in a
// fixed order, with their method.
var dynamicFeatures = []struct{ name, method string }{
	{"documentSymbol", "textDocument/documentSymbol"},
	{"workspaceSymbol", "workspace/symbol"},
	{"definition", "textDocument/definition"},
	{"references", "textDocument/references"},
	{"hover", "textDocument/hover"},
}

// advertised records the features initialize advertised.
func (r *registrations) advertised(s *server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.static = map[string]bool{}
	for _, f := range dynamicFeatures {
		r.static[f.name] = s.feature(f.name)
	}
}

// watchGlobs are the globs of the files whose changes on disk the server
// follows under cfg, sorted.
func watchGlobs(cfg *workspace.Config) []string {
	globs := []string{
		"**/" + workspace.ConfigFileName,
		"**/{.gitignore,.ignore,.rgignore}",
		"**/*.{" + strings.Join(codeindex.SourceExtensions(), ",") + "}",
		"**/go.mod",
	}
	for _, p := range cfg.Paths.Sensitive {
		p = strings.TrimPrefix(p, "/")
		if !strings.HasPrefix(p, "**/") {
			p = "**/" + p
		}
		globs = append(globs, p)
	}
	slices.Sort(globs)
	return slices.Compact(globs)
}

// watcherSaw follows a change the session's watcher saw and handled
// (session.DiskWatch), once the session is running.
func (s *server) watcherSaw(path string, errs []error) {
	s.mu.Lock()
	running := s.state == stateRunning
	s.mu.Unlock()
	if running {
		s.changedOnDisk(path, errs)
	}
}

// followRegistrations registers what the configuration needs now and
// again after every workspace reset.
func (s *server) followRegistrations() {
	s.ws.Watch(func(e workspace.Event) {
		if e.Reset && s.ctx.Err() == nil {
			go s.syncRegistrations()
		}
	})
	go s.syncRegistrations()
}

// syncRegistrations brings the client's registrations in step with the
// configuration. It calls the client, so it runs on its own goroutine
// (the reply is read by the goroutine that reads the connection).
func (s *server) syncRegistrations() {
	r := &s.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	caps := s.clientCaps()
	var add, remove []map[string]any
	watchID, globs := r.watchID, r.globs
	if caps.WatchedFilesDyn && s.sess.Watching() {
		if r.watchID != "" {
			remove = append(remove, map[string]any{"id": r.watchID, "method": "workspace/didChangeWatchedFiles"})
			watchID, globs = "", nil
		}
	} else if caps.WatchedFilesDyn {
		if g := watchGlobs(s.ws.Config()); r.watchID == "" || !slices.Equal(g, r.globs) {
			if r.watchID != "" {
				remove = append(remove, map[string]any{"id": r.watchID, "method": "workspace/didChangeWatchedFiles"})
			}
			watchID = "agentls-watched-files"
			if r.watchN > 0 {
				watchID = fmt.Sprintf("agentls-watched-files-%d", r.watchN+1)
			}
			watchers := make([]any, len(g))
			for i, glob := range g {
				watchers[i] = map[string]any{"globPattern": glob}
			}
			add = append(add, map[string]any{"id": watchID, "method": "workspace/didChangeWatchedFiles",
				"registerOptions": map[string]any{"watchers": watchers}})
			globs = g
		}
	}
	features := map[string]bool{}
	for _, f := range dynamicFeatures {
		on := r.features[f.name]
		want := caps.FeaturesDyn[f.name] && !r.static[f.name] && s.feature(f.name)
		switch {
		case want && !on:
			opts := map[string]any{}
			if strings.HasPrefix(f.method, "textDocument/") {
				opts["documentSelector"] = []any{map[string]any{"scheme": "file"}}
			}
			add = append(add, map[string]any{"id": "agentls-" + f.name, "method": f.method, "registerOptions": opts})
		case !want && on:
			remove = append(remove, map[string]any{"id": "agentls-" + f.name, "method": f.method})
		}
		features[f.name] = want
	}
	if len(add)+len(remove) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	if len(remove) > 0 {
		// "unregisterations" is the protocol's spelling.
		if _, err := s.conn.Call(ctx, "client/unregisterCapability", map[string]any{"unregisterations": remove}, nil); err != nil {
			s.log.Warn("client/unregisterCapability", "err", err)
		}
	}
	if len(add) > 0 {
		if _, err := s.conn.Call(ctx, "client/registerCapability", map[string]any{"registrations": add}, nil); err != nil {
			s.log.Warn("client/registerCapability", "err", err)
			return
		}
	}
	if watchID != r.watchID && watchID != "" {
		r.watchN++
	}
	r.watchID, r.globs, r.features = watchID, globs, features
}
