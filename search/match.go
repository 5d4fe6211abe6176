package search

import (
	"bytes"
	"fmt"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// The matcher. Go's regexp has no DFA, so running it over
// every byte of a tree is many times slower than ripgrep. What makes it
// fast here (measured on the Go source tree):
//
//   - the literals every match must contain are pulled out of the parsed
//     regex (regexp/syntax); the file is scanned for them first, as a whole
//     buffer, and the regex runs only on the lines that hold one;
//   - a literal is found through its rarest byte (bytes.IndexByte, which is
//     SIMD) and then compared; one whose bytes are all common, or a
//     case-insensitive one whose rarest byte is a letter, through its two
//     rarest bytes at once, at their distance apart (pairIndex, AVX2),
//     then compared (with an ASCII case fold);
//   - when the pattern is just a literal, a hit is a match and the regex
//     does not run at all.

// byteRank ranks bytes by how common they are in source code (0: the most
// common), measured on the Go tree; the prefilter looks for the rarest byte
// of a literal.
var byteRank = [256]uint8{
	218, 209, 210, 211, 212, 213, 205, 207, 219, 3, 7, 220, 221, 222, 223, 224, 214, 225, 226, 227, 215, 228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238,
	0, 73, 29, 93, 89, 82, 76, 81, 22, 23, 69, 74, 12, 68, 19, 24, 5, 21, 28, 42, 36, 55, 45, 64, 47, 60, 26, 72, 78, 31, 83, 97,
	98, 37, 63, 50, 52, 38, 58, 70, 71, 48, 91, 84, 56, 53, 61, 49, 51, 85, 44, 32, 35, 67, 62, 75, 57, 79, 90, 65, 46, 66, 95, 34,
	88, 8, 33, 15, 17, 1, 16, 27, 30, 9, 87, 54, 14, 25, 6, 11, 20, 86, 4, 10, 2, 18, 43, 59, 13, 40, 80, 39, 77, 41, 99, 239,
	100, 111, 101, 107, 128, 109, 116, 157, 106, 124, 117, 164, 144, 178, 156, 182, 146, 163, 159, 141, 119, 115, 170, 127, 131, 120, 187, 184, 121, 114, 150, 177,
	167, 158, 166, 160, 123, 129, 151, 142, 161, 118, 145, 136, 132, 138, 155, 173, 169, 126, 130, 135, 162, 154, 168, 94, 165, 110, 143, 148, 113, 139, 122, 171,
	240, 241, 92, 133, 192, 195, 203, 186, 196, 172, 176, 193, 134, 174, 103, 149, 181, 188, 204, 200, 199, 180, 179, 175, 105, 102, 190, 189, 198, 216, 206, 202,
	152, 108, 96, 104, 153, 125, 112, 140, 147, 183, 185, 197, 194, 201, 217, 191, 137, 242, 243, 244, 208, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255,
}

// foldSafe[b] is true for the ASCII bytes whose case-fold orbit is ASCII
// only: a case-insensitive match of a run of them is the same length and
// byte-for-byte equal up to ASCII case ('k' and 's' are not: U+212A KELVIN
// SIGN folds to k, U+017F LONG S to s).
var foldSafe = func() (t [256]bool) {
	for b := 0; b < utf8.RuneSelf; b++ {
		t[b] = true
		for r := unicode.SimpleFold(rune(b)); r != rune(b); r = unicode.SimpleFold(r) {
			if r >= utf8.RuneSelf {
				t[b] = false
			}
		}
	}
	return t
}()

// literal is one string a match must contain.
type literal struct {
	s    []byte // lower-cased when fold
	fold bool
	// the rarest byte and its offset in s; for fold, both of its cases
	rare     byte
	rareAlt  byte // the other case, or rare itself
	rareAt   int
	nextRare int // scan cache: next position of rare, -2 unknown, -1 none
	nextAlt  int
	// pair: scan for two of its bytes at once, the two rarest, s[pairAt]
	// and s[pairAt+pairDist], 32 positions per step (for case-insensitive
	// literals, and literals whose bytes are all common); pairOr is ORed
	// into the text first (0x20 in every byte folds ASCII letters to lower
	// case). Two bytes apart are a finer sieve than two adjacent ones,
	// which go together in words ("nil" holds "il" as most "il" do).
	pair             bool
	pairAt, pairDist int
	p1, p2           uint64
	pairOr           uint64
	last, seen       int // next's cache: the last answer and the position it was asked from
}

// rarity is how rare a byte is in source code, case folded or not.
func rarity(b byte, fold bool) int {
	r := int(byteRank[b])
	if fold && b >= 'a' && b <= 'z' {
		r = min(r, int(byteRank[b-'a'+'A']))
	}
	return r
}

func newLiteral(s string, fold bool) *literal {
	l := &literal{s: []byte(s), fold: fold}
	if fold {
		l.s = bytes.ToLower(l.s)
	}
	best := -1
	for i, b := range l.s {
		if best < 0 || rarity(b, fold) > rarity(l.s[best], fold) {
			best = i
		}
	}
	l.rareAt, l.rare, l.rareAlt = best, l.s[best], l.s[best]
	if fold && l.rare >= 'a' && l.rare <= 'z' {
		l.rareAlt = l.rare - 'a' + 'A'
	}
	// A byte this common gives too many hits for IndexByte: scan for it
	// together with the next rarest byte instead.
	if len(l.s) >= 2 && (fold && l.rareAlt != l.rare || rarity(l.rare, fold) < 40) {
		second := -1
		for i, b := range l.s {
			if i != best && (second < 0 || rarity(b, fold) > rarity(l.s[second], fold)) {
				second = i
			}
		}
		i, j := min(best, second), max(best, second)
		var or byte
		if fold {
			or, l.pairOr = 0x20, 0x2020202020202020
		}
		l.pair, l.pairAt, l.pairDist = true, i, j-i
		l.p1 = uint64(l.s[i]|or) * 0x0101010101010101
		l.p2 = uint64(l.s[j]|or) * 0x0101010101010101
	}
	return l
}

// score says how good a prefilter the literal is: rare bytes and length.
func (l *literal) score() int {
	return rarity(l.rare, l.fold) + 8*min(len(l.s), 12)
}

func (l *literal) reset() { l.nextRare, l.nextAlt, l.last, l.seen = -2, -2, -2, -1 }

// next returns the start of the first occurrence of l in buf at or after
// from, or -1. Calls for one buffer must not go backwards.
func (l *literal) next(buf []byte, from int) int {
	if l.last == -1 || (l.last >= from && l.seen <= from) {
		return l.last
	}
	l.last, l.seen = l.find(buf, from), from
	return l.last
}

func (l *literal) find(buf []byte, from int) int {
	n := len(l.s)
	for {
		if from+n > len(buf) {
			return -1
		}
		var p, at int
		if l.pair {
			at = l.pairAt
			p = pairIndex(buf, from+at, l.pairDist, l.p1, l.p2, l.pairOr)
		} else {
			// The rare byte sits rareAt bytes into the literal.
			at = l.rareAt
			p = l.scan(buf, from+at)
		}
		if p < 0 {
			return -1
		}
		s := p - at
		if s+n <= len(buf) && l.equal(buf[s:s+n]) {
			return s
		}
		from = s + 1
	}
}

// pairIndex returns the first i ≥ at where buf[i]|or == p1's byte and
// buf[i+dist]|or == p2's byte (or: 0 or 0x20 in every byte; dist ≥ 1),
// sixteen positions per step, or 32 with AVX2.
func pairIndex(buf []byte, at, dist int, p1, p2, or uint64) int {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	i := at
	if useAVX2 && len(buf)-i >= dist+32 {
		n := len(buf) - i
		if r := pairScanAVX2(&buf[i], n, dist, byte(p1), byte(p2), byte(or)); r >= 0 {
			return i + r
		}
		i += (n - dist) / 32 * 32
	}
	if littleEndian && len(buf) >= dist+16 {
		base := unsafe.Pointer(unsafe.SliceData(buf))
		load := func(i int) uint64 { return *(*uint64)(unsafe.Add(base, i)) }
		// x has a zero byte where both bytes match; the lowest set bit of
		// (x - lo) &^ x & hi marks the first one exactly (the borrow only
		// spoils the bytes above a zero byte).
		for ; i+dist+16 <= len(buf); i += 16 {
			x := ((load(i) | or) ^ p1) | ((load(i+dist) | or) ^ p2)
			y := ((load(i+8) | or) ^ p1) | ((load(i+8+dist) | or) ^ p2)
			zx := (x - lo) &^ x & hi
			zy := (y - lo) &^ y & hi
			if zx|zy != 0 {
				if zx != 0 {
					return i + bits.TrailingZeros64(zx)/8
				}
				return i + 8 + bits.TrailingZeros64(zy)/8
			}
		}
	}
	b1, b2, o := byte(p1), byte(p2), byte(or)
	for ; i+dist < len(buf); i++ {
		if buf[i]|o == b1 && buf[i+dist]|o == b2 {
			return i
		}
	}
	return -1
}

// littleEndian: pairIndex's word loads number bytes from the low end.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// scan finds the next position ≥ at of the rare byte (either case).
func (l *literal) scan(buf []byte, at int) int {
	if l.nextRare == -2 || (l.nextRare >= 0 && l.nextRare < at) {
		l.nextRare = indexFrom(buf, l.rare, at)
	}
	if l.rareAlt == l.rare {
		return l.nextRare
	}
	if l.nextAlt == -2 || (l.nextAlt >= 0 && l.nextAlt < at) {
		l.nextAlt = indexFrom(buf, l.rareAlt, at)
	}
	switch {
	case l.nextRare < 0:
		return l.nextAlt
	case l.nextAlt < 0:
		return l.nextRare
	}
	return min(l.nextRare, l.nextAlt)
}

func indexFrom(buf []byte, b byte, at int) int {
	if at >= len(buf) {
		return -1
	}
	i := bytes.IndexByte(buf[at:], b)
	if i < 0 {
		return -1
	}
	return at + i
}

func (l *literal) equal(t []byte) bool {
	if !l.fold {
		return bytes.Equal(t, l.s)
	}
	for i, c := range t {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != l.s[i] {
			return false
		}
	}
	return true
}

// matcher finds matching lines.
type matcher struct {
	re *regexp.Regexp
	// group is the capture group whose start is the match's column (word
	// mode wraps the pattern), 0 for the whole match.
	group int
	// lits: every match contains one of them (nil: no prefilter).
	lits []*literal
	// exact: a literal hit is a match; the regex need not run.
	exact     bool
	multiline bool
	// dfa finds the matching lines when there is no good literal.
	dfa *dfa
	// hits and texts are searchFile's scratch: one file's hits and the
	// texts of its lines (a clone's own).
	hits  []hit
	texts texts
}

// compile builds the matcher of a pattern.
func compile(a Pattern) (*matcher, error) {
	src := a.Expr
	if a.FixedStrings {
		src = regexp.QuoteMeta(src)
	}
	m := &matcher{multiline: a.Multiline}
	if a.Word {
		// ripgrep's -w: the pattern between non-word characters or line
		// ends; the column is the pattern's own.
		src = `(?:^|` + nonWord + `)(` + src + `)(?:$|` + nonWord + `)`
		m.group = 1
	}
	src = unicodeClasses(src)
	flags := syntax.Perl
	if a.CaseInsensitive {
		flags |= syntax.FoldCase
	}
	if a.Multiline {
		src = "(?m)" + src
	}
	tree, err := syntax.Parse(src, flags)
	if err != nil {
		return nil, argErrorf("pattern %q is not a valid RE2 regular expression: %v", a.Expr, syntaxMessage(err))
	}
	if !a.Multiline && hasNewlineLiteral(tree) {
		return nil, argErrorf("pattern %q contains a line break; set multiline: true to match across lines", a.Expr)
	}
	prefix := ""
	if a.CaseInsensitive {
		prefix = "(?i)"
	}
	re, err := regexp.Compile(prefix + src)
	if err != nil {
		return nil, argErrorf("pattern %q: %v", a.Expr, err)
	}
	m.re = re
	if set := required(tree); set != nil {
		for _, l := range set {
			m.lits = append(m.lits, newLiteral(l.s, l.fold))
		}
		// A pattern that is one literal needs no regex: its hits are
		// matches (with a fold-safe literal the hit is byte-exact).
		lit, ok := wholeLiteral(tree)
		m.exact = ok && !a.Word && !a.Multiline && len(m.lits) == 1 && string(m.lits[0].s) == foldIf(lit.s, lit.fold) && m.lits[0].fold == lit.fold
	}
	if !a.Multiline {
		m.dfa = newDFA(tree)
	}
	return m, nil
}

// clone returns a matcher with its own scan state for one worker.
func (m *matcher) clone() *matcher {
	c := *m
	c.hits, c.texts = nil, texts{}
	c.dfa = m.dfa.clone()
	if m.lits == nil {
		return &c
	}
	c.lits = make([]*literal, len(m.lits))
	for i, l := range m.lits {
		cp := *l
		c.lits[i] = &cp
	}
	return &c
}

func foldIf(s string, fold bool) string {
	if fold {
		return strings.ToLower(s)
	}
	return s
}

// syntaxMessage shortens a regexp/syntax error.
func syntaxMessage(err error) string {
	if e, ok := err.(*syntax.Error); ok {
		return fmt.Sprintf("%s: `%s`", e.Code, e.Expr)
	}
	return err.Error()
}

func hasNewlineLiteral(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, s := range re.Sub {
		if hasNewlineLiteral(s) {
			return true
		}
	}
	return false
}

type lit struct {
	s    string
	fold bool
}

// wholeLiteral reports whether the regex is exactly one literal string.
func wholeLiteral(re *syntax.Regexp) (lit, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpLiteral {
		return lit{}, false
	}
	l := lit{s: string(re.Rune), fold: re.Flags&syntax.FoldCase != 0}
	if l.fold {
		for i := 0; i < len(l.s); i++ {
			if !foldSafe[l.s[i]] {
				return lit{}, false
			}
		}
	}
	return l, true
}

// required returns literals one of which every match contains, or nil.
func required(re *syntax.Regexp) []lit {
	switch re.Op {
	case syntax.OpLiteral:
		l := lit{s: string(re.Rune), fold: re.Flags&syntax.FoldCase != 0}
		if l.fold {
			l = bestSafeRun(l.s)
			if l.s == "" {
				return nil
			}
		}
		return []lit{l}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []lit
		bestScore := -1
		consider := func(set []lit) {
			if set == nil {
				return
			}
			if s := setScore(set); s > bestScore {
				best, bestScore = set, s
			}
		}
		// Adjacent literals with the same case rule make one longer literal.
		for i := 0; i < len(re.Sub); {
			sub := re.Sub[i]
			if sub.Op != syntax.OpLiteral {
				consider(required(sub))
				i++
				continue
			}
			fold := sub.Flags&syntax.FoldCase != 0
			var runes []rune
			j := i
			for ; j < len(re.Sub) && re.Sub[j].Op == syntax.OpLiteral && (re.Sub[j].Flags&syntax.FoldCase != 0) == fold; j++ {
				runes = append(runes, re.Sub[j].Rune...)
			}
			consider(required(&syntax.Regexp{Op: syntax.OpLiteral, Rune: runes, Flags: re.Sub[i].Flags}))
			i = j
		}
		return best
	case syntax.OpAlternate:
		var set []lit
		for _, s := range re.Sub {
			r := required(s)
			if r == nil {
				return nil
			}
			set = append(set, r...)
		}
		if len(set) > 8 {
			return nil
		}
		return set
	}
	return nil
}

// bestSafeRun returns the best run of fold-safe bytes of s, as a
// case-insensitive literal.
func bestSafeRun(s string) lit {
	var best lit
	bestScore := -1
	for i := 0; i < len(s); {
		if !foldSafe[s[i]] {
			i++
			continue
		}
		j := i
		for j < len(s) && foldSafe[s[j]] {
			j++
		}
		if sc := newLiteral(s[i:j], true).score(); sc > bestScore {
			best, bestScore = lit{s: s[i:j], fold: true}, sc
		}
		i = j
	}
	return best
}

func setScore(set []lit) int {
	worst := 1 << 30
	for _, l := range set {
		if l.s == "" {
			return -1
		}
		worst = min(worst, newLiteral(l.s, l.fold).score())
	}
	return worst - 24*(len(set)-1)
}

// hit is a matching line of a buffer.
type hit struct {
	line       int // 1-based
	start, end int // the line's bytes, without its '\n'
	col        int // 1-based byte column of the match
	// endLine is the last line of a multiline match (== line otherwise).
	endLine int
	spanEnd int // end of the last line of a multiline match
}

// search finds the matching lines of buf in order, calling emit for each
// until it returns false.
func (m *matcher) search(buf []byte, emit func(hit) bool) {
	if m.multiline {
		m.searchMultiline(buf, emit)
		return
	}
	lines := lineCounter{buf: buf, line: 1}
	if m.dfa != nil && !m.dfa.failed && m.lits == nil {
		stopped := false
		resume, ok := m.dfa.lines(buf, func(start, end int) bool {
			col := m.locate(buf[start:end])
			if col < 0 {
				return true // the regexp has the last word
			}
			if !emit(lineHit(lines.at(start), start, end, col)) {
				stopped = true
				return false
			}
			return true
		})
		if ok || stopped {
			return
		}
		// The DFA gave up: the regexp goes on from where it stopped.
		lines.at(resume)
		m.searchLines(lines, resume, emit)
		return
	}
	if m.lits == nil {
		m.searchLines(lines, 0, emit)
		return
	}
	for _, l := range m.lits {
		l.reset()
	}
	for pos := 0; pos < len(buf); {
		c := -1
		for _, l := range m.lits {
			if p := l.next(buf, pos); p >= 0 && (c < 0 || p < c) {
				c = p
			}
		}
		if c < 0 {
			return
		}
		start := bytes.LastIndexByte(buf[pos:c], '\n') + 1 + pos
		end := lineEnd(buf, c)
		col := c - start
		if !m.exact {
			col = -1
			// The DFA tells cheaply whether the line matches; the regexp
			// then finds the column.
			if match, ok := m.dfaLine(buf[start:end]); !ok || match {
				col = m.locate(buf[start:end])
			}
		}
		if col >= 0 && !emit(lineHit(lines.at(start), start, end, col)) {
			return
		}
		pos = end + 1
	}
}

var nl = []byte{'\n'}

// lineCounter numbers the lines of buf as a search moves forward.
type lineCounter struct {
	buf     []byte
	line    int // the number of the line that starts at counted
	counted int
}

// at returns the number of the line that starts at offset start, which is
// not before the last offset asked.
func (c *lineCounter) at(start int) int {
	c.line += bytes.Count(c.buf[c.counted:start], nl)
	c.counted = start
	return c.line
}

// lineHit is the hit of a match at the 0-based column col of the line
// buf[start:end], number line.
func lineHit(line, start, end, col int) hit {
	return hit{line: line, start: start, end: end, col: col + 1, endLine: line, spanEnd: end}
}

// lineEnd returns the offset of the first '\n' of buf at or after i, or
// len(buf).
func lineEnd(buf []byte, i int) int {
	if e := bytes.IndexByte(buf[i:], '\n'); e >= 0 {
		return i + e
	}
	return len(buf)
}

// searchLines runs the regexp on every line from offset from, a line start
// on which lines stands.
func (m *matcher) searchLines(lines lineCounter, from int, emit func(hit) bool) {
	buf := lines.buf
	for start := from; start < len(buf); {
		end := lineEnd(buf, start)
		if loc := m.locate(buf[start:end]); loc >= 0 && !emit(lineHit(lines.at(start), start, end, loc)) {
			return
		}
		start = end + 1
	}
}

// dfaLine asks the DFA whether line matches; ok is false without a DFA.
func (m *matcher) dfaLine(line []byte) (match, ok bool) {
	if m.dfa == nil || m.dfa.failed {
		return false, false
	}
	return m.dfa.matchLine(line)
}

// locate returns the 0-based column of the first match in line, or -1.
func (m *matcher) locate(line []byte) int {
	if m.group == 0 {
		loc := m.re.FindIndex(line)
		if loc == nil {
			return -1
		}
		return loc[0]
	}
	loc := m.re.FindSubmatchIndex(line)
	if loc == nil {
		return -1
	}
	return loc[2*m.group]
}

// mayMatch reports whether buf holds one of the required literals.
func (m *matcher) mayMatch(buf []byte) bool {
	if m.lits == nil {
		return true
	}
	for _, l := range m.lits {
		l.reset()
		if l.next(buf, 0) >= 0 {
			return true
		}
	}
	return false
}

func (m *matcher) searchMultiline(buf []byte, emit func(hit) bool) {
	if !m.mayMatch(buf) {
		return
	}
	lines := lineCounter{buf: buf, line: 1}
	lastLine := 0 // the last line already reported
	for pos := 0; pos <= len(buf); {
		loc := m.re.FindSubmatchIndex(buf[pos:])
		if loc == nil {
			return
		}
		ms, me := pos+loc[2*m.group], pos+loc[1]
		if m.group != 0 {
			me = pos + loc[3]
		}
		if ms >= len(buf) && len(buf) > 0 && buf[len(buf)-1] == '\n' {
			return // an empty match after the last line
		}
		start := bytes.LastIndexByte(buf[:ms], '\n') + 1
		lineNo := lines.at(start)
		last := me
		if me > ms {
			last = me - 1
		}
		// A match that ends with '\n' ends on the line that '\n' closes.
		endStart := bytes.LastIndexByte(buf[:last], '\n') + 1
		spanEnd := lineEnd(buf, endStart)
		end := lineEnd(buf, start)
		endLine := lineNo + bytes.Count(buf[start:endStart], nl)
		if lineNo > lastLine {
			if !emit(hit{line: lineNo, start: start, end: end, col: ms - start + 1, endLine: endLine, spanEnd: spanEnd}) {
				return
			}
			lastLine = endLine
		}
		next := pos + loc[1]
		if loc[1] == loc[0] {
			next++
		}
		if next <= pos {
			next = pos + 1
		}
		pos = next
	}
}

// Unicode word and digit classes: ripgrep's \w and \d are Unicode-aware,
// Go's are ASCII.
const (
	wordChars = `\p{L}\p{M}\p{Nd}\p{Pc}`
	nonWord   = `[^` + wordChars + `]`
)

// unicodeClasses rewrites the Perl classes \w, \W, \d and \D of a pattern
// into their Unicode forms, as ripgrep reads them (\W and \D inside a
// bracketed class stay ASCII). It leaves escaped backslashes, \Q…\E and
// POSIX classes alone.
func unicodeClasses(src string) string {
	if !strings.Contains(src, `\`) {
		return src
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			n := src[i+1]
			switch {
			case n == 'Q':
				end := strings.Index(src[i+2:], `\E`)
				if end < 0 {
					b.WriteString(src[i:])
					return b.String()
				}
				b.WriteString(src[i : i+2+end+2])
				i += 2 + end + 1
				continue
			case n == 'w' && inClass:
				b.WriteString(wordChars)
			case n == 'w':
				b.WriteString("[" + wordChars + "]")
			case n == 'W' && !inClass:
				b.WriteString(nonWord)
			case n == 'd' && inClass:
				b.WriteString(`\p{Nd}`)
			case n == 'd':
				b.WriteString(`\p{Nd}`)
			case n == 'D' && !inClass:
				b.WriteString(`\P{Nd}`)
			default:
				b.WriteString(src[i : i+2])
			}
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ']' right after '[' or '[^' is a literal.
			if i+1 < len(src) && src[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(src) && src[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == '[' && inClass && i+1 < len(src) && src[i+1] == ':':
			end := strings.Index(src[i:], ":]")
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			b.WriteString(src[i : i+end+2])
			i += end + 1
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
