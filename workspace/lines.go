package workspace

import (
	"fmt"
	"unicode/utf8"
)

// CutLine keeps the first max bytes of a line (on a rune boundary) and says
// how much was cut. The tools that show lines (read_file, grep) cut long
// lines with it.
func CutLine(t string, max int) string {
	n := max
	for n > 0 && !utf8.RuneStart(t[n]) {
		n--
	}
	return fmt.Sprintf("%s… [line cut: %d more bytes]", t[:n], len(t)-n)
}
