package mcp

import (
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallStdio measures one tools/call of a trivial tool
// (get_current_datetime) through the real `agentls mcp` binary on stdio,
// from the Go SDK's client: framing, the SDK on both ends, the pipeline and
// the history. It reports the median as p50-ms (and p95-ms).
func BenchmarkCallStdio(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "agentls")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/agentls/agentls/cmd/agentls").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	root := b.TempDir()
	cmd := exec.Command(bin, "mcp", "--root", root)
	cmd.Env = append(cmd.Environ(), "XDG_CONFIG_HOME="+b.TempDir(), "XDG_STATE_HOME="+b.TempDir())
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
