package tools

import (
	"strings"
	"testing"
)

func TestReferences(t *testing.T) {
	t.Parallel()
	g := newIndexRig(t)
	var out locsResult
	res := g.call("references", map[string]any{"symbol": "a.New"}, &out)
	if res.Status != StatusSuccess {
		t.Fatalf("result %+v", res)
	}
	var got []string
	for _, l := range out.Locations {
		got = append(got, l.Path+":"+itoa(l.Line)+":"+itoa(l.Column))
	}
	if want := "a/a.go:14:6 b/b.go:6:11"; strings.Join(got, " ") != want || out.Precision != "type" {
		t.Errorf("references = %v (%s), want %s (type)", got, out.Precision, want)
	}
	res = g.call("references", map[string]any{"path": "a/a.go", "line": 14, "column": 6, "include_declaration": false}, &out)
	if len(out.Locations) != 1 || out.Locations[0].Path != "b/b.go" {
		t.Errorf("references without declaration = %+v", out.Locations)
	}
	res = g.call("references", map[string]any{"path": "py/util.py", "line": 1, "column": 5}, &out)
	if len(out.Locations) != 2 || out.Precision != "name" || !strings.Contains(res.Content, "by name") {
		t.Errorf("python references = %+v, %q", out, res.Content)
	}
}
