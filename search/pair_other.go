//go:build !amd64 || purego

package search

const useAVX2 = false

func pairScanAVX2(p *byte, n, dist int, b1, b2, or byte) int { return -1 }
