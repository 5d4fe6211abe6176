// Package hugepage asks the kernel to back memory that is about to be
// touched with transparent huge pages. Each page of fresh memory costs a
// fault when first touched, and on a virtual machine a fault can cost
// tens of microseconds: measured, about 20 µs for a 4 KiB page and 150 µs
// for a 2 MiB one, so 0.3 µs per 4 KiB. A short-lived process that builds
// up tens of megabytes (the one-shot `agentls call`) spends a good part of
// its time in those faults otherwise. The kernel decides: where the system
// disables huge pages (/sys/kernel/mm/transparent_hugepage/enabled
// "never"), or elsewhere than on Linux, the advice does nothing.
package hugepage

import "strings"

// Size is the size of a huge page the advice is for.
const Size = 2 << 20

// span returns the part of [p, p+n) that whole huge pages cover.
func span(p, n uintptr) (beg, end uintptr) {
	return (p + Size - 1) &^ (Size - 1), (p + n) &^ (Size - 1)
}

// enabled reports whether the setting of transparent huge pages (the
// contents of /sys/kernel/mm/transparent_hugepage/enabled, the one in
// force in brackets: "always [madvise] never") gives them to advised memory.
func enabled(setting string) bool {
	return strings.Contains(setting, "[always]") || strings.Contains(setting, "[madvise]")
}
