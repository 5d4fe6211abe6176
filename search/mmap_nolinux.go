//go:build unix && !linux

package search

const mapPopulate = 0
