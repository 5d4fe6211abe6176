package lsp_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/lsp/lsptest"
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

// TestRegistrations: the watched files are registered with the globs the
// server needs, never "**/*"; a feature enabled later by
// workspace/didChangeConfiguration is registered when the client can
// register it dynamically (hover), not when it cannot (references) nor when
// initialize advertised it (definition), and unregistered when it is
// turned off; a changed paths.sensitive registers the watched files anew.
func TestRegistrations(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c := lsptest.Pipe(t, nil)
	ctx := ctxT(t)
	c.SetHooks(lsptest.Hooks{Other: func(string, json.RawMessage) (any, error) { return nil, nil }})
	dyn := map[string]any{"dynamicRegistration": true}
	caps := map[string]any{
		"workspace":    map[string]any{"didChangeWatchedFiles": dyn},
		"textDocument": map[string]any{"hover": dyn, "documentSymbol": dyn},
	}
	opts := map[string]any{"config": map[string]any{"lsp": map[string]any{"features": []string{"definition"}}}}
	if _, err := c.Initialize(ctx, root, caps, opts); err != nil {
		t.Fatal(err)
	}
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
