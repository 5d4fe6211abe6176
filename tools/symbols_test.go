package tools

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/codeindex"
)

func TestSymbols(t *testing.T) {
	t.Parallel()
	g := newIndexRig(t)
	var out struct {
		Symbols []codeindex.Symbol
		Partial bool
	}
	res := g.call("symbols", map[string]any{"path": "a/a.go"}, &out)
	if res.Status != StatusSuccess || len(out.Symbols) != 3 {
		t.Fatalf("outline = %+v; %+v", out.Symbols, res)
	}
	s := out.Symbols[0]
	if s.Name != "Greeter" || s.Kind != "struct" || s.Path != "a/a.go" || len(s.Children) != 1 || s.Children[0].Name != "Name" {
		t.Errorf("first symbol = %+v", s)
	}
	if m := out.Symbols[1]; m.Name != "Greet" || m.Kind != "method" || m.Container != "Greeter" {
		t.Errorf("method = %+v", m)
	}
	res = g.call("symbols", map[string]any{"query": "greet"}, &out)
	if res.Status != StatusSuccess || len(out.Symbols) < 2 || out.Partial || !strings.EqualFold(out.Symbols[0].Name, "greet") {
		t.Errorf("search greet = %+v", out)
	}
	g.call("symbols", map[string]any{"query": "Setup"}, &out)
	if len(out.Symbols) != 1 || out.Symbols[0].Kind != "heading" || out.Symbols[0].Container != "Guide" {
		t.Errorf("search Setup = %+v", out.Symbols)
	}
	out.Symbols = nil
	res = g.call("symbols", map[string]any{"path": "a"}, &out)
	if res.Status != StatusSuccess || len(out.Symbols) != 3 || out.Symbols[0].Children != nil || !strings.Contains(res.Content, "a/a.go:14:6 function New") {
		t.Errorf("directory symbols = %+v; %q", out.Symbols, res.Content)
	}
	out.Symbols = nil
	g.call("symbols", map[string]any{"query": "greet", "path": "a"}, &out)
	if len(out.Symbols) != 2 || out.Symbols[0].Path != "a/a.go" {
		t.Errorf("search below a = %+v", out.Symbols)
	}
	g.call("symbols", map[string]any{"query": "greet", "path": "py"}, &out)
	if len(out.Symbols) != 0 {
		t.Errorf("search below py = %+v", out.Symbols)
	}
	for _, args := range []map[string]any{{}, {"path": "go.mod"}} {
		if res := g.call("symbols", args, nil); res.Status != StatusError || res.Error.Code != InvalidParams {
			t.Errorf("symbols %v = %+v, want INVALID_PARAMS", args, res)
		}
	}
}
