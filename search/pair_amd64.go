//go:build amd64 && !purego

package search

import "golang.org/x/sys/cpu"

// useAVX2: pairIndex scans 32 positions per step with AVX2.
var useAVX2 = cpu.X86.HasAVX2

// pairScanAVX2 returns the first i < n-1 with p[i]|or == b1 and
// p[i+1]|or == b2 among the positions it scans, ((n-1)/32)*32 of them from
// the start, or -1. n must be at least 33.
//
//go:noescape
func pairScanAVX2(p *byte, n int, b1, b2, or byte) int
