package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
)

// indexRig is a rig with the index tools on a small module (rigFiles),
// whose approver rejects every call.
type indexRig struct{ *rig }

var rigFiles = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.22\n",
	"a/a.go": `// Package a greets.
package a

// Greeter says hello.
type Greeter struct {
	// Name is who is greeted.
	Name string
}

// Greet returns the greeting.
func (g *Greeter) Greet() string { return "hello, " + g.Name }

// New returns a Greeter.
func New(name string) *Greeter { return &Greeter{Name: name} }
`,
	"b/b.go": `package b

import "example.com/m/a"

func Use() string {
	return a.New("中文😀").Greet()
}
`,
	"c/c.go":      "package c\n\nfunc Bad() int {\n\treturn \"x\"\n}\n",
	"py/util.py":  "def helper(x):\n    return x\n\n\nclass Box:\n    def open(self):\n        return helper(1)\n",
	"docs/doc.md": "# Guide\n\n## Setup\n",
}

func newIndexRig(t *testing.T) *indexRig {
	g := &indexRig{newRig(t, "", Diagnostics, Symbols, FindDefinition, References, Hover)}
	g.answer = always(approval.Reject)
	testenv.WriteFiles(t, g.root, rigFiles)
	return g
}

// call runs a tool and decodes its structured result into out (a pointer,
// or nil). Out is cleared first, so that a call that ends without a
// structured result (an error) cannot leave an earlier call's answer in it.
// Callers check the status: some expect an error.
func (g *indexRig) call(name string, args any, out any) *Result {
	g.t.Helper()
	if out != nil {
		reflect.ValueOf(out).Elem().SetZero()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res := runTool(g.t, ctx, g.r, g.env, name, args, nil)
	if out != nil && res.Structured != nil {
		decode(g.t, res, out)
	}
	return res
}

type locsResult struct {
	Locations []location `json:"locations"`
	Precision string     `json:"precision"`
	Partial   bool       `json:"partial"`
	Kind      string     `json:"kind"`
}

func TestDefinition(t *testing.T) {
	t.Parallel()
	g := newIndexRig(t)
	tests := []struct {
		name      string
		args      map[string]any
		want      string // path:line:column of the first location
		precision string
		code      Code
	}{
		{"go across packages", map[string]any{"path": "b/b.go", "line": 6, "column": 11}, "a/a.go:14:6", "type", ""},
		{"go method after non-ASCII text", map[string]any{"path": "b/b.go", "line": 6, "column": 31}, "a/a.go:11:19", "type", ""},
		{"go by symbol", map[string]any{"symbol": "a.New"}, "a/a.go:14:6", "type", ""},
		{"go method by symbol", map[string]any{"symbol": "Greeter.Greet"}, "a/a.go:11:19", "type", ""},
		{"symbol in a file", map[string]any{"path": "a/a.go", "symbol": "Greeter.Greet"}, "a/a.go:11:19", "type", ""},
		{"symbol used in a file", map[string]any{"path": "b/b.go", "symbol": "New"}, "a/a.go:14:6", "type", ""},
		{"symbol on a line", map[string]any{"path": "b/b.go", "line": 6, "symbol": "Greet"}, "a/a.go:11:19", "type", ""},
		{"symbol not on the line", map[string]any{"path": "b/b.go", "line": 5, "symbol": "Greet"}, "", "", InvalidParams},
		{"python by name", map[string]any{"path": "py/util.py", "line": 7, "column": 17}, "py/util.py:1:5", "name", ""},
		{"white space", map[string]any{"path": "b/b.go", "line": 6, "column": 1}, "", "", InvalidParams},
		{"both forms", map[string]any{"path": "b/b.go", "line": 6, "column": 11, "symbol": "x"}, "", "", InvalidParams},
		{"neither", map[string]any{"path": "b/b.go"}, "", "", InvalidParams},
		{"unknown symbol", map[string]any{"symbol": "NoSuchThing"}, "", "", NoMatch},
		{"missing file", map[string]any{"path": "nope.go", "line": 1, "column": 1}, "", "", FileNotFound},
		{"outside the root", map[string]any{"path": "../x.go", "line": 1, "column": 1}, "", "", InvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out locsResult
			res := g.call("definition", tt.args, &out)
			if tt.code != "" {
				if res.Status != StatusError || res.Error.Code != tt.code {
					t.Fatalf("status %s error %+v, want %s", res.Status, res.Error, tt.code)
				}
				return
			}
			if res.Status != StatusSuccess || len(out.Locations) == 0 {
				t.Fatalf("result %+v", res)
			}
			l := out.Locations[0]
			if got := l.Path + ":" + itoa(l.Line) + ":" + itoa(l.Column); got != tt.want || out.Precision != tt.precision {
				t.Errorf("definition = %s (%s), want %s (%s)", got, out.Precision, tt.want, tt.precision)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
