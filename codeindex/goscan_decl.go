// The fast Go reader's parser of declarations (goscan.go has its lexer,
// goscan_expr.go the types and expressions it reads to find where a
// declaration ends): the outline's symbols, with the token helpers the
// parser reads with.

package codeindex

import (
	"bytes"
	"slices"
	"sort"
	"unsafe"
)

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

// embedded reads a type name, T, p.T or either with type arguments (an
// embedded field's type, or a named type for typ), and returns the name.
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
	switch {
	case len(children) > 0 && g.transient:
		start := len(g.members)
		g.members = append(g.members, children...)
		s.Children = g.members[start:len(g.members):len(g.members)]
	case len(children) > 0:
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
