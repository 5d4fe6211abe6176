// A fast reader of Go outlines: a lexer and a recursive-descent parser of
// the declarations of a Go file, which skips the blocks stripBodies would
// empty and gives the outline parseGoSymbols gives the stripped file,
// without building a syntax tree. It accepts only what it is sure go/parser
// accepts the same way (a conservative subset of Go's grammar: valid UTF-8,
// ASCII identifiers, literals checked as the scanner checks them); on
// anything else it gives up and goSymbols falls back to go/parser, so its
// answers are the parser's. TestGoScanMatchesParser holds it to that on
// the Go source tree, whole, cut short and changed. This file holds the
// lexer; goscan_decl.go and goscan_expr.go the parser.

package codeindex

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Token kinds of the lexer; a punctuation byte is its own kind.
const (
	tEOF = iota + 128
	tIdent
	tNumber
	tChar
	tString
	tSemi // an explicit or inserted semicolon
	tArrow
	tEllipsis
	tBinary // a binary operator that is no unary one
	tOther  // an operator no declaration holds (:=, ++, +=, …)
	kwFunc
	kwType
	kwVar
	kwConst
	kwImport
	kwPackage
	kwChan
	kwMap
	kwStruct
	kwInterface
	kwOther // a statement keyword
)

var goKeywords = map[string]uint8{
	"func": kwFunc, "type": kwType, "var": kwVar, "const": kwConst, "import": kwImport, "package": kwPackage,
	"chan": kwChan, "map": kwMap, "struct": kwStruct, "interface": kwInterface,
	"break": kwOther, "case": kwOther, "continue": kwOther, "default": kwOther, "defer": kwOther, "else": kwOther,
	"fallthrough": kwOther, "for": kwOther, "go": kwOther, "goto": kwOther, "if": kwOther, "range": kwOther,
	"return": kwOther, "select": kwOther, "switch": kwOther,
}

type gtok struct {
	k    uint8
	s, e int32 // the token's bytes
}

// errGoScan makes the fast reader give up.
var errGoScan = errors.New("outside the fast reader's grammar")

// goScanner is the state of the fast reader, reused from file to file.
type goScanner struct {
	src  []byte
	toks []gtok
	// blocks holds the braces of the blocks stripBodies would empty (and
	// the lexer skips), open and close, those with something inside only
	blocks []int32
	// line is the 1-based line of offset lineOff
	line, lineOff int
	buf, out1     []byte
	out, kids     []Symbol // the outline, a type's members
	// members holds the types' members of the outline, with transient
	// set (their Children: no copy of each to pack and drop)
	members []Symbol
	names   []gtok // a value spec's
	// transient: strings share src or the arena (see withGoSymbols)
	transient bool
	arena     []byte
	i         int // the current token
	depth     int
	e         goExtractor
}

// goScanners serve the reads of single files; a build has its own.
var goScanners = sync.Pool{New: func() any { return new(goScanner) }}

// scanGoSymbols is parseGoSymbols by the fast reader; ok is false when it
// gave up.
func scanGoSymbols(p string, src []byte) (out []Symbol, ok bool) {
	g := goScanners.Get().(*goScanner)
	defer goScanners.Put(g)
	ok = g.withSymbols(p, src, false, func(syms []Symbol) {
		out = syms
		if len(syms) > 0 {
			out = slices.Clone(syms)
		}
	})
	return out, ok
}

// withSymbols calls fn with the outline the fast reader reads, unless it
// gives up (false). With transient set the outline's strings share src and
// the reader's buffers, and so do its types' members (Children): they are
// good only until fn returns.
func (g *goScanner) withSymbols(p string, src []byte, transient bool, fn func([]Symbol)) (ok bool) {
	if len(src) > 1<<30 {
		return false
	}
	defer func() {
		if recover() != nil {
			// errGoScan, or a failure on strange input: go/parser
			// answers instead
			ok = false
		}
		clear(g.out)
		clear(g.kids)
		clear(g.members)
		g.src, g.out, g.kids, g.members, g.e = nil, g.out[:0], g.kids[:0], g.members[:0], goExtractor{}
	}()
	g.src, g.transient, g.arena = src, transient, g.arena[:0]
	if !g.lex() {
		return false
	}
	g.i, g.depth = 0, 0
	g.e = goExtractor{p: p, src: src}
	decls := g.file()
	switch {
	case len(g.out) > 0:
		fn(g.out)
	case decls > 0:
		fn([]Symbol{}) // as parseGoSymbols gives it
	default:
		fn(nil)
	}
	return true
}

// lex splits src into tokens, inserting semicolons as Go's scanner does;
// false for what the scanner would report (or the reader does not know).
func (g *goScanner) lex() bool {
	src := g.src
	if bytes.IndexByte(src, 0) >= 0 {
		return false
	}
	start := 0
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		start = 3 // a byte order mark at the start is skipped
	}
	// (utf8.Valid passes over ASCII eight bytes at a time)
	if !utf8.Valid(src) || bytes.Contains(src[start:], []byte("\uFEFF")) {
		return false
	}
	g.toks, g.blocks = g.toks[:0], g.blocks[:0]
	g.line, g.lineOff = 1, 0
	semi := false // a newline here ends a statement
	emit := func(k uint8, s, e int) {
		g.toks = append(g.toks, gtok{k, int32(s), int32(e)})
	}
	i := start
	for {
		for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r' || src[i] == '\n' && !semi) {
			i++
		}
		if i >= len(src) {
			if semi {
				emit(tSemi, i, i)
			}
			emit(tEOF, i, i)
			return true
		}
		c := src[i]
		s := i
		if c == '\n' {
			emit(tSemi, i, i+1)
			semi = false
			i++
			continue
		}
		if c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*') {
			var end int
			nl := false
			if src[i+1] == '/' {
				end = len(src)
				if k := bytes.IndexByte(src[i:], '\n'); k >= 0 {
					end = i + k
				}
				nl = true
			} else {
				k := bytes.Index(src[i+2:], []byte("*/"))
				if k < 0 {
					return false // not terminated
				}
				end = i + 2 + k + 2
				nl = bytes.IndexByte(src[i:end], '\n') >= 0
			}
			if semi && nl {
				emit(tSemi, s, s)
				semi = false
			}
			i = end
			continue
		}
		semi = false
		switch {
		case isLetter(c):
			for i < len(src) && (isLetter(src[i]) || src[i] >= '0' && src[i] <= '9') {
				i++
			}
			if i < len(src) && src[i] >= utf8.RuneSelf {
				return false // a Unicode identifier
			}
			k := uint8(tIdent)
			if i-s >= 2 && i-s <= 11 && src[s] >= 'b' && src[s] <= 'v' {
				if kw, ok := goKeywords[string(src[s:i])]; ok {
					k = kw
				}
			}
			emit(k, s, i)
			semi = k == tIdent || k == kwOther
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			i = scanNumber(src, i)
			if !validNumber(src[s:i]) {
				return false
			}
			emit(tNumber, s, i)
			semi = true
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) || src[j] != c {
				return false
			}
			i = j + 1
			if !validQuoted(src[s:i]) {
				return false
			}
			k := uint8(tString)
			if c == '\'' {
				k = tChar
			}
			emit(k, s, i)
			semi = true
		case c == '`':
			j := bytes.IndexByte(src[i+1:], '`')
			if j < 0 || bytes.IndexByte(src[i+1:i+1+j], '\r') >= 0 {
				return false // unterminated, or its value loses bytes
			}
			i += j + 2
			emit(tString, s, i)
			semi = true
		case c == '{' && !afterTypeWord(src, i):
			// a block stripBodies empties: skip it
			end := matchBrace(src, i)
			if end < 0 {
				return false
			}
			emit('{', i, i+1)
			emit('}', end, end+1)
			if end > i+1 {
				g.blocks = append(g.blocks, int32(i), int32(end))
			}
			i = end + 1
			semi = true
		default:
			k, n := opKind(src[i:])
			if n == 0 {
				return false
			}
			i += n
			emit(k, s, i)
			semi = k == ')' || k == ']' || k == '}' || k == tOther && n == 2 && (src[s] == '+' || src[s] == '-') && src[s+1] == src[s]
		}
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// opKind returns the kind and length of the operator at the start of b, or
// a length of 0 for a byte Go does not know.
func opKind(b []byte) (uint8, int) {
	c := b[0]
	at := func(k int) byte {
		if k < len(b) {
			return b[k]
		}
		return 0
	}
	switch c {
	case ';':
		return tSemi, 1
	case '(', ')', '[', ']', '{', '}', ',', '~':
		return c, 1
	case '.':
		if at(1) == '.' && at(2) == '.' {
			return tEllipsis, 3
		}
		return c, 1
	case ':', '=', '!':
		switch {
		case at(1) != '=':
			return c, 1
		case c == ':':
			return tOther, 2 // :=
		}
		return tBinary, 2 // == !=
	case '<', '>':
		switch n := at(1); {
		case c == '<' && n == '-':
			return tArrow, 2
		case n == '=':
			return tBinary, 2
		case n == c && at(2) == '=':
			return tOther, 3 // <<= >>=
		case n == c:
			return tBinary, 2
		}
		return tBinary, 1
	case '+', '-', '*', '^', '|', '&', '/', '%':
		n := at(1)
		switch {
		case n == '=':
			return tOther, 2
		case (c == '+' || c == '-') && n == c:
			return tOther, 2
		case c == '&' && n == '^':
			if at(2) == '=' {
				return tOther, 3
			}
			return tBinary, 2
		case (c == '&' || c == '|') && n == c:
			return tBinary, 2
		case c == '/' || c == '%':
			return tBinary, 1
		}
		return c, 1
	}
	return 0, 0
}

// scanNumber returns the end of the number literal at i (its extent by the
// scanner's rules; validNumber checks it).
func scanNumber(src []byte, i int) int {
	hex := src[i] == '0' && i+1 < len(src) && (src[i+1] == 'x' || src[i+1] == 'X')
	for i < len(src) {
		c := src[i]
		switch {
		case c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.':
			i++
			if (!hex && (c == 'e' || c == 'E') || hex && (c == 'p' || c == 'P')) && i < len(src) && (src[i] == '+' || src[i] == '-') {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// validNumber reports whether a number literal is one Go accepts (strconv
// parses Go's syntax; a value out of range is still a literal).
func validNumber(b []byte) bool {
	if b[0] >= '1' && b[0] <= '9' || len(b) == 1 {
		plain := true // decimal digits only
		for _, c := range b {
			plain = plain && c >= '0' && c <= '9'
		}
		if plain {
			return true
		}
	}
	lit := string(b)
	ok := func(err error) bool {
		var ne *strconv.NumError
		return err == nil || errors.As(err, &ne) && ne.Err == strconv.ErrRange
	}
	if n := len(lit); n > 1 && lit[n-1] == 'i' {
		lit = lit[:n-1]
		if _, err := strconv.ParseUint(lit, 10, 64); ok(err) {
			return true // 0789i is decimal
		}
	}
	hex := len(lit) > 1 && lit[0] == '0' && (lit[1] == 'x' || lit[1] == 'X')
	for i := 0; i < len(lit); i++ {
		if c := lit[i]; c == '.' || !hex && (c == 'e' || c == 'E') || hex && (c == 'p' || c == 'P') {
			_, err := strconv.ParseFloat(lit, 64)
			return ok(err)
		}
	}
	_, err := strconv.ParseUint(lit, 0, 64)
	return ok(err)
}

// validQuoted reports whether an interpreted string or rune literal has
// only valid escapes (and a rune literal one character).
func validQuoted(lit []byte) bool {
	if lit[0] == '"' && bytes.IndexByte(lit, '\\') < 0 {
		return true
	}
	_, err := strconv.Unquote(string(lit))
	return err == nil
}

// Parsing. Each function reads one construct at g.i and leaves g.i just
// after it; fail gives up.
