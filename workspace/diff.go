package workspace

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/sourcegraph/go-diff/diff"
)

// LineEdit replaces old lines [OldStart, OldEnd) with new lines
// [NewStart, NewEnd), 0-based.
type LineEdit struct {
	OldStart, OldEnd int
	NewStart, NewEnd int
}

// SplitLines splits text into lines that keep their terminators, so that
// joining them gives text back. The last line may lack one.
func SplitLines(text string) []string {
	if text == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(text, "\n")+1)
	for len(text) > 0 {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i+1])
		text = text[i+1:]
	}
	return lines
}

// maxDiffCost bounds the Myers search; beyond it the differing middle is
// reported as one replacement, which is correct, only less minimal.
const maxDiffCost = 4096

// DiffLines returns the line edits that turn a into b. Common prefix and
// suffix are stripped first, so a local edit in a huge file costs little.
func DiffLines(a, b []string) []LineEdit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(am) == 0 && len(bm) == 0 {
		return nil
	}
	edits, ok := myers(am, bm)
	if !ok {
		edits = []LineEdit{{0, len(am), 0, len(bm)}}
	}
	for i := range edits {
		edits[i].OldStart += pre
		edits[i].OldEnd += pre
		edits[i].NewStart += pre
		edits[i].NewEnd += pre
	}
	return edits
}

// myers is the O(ND) algorithm of "An O(ND) Difference Algorithm and Its
// Variations" (Myers, 1986), with the trace kept to recover the path. It
// gives up (false) when the edit distance exceeds maxDiffCost.
func myers(a, b []string) ([]LineEdit, bool) {
	n, m := len(a), len(b)
	max := n + m
	if max > 2*maxDiffCost {
		max = 2 * maxDiffCost
	}
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int
	found := -1
	for d := 0; d <= max; d++ {
		snap := make([]int, len(v))
		copy(snap, v)
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
		if found >= 0 {
			break
		}
	}
	if found < 0 {
		return nil, false
	}
	// Walk back through the trace; each step is one line inserted or deleted
	// at a known point of both sequences.
	var steps []LineEdit
	x, y := n, m
	for d := found; d > 0; d-- {
		vd := trace[d]
		k := x - y
		var pk int
		if k == -d || k != d && vd[off+k-1] < vd[off+k+1] {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := vd[off+pk]
		py := px - pk
		if pk == k+1 { // insertion of b[py] at a[px]
			steps = append(steps, LineEdit{px, px, py, py + 1})
		} else { // deletion of a[px] at b[py]
			steps = append(steps, LineEdit{px, px + 1, py, py})
		}
		x, y = px, py
	}
	var edits []LineEdit
	for i := len(steps) - 1; i >= 0; i-- {
		e := steps[i]
		if len(edits) > 0 {
			last := &edits[len(edits)-1]
			if last.OldEnd == e.OldStart && last.NewEnd == e.NewStart {
				last.OldEnd, last.NewEnd = e.OldEnd, e.NewEnd
				continue
			}
		}
		edits = append(edits, e)
	}
	return edits, true
}

// Replacement replaces old[Start:End] (byte offsets) with Text.
type Replacement struct {
	Start, End int
	Text       string
}

// Replacements returns the minimal line-wise replacements that turn old
// into new, in order, by byte offsets of old. Only the lines between the
// common prefix and suffix are split and compared, so a local edit of a
// large text costs a comparison of its bytes.
func Replacements(old, new string) []Replacement {
	pre, suf := commonLines(old, new)
	a, b := SplitLines(old[pre:len(old)-suf]), SplitLines(new[pre:len(new)-suf])
	edits := DiffLines(a, b)
	if len(edits) == 0 {
		return nil
	}
	aOff := offsets(a)
	bOff := offsets(b)
	out := make([]Replacement, len(edits))
	for i, e := range edits {
		out[i] = Replacement{Start: pre + aOff[e.OldStart], End: pre + aOff[e.OldEnd], Text: new[pre+bOff[e.NewStart] : pre+bOff[e.NewEnd]]}
	}
	return out
}

// commonLines returns the byte lengths of the longest common prefix of a
// and b made of whole lines, and of a common suffix made of whole lines
// that does not overlap it (it may leave out one common line, which
// DiffLines trims).
func commonLines(a, b string) (pre, suf int) {
	n := min(len(a), len(b))
	i := 0
	const chunk = 512 // compared at once: memory comparison is vectorized
	for i+chunk <= n && a[i:i+chunk] == b[i:i+chunk] {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return i, 0
	}
	pre = strings.LastIndexByte(a[:i], '\n') + 1
	j := 0
	for j+chunk <= n-pre && a[len(a)-j-chunk:len(a)-j] == b[len(b)-j-chunk:len(b)-j] {
		j += chunk
	}
	for j < n-pre && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	// Start the suffix right after a line break both texts have.
	tail := a[len(a)-j:]
	if k := strings.IndexByte(tail, '\n'); k >= 0 {
		suf = len(tail) - k - 1
	}
	return pre, suf
}

// backLines moves offset off of text (a line start) back by up to n lines.
func backLines(text string, off, n int) int {
	for ; n > 0 && off > 0; n-- {
		off = strings.LastIndexByte(text[:off-1], '\n') + 1
	}
	return off
}

// offsets returns the byte offset of each line start, and the total length.
func offsets(lines []string) []int {
	off := make([]int, len(lines)+1)
	for i, l := range lines {
		off[i+1] = off[i] + len(l)
	}
	return off
}

// UnifiedDiff renders the change of one file from old to new as a unified
// diff with three lines of context, printed by go-diff. Paths are as the
// person should read them; a created file has oldPath "" and a deleted one
// newPath "".
func UnifiedDiff(oldPath, newPath, old, new string) string {
	const ctx = 3
	// Only the differing lines and their context are split: the common
	// prefix and suffix less ctx lines each, counted in line numbers.
	pre, suf := commonLines(old, new)
	pre = backLines(old, pre, ctx)
	for n := 0; n < ctx && suf > 0; n++ {
		k := strings.IndexByte(old[len(old)-suf:], '\n')
		if k < 0 {
			suf = 0
			break
		}
		suf -= k + 1
	}
	skipped := strings.Count(old[:pre], "\n")
	a, b := SplitLines(old[pre:len(old)-suf]), SplitLines(new[pre:len(new)-suf])
	fd := &diff.FileDiff{OrigName: "/dev/null", NewName: "/dev/null"}
	if oldPath != "" {
		fd.OrigName = "a/" + oldPath
	}
	if newPath != "" {
		fd.NewName = "b/" + newPath
	}
	edits := DiffLines(a, b)
	if len(edits) == 0 {
		if oldPath == newPath {
			return ""
		}
		out, _ := diff.PrintFileDiff(fd)
		return string(out)
	}
	for i := 0; i < len(edits); {
		// Group edits whose contexts touch.
		j := i
		for j+1 < len(edits) && edits[j+1].OldStart-edits[j].OldEnd <= 2*ctx {
			j++
		}
		first, last := edits[i], edits[j]
		os := max(first.OldStart-ctx, 0)
		ns := first.NewStart - (first.OldStart - os)
		oe := min(last.OldEnd+ctx, len(a))
		ne := last.NewEnd + (oe - last.OldEnd)
		var body bytes.Buffer
		ai := os
		for _, e := range edits[i : j+1] {
			for ; ai < e.OldStart; ai++ {
				writeLine(&body, ' ', a[ai])
			}
			for k := e.OldStart; k < e.OldEnd; k++ {
				writeLine(&body, '-', a[k])
			}
			for k := e.NewStart; k < e.NewEnd; k++ {
				writeLine(&body, '+', b[k])
			}
			ai = e.OldEnd
		}
		for ; ai < oe; ai++ {
			writeLine(&body, ' ', a[ai])
		}
		h := &diff.Hunk{
			OrigStartLine: int32(skipped + os + 1), OrigLines: int32(oe - os),
			NewStartLine: int32(skipped + ns + 1), NewLines: int32(ne - ns),
			Body: body.Bytes(),
		}
		if h.OrigLines == 0 {
			h.OrigStartLine--
		}
		if h.NewLines == 0 {
			h.NewStartLine--
		}
		fd.Hunks = append(fd.Hunks, h)
		i = j + 1
	}
	out, err := diff.PrintFileDiff(fd)
	if err != nil {
		return fmt.Sprintf("(diff unavailable: %v)\n", err)
	}
	return string(out)
}

// DiffLineCounts counts the added and removed lines of a unified diff (its
// "+++" and "---" file headers are not lines).
func DiffLineCounts(diff string) (add, del int) {
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return add, del
}

func writeLine(b *bytes.Buffer, prefix byte, line string) {
	b.WriteByte(prefix)
	b.WriteString(line)
	if !strings.HasSuffix(line, "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
}
