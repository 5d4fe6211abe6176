package lsp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/workspace"
)

var indexModule = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.22\n",
	"a/a.go": `package a

// Greeter says hello.
type Greeter struct {
	Name string
}

// Greet returns the greeting.
func (g *Greeter) Greet() string { return "hello, " + g.Name }
`,
	"tool.py": "class Box:\n    def open(self):\n        return 1\n\n\ndef helper():\n    return Box().open()\n",
	"b/b.go": `package b

import "example.com/m/a"

func Use(g *a.Greeter) string {
	s := "中😀"; return s + g.Greet()
}
`,
}

// docSymbol is an entry of a textDocument/documentSymbol answer.
type docSymbol struct {
	Name     string
	Kind     int
	Children []struct{ Name string }
}

// documentSymbols asks for the outline of the document uri.
func documentSymbols(t *testing.T, c *lsptest.Client, uri string) []docSymbol {
	t.Helper()
	var outline []docSymbol
	if err := c.Call(ctxT(t), "textDocument/documentSymbol", map[string]any{"textDocument": map[string]string{"uri": uri}}, &outline); err != nil {
		t.Fatal(err)
	}
	return outline
}

// progressClient writes files below a new root and returns a client over a
// pipe, not initialized yet, that accepts the server's
// window/workDoneProgress/create requests (as a client with
// window.workDoneProgress does), and the root.
func progressClient(t *testing.T, files map[string]string) (*lsptest.Client, string) {
	t.Helper()
	root := t.TempDir()
	testenv.WriteFiles(t, root, files)
	c := lsptest.Pipe(t, nil)
	c.SetHooks(lsptest.Hooks{Other: func(method string, params json.RawMessage) (any, error) {
		return nil, nil // window/workDoneProgress/create
	}})
	return c, root
}

// initCapabilities initializes c on root and returns the capabilities the
// server declares.
func initCapabilities(ctx context.Context, t *testing.T, c *lsptest.Client, root string, caps, initOptions any) map[string]any {
	t.Helper()
	res, err := c.Initialize(ctx, root, caps, initOptions)
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		Capabilities map[string]any `json:"capabilities"`
	}
	if err := json.Unmarshal(res, &init); err != nil {
		t.Fatalf("initialize result %s: %v", res, err)
	}
	return init.Capabilities
}

// waitProgressEnd waits for the $/progress notification that ends the
// progress of token, and returns it.
func waitProgressEnd(ctx context.Context, t *testing.T, c *lsptest.Client, token string) lsptest.Message {
	t.Helper()
	end, err := c.WaitFor(ctx, "$/progress", func(p json.RawMessage) bool {
		var v struct {
			Token string
			Value struct{ Kind string }
		}
		json.Unmarshal(p, &v)
		return v.Token == token && v.Value.Kind == "end"
	})
	if err != nil {
		t.Fatal(err)
	}
	return end
}

type lspLoc struct {
	URI   string          `json:"uri"`
	Range workspace.Range `json:"range"`
}

// TestIndexFeatures runs the index's LSP features end to end: the build
// with server-created progress, documentSymbol, workspace/symbol,
// definition, references and hover with UTF-16 positions, published
// diagnostics that follow the buffer, and the tools sharing the index.
func TestIndexFeatures(t *testing.T) {
	t.Parallel()
	c, root := progressClient(t, indexModule)
	ctx := ctxT(t)
	features := []string{"documentSymbol", "workspaceSymbol", "definition", "references", "hover", "diagnostics"}
	caps := initCapabilities(ctx, t, c, root, lsptest.AgentlsCaps(), map[string]any{"config": map[string]any{"lsp": map[string]any{"features": features}}})
	for _, k := range []string{"documentSymbolProvider", "workspaceSymbolProvider", "definitionProvider", "referencesProvider", "hoverProvider"} {
		if caps[k] != true {
			t.Errorf("capability %s = %v, want true", k, caps[k])
		}
	}
	create, err := c.WaitFor(ctx, "window/workDoneProgress/create", nil)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct{ Token string }
	json.Unmarshal(create.Params, &tok)
	waitProgressEnd(ctx, t, c, tok.Token)

	aURI := workspace.PathToURI(filepath.Join(root, "a", "a.go"))
	bURI := workspace.PathToURI(filepath.Join(root, "b", "b.go"))

	outline := documentSymbols(t, c, aURI)
	if len(outline) != 2 || outline[0].Name != "Greeter" || outline[0].Kind != 23 || len(outline[0].Children) != 1 || outline[1].Name != "Greet" || outline[1].Kind != 6 {
		t.Errorf("documentSymbol = %+v", outline)
	}

	var found []struct {
		Name          string
		ContainerName string
		Location      lspLoc
	}
	if err := c.Call(ctx, "workspace/symbol", map[string]any{"query": "greet"}, &found); err != nil {
		t.Fatal(err)
	}
	if len(found) < 2 || found[0].Location.URI != aURI {
		t.Errorf("workspace/symbol = %+v", found)
	}

	// Greet on line 6 of b.go, after "中😀": UTF-16 character 28 (the
	// byte column is 33).
	pos := map[string]any{"textDocument": map[string]string{"uri": bURI}, "position": map[string]int{"line": 5, "character": 28}}
	var defs []lspLoc
	if err := c.Call(ctx, "textDocument/definition", pos, &defs); err != nil {
		t.Fatal(err)
	}
	if len(defs) != 1 || defs[0].URI != aURI || defs[0].Range.Start != (workspace.Position{Line: 8, Character: 18}) {
		t.Errorf("definition = %+v", defs)
	}
	var refs []lspLoc
	refsParams := map[string]any{"textDocument": pos["textDocument"], "position": pos["position"], "context": map[string]bool{"includeDeclaration": false}}
	if err := c.Call(ctx, "textDocument/references", refsParams, &refs); err != nil {
		t.Fatal(err)
	}
	if len(refs) != 1 || refs[0].URI != bURI || refs[0].Range.Start != (workspace.Position{Line: 5, Character: 26}) || refs[0].Range.End.Character != 31 {
		t.Errorf("references = %+v", refs)
	}
	var hover struct {
		Contents struct{ Kind, Value string }
	}
	if err := c.Call(ctx, "textDocument/hover", pos, &hover); err != nil {
		t.Fatal(err)
	}
	if hover.Contents.Kind != "markdown" || !strings.Contains(hover.Contents.Value, "func (*a.Greeter).Greet() string") || !strings.Contains(hover.Contents.Value, "Greet returns the greeting.") {
		t.Errorf("hover = %+v", hover)
	}

	// Other languages answer by name.
	pyURI := workspace.PathToURI(filepath.Join(root, "tool.py"))
	pyOutline := documentSymbols(t, c, pyURI)
	if len(pyOutline) != 2 || pyOutline[0].Name != "Box" || pyOutline[0].Kind != 5 || len(pyOutline[0].Children) != 1 {
		t.Errorf("python documentSymbol = %+v", pyOutline)
	}
	var pyDefs []lspLoc
	if err := c.Call(ctx, "textDocument/definition", map[string]any{"textDocument": map[string]string{"uri": pyURI},
		"position": map[string]int{"line": 6, "character": 17}}, &pyDefs); err != nil {
		t.Fatal(err)
	}
	if len(pyDefs) != 1 || pyDefs[0].Range.Start != (workspace.Position{Line: 1, Character: 8}) {
		t.Errorf("python definition = %+v", pyDefs)
	}

	// A type error in an open buffer is published, and withdrawn when the
	// buffer is fixed.
	cPath := filepath.Join(root, "c", "c.go")
	testenv.WriteFiles(t, root, map[string]string{"c/c.go": "package c\n\nfunc F() int { return 0 }\n"})
	c.Notify(ctx, "workspace/didChangeWatchedFiles", map[string]any{"changes": []map[string]any{{"uri": workspace.PathToURI(cPath), "type": 1}}})
	c.Open(ctx, cPath, "package c\n\nfunc F() int { return \"x\" }\n")
	diags := func(n int) func(json.RawMessage) bool {
		return func(p json.RawMessage) bool {
			var d struct {
				URI         string
				Version     int
				Diagnostics []struct {
					Message string
					Range   workspace.Range
				}
			}
			json.Unmarshal(p, &d)
			if d.URI != workspace.PathToURI(cPath) || len(d.Diagnostics) != n {
				return false
			}
			return n == 0 || strings.Contains(d.Diagnostics[0].Message, "cannot use") && d.Diagnostics[0].Range.Start == (workspace.Position{Line: 2, Character: 22})
		}
	}
	if _, err := c.WaitFor(ctx, "textDocument/publishDiagnostics", diags(1)); err != nil {
		t.Fatal(err)
	}
	c.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": workspace.PathToURI(cPath), "version": 2},
		"contentChanges": []map[string]any{{"text": "package c\n\nfunc F() int { return 1 }\n"}},
	})
	if _, err := c.WaitFor(ctx, "textDocument/publishDiagnostics", diags(0)); err != nil {
		t.Fatal(err)
	}

	// The tools answer from the same index.
	r, err := c.ToolCall(ctx, "symbols", map[string]any{"query": "F"})
	if err != nil || r.Status != "success" || !strings.Contains(r.Content, "c/c.go:3:6") {
		t.Errorf("tool symbols = %+v, %v", r, err)
	}
}

// TestIndexFeaturesOff checks that the features are neither advertised nor
// served unless lsp.features names them.
func TestIndexFeaturesOff(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, indexModule)
	c := lsptest.Pipe(t, nil)
	ctx := ctxT(t)
	caps := initCapabilities(ctx, t, c, root, nil, map[string]any{"config": map[string]any{"lsp": map[string]any{"features": []string{"hover"}}}})
	if caps["hoverProvider"] != true || caps["definitionProvider"] != nil {
		t.Errorf("capabilities = %v, want hover only", caps)
	}
	pos := map[string]any{"textDocument": map[string]string{"uri": workspace.PathToURI(filepath.Join(root, "a", "a.go"))}, "position": map[string]int{"line": 8, "character": 20}}
	if err := c.Call(ctx, "textDocument/definition", pos, nil); err == nil || !strings.Contains(err.Error(), "lsp.features") {
		t.Errorf("definition while off: err = %v, want method not found", err)
	}
	var hover json.RawMessage
	if err := c.Call(ctx, "textDocument/hover", pos, &hover); err != nil || !strings.Contains(string(hover), "Greet") {
		t.Errorf("hover = %s, %v", hover, err)
	}
	if got := c.Received("window/workDoneProgress/create"); len(got) != 0 {
		t.Errorf("progress created for a client without window.workDoneProgress: %v", got)
	}
}

// TestIndexProgressAwaitsToken holds the client's answer to the creation of
// the code index's progress token: the build does not wait for it (the
// index answers completely meanwhile), no $/progress is sent on the token
// before the answer, and begin … end all come after it, in order; a token
// the client refuses gets none.
func TestIndexProgressAwaitsToken(t *testing.T) {
	t.Parallel()
	for _, grant := range []bool{true, false} {
		t.Run(fmt.Sprintf("grant=%v", grant), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			testenv.WriteFiles(t, root, indexModule)
			c := lsptest.Pipe(t, nil)
			release := make(chan struct{})
			var answered atomic.Bool
			c.SetHooks(lsptest.Hooks{Other: func(method string, params json.RawMessage) (any, error) {
				var p struct{ Token string }
				json.Unmarshal(params, &p)
				if method == "window/workDoneProgress/create" && strings.HasPrefix(p.Token, "agentls/index/") {
					<-release
					answered.Store(true)
					if !grant {
						return nil, errors.New("no progress here")
					}
				}
				return nil, nil
			}})
			ctx := ctxT(t)
			features := map[string]any{"config": map[string]any{"lsp": map[string]any{"features": []string{"workspaceSymbol"}}}}
			if _, err := c.Initialize(ctx, root, lsptest.AgentlsCaps(), features); err != nil {
				t.Fatal(err)
			}
			// The index is built while the token waits (workspace/symbol
			// answers from what is indexed, without starting a build).
			for {
				var found []struct{ Name string }
				if err := c.Call(ctx, "workspace/symbol", map[string]any{"query": "greet"}, &found); err != nil {
					t.Fatal(err)
				}
				if len(found) > 0 {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatal("the index was not built while its progress token waited")
				case <-time.After(20 * time.Millisecond):
				}
			}
			ours := func() []string {
				var kinds []string
				for _, m := range c.Received("$/progress") {
					var v struct {
						Token string
						Value struct{ Kind string }
					}
					json.Unmarshal(m.Params, &v)
					if strings.HasPrefix(v.Token, "agentls/index/") {
						kinds = append(kinds, v.Value.Kind)
					}
				}
				return kinds
			}
			if got := ours(); len(got) > 0 {
				t.Fatalf("progress before the token was granted: %v", got)
			}
			close(release)
			if !grant {
				for !answered.Load() {
					time.Sleep(10 * time.Millisecond)
				}
				time.Sleep(100 * time.Millisecond) // a progress would have been sent by now
				if got := ours(); len(got) > 0 {
					t.Errorf("progress on a refused token: %v", got)
				}
				return
			}
			if _, err := c.WaitFor(ctx, "$/progress", func(p json.RawMessage) bool {
				return strings.Contains(string(p), `"agentls/index/`) && strings.Contains(string(p), `"end"`)
			}); err != nil {
				t.Fatal(err)
			}
			got := ours()
			if len(got) < 2 || got[0] != "begin" || got[len(got)-1] != "end" || slices.Contains(got[1:len(got)-1], "begin") || slices.Contains(got[1:len(got)-1], "end") {
				t.Errorf("progress kinds = %v, want begin, reports, end", got)
			}
		})
	}
}
