package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/workspace"
)

// registration is one registration of client/registerCapability or
// unregisteration of client/unregisterCapability.
type registration struct {
	ID              string `json:"id"`
	Method          string `json:"method"`
	RegisterOptions struct {
		Watchers []struct {
			GlobPattern string `json:"globPattern"`
		} `json:"watchers"`
	} `json:"registerOptions"`
}

// registrationsOf decodes the params of either request.
func registrationsOf(t *testing.T, params json.RawMessage) []registration {
	t.Helper()
	var p struct {
		Registrations    []registration `json:"registrations"`
		Unregisterations []registration `json:"unregisterations"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatal(err)
	}
	return append(p.Registrations, p.Unregisterations...)
}

// startRegistering starts a server on root for a client that supports
// the dynamic registration of watched files and of the textDocument
// features dynText, with lsp.features set to features.
func startRegistering(t *testing.T, root string, features []string, dynText ...string) (*lsptest.Client, context.Context) {
	t.Helper()
	c := lsptest.Pipe(t, nil)
	ctx := ctxT(t)
	c.SetHooks(lsptest.Hooks{Other: func(string, json.RawMessage) (any, error) { return nil, nil }})
	dyn := map[string]any{"dynamicRegistration": true}
	text := map[string]any{}
	for _, f := range dynText {
		text[f] = dyn
	}
	caps := map[string]any{"workspace": map[string]any{"didChangeWatchedFiles": dyn}, "textDocument": text}
	opts := map[string]any{"config": map[string]any{"lsp": map[string]any{"features": features}}}
	if _, err := c.Initialize(ctx, root, caps, opts); err != nil {
		t.Fatal(err)
	}
	return c, ctx
}

// TestRegistrations: when the server cannot watch its root (it does not
// exist yet), the watched files are registered with the globs the
// server needs, never "**/*"; a feature enabled later by
// workspace/didChangeConfiguration is registered when the client can
// register it dynamically (hover), not when it cannot (references) nor when
// initialize advertised it (definition), and unregistered when it is
// turned off; a changed paths.sensitive registers the watched files anew.
func TestRegistrations(t *testing.T) {
	t.Parallel()
	c, ctx := startRegistering(t, filepath.Join(t.TempDir(), "not-yet"), []string{"definition"}, "hover", "documentSymbol")
	m, err := c.WaitFor(ctx, "client/registerCapability", nil)
	if err != nil {
		t.Fatal(err)
	}
	regs := registrationsOf(t, m.Params)
	if len(regs) != 1 || regs[0].Method != "workspace/didChangeWatchedFiles" || regs[0].ID != "agentls-watched-files" {
		t.Fatalf("first registration: %s", m.Params)
	}
	var globs []string
	for _, w := range regs[0].RegisterOptions.Watchers {
		globs = append(globs, w.GlobPattern)
	}
	for _, want := range []string{"**/.agentls.json", "**/{.gitignore,.ignore,.rgignore}", "**/go.mod", "**/.env", "**/.ssh/**"} {
		if !slices.Contains(globs, want) {
			t.Errorf("globs %v lack %s", globs, want)
		}
	}
	if slices.Contains(globs, "**/*") || !slices.ContainsFunc(globs, func(g string) bool { return strings.HasPrefix(g, "**/*.{") && strings.Contains(g, ",go,") }) {
		t.Errorf("globs %v: want source extensions, not every file", globs)
	}

	settings := func(features []string, sensitive []string) {
		cfg := map[string]any{"lsp": map[string]any{"features": features}}
		if sensitive != nil {
			cfg["paths"] = map[string]any{"sensitive": sensitive}
		}
		c.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agentls": cfg}})
	}
	settings([]string{"definition", "hover", "references"}, nil)
	m, err = c.WaitFor(ctx, "client/registerCapability", func(p json.RawMessage) bool { return strings.Contains(string(p), "textDocument/") })
	if err != nil {
		t.Fatal(err)
	}
	if regs := registrationsOf(t, m.Params); len(regs) != 1 || regs[0].Method != "textDocument/hover" || regs[0].ID != "agentls-hover" {
		t.Errorf("feature registration: %s", m.Params)
	}
	settings([]string{"definition"}, nil)
	m, err = c.WaitFor(ctx, "client/unregisterCapability", nil)
	if err != nil {
		t.Fatal(err)
	}
	if regs := registrationsOf(t, m.Params); len(regs) != 1 || regs[0].ID != "agentls-hover" {
		t.Errorf("feature unregistration: %s", m.Params)
	}

	settings([]string{"definition"}, []string{"secrets/**"})
	m, err = c.WaitFor(ctx, "client/registerCapability", func(p json.RawMessage) bool { return strings.Contains(string(p), "agentls-watched-files-2") })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Params), `"**/secrets/**"`) {
		t.Errorf("new watched files: %s", m.Params)
	}
	if _, err := c.WaitFor(ctx, "client/unregisterCapability", func(p json.RawMessage) bool { return strings.Contains(string(p), `"agentls-watched-files"`) }); err != nil {
		t.Errorf("the old watched files stay registered: %v", err)
	}
	for _, m := range c.Received("client/registerCapability") {
		if strings.Contains(string(m.Params), "textDocument/definition") || strings.Contains(string(m.Params), "textDocument/references") {
			t.Errorf("registered a static or not dynamically registrable feature: %s", m.Params)
		}
	}
}

// watchedFilesRegistered returns the registrations of watched files the
// client received.
func watchedFilesRegistered(c *lsptest.Client) []string {
	var out []string
	for _, m := range c.Received("client/registerCapability") {
		if strings.Contains(string(m.Params), "workspace/didChangeWatchedFiles") {
			out = append(out, string(m.Params))
		}
	}
	return out
}

// eventually calls check until it returns "" or ctx ends, and fails the
// test with its last answer then.
func eventually(t *testing.T, ctx context.Context, what string, check func() string) {
	t.Helper()
	for {
		msg := check()
		if msg == "" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %s", what, msg)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestWatcherInsteadOfRegistration: while the server's own watcher follows
// every root it registers no watched files with the client, and changes
// made outside the editor reach the session with no notification from the
// client (it sends none): a rewritten .agentls.json is read again, a new
// source file (in a folder made after the start too) is in the code
// index. A folder added later that the watcher cannot watch (missing)
// makes the server register the globs; removing it withdraws them.
func TestWatcherInsteadOfRegistration(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, indexModule)
	c, ctx := startRegistering(t, root, []string{"workspaceSymbol"}, "hover")
	// Each registration brings every one the server wants: once hover is
	// registered, watched files would have been too.
	c.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agentls": map[string]any{
		"lsp": map[string]any{"features": []string{"workspaceSymbol", "hover"}}}}})
	if _, err := c.WaitFor(ctx, "client/registerCapability", func(p json.RawMessage) bool { return strings.Contains(string(p), "textDocument/hover") }); err != nil {
		t.Fatal(err)
	}
	if regs := watchedFilesRegistered(c); len(regs) > 0 {
		t.Fatalf("watched files registered while the server watches: %s", regs)
	}

	symbol := func(name string) func() string {
		return func() string {
			var found []struct{ Name string }
			if err := c.Call(ctx, "workspace/symbol", map[string]any{"query": name}, &found); err != nil {
				return err.Error()
			}
			for _, f := range found {
				if f.Name == name {
					return ""
				}
			}
			return "not in the code index"
		}
	}
	testenv.WriteFiles(t, root, map[string]string{"a/fresh.go": "package a\n\n// Brandnew is new.\nfunc Brandnew() {}\n"})
	eventually(t, ctx, "a new file in a watched folder", symbol("Brandnew"))
	testenv.WriteFiles(t, root, map[string]string{"c/d/deep.go": "package d\n\n// Deepnew is new.\nfunc Deepnew() {}\n"})
	eventually(t, ctx, "a new file in a new folder", symbol("Deepnew"))

	testenv.WriteFiles(t, root, map[string]string{".agentls.json": `{"tools":{"enabled":["get_current_datetime"]}}`})
	eventually(t, ctx, "the rewritten .agentls.json", func() string {
		var out struct{ Tools []struct{ Name string } }
		if err := c.Call(ctx, "tool/list", nil, &out); err != nil {
			return err.Error()
		}
		if len(out.Tools) != 1 || out.Tools[0].Name != "get_current_datetime" {
			return fmt.Sprintf("tools %+v", out.Tools)
		}
		return ""
	})

	// A folder the watcher cannot watch: the client is asked to watch.
	missing := filepath.Join(t.TempDir(), "missing")
	folder := []any{map[string]any{"uri": workspace.PathToURI(missing), "name": "missing"}}
	c.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": folder, "removed": []any{}}})
	m, err := c.WaitFor(ctx, "client/registerCapability", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "workspace/didChangeWatchedFiles")
	})
	if err != nil {
		t.Fatal(err)
	}
	regs := registrationsOf(t, m.Params)
	if len(regs) != 1 || regs[0].ID != "agentls-watched-files" || len(regs[0].RegisterOptions.Watchers) == 0 {
		t.Fatalf("fallback registration: %s", m.Params)
	}
	c.Notify(ctx, "workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{"added": []any{}, "removed": folder}})
	if _, err := c.WaitFor(ctx, "client/unregisterCapability", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"agentls-watched-files"`)
	}); err != nil {
		t.Fatalf("the registration stays once every root is watched: %v", err)
	}
}
