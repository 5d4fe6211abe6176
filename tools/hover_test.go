package tools

import (
	"strings"
	"testing"
)

func TestHover(t *testing.T) {
	t.Parallel()
	g := newIndexRig(t)
	var out struct {
		Signature, Doc, Precision string
	}
	res := g.call("hover", map[string]any{"path": "b/b.go", "line": 6, "column": 31}, &out)
	if res.Status != StatusSuccess || out.Signature != "func (*a.Greeter).Greet() string" || out.Doc != "Greet returns the greeting." {
		t.Fatalf("hover = %+v; content %q", out, res.Content)
	}
	if !strings.Contains(res.Content, "```go\nfunc (*a.Greeter).Greet() string\n```") || !strings.Contains(res.Content, "declared at a/a.go:11:19") {
		t.Errorf("hover content = %q", res.Content)
	}
	g.call("hover", map[string]any{"symbol": "Greeter"}, &out)
	if !strings.HasPrefix(out.Signature, "type Greeter struct {") || out.Doc != "Greeter says hello." {
		t.Errorf("hover Greeter = %+v", out)
	}
}
