//go:build !linux

package cli

// oneShotHeap is the Linux advice of huge pages for a one-shot's heap
// (heap_linux.go); elsewhere nothing.
func oneShotHeap() {}
