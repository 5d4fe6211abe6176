package search

import (
	"testing"
)

// BenchmarkSearch runs each of Queries on $(go env GOROOT)/src through the
// engine alone (no tool pipeline, no JSON), uncached and through a warm
// cache, for profiling:
//
//	go test ./search -run '^$' -bench Search -cpuprofile cpu.out
//
// The comparison with ripgrep is tools' BenchmarkGrepVsRipgrep.
func BenchmarkSearch(b *testing.B) {
	ws := goSrcWorkspace(b)
	cache := NewCache()
	defer cache.Close()
	for _, q := range Queries {
		p, o := queryOf(b, q.Args)
		b.Run(q.Name, func(b *testing.B) {
			for b.Loop() {
				run(b, ws, p, o)
			}
		})
		o.Cache = cache
		run(b, ws, p, o) // fills the cache
		b.Run(q.Name+"/cached", func(b *testing.B) {
			for b.Loop() {
				run(b, ws, p, o)
			}
		})
	}
}
