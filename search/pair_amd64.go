//go:build amd64 && !purego

package search

import "golang.org/x/sys/cpu"

// useAVX2: pairIndex scans 32 positions per step with AVX2.
var useAVX2 = cpu.X86.HasAVX2

// pairScanAVX2 returns the first i < n-dist with p[i]|or == b1 and
// p[i+dist]|or == b2 among the positions it scans, ((n-dist)/32)*32 of
// them from the start, or -1. n must be at least dist+32.
//
//go:noescape
func pairScanAVX2(p *byte, n, dist int, b1, b2, or byte) int
