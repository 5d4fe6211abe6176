package search

import (
	"bytes"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A lazy DFA that answers one question fast: which lines of a buffer hold a
// match? Go's regexp has no DFA, and for a pattern without a good literal
// to look for first (such as [A-Z]{4,}_[0-9]+) running it on every line
// costs tens of nanoseconds a byte. The DFA's states are sets of the
// compiled program's instructions, built as the text needs them; a byte
// then costs a table lookup. The regexp still runs, but only on the lines
// the DFA found, for the column.
//
// It serves line-oriented searches of programs without \b and \B: '^' and
// '$' are the line's ends, and no match crosses a '\n'. Its cache is not
// safe for concurrent use; each worker has its own (see matcher.clone).

// maxDFAStates bounds the cache; past it the DFA gives up and the regexp
// does the work.
const maxDFAStates = 4000

type dfa struct {
	prog     *syntax.Prog
	states   map[string]*dstate
	startBOL *dstate // at the start of a line
	startMid []uint32
	failed   bool
	// mid is the state in the middle of a line with no match under way;
	// loop marks the bytes that leave it where it is, which the search
	// skips without following transitions.
	mid  *dstate
	loop *[256]bool
}

type dstate struct {
	pcs      []uint32 // the consuming instructions (and Match)
	eol      []uint32 // the instructions waiting for the end of the line
	match    bool     // a match ends here
	eolMatch bool     // a match ends here if the line ends here
	ascii    [128]*dstate
	other    map[rune]*dstate
}

// newDFA returns a DFA for the program of re, or nil when the program uses
// what the DFA does not handle.
func newDFA(re *syntax.Regexp) *dfa {
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil
	}
	for _, in := range prog.Inst {
		if in.Op == syntax.InstEmptyWidth && syntax.EmptyOp(in.Arg)&(syntax.EmptyWordBoundary|syntax.EmptyNoWordBoundary) != 0 {
			return nil
		}
	}
	d := &dfa{prog: prog}
	d.reset()
	return d
}

func (d *dfa) reset() {
	d.states = map[string]*dstate{}
	d.startBOL = d.state(d.closure([]uint32{uint32(d.prog.Start)}, true))
	d.startMid = d.closure([]uint32{uint32(d.prog.Start)}, false)
	d.mid = d.state(d.startMid)
	d.loop = nil
}

// loops computes the bytes that keep the DFA in its mid state.
func (d *dfa) loops() {
	var t [256]bool
	if !d.mid.match {
		for c := 0; c < utf8.RuneSelf; c++ {
			if c == '\n' {
				continue
			}
			n := d.mid.ascii[c]
			if n == nil {
				n = d.step(d.mid, rune(c))
			}
			t[c] = n == d.mid
		}
	}
	d.loop = &t
}

func (d *dfa) clone() *dfa {
	if d == nil {
		return nil
	}
	c := &dfa{prog: d.prog}
	c.reset()
	return c
}

// walk visits once each instruction reachable from pcs through the
// empty transitions of Alt, Capture and Nop. The other instructions go to
// visit; for an EmptyWidth one, visit's answer says whether to follow it.
func (d *dfa) walk(pcs []uint32, visit func(pc uint32, in *syntax.Inst) (follow bool)) {
	seen := map[uint32]bool{}
	stack := append([]uint32(nil), pcs...)
	for len(stack) > 0 {
		pc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			stack = append(stack, in.Arg, in.Out)
		case syntax.InstCapture, syntax.InstNop:
			stack = append(stack, in.Out)
		default:
			if visit(pc, in) && in.Op == syntax.InstEmptyWidth {
				stack = append(stack, in.Out)
			}
		}
	}
}

// closure follows the empty transitions from pcs; bol says whether the
// position is a line start. It returns the consuming instructions, Match,
// and the end-of-line assertions not yet satisfied (as EmptyWidth pcs).
func (d *dfa) closure(pcs []uint32, bol bool) []uint32 {
	var out []uint32
	d.walk(pcs, func(pc uint32, in *syntax.Inst) bool {
		switch in.Op {
		case syntax.InstEmptyWidth:
			op := syntax.EmptyOp(in.Arg)
			if op&(syntax.EmptyBeginLine|syntax.EmptyBeginText) != 0 && !bol {
				return false
			}
			if op&(syntax.EmptyEndLine|syntax.EmptyEndText) != 0 {
				out = append(out, pc) // decided at the end of the line
				return false
			}
			return true
		case syntax.InstFail:
		default: // Match and the rune instructions
			out = append(out, pc)
		}
		return false
	})
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// state interns the state of a closure.
func (d *dfa) state(pcs []uint32) *dstate {
	var key strings.Builder
	for _, pc := range pcs {
		key.WriteString(strconv.FormatUint(uint64(pc), 36))
		key.WriteByte(',')
	}
	if s, ok := d.states[key.String()]; ok {
		return s
	}
	s := &dstate{}
	for _, pc := range pcs {
		in := &d.prog.Inst[pc]
		switch {
		case in.Op == syntax.InstMatch:
			s.match = true
		case in.Op == syntax.InstEmptyWidth:
			s.eol = append(s.eol, pc)
		default:
			s.pcs = append(s.pcs, pc)
		}
	}
	s.eolMatch = s.match || d.endMatches(s.eol)
	d.states[key.String()] = s
	return s
}

// endMatches reports whether, at the end of a line, the waiting
// assertions lead to Match.
func (d *dfa) endMatches(eol []uint32) bool {
	match := false
	d.walk(eol, func(_ uint32, in *syntax.Inst) bool {
		switch in.Op {
		case syntax.InstMatch:
			match = true
		case syntax.InstEmptyWidth:
			// A start-of-line assertion: only an empty line could pass it,
			// and the start state knows.
			return syntax.EmptyOp(in.Arg)&(syntax.EmptyBeginLine|syntax.EmptyBeginText) == 0
		}
		return false
	})
	return match
}

// step returns the state after rune r.
func (d *dfa) step(s *dstate, r rune) *dstate {
	var next []uint32
	for _, pc := range s.pcs {
		in := &d.prog.Inst[pc]
		if in.MatchRune(r) {
			next = append(next, in.Out)
		}
	}
	pcs := d.closure(next, false)
	pcs = mergePCs(pcs, d.startMid) // the search is unanchored
	if len(d.states) >= maxDFAStates {
		d.failed = true
	}
	n := d.state(pcs)
	if r < utf8.RuneSelf {
		s.ascii[r] = n
	} else {
		if s.other == nil {
			s.other = map[rune]*dstate{}
		}
		s.other[r] = n
	}
	return n
}

func mergePCs(a, b []uint32) []uint32 {
	out := make([]uint32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// lines calls emit with the start and end of each line of buf that holds a
// match, in order, until emit returns false. It returns false when the DFA
// gave up (too many states) before the end; the caller then finishes from
// the returned offset, a line start, with the regexp.
func (d *dfa) lines(buf []byte, emit func(start, end int) bool) (int, bool) {
	start := 0
	s := d.startBOL
	i := 0
	// matched reports the line of i and moves to the next one.
	matched := func() bool {
		for {
			end := len(buf)
			if j := indexNL(buf[i:]); j >= 0 {
				end = i + j
			}
			if !emit(start, end) {
				return false
			}
			i = end + 1
			start, s = i, d.startBOL
			// A pattern that matches the empty line start matches every line.
			if !s.match || i >= len(buf) {
				return true
			}
		}
	}
	if s.match && len(buf) > 0 && !matched() {
		return len(buf), true
	}
	if d.loop == nil {
		d.loops()
		if d.failed {
			return 0, false
		}
	}
	loop, mid := d.loop, d.mid
	for i < len(buf) {
		if s == mid {
			for i < len(buf) && loop[buf[i]] {
				i++
			}
			if i == len(buf) {
				break
			}
		}
		c := buf[i]
		if c < utf8.RuneSelf && c != '\n' {
			n := s.ascii[c]
			if n == nil {
				if n = d.step(s, rune(c)); d.failed {
					return start, false
				}
			}
			s = n
			i++
			if s.match && !matched() {
				return len(buf), true
			}
			continue
		}
		if c == '\n' {
			if s.eolMatch && !emit(start, i) {
				return len(buf), true
			}
			i++
			start, s = i, d.startBOL
			if s.match && i < len(buf) && !matched() {
				return len(buf), true
			}
			continue
		}
		r, size := utf8.DecodeRune(buf[i:])
		n := s.other[r]
		if n == nil {
			if n = d.step(s, r); d.failed {
				return start, false
			}
		}
		s = n
		i += size
		if s.match && !matched() {
			return len(buf), true
		}
	}
	if start < len(buf) && s.eolMatch {
		emit(start, len(buf))
	}
	return len(buf), true
}

// matchLine reports whether line (without its '\n') holds a match; ok is
// false when the DFA gave up.
func (d *dfa) matchLine(line []byte) (match, ok bool) {
	s := d.startBOL
	for i := 0; i < len(line); {
		if s.match {
			return true, true
		}
		r, size := rune(line[i]), 1
		var n *dstate
		if r < utf8.RuneSelf {
			n = s.ascii[r]
		} else {
			r, size = utf8.DecodeRune(line[i:])
			n = s.other[r]
		}
		if n == nil {
			if n = d.step(s, r); d.failed {
				return false, false
			}
		}
		s = n
		i += size
	}
	return s.eolMatch, true
}

func indexNL(b []byte) int { return bytes.IndexByte(b, '\n') }
