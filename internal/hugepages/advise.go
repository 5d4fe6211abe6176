package hugepages

import "strings"

// Size is the size of a huge page the advice is for.
const Size = 2 << 20

// wholePages returns the part of [p, p+n) that whole huge pages cover.
func wholePages(p, n uintptr) (beg, end uintptr) {
	return (p + Size - 1) &^ (Size - 1), (p + n) &^ (Size - 1)
}

// enabled reports whether the setting of transparent huge pages (the
// contents of /sys/kernel/mm/transparent_hugepage/enabled, the one in
// force in brackets: "always [madvise] never") gives them to advised memory.
func enabled(setting string) bool {
	return strings.Contains(setting, "[always]") || strings.Contains(setting, "[madvise]")
}
