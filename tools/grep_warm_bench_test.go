package tools

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// BenchmarkGrepWarm runs grep on $(go env GOROOT)/src as a warm server
// does (a session with a built search cache, no result cache) and encodes
// the result as the server writes it (AppendJSON), for profiling the
// output-heavy query (about 10,000 matching lines) and a few others:
//
//	go test ./tools -run '^$' -bench GrepWarm -cpuprofile cpu.out -memprofile mem.out
//
// AGENTLS_BENCH_TREES names another tree (testenv.BenchTree), such as
// scripts/monorepo-tree.sh's.
func BenchmarkGrepWarm(b *testing.B) {
	ws := workspacetest.New(b, testenv.BenchTree(b))
	s := NewSession(ws, SessionOptions{SearchCache: true})
	defer s.Close()
	s.WarmUp()
	for !s.Search.Status().Ready {
		time.Sleep(5 * time.Millisecond)
	}
	// The tests check every result against its output schema
	// (outputcheck_test.go); a server does not.
	defer func(on bool) { checkOutputs = on }(checkOutputs)
	checkOutputs = false
	r := NewRunner(builtinRegistry(), nil)
	env := &Env{Workspace: ws, Session: s, Memory: approval.NewMemory("")}
	b.ResetTimer()
	for _, q := range []struct{ name, args string }{
		{"output-heavy", `{"pattern":"return nil","max_results":100000}`},
		{"literal", `{"pattern":"NewReader"}`},
		{"no-match", `{"pattern":"qzxv_nomatch_jqk"}`},
	} {
		b.Run(q.name, func(b *testing.B) {
			var buf []byte
			var err error
			for b.Loop() {
				res := r.Run(context.Background(), env, Request{Name: "grep", Arguments: json.RawMessage(q.args)}, nil)
				if res.Status != StatusSuccess {
					b.Fatal(res.Content)
				}
				if buf, err = res.AppendJSON(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(buf)), "bytes/result")
		})
	}
}
