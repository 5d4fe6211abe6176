package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// BenchmarkGrepVsRipgrep compares grep with ripgrep on $(go env GOROOT)/src,
// query by query (search.Queries), and prints the ratios:
//
//	go test ./tools -run '^$' -bench GrepVsRipgrep -benchtime 1x
//
// "call" runs `agentls call grep ARGS --root .` as a process, like `rg ARGS`
// (both in GOROOT/src, output discarded); "in-process" runs the same call
// through the pipeline without a process start (RunTool), as a warm server
// would. Each figure is the median of several interleaved runs, after one
// warm-up run of each. Skipped when rg is not installed.
func BenchmarkGrepVsRipgrep(b *testing.B) {
	src := goSrc(b)
	bin := filepath.Join(b.TempDir(), "agentls")
	build := exec.Command("go", "build", "-o", bin, "github.com/agentls/agentls/cmd/agentls")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	ws := workspacetest.New(b, src)
	state := b.TempDir()
	const runs = 7
	env := append(os.Environ(), "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+state)
	// runProc returns the wall time and the CPU time (user + system).
	runProc := func(name string, args ...string) (time.Duration, time.Duration) {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = src, env
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if e, ok := err.(*exec.ExitError); err != nil && (!ok || e.ExitCode() > 1) {
			b.Fatalf("%s %v: %v", name, args, err)
		}
		return d, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ResetTimer()
	for b.Loop() {
		fmt.Printf("\ngrep vs ripgrep on %s (median of %d runs; CPU = user+system)\n", src, runs)
		fmt.Printf("%-24s %8s %8s %6s | %8s %8s %6s | %8s %6s\n", "query", "call ms", "rg ms", "ratio", "call cpu", "rg cpu", "ratio", "in-proc", "ratio")
		var sum [5]float64
		for _, q := range search.Queries {
			var call, rg, callCPU, rgCPU, warm []time.Duration
			for i := 0; i <= runs; i++ {
				c, cc := runProc(bin, "call", "grep", q.Args, "--root", ".", "--approve", "no")
				r, rc := runProc("rg", q.Rg...)
				start := time.Now()
				res := RunTool(context.Background(), ws, "grep", json.RawMessage(q.Args))
				w := time.Since(start)
				if res.Status != StatusSuccess {
					b.Fatalf("%s: %s", q.Name, res.Content)
				}
				if i > 0 { // the first run warms the caches
					call, rg, warm = append(call, c), append(rg, r), append(warm, w)
					callCPU, rgCPU = append(callCPU, cc), append(rgCPU, rc)
				}
			}
			m := [5]float64{testenv.MedianMs(call), testenv.MedianMs(rg), testenv.MedianMs(callCPU), testenv.MedianMs(rgCPU), testenv.MedianMs(warm)}
			for i := range sum {
				sum[i] += m[i]
			}
			fmt.Printf("%-24s %8.1f %8.1f %5.2fx | %8.1f %8.1f %5.2fx | %8.1f %5.2fx\n", q.Name, m[0], m[1], m[0]/m[1], m[2], m[3], m[2]/m[3], m[4], m[4]/m[1])
			b.ReportMetric(m[0]/m[1], "call/rg:"+q.Name)
		}
		fmt.Printf("%-24s %8.1f %8.1f %5.2fx | %8.1f %8.1f %5.2fx | %8.1f %5.2fx\n", "total", sum[0], sum[1], sum[0]/sum[1], sum[2], sum[3], sum[2]/sum[3], sum[4], sum[4]/sum[1])
		// The fixed cost of a process: a call that does nothing, and rg on
		// an empty directory.
		empty := b.TempDir()
		var call, rg, callCPU, rgCPU []time.Duration
		for i := 0; i < runs; i++ {
			c, cc := runProc(bin, "call", "get_current_directory", "{}", "--root", empty)
			r, rc := runProc("rg", "x", empty)
			call, rg, callCPU, rgCPU = append(call, c), append(rg, r), append(callCPU, cc), append(rgCPU, rc)
		}
		fmt.Printf("%-24s %8.1f %8.1f        | %8.1f %8.1f\n", "(process start)", testenv.MedianMs(call), testenv.MedianMs(rg), testenv.MedianMs(callCPU), testenv.MedianMs(rgCPU))
	}
}

// BenchmarkGrepInProcess measures one query through the pipeline, for
// profiling: go test ./tools -run '^$' -bench GrepInProcess -cpuprofile cpu.out
func BenchmarkGrepInProcess(b *testing.B) {
	src := goSrc(b)
	ws := workspacetest.New(b, src)
	for _, q := range search.Queries {
		b.Run(q.Name, func(b *testing.B) {
			for b.Loop() {
				if res := RunTool(context.Background(), ws, "grep", json.RawMessage(q.Args)); res.Status != StatusSuccess {
					b.Fatal(res.Content)
				}
			}
		})
	}
}
