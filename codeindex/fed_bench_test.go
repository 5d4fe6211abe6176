package codeindex

import (
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/workspace"
)

// BenchmarkFedBuild builds both indexes of $(go env GOROOT)/src as a
// server's session does (session.New): the search index's build walks
// the tree and reads each file once, and feeds the code index from it.
// It prints the wall time until both are built and the CPU time used:
//
//	go test ./codeindex -run '^$' -bench FedBuild -benchtime 3x -cpuprofile cpu.out
//
// AGENTLS_BENCH_TREE names another tree (the monorepo tree of
// scripts/monorepo-tree.sh).
func BenchmarkFedBuild(b *testing.B) {
	ws, src := benchWorkspace(b)
	ctx := context.Background()
	for b.Loop() {
		runtime.GC()
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		start := time.Now()
		c := search.NewCache()
		c.SetPersistDir("") // build from the files, not the copy
		c.ExpectFeed()
		ix := New(ws)
		ix.SetFeed(func(ctx context.Context, root string, file func(*workspace.File, []byte), skipped func(string, bool)) bool {
			return c.Feed(ctx, ws, root, search.Tap{File: file, Skipped: skipped})
		})
		searchDone := make(chan time.Duration, 1)
		c.SetProgress(func(root string, files int, done bool) {
			if done {
				searchDone <- time.Since(start)
			}
		})
		ix.Start(nil)
		c.Warm(ctx, ws)
		ix.Wait(ctx)
		code := time.Since(start)
		srch := <-searchDone
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		user := time.Duration(ru1.Utime.Nano() - ru0.Utime.Nano())
		sys := time.Duration(ru1.Stime.Nano() - ru0.Stime.Nano())
		st := ix.Status()
		fmt.Printf("fed build of %s: search %s, code %s (%d files, fed %d), user %s sys %s, %d page faults\n",
			src, srch.Round(time.Millisecond), code.Round(time.Millisecond), st.Files, st.Fed,
			user.Round(time.Millisecond), sys.Round(time.Millisecond), ru1.Minflt-ru0.Minflt)
		ix.Close()
		c.Close()
	}
}
