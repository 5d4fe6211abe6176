// A fast reader of Go outlines: a lexer and a recursive-descent parser of
// the declarations of a Go file, which skips the blocks stripBodies would
// empty and gives the outline parseGoSymbols gives the stripped file,
// without building a syntax tree. It accepts only what it is sure go/parser
// accepts the same way (a conservative subset of Go's grammar: valid UTF-8,
// ASCII identifiers, literals checked as the scanner checks them); on
// anything else it gives up and goSymbols falls back to go/parser, so its
// answers are the parser's. TestGoScanMatchesParser holds it to that on
// the Go source tree, whole, cut short and changed.

package codeindex

import (
	"bytes"
	"errors"
	"slices"
	"sort"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"
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
	names         []gtok   // a value spec's
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
// the reader's buffers: they are good only until fn returns.
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
		g.src, g.out, g.kids, g.e = nil, g.out[:0], g.kids[:0], goExtractor{}
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
	for i := start; i < len(src); i++ {
		if src[i] >= utf8.RuneSelf {
			if !utf8.Valid(src) || bytes.Contains(src[start:], []byte("\uFEFF")) {
				return false
			}
			break
		}
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

func (g *goScanner) fail() { panic(errGoScan) }

func (g *goScanner) tok() uint8 { return g.toks[g.i].k }
func (g *goScanner) peek(n int) uint8 {
	if g.i+n < len(g.toks) {
		return g.toks[g.i+n].k
	}
	return tEOF
}

func (g *goScanner) want(k uint8) gtok {
	t := g.toks[g.i]
	if t.k != k {
		g.fail()
	}
	g.i++
	return t
}

func (g *goScanner) got(k uint8) bool {
	if g.toks[g.i].k == k {
		g.i++
		return true
	}
	return false
}

// semi reads the end of a declaration, element or spec: a semicolon, or
// nothing before a closing ) or }.
func (g *goScanner) semi() {
	switch g.tok() {
	case tSemi:
		g.i++
	case ')', '}':
	default:
		g.fail()
	}
}

// end is the end of the last token read.
func (g *goScanner) end() int { return int(g.toks[g.i-1].e) }

// str returns a token's text: a copy, or with transient set the source's
// bytes themselves.
func (g *goScanner) str(t gtok) string {
	if g.transient && t.e > t.s {
		return unsafe.String(&g.src[t.s], t.e-t.s)
	}
	return string(g.src[t.s:t.e])
}

// string returns b as a string: a copy, or with transient set a copy in
// the arena.
func (g *goScanner) string(b []byte) string {
	if !g.transient || len(b) == 0 {
		return string(b)
	}
	if len(g.arena)+len(b) > cap(g.arena) {
		// a new array: the strings made so far keep the old one
		g.arena = make([]byte, 0, max(64<<10, 2*len(b)))
	}
	at := len(g.arena)
	g.arena = append(g.arena, b...)
	return unsafe.String(&g.arena[at], len(b))
}

func (g *goScanner) enter() {
	if g.depth++; g.depth > 500 {
		g.fail()
	}
}

func (g *goScanner) leave() { g.depth-- }

// pos returns the 1-based line and column of an offset.
func (g *goScanner) pos(off int) (int, int) {
	if off >= g.lineOff {
		g.line += bytes.Count(g.src[g.lineOff:off], []byte("\n"))
	} else {
		g.line -= bytes.Count(g.src[off:g.lineOff], []byte("\n"))
	}
	g.lineOff = off
	return g.line, off - (bytes.LastIndexByte(g.src[:off], '\n') + 1) + 1
}

// text is goExtractor.text between two offsets of the source as
// stripBodies leaves it (a block with something inside reads "{ }"),
// after prefix.
func (g *goScanner) text(prefix string, a, b, max int) string {
	return g.string(g.appendText(append(g.out1[:0], prefix...), a, b, max))
}

// appendText appends text(a, b, max) to dst.
func (g *goScanner) appendText(dst []byte, a, b, max int) []byte {
	if a < 0 || b > len(g.src) || a >= b {
		return dst
	}
	k := sort.Search(len(g.blocks)/2, func(k int) bool { return int(g.blocks[2*k]) >= a })
	src := g.src[a:b]
	if 2*k < len(g.blocks) && int(g.blocks[2*k]) < b {
		buf := g.buf[:0]
		for ; 2*k < len(g.blocks) && int(g.blocks[2*k]) < b; k++ {
			open, close := int(g.blocks[2*k]), int(g.blocks[2*k+1])
			buf = append(buf, g.src[a:open+1]...)
			buf = append(buf, ' ')
			a = close
		}
		g.buf = append(buf, g.src[a:b]...)
		src = g.buf
	}
	start := len(dst)
	dst = appendCollapsed(dst, src)
	if len(dst)-start > max {
		n := start + max
		for n > start && dst[n]&0xC0 == 0x80 {
			n--
		}
		dst = append(dst[:n], "…"...)
	}
	g.out1 = dst
	return dst
}

func (g *goScanner) sym(name gtok, kind, container string, end int) Symbol {
	line, col := g.pos(int(name.s))
	endLine, endCol := g.pos(end)
	return Symbol{Name: g.str(name), Kind: kind, Path: g.e.p, Line: line, Column: col,
		EndLine: endLine, EndColumn: endCol, Container: container}
}

// file reads the file and returns its number of declarations.
func (g *goScanner) file() (decls int) {
	g.want(kwPackage)
	name := g.want(tIdent)
	if g.str(name) == "_" {
		g.fail()
	}
	g.e.pkg = g.str(name)
	g.want(tSemi)
	for g.tok() == kwImport {
		g.i++
		g.group(g.importSpec)
		decls++
	}
	for ; g.tok() != tEOF; decls++ {
		switch g.tok() {
		case kwFunc:
			g.funcDecl()
		case kwType:
			g.i++
			g.group(g.typeSpec)
		case kwVar, kwConst:
			kw := g.tok()
			g.i++
			g.group(func() { g.valueSpec(kw) })
		default:
			g.fail()
		}
	}
	return decls
}

// group reads the specs of a declaration after its keyword: one, or a
// parenthesized list.
func (g *goScanner) group(spec func()) {
	if !g.got('(') {
		spec()
		return
	}
	for g.tok() != ')' {
		if g.tok() == tEOF {
			g.fail()
		}
		spec()
	}
	g.i++
	g.semi()
}

func (g *goScanner) importSpec() {
	if !g.got(tIdent) {
		g.got('.')
	}
	g.want(tString)
	g.semi()
}

func (g *goScanner) funcDecl() {
	start := int(g.want(kwFunc).s)
	container, kind := g.e.pkg, "function"
	recv := g.tok() == '('
	if recv {
		if recv, n := g.params(false); n > 0 {
			kind, container = "method", ""
			if recv.e > 0 {
				container = g.str(recv)
			}
		}
	}
	name := g.want(tIdent)
	if g.tok() == '[' {
		if recv {
			g.fail() // go/parser: method must have no type parameters
		}
		g.typeParams()
	}
	g.params(true)
	g.results()
	detailEnd := g.end()
	end := detailEnd
	if g.tok() == '{' {
		detailEnd = int(g.toks[g.i].s)
		g.i++
		g.want('}')
		end = g.end()
	}
	g.semi()
	s := g.sym(name, kind, container, end)
	s.Detail = g.text("", start, detailEnd, 160)
	g.out = append(g.out, s)
}

// startsType reports whether a token can start a type.
func startsType(k uint8) bool {
	switch k {
	case tIdent, '[', kwStruct, '*', kwFunc, kwInterface, kwMap, kwChan, '(', tArrow:
		return true
	}
	return false
}

// param is an entry of a parameter list as go/parser first reads it: a
// name, a type, or both.
type param struct {
	name, typeName gtok // typeName: as embeddedName finds it
	hasType, ddd   bool
}

// params reads a parameter list (variadic: its last parameter may be
// ...T); it returns the type name of its first group (as recvTypeName
// gives it; none when e is 0) and the number of entries. It accepts the
// lists go/parser accepts without complaint: all types, or all named
// (lone names taking the type that follows).
func (g *goScanner) params(variadic bool) (first gtok, n int) {
	g.want('(')
	g.enter()
	var list []param
	named := 0
	for g.tok() != ')' {
		var p param
		switch k := g.tok(); {
		case k == tIdent:
			id := g.toks[g.i]
			switch k1 := g.peek(1); {
			case k1 == ',' || k1 == ')':
				g.i++
				p.name, p.typeName = id, id
			case k1 == '.':
				p.typeName, p.hasType = g.typ(), true
			case k1 == '[':
				g.i++
				p.hasType = true
				if g.arrayFieldOrInstance() {
					p.name = id
				} else {
					p.typeName = id
				}
			case k1 == tEllipsis:
				g.i += 2
				p.name, p.hasType, p.ddd = id, true, true
				p.typeName = g.typ()
			case startsType(k1):
				g.i++
				p.name, p.hasType = id, true
				p.typeName = g.typ()
			default:
				g.fail()
			}
		case k == tEllipsis:
			g.i++
			p.hasType, p.ddd = true, true
			p.typeName = g.typ()
		case startsType(k):
			p.hasType = true
			p.typeName = g.typ()
		default:
			g.fail()
		}
		if p.name.e > 0 && p.hasType {
			named++
		}
		list = append(list, p)
		if g.tok() != ')' {
			g.want(',')
		}
	}
	g.i++
	g.leave()
	for i, p := range list {
		if p.ddd && (!variadic || i != len(list)-1) {
			g.fail()
		}
	}
	if len(list) == 0 {
		return gtok{}, 0
	}
	if named == 0 {
		return list[0].typeName, len(list)
	}
	// all named: no type without a name, and the last entry has a type
	for _, p := range list {
		if p.hasType && p.name.e == 0 {
			g.fail()
		}
	}
	if !list[len(list)-1].hasType {
		g.fail()
	}
	for _, p := range list {
		if p.hasType {
			return p.typeName, len(list)
		}
	}
	return gtok{}, len(list)
}

// results reads a function's results: a list or one type, if any.
func (g *goScanner) results() {
	if g.tok() == '(' {
		g.params(false)
	} else if startsType(g.tok()) {
		g.typ()
	}
}

// typeParams reads a type parameter list: groups of names, each with a
// constraint.
func (g *goScanner) typeParams() {
	g.want('[')
	g.enter()
	for {
		g.want(tIdent)
		for g.got(',') {
			g.want(tIdent)
		}
		g.union()
		if !g.got(',') || g.tok() == ']' {
			break
		}
	}
	g.want(']')
	g.leave()
}

// union reads a union of terms ([~]T | …); it returns the type name of a
// lone term without ~.
func (g *goScanner) union() gtok {
	var name gtok
	terms := 0
	for {
		tilde := g.got('~')
		if !startsType(g.tok()) {
			g.fail()
		}
		if t := g.typ(); !tilde {
			name = t
		}
		terms++
		if !g.got('|') {
			break
		}
	}
	if terms > 1 {
		return gtok{}
	}
	return name
}

// typ reads a type; it returns its name as embeddedName finds it (e is 0
// when it has none).
func (g *goScanner) typ() gtok {
	g.enter()
	defer g.leave()
	switch g.tok() {
	case tIdent:
		name := g.toks[g.i]
		g.i++
		if g.got('.') {
			name = g.want(tIdent)
		}
		if g.tok() == '[' {
			g.typeArgs()
		}
		return name
	case '(':
		g.i++
		g.typ()
		g.want(')')
	case '*':
		g.i++
		return g.typ()
	case '[':
		g.arrayType()
	case kwMap:
		g.i++
		g.want('[')
		g.typ()
		g.want(']')
		g.typ()
	case kwChan:
		g.i++
		g.got(tArrow)
		g.typ()
	case tArrow:
		g.i++
		g.want(kwChan)
		g.typ()
	case kwFunc:
		g.i++
		g.params(true)
		g.results()
	case kwStruct:
		g.structType("", nil)
	case kwInterface:
		g.interfaceType("", nil)
	default:
		g.fail()
	}
	return gtok{}
}

// typeArgs reads [T1, T2, …].
func (g *goScanner) typeArgs() {
	g.want('[')
	for {
		g.typ()
		if !g.got(',') || g.tok() == ']' {
			break
		}
	}
	g.want(']')
}

// arrayType reads [N]E, [...]E or []E.
func (g *goScanner) arrayType() {
	g.want('[')
	switch g.tok() {
	case ']':
	case tEllipsis:
		g.i++
	default:
		g.expr()
	}
	g.want(']')
	g.typ()
}

// arrayFieldOrInstance reads what follows a name and [: an array type
// (true: the name is a field's or parameter's) or the rest of a generic
// type's instance (false: the name is the type's).
func (g *goScanner) arrayFieldOrInstance() bool {
	g.want('[')
	if g.got(']') {
		g.typ()
		return true
	}
	g.enter()
	defer g.leave()
	g.expr()
	n, trailing := 1, false
	for g.got(',') {
		if g.tok() == ']' {
			trailing = true
			break
		}
		g.expr()
		n++
	}
	g.want(']')
	if n == 1 && startsType(g.tok()) {
		if trailing {
			g.fail()
		}
		g.typ()
		return true
	}
	return false
}

// structType reads a struct type; with out set it appends its fields to
// it, as fields of container.
func (g *goScanner) structType(container string, out *[]Symbol) {
	g.want(kwStruct)
	g.want('{')
	for {
		start := int(g.toks[g.i].s)
		var held [4]gtok
		names := held[:0] // structType nests: not a buffer of g
		switch g.tok() {
		case tIdent:
			id := g.toks[g.i]
			switch g.peek(1) {
			case '.', tString, tSemi, '}':
				names = append(names, g.embedded())
			default:
				g.i++
				names = append(names, id)
				for g.got(',') {
					names = append(names, g.want(tIdent))
				}
				if len(names) == 1 && g.tok() == '[' {
					if !g.arrayFieldOrInstance() {
						break // an embedded instance: the name is the type's
					}
				} else {
					g.typ()
				}
			}
		case '*':
			g.i++
			names = append(names, g.embedded())
		case '}':
			g.i++
			return
		default:
			g.fail()
		}
		g.got(tString)
		end := g.end()
		g.semi()
		if out == nil {
			continue
		}
		detail := g.text("", start, end, 120)
		for _, n := range names {
			s := g.sym(n, "field", container, end)
			s.Detail = detail
			*out = append(*out, s)
		}
	}
}

// embedded reads an embedded field's type name, T, p.T or either with
// type arguments, and returns the name.
func (g *goScanner) embedded() gtok {
	name := g.want(tIdent)
	if g.got('.') {
		name = g.want(tIdent)
	}
	if g.tok() == '[' {
		g.typeArgs()
	}
	return name
}

// interfaceType reads an interface type; with out set it appends its
// methods and embedded interfaces to it, as members of container.
func (g *goScanner) interfaceType(container string, out *[]Symbol) {
	g.want(kwInterface)
	g.want('{')
	for {
		start := int(g.toks[g.i].s)
		var name gtok
		kind := "interface"
		switch k := g.tok(); {
		case k == '}':
			g.i++
			return
		case k == tIdent && g.peek(1) == '(':
			name, kind = g.toks[g.i], "method"
			g.i++
			g.params(true)
			g.results()
		case k == tIdent && g.peek(1) == '[':
			g.fail()
		case k == '~' || startsType(k):
			name = g.union()
		default:
			g.fail()
		}
		end := g.end()
		g.semi()
		if out == nil || name.e == 0 {
			continue
		}
		s := g.sym(name, kind, container, end)
		s.Detail = g.text("", start, end, 120)
		*out = append(*out, s)
	}
}

func (g *goScanner) typeSpec() {
	name := g.want(tIdent)
	if g.tok() == '[' {
		switch k1, k2 := g.peek(1), g.peek(2); {
		case k1 == tIdent && k2 == ']', k1 != tIdent:
			// an array or slice type
		case k2 == tIdent || k2 == kwInterface || k2 == '[' || k2 == '~' || k2 == kwFunc ||
			k2 == kwMap || k2 == kwChan || k2 == kwStruct || k2 == ',':
			g.typeParams()
			g.got('=')
		default:
			g.fail() // [P *C], [N + 1]: go/parser decides by the expression
		}
	} else {
		g.got('=')
	}
	kind := "type"
	children := g.kids[:0]
	switch g.tok() {
	case kwStruct:
		kind = "struct"
		g.structType(g.str(name), &children)
	case kwInterface:
		kind = "interface"
		g.interfaceType(g.str(name), &children)
	default:
		g.typ()
	}
	end := g.end()
	g.semi()
	s := g.sym(name, kind, g.e.pkg, end)
	switch kind {
	case "struct", "interface":
		s.Detail = "type " + s.Name + " " + kind
	default:
		s.Detail = g.text("type ", int(name.s), end, 120)
	}
	if len(children) > 0 {
		s.Children = slices.Clone(children)
	}
	g.kids = children[:0]
	g.out = append(g.out, s)
}

func (g *goScanner) valueSpec(kw uint8) {
	names := append(g.names[:0], g.want(tIdent))
	defer func() { g.names = names[:0] }()
	for g.got(',') {
		names = append(names, g.want(tIdent))
	}
	switch kw {
	case kwConst:
		if k := g.tok(); k != tSemi && k != ')' && k != tEOF {
			if startsType(k) {
				g.typ()
			}
			if g.got('=') {
				g.exprList()
			}
		}
	default:
		if g.tok() != '=' {
			g.typ()
		}
		if g.got('=') {
			g.exprList()
		}
	}
	end := g.end()
	g.semi()
	kind, word := "variable", "var "
	if kw == kwConst {
		kind, word = "constant", "const "
	}
	var detail string
	for _, n := range names {
		if g.str(n) == "_" {
			continue
		}
		if detail == "" {
			d := g.appendText(append(g.out1[:0], word...), int(names[0].s), end, 120)
			if i := bytes.Index(d, []byte(" = ")); i >= 0 && bytes.IndexByte(d[i:], '{') >= 0 {
				d = append(d[:i+3], "…"...) // a composite literal or function
			}
			detail = g.string(d)
		}
		s := g.sym(n, kind, g.e.pkg, end)
		s.Detail = detail
		g.out = append(g.out, s)
	}
}

func (g *goScanner) exprList() {
	g.expr()
	for g.got(',') {
		g.expr()
	}
}

// isBinary reports whether a token is a binary operator.
func isBinary(k uint8) bool {
	switch k {
	case tBinary, '+', '-', '|', '^', '*', '&':
		return true
	}
	return false
}

// expr reads an expression (or a type, which go/parser reads as one).
func (g *goScanner) expr() {
	g.enter()
	defer g.leave()
	g.unary()
	for isBinary(g.tok()) {
		g.i++
		g.unary()
	}
}

func (g *goScanner) unary() {
	switch g.tok() {
	case '+', '-', '!', '^', '&', '~', '*':
		g.enter()
		g.i++
		g.unary()
		g.leave()
	default:
		g.primary()
	}
}

// The kinds of operand for a composite literal: one may follow a name, a
// selector, an index or an array, struct or map type.
const (
	operandOther = iota
	operandLiteralType
)

func (g *goScanner) primary() {
	kind := g.operand()
	for {
		switch g.tok() {
		case '.':
			g.i++
			switch g.tok() {
			case tIdent:
				g.i++
				kind = operandLiteralType
			case '(':
				g.i++
				g.typ()
				g.want(')')
				kind = operandOther
			default:
				g.fail()
			}
		case '[':
			g.i++
			kind = g.indexOrSlice()
		case '(':
			g.i++
			for g.tok() != ')' {
				g.expr()
				if g.got(tEllipsis) {
					g.got(',')
					break
				}
				if g.tok() != ')' {
					g.want(',')
				}
			}
			g.want(')')
			kind = operandOther
		case '{':
			if kind != operandLiteralType {
				return
			}
			g.i++
			g.want('}')
			kind = operandOther
		default:
			return
		}
	}
}

// indexOrSlice reads what follows the [ of an index, instance or slice
// expression.
func (g *goScanner) indexOrSlice() int {
	if g.tok() != ':' {
		g.expr()
		if g.got(',') {
			for g.tok() != ']' {
				g.typ()
				if !g.got(',') {
					break
				}
			}
			g.want(']')
			return operandLiteralType
		}
		if g.got(']') {
			return operandLiteralType
		}
	}
	// a slice: [a:b] or [a:b:c], a and b optional, c not
	g.want(':')
	middle := g.tok() != ']' && g.tok() != ':'
	if middle {
		g.expr()
	}
	if g.got(':') {
		if !middle {
			g.fail()
		}
		g.expr()
	}
	g.want(']')
	return operandOther
}

func (g *goScanner) operand() int {
	switch g.tok() {
	case tIdent:
		g.i++
		return operandLiteralType
	case tNumber, tString, tChar:
		g.i++
	case '(':
		g.i++
		g.expr()
		g.want(')')
	case kwFunc:
		g.i++
		g.params(true)
		g.results()
		if g.got('{') {
			g.want('}')
		}
	case '[':
		g.arrayType()
		return operandLiteralType
	case kwStruct:
		g.structType("", nil)
		return operandLiteralType
	case kwMap:
		g.typ()
		return operandLiteralType
	case kwChan, kwInterface:
		g.typ()
	default:
		g.fail()
	}
	return operandOther
}
