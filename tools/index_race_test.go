package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"

	"github.com/agentls/agentls/workspace/workspacetest"
)

// indexRaceCalls is how many code-intelligence calls TestIndexSymlinkRace
// makes while the links are swapped (0 of them may get outside bytes).
const indexRaceCalls = 600

// TestIndexSymlinkRace is TestSymlinkRace for the index and the Go type
// checker, whose reads of package files (stat, directory listing, open,
// read) go beneath the root too: while one goroutine keeps swapping, between
// an inside and an outside target,
//   - a symlinked Go file of the package asked about (p/b.go),
//   - and a symlinked package directory it imports (q),
//
// diagnostics, hover and symbols are called through the Runner. The outside
// files are valid Go whose comments, identifiers and constants carry a
// marker, and which the checker would report on (a string constant where an
// int is wanted), so a read of them would show in a result. Calls that meet
// the inside targets must still succeed, so the test cannot pass by
// refusing everything.
func TestIndexSymlinkRace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	marker := fmt.Sprintf("OUTSIDE%dMARKER", time.Now().UnixNano())
	testenv.WriteFiles(t, outside, map[string]string{
		"b.go": "package p\n\n// name " + marker + " doc.\nfunc name() int { return \"" + marker + "\" }\n\nfunc " + marker + "() {}\n",
		"q/q.go": "package q\n\n// V " + marker + " doc.\nconst V = \"" + marker + "\"\n\n// " + marker + " is outside.\nfunc " +
			marker + "() {}\n",
	})
	testenv.WriteFiles(t, root, map[string]string{
		"go.mod":      "module m\n\ngo 1.21\n",
		"p/a.go":      "package p\n\nimport \"m/q\"\n\nvar _ int = q.V\n\nfunc Greet() int { return name() }\n",
		"real/b.go":   "package p\n\n// name is inside.\nfunc name() int { return 1 }\n",
		"qreal/q.go":  "package q\n\n// V is inside.\nconst V = 1\n",
		"qreal/q2.go": "package q\n\n// Inside is inside.\nfunc Inside() {}\n",
	})
	if err := swapLink(root, "../real/b.go", "p/b.go"); err != nil {
		t.Fatal(err)
	}
	if err := swapLink(root, "qreal", "q"); err != nil {
		t.Fatal(err)
	}
	ws := workspacetest.New(t, root)
	reg := NewRegistry(nil)
	reg.MustRegister(Diagnostics, Symbols, Hover)
	env := &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{}), Approver: approval.Fixed(approval.Reject, ""), Memory: approval.NewMemory("")}
	t.Cleanup(func() { env.Session.Close() })
	r := NewRunner(reg, nil)

	calls := []raceCall{
		{"diagnostics", map[string]any{"path": "p/a.go"}, "no problems found"},
		{"diagnostics", map[string]any{"path": "."}, "no problems found"},
		{"hover", map[string]any{"path": "p/a.go", "line": 7, "column": 27}, "name is inside."},
		{"hover", map[string]any{"path": "p/a.go", "line": 5, "column": 15}, "V is inside."},
		{"symbols", map[string]any{"path": "p/b.go"}, `"name":"name"`},
		{"symbols", map[string]any{"path": "q"}, `"name":"Inside"`},
		{"symbols", map[string]any{"query": "Inside"}, `"name":"Inside"`},
	}
	// Each call alone, before the race: the inside answers are what ok says.
	for _, c := range calls {
		b, _ := json.Marshal(c.args)
		res := r.Run(context.Background(), env, Request{Name: c.tool, Arguments: b}, nil)
		out, _ := json.Marshal(res)
		if res.Status != StatusSuccess || !strings.Contains(string(out), c.ok) {
			t.Fatalf("%s %v before the race = %s, want %s", c.tool, c.args, out, c.ok)
		}
	}

	swap := func(i int) {
		if i%2 == 0 {
			swapLink(root, filepath.Join(outside, "b.go"), "p/b.go")
			swapLink(root, filepath.Join(outside, "q"), "q")
		} else {
			swapLink(root, "../real/b.go", "p/b.go")
			swapLink(root, "qreal", "q")
		}
	}
	race{name: "index symlink race", calls: calls, n: indexRaceCalls, minShare: 20, marker: marker, swap: swap,
		call: func(c raceCall) *Result {
			b, _ := json.Marshal(c.args)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			return r.Run(ctx, env, Request{Name: c.tool, Arguments: b}, nil)
		}}.run(t)
}
