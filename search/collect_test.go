package search

import (
	"bytes"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/workspace"
)

// TestSearchFileLines holds searchFile's lines (matches, context lines,
// gaps, CRs trimmed, long lines cut, multi-line matches) to a plain
// construction of them, line by line from the matcher's hits, on random
// files.
func TestSearchFileLines(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewSource(1))
	words := []string{"ab", "x", "abc\r", "é", "ab" + strings.Repeat("z", 40), "", "b a", "c"}
	for i := range 300 {
		var sb strings.Builder
		for range rnd.Intn(30) {
			for range rnd.Intn(4) {
				sb.WriteString(words[rnd.Intn(len(words))])
			}
			sb.WriteByte('\n')
		}
		if rnd.Intn(3) == 0 {
			sb.WriteString("ab") // no final line break
		}
		data := []byte(sb.String())
		p := Pattern{Expr: []string{"ab", "b", `a\w*`, `c\n.*a`, "é"}[rnd.Intn(5)]}
		p.Multiline = strings.Contains(p.Expr, `\n`)
		m, err := compile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := &state{mode: Content, limit: 1 + rnd.Intn(20), before: rnd.Intn(3), after: rnd.Intn(3), maxLine: []int{0, 3, 20}[rnd.Intn(3)]}
		got := s.searchFile(m, data, "f")
		var hits []hit
		m.search(data, func(h hit) bool {
			hits = append(hits, h)
			return len(hits) < s.limit+1+s.after
		})
		want := plainLines(s, data, hits)
		if got == nil && want == nil {
			continue
		}
		if got == nil || want == nil || !reflect.DeepEqual(got.Matches, want.Matches) || !reflect.DeepEqual(slices.Collect(got.Lines()), want.lines) {
			t.Fatalf("case %d %+v (before %d, after %d, limit %d, maxLine %d) on %q:\ngot  %+v\nwant %+v", i, p, s.before, s.after, s.limit, s.maxLine, data, got, want)
		}
	}
}

// plainLines is the File of hits, each text made on its own.
func plainLines(s *state, data []byte, hits []hit) *File {
	if len(hits) == 0 {
		return nil
	}
	text := func(b []byte) string {
		t := string(bytes.TrimSuffix(b, []byte{'\r'}))
		if s.maxLine > 0 && len(t) > s.maxLine {
			t = workspace.CutLine(t, s.maxLine)
		}
		return t
	}
	lines := bytes.SplitAfter(data, []byte{'\n'})
	lineText := func(n int) string { return text(bytes.TrimSuffix(lines[n-1], []byte{'\n'})) }
	r := &File{Path: "f", Count: len(hits)}
	lastOut := 0
	for i, h := range hits {
		r.Matches = append(r.Matches, Match{Path: "f", Line: h.line, Column: h.col, Text: text(data[h.start:h.spanEnd])})
		for n := max(h.line-s.before, lastOut+1); n < h.line; n++ {
			r.lines = append(r.lines, Line{N: n, Text: lineText(n), Starts: -1})
		}
		for n := h.line; n <= h.endLine; n++ {
			starts := -1
			if n == h.line {
				starts = i
			}
			r.lines = append(r.lines, Line{N: n, Text: lineText(n), Match: true, Starts: starts})
		}
		lastOut = h.endLine
		limit := h.endLine + s.after
		if i+1 < len(hits) {
			limit = min(limit, hits[i+1].line-1)
		}
		for n := h.endLine + 1; n <= limit && n <= len(lines) && len(lines[n-1]) > 0; n++ {
			r.lines = append(r.lines, Line{N: n, Text: lineText(n), Starts: -1})
			lastOut = n
		}
	}
	for i := range r.lines {
		r.lines[i].Gap = i > 0 && r.lines[i].N > r.lines[i-1].N+1
	}
	return r
}
