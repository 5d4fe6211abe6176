// The fast Go reader's parser of types and expressions: read only to find
// where a declaration ends and what its type's text is, never kept.

package codeindex

// typ reads a type; it returns its name as embeddedName finds it (e is 0
// when it has none).
func (g *goScanner) typ() gtok {
	g.enter()
	defer g.leave()
	switch g.tok() {
	case tIdent:
		return g.embedded() // T, p.T, either with type arguments
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
