package search

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// BenchmarkSearch runs each of Queries on $(go env GOROOT)/src through the
// engine alone (no tool pipeline, no JSON), uncached and through a warm
// cache, for profiling:
//
//	go test ./search -run '^$' -bench Search -cpuprofile cpu.out
//
// The comparison with ripgrep is BenchmarkIndexVsRipgrep (and tools'
// BenchmarkGrepVsRipgrep, cmd/agentls' BenchmarkScale).
func BenchmarkSearch(b *testing.B) {
	ws := goSrcWorkspace(b)
	cache := NewCache()
	defer cache.Close()
	cache.Warm(context.Background(), ws)
	for _, q := range Queries {
		p, o := queryOf(b, q.Args)
		b.Run(q.Name, func(b *testing.B) {
			for b.Loop() {
				run(b, ws, p, o)
			}
		})
		o.Cache = cache
		waitReady(b, cache)
		b.Run(q.Name+"/cached", func(b *testing.B) {
			for b.Loop() {
				run(b, ws, p, o)
			}
		})
	}
}

// BenchmarkIndexVsRipgrep builds the index of a tree ($AGENTLS_BENCH_TREE,
// default $(go env GOROOT)/src), prints the build's wall time and the
// index's memory against the tree's size, then runs each of Queries
// through the warm index and through a fresh ripgrep process, interleaved,
// and prints the medians and their ratio:
//
//	go test ./search -run '^$' -bench IndexVsRipgrep -benchtime 1x
//	AGENTLS_BENCH_TREE=$PWD/.cache/trees/mono AGENTLS_BENCH_RUNS=3 go test ./search -run '^$' -bench IndexVsRipgrep -benchtime 1x
func BenchmarkIndexVsRipgrep(b *testing.B) {
	if _, err := exec.LookPath("rg"); err != nil {
		b.Skip("ripgrep is not installed (scripts/install-deps.sh ripgrep)")
	}
	tree := os.Getenv("AGENTLS_BENCH_TREE")
	if tree == "" {
		tree = filepath.Join(runtime.GOROOT(), "src")
	}
	ws := workspacetest.New(b, tree)
	cfg := *ws.Config()
	cfg.Paths.Sensitive = nil
	ws.SetConfig(&cfg)
	runs := 7
	if n, err := strconv.Atoi(os.Getenv("AGENTLS_BENCH_RUNS")); err == nil && n > 0 {
		runs = n
	}
	med := func(ds []time.Duration) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		cache := NewCache()
		cpu0 := cpuTime()
		start := time.Now()
		cache.Warm(context.Background(), ws)
		waitReady(b, cache)
		build := time.Since(start)
		cpu := cpuTime() - cpu0
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		st := cache.Status()
		_, size := testenv.TreeSize(tree)
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		fmt.Printf("\nindex of %s: %d files, %.0f MB of files; built in %.2fs (%.2fs of CPU, load %s); posting lists %.1f MB (%.2fx), heap %.1f MB (%.2fx), %d segments, %d directories watched\n",
			tree, st.Files, float64(size)/(1<<20), build.Seconds(), cpu.Seconds(), loadAvg(), float64(st.Bytes)/(1<<20), float64(st.Bytes)/float64(size),
			float64(heap)/(1<<20), float64(heap)/float64(size), st.Segments, st.Watches)
		fmt.Printf("%-24s %10s %8s %6s\n", "query", "agentls ms", "rg ms", "ratio")
		var sumA, sumR float64
		for _, q := range Queries {
			p, o := queryOf(b, q.Args)
			o.Cache = cache
			var ag, rg []time.Duration
			for i := 0; i <= runs; i++ {
				start := time.Now()
				run(b, ws, p, o)
				a := time.Since(start)
				cmd := exec.Command("rg", q.Rg...)
				cmd.Dir = tree
				start = time.Now()
				if err := cmd.Run(); err != nil {
					if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() > 1 {
						b.Fatalf("rg %v: %v", q.Rg, err)
					}
				}
				r := time.Since(start)
				if i > 0 {
					ag, rg = append(ag, a), append(rg, r)
				}
			}
			ma, mr := med(ag), med(rg)
			sumA, sumR = sumA+ma, sumR+mr
			fmt.Printf("%-24s %10.1f %8.1f %5.2fx\n", q.Name, ma, mr, ma/mr)
			b.ReportMetric(ma/mr, "agentls/rg:"+q.Name)
		}
		fmt.Printf("%-24s %10.1f %8.1f %5.2fx\n", "total", sumA, sumR, sumA/sumR)
		cache.Close()
	}
}

// waitReady waits until the cache's indexes are built.
func waitReady(b testing.TB, cache *Cache) {
	b.Helper()
	for !cache.Status().Ready {
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkIndexBuild builds the index of $(go env GOROOT)/src:
//
//	go test ./search -run '^$' -bench IndexBuild -cpuprofile cpu.out
func BenchmarkIndexBuild(b *testing.B) {
	ws := goSrcWorkspace(b)
	for b.Loop() {
		cache := NewCache()
		cache.noWatch = true
		cache.SetPersistDir("") // build from the files, not the copy
		cache.Warm(context.Background(), ws)
		waitReady(b, cache)
		cache.Close()
	}
}

// BenchmarkIndexLoad builds the index of $(go env GOROOT)/src again from
// its on-disk copy (a restart with nothing changed):
//
//	go test ./search -run '^$' -bench IndexLoad
func BenchmarkIndexLoad(b *testing.B) {
	ws := goSrcWorkspace(b)
	dir := filepath.Join(b.TempDir(), "agentls")
	build := func() Status {
		cache := NewCache()
		cache.noWatch = true
		cache.SetPersistDir(dir)
		cache.Warm(context.Background(), ws)
		waitReady(b, cache)
		st := cache.Status()
		cache.Close()
		return st
	}
	build() // writes the copy
	for b.Loop() {
		if st := build(); st.Loaded == 0 {
			b.Fatalf("the copy was not used: %+v", st)
		}
	}
	if fi, err := os.Stat(persistFile(dir, ws.Roots()[0])); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "MB-copy")
	}
}

// loadAvg returns the system's load average over a minute, or "?".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}
