package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/session"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// StandaloneOptions are what a standalone `agentls mcp` knows.
type StandaloneOptions struct {
	Root       string // the workspace root
	UserConfig string // --config; "" for the default location
	Agent      string // --agent; "" for none
	Log        *slog.Logger
}

// configPoll is how often a standalone server looks at its configuration
// files.
var configPoll = 2 * time.Second

// Standalone opens a session of its own on o.Root (session.New) whose
// approvals go to the MCP client (Approver) and whose edits the server
// writes itself. It returns the backend, the configuration files that were
// not valid (the last valid configuration stays in force for them), and the
// function that ends the session and every process its calls started.
//
// No editor tells a standalone server of changes, so it looks at its
// configuration files (the user's and the root's .agentls.json) every
// configPoll and reloads the configuration when one changed; the list of
// tools follows (SessionBackend.WatchTools).
//
// The session has no search cache: nothing tells a standalone server of
// files changed outside it, so every search reads the disk.
func Standalone(o StandaloneOptions) (Backend, []error, func(), error) {
	s, errs, err := session.New(session.Options{
		Folders: []workspace.Folder{{Path: o.Root}}, UserConfig: o.UserConfig, Agent: o.Agent,
		Approver: Approver{}, Runner: tools.NewRunner(tools.NewBuiltinRegistry(), o.Log), Log: o.Log,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	user := o.UserConfig
	if user == "" {
		user = workspace.UserConfigPath()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pollConfig(s, []string{user, filepath.Join(o.Root, workspace.ConfigFileName)}, logger(o.Log), stop)
	}()
	var once sync.Once
	end := func() {
		once.Do(func() {
			close(stop)
			wg.Wait()
			s.Close()
		})
	}
	return SessionBackend{Session: s, Agent: o.Agent}, errs, end, nil
}

// pollConfig reloads s's configuration each time one of files changes
// (its modification time, size or existence) until stop is closed.
func pollConfig(s *session.Session, files []string, log *slog.Logger, stop <-chan struct{}) {
	seen := statAll(files)
	t := time.NewTicker(configPoll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := statAll(files)
		if now == seen {
			continue
		}
		seen = now
		for _, err := range s.ReloadConfig() {
			log.Warn("configuration not valid; the last valid one stays in force", "err", err)
		}
	}
}

// statAll is what the files' metadata says of their content: each one's
// modification time and size, or that it is missing.
func statAll(files []string) string {
	var b strings.Builder
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%d %d", fi.ModTime().UnixNano(), fi.Size())
		}
		b.WriteByte(0)
	}
	return b.String()
}

// SessionBackend serves a session's tools for one agent.
type SessionBackend struct {
	Session *session.Session
	Agent   string // "" for the session's own
}

// Tools implements Backend.
func (b SessionBackend) Tools() []*tools.Tool { return b.Session.Tools(b.Agent) }

// WatchTools implements ToolWatcher: the list follows the session's
// configuration, which announces each change as a workspace reset.
func (b SessionBackend) WatchTools(f func()) (stop func()) {
	return b.Session.Workspace().Watch(func(e workspace.Event) {
		if e.Reset {
			f()
		}
	})
}

// Run implements Backend.
func (b SessionBackend) Run(ctx context.Context, req tools.Request, p tools.Progress) *tools.Result {
	return b.Session.Run(ctx, req, p)
}
