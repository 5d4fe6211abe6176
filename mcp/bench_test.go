package mcp

import (
	"context"
	"os/exec"
	"sort"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/attach"
	"github.com/agentls/agentls/lsp/lsptest"
)

// The benchmarks measure one tools/call of a trivial tool
// (get_current_datetime) through the real `agentls mcp` binary on stdio,
// from the Go SDK's client: framing, the SDK on both ends, the pipeline and
// the history. They report the median as p50-ms (and p95-ms). Run both in
// one invocation to compare them:
//
//	go test ./mcp -run '^$' -bench 'Call(Stdio|Attached)' -benchtime 2000x

// benchEnv isolates a benchmark's configuration, state and runtime
// directory.
func benchEnv(b *testing.B) {
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	b.Setenv("XDG_STATE_HOME", b.TempDir())
	b.Setenv("XDG_RUNTIME_DIR", b.TempDir())
}

// BenchmarkCallStdio: a standalone `agentls mcp`.
func BenchmarkCallStdio(b *testing.B) {
	benchEnv(b)
	bin := lsptest.BuildBinary(b)
	root := b.TempDir()
	measure(b, bin, root)
}

// BenchmarkCallAttached: `agentls mcp` attached to an editor's `agentls
// serve` (the lsptest harness as the editor): the call crosses the
// session's socket and runs in the editor's session.
func BenchmarkCallAttached(b *testing.B) {
	benchEnv(b)
	bin := lsptest.BuildBinary(b)
	root := b.TempDir()
	ed := lsptest.Binary(b, bin, root)
	if _, err := ed.Initialize(context.Background(), root, lsptest.AgentlsCaps(), nil); err != nil {
		b.Fatal(err)
	}
	if _, ok := attach.FindRoot(root); !ok {
		b.Fatalf("the editor's session was not published: %s", ed.Stderr.String())
	}
	measure(b, bin, root)
	if len(ed.Received("tool/event")) == 0 {
		b.Fatal("the calls did not run in the editor's session")
	}
}

// measure starts `agentls mcp` in root and times b.N calls.
func measure(b *testing.B, bin, root string) {
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = root
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "get_current_datetime", Arguments: map[string]any{}}
	for i := 0; i < 20; i++ { // warm up
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), params)
		lat = append(lat, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", err, res)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}
