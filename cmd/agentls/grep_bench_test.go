package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/tools"
)

// BenchmarkGrepWarmServer runs the search queries of search.Queries on
// $(go env GOROOT)/src through a warm agentls server (the real binary,
// tool/call over stdio, as an editor sends it, once its search index is
// built) and through a fresh ripgrep process, side by side, and prints the
// ratio per query:
//
//	go test ./cmd/agentls -run '^$' -bench GrepWarmServer -benchtime 1x
//
// The one-shot `agentls call grep` ratios are printed by
// go test ./tools -run '^$' -bench GrepVsRipgrep -benchtime 1x.
func BenchmarkGrepWarmServer(b *testing.B) {
	if _, err := exec.LookPath("rg"); err != nil {
		b.Skip("ripgrep is not installed (scripts/install-deps.sh ripgrep)")
	}
	src := filepath.Join(runtime.GOROOT(), "src")
	p := lsptest.Binary(b, lsptest.BuildBinary(b), src)
	ctx := context.Background()
	p.SetHooks(lsptest.Hooks{Other: func(method string, params json.RawMessage) (any, error) {
		return nil, nil // window/workDoneProgress/create
	}})
	if _, err := p.Initialize(ctx, src, lsptest.AgentlsCaps(), map[string]any{"config": map[string]any{"history": map[string]any{"enabled": false}}}); err != nil {
		b.Fatal(err)
	}
	// Wait for the search index: the end of its build's progress.
	var tok struct{ Token string }
	if _, err := p.WaitFor(ctx, "window/workDoneProgress/create", func(m json.RawMessage) bool {
		json.Unmarshal(m, &tok)
		return strings.HasPrefix(tok.Token, "agentls/search-index/")
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := p.WaitFor(ctx, "$/progress", func(m json.RawMessage) bool {
		var v struct {
			Token string
			Value struct{ Kind string }
		}
		json.Unmarshal(m, &v)
		return v.Token == tok.Token && v.Value.Kind == "end"
	}); err != nil {
		b.Fatal(err)
	}
	const runs = 7
	med := func(ds []time.Duration) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	for b.Loop() {
		fmt.Printf("\nwarm agentls server vs a fresh ripgrep on %s (median of %d interleaved runs)\n", src, runs)
		fmt.Printf("%-24s %10s %8s %6s\n", "query", "server ms", "rg ms", "ratio")
		var sumS, sumR float64
		for _, q := range search.Queries {
			var server, rg []time.Duration
			for i := 0; i <= runs; i++ {
				start := time.Now()
				res, err := p.ToolCall(ctx, "grep", json.RawMessage(q.Args))
				s := time.Since(start)
				if err != nil || res.Status != tools.StatusSuccess {
					b.Fatalf("%s: %v %+v", q.Name, err, res)
				}
				cmd := exec.Command("rg", q.Rg...)
				cmd.Dir = src
				start = time.Now()
				if err := cmd.Run(); err != nil {
					if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() > 1 {
						b.Fatalf("rg %v: %v", q.Rg, err)
					}
				}
				r := time.Since(start)
				if i > 0 { // the first run warms the caches
					server, rg = append(server, s), append(rg, r)
				}
			}
			ms, mr := med(server), med(rg)
			sumS, sumR = sumS+ms, sumR+mr
			fmt.Printf("%-24s %10.1f %8.1f %5.2fx\n", q.Name, ms, mr, ms/mr)
			b.ReportMetric(ms/mr, "server/rg:"+q.Name)
		}
		fmt.Printf("%-24s %10.1f %8.1f %5.2fx\n", "total", sumS, sumR, sumS/sumR)
	}
}
