package session

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// BenchmarkIndexMemory measures what the issue of memory is about: the
// heap a long-lived session holds once both indexes of a tree are built
// (the search index and the code index), after a collection, beside the
// tree's size. The process's RSS that BenchmarkScale (cmd/agentls) reports
// also counts the Go runtime, the binary's pages and the garbage of the
// build that the runtime has not handed back yet.
//
// The tree is testenv.BenchTree's: the first of AGENTLS_BENCH_TREES, else
// $(go env GOROOT)/src. Metrics: heap-MB (in use after a collection),
// tree-MB, heap/tree.
func BenchmarkIndexMemory(b *testing.B) {
	tree := testenv.BenchTree(b)
	b.Setenv("XDG_CACHE_HOME", b.TempDir()) // no on-disk copy to start from
	_, treeBytes := testenv.TreeSize(tree)
	for i := 0; i < b.N; i++ {
		base := heapInUse()
		s, _, err := New(Options{Folders: []workspace.Folder{{Path: tree}}, Runner: tools.NewRunner(tools.NewBuiltinRegistry(), nil), SearchCache: true})
		if err != nil {
			b.Fatal(err)
		}
		built := make(chan struct{})
		ended := sync.OnceFunc(func() { close(built) }) // a build started again ends again
		s.SearchCache().SetProgress(func(_ string, _ int, done bool) {
			if done {
				ended()
			}
		})
		s.WarmUp()
		s.Index().Start(nil)
		<-built
		if !s.Index().Wait(context.Background()) || !s.SearchCache().Status().Ready {
			b.Fatal("the indexes were not built")
		}
		held := heapInUse() - base
		runtime.KeepAlive(s)
		s.Close()
		b.ReportMetric(float64(held)/(1<<20), "heap-MB")
		b.ReportMetric(float64(treeBytes)/(1<<20), "tree-MB")
		b.ReportMetric(float64(held)/float64(treeBytes), "heap/tree")
	}
}

// heapInUse is the heap in use after two collections (the second frees
// what finalizers of the first kept).
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
