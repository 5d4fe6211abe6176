package tools

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/workspace"
)

func TestDiagnostics(t *testing.T) {
	t.Parallel()
	g := newIndexRig(t)
	type diag struct {
		Path, Severity, Message, Source string
		Line, Column                    int
	}
	var out struct {
		Diagnostics []diag
		Partial     bool
	}
	tests := []struct {
		path string
		want []string
	}{
		{"c/c.go", []string{"c/c.go:4:9"}},
		{"b/b.go", nil},
		{".", []string{"c/c.go:4:9"}},
		{"py/util.py", nil},
	}
	for _, tt := range tests {
		res := g.call("diagnostics", map[string]any{"path": tt.path}, &out)
		if res.Status != StatusSuccess {
			t.Fatalf("%s: %+v", tt.path, res)
		}
		var got []string
		for _, d := range out.Diagnostics {
			got = append(got, d.Path+":"+itoa(d.Line)+":"+itoa(d.Column))
			if d.Severity != "error" || d.Source != "go/types" || !strings.Contains(d.Message, "cannot use") {
				t.Errorf("%s: diagnostic %+v", tt.path, d)
			}
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("diagnostics %s = %v, want %v", tt.path, got, tt.want)
		}
	}
	// An unsaved buffer is what counts.
	p := filepath.Join(g.root, "c", "c.go")
	g.env.Workspace.Overlays.Open(workspace.Document{Path: p, Version: 1, Text: "package c\n\nfunc Bad() int {\n\treturn 1\n}\n"})
	if res := g.call("diagnostics", map[string]any{"path": "c/c.go"}, &out); res.Status != StatusSuccess {
		t.Fatalf("fixed buffer: %+v", res)
	}
	if len(out.Diagnostics) != 0 {
		t.Errorf("diagnostics of the fixed buffer = %+v", out.Diagnostics)
	}
}
