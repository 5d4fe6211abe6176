//go:build !linux

package hugepages

// Advise does nothing here (advise_linux.go advises huge pages).
func Advise(b []byte) {}

// Enabled reports false: Advise does nothing here.
func Enabled() bool { return false }
