// Package hugepages asks the system for transparent huge pages over the Go
// heap while an index build runs. A build writes a hundred megabytes of
// fresh memory within a second; taken 4 KB at a time, its page faults
// were a quarter of the build's CPU time on a virtual machine whose faults
// are slow. Linux backs a mapping with 2 MB pages when asked (madvise
// MADV_HUGEPAGE, in the "madvise" mode of transparent huge pages, the
// usual default), which the Go runtime no longer does for its heap.
//
// Build marks the heap's mappings while builds run, and unmarks them
// (MADV_NOHUGEPAGE) after the last one, so that the long-lived process's
// memory goes back to 4 KB pages: the kernel then neither collapses
// sparse regions into huge pages (which would keep memory resident that
// the heap does not use) nor keeps faulting 2 MB at a time. It is only a
// hint: where transparent huge pages are off, or always on, or on other
// systems, Build does nothing.
//
// Advise is the same hint for one fresh allocation, for as long as it
// lives: the one-shot `agentls call` (cli/heap.go) grows its heap into one
// advised span at its start. Enabled says whether advised memory gets huge
// pages at all.
package hugepages

import "sync"

var state struct {
	mu    sync.Mutex
	count int           // builds running
	stop  chan struct{} // ends the running marker
	done  chan struct{} // closed when it has unmarked the heap
}

// Build marks the heap for huge pages until the returned function is
// called (every build that runs meanwhile shares the marking; the last
// to end unmarks). The function may be called once.
func Build() (end func()) {
	if !supported() {
		return func() {}
	}
	state.mu.Lock()
	state.count++
	if state.count == 1 {
		stop, done := make(chan struct{}), make(chan struct{})
		state.stop, state.done = stop, done
		go mark(start(), stop, done)
	}
	state.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			state.mu.Lock()
			state.count--
			if state.count == 0 {
				close(state.stop)
				<-state.done
			}
			state.mu.Unlock()
		})
	}
}
