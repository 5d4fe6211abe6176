package hugepages

import "testing"

// TestWholePages: the advised span is the huge pages wholly inside the range.
func TestWholePages(t *testing.T) {
	for _, tc := range []struct{ p, n, beg, end uintptr }{
		{0, 2 * Size, 0, 2 * Size},
		{1, 2 * Size, Size, 2 * Size},
		{Size - 1, Size + 1, Size, 2 * Size},
		{Size + 1, Size, 2 * Size, 2 * Size}, // none: beg == end
		{3 * Size, 4096, 3 * Size, 3 * Size},
	} {
		if beg, end := wholePages(tc.p, tc.n); beg != tc.beg || end != tc.end {
			t.Errorf("wholePages(%#x, %#x) = %#x, %#x, want %#x, %#x", tc.p, tc.n, beg, end, tc.beg, tc.end)
		}
	}
}

// TestEnabled: advised memory gets huge pages under "always" and
// "madvise", not under "never".
func TestEnabled(t *testing.T) {
	for setting, want := range map[string]bool{
		"always [madvise] never\n": true,
		"[always] madvise never\n": true,
		"always madvise [never]\n": false,
		"":                         false,
	} {
		if got := enabled(setting); got != want {
			t.Errorf("enabled(%q) = %v, want %v", setting, got, want)
		}
	}
}
