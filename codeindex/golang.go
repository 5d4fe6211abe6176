package codeindex

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// goSymbols parses a Go file and returns its outline: functions, methods
// (container: the receiver's type), types with their fields or interface
// methods as children, constants and variables. A file with syntax errors
// gives what the parser recovered.
func goSymbols(p string, src []byte) []Symbol {
	if out, ok := scanGoSymbols(p, src); ok {
		return out
	}
	return parseGoSymbols(p, stripBodies(src))
}

// parseGoSymbols is goSymbols without the stripping of bodies.
func parseGoSymbols(p string, src []byte) (out []Symbol) {
	fset := token.NewFileSet()
	f, perr := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
	if f == nil || f.Name == nil {
		return nil
	}
	if perr != nil {
		defer func() { out = recoverGoLines(p, src, f.Name.Name, out) }()
	}
	tf := fset.File(f.Pos())
	e := goExtractor{p: p, src: src, tf: tf, pkg: f.Name.Name}
	n := 0
	for _, d := range f.Decls {
		n++
		if g, ok := d.(*ast.GenDecl); ok {
			n += len(g.Specs)
		}
	}
	if n > 0 {
		out = make([]Symbol, 0, n)
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			s := e.sym(d.Name, "function", e.pkg, d.Pos(), d.End())
			end := d.End()
			if d.Body != nil {
				end = d.Body.Lbrace
			}
			s.Detail = e.text(d.Pos(), end, 160)
			if d.Recv != nil && len(d.Recv.List) > 0 {
				s.Kind = "method"
				s.Container = recvTypeName(d.Recv.List[0].Type)
			}
			out = append(out, s)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				out = append(out, e.spec(d, spec)...)
			}
		}
	}
	return out
}

// goDeclLine matches a top-level Go declaration line: func, method, type,
// var or const (group 1 the keyword, 2 a receiver, 3 the name).
var goDeclLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(func|type|var|const)\s+(\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)`)
})

// goRecvType finds the type name at the end of a receiver "(r *T[K])".
var goRecvType = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?\s*\)$`)
})

// recoverGoLines adds the top-level declarations a file with syntax errors
// lost in the parser's recovery, found line by line.
func recoverGoLines(p string, src []byte, pkg string, syms []Symbol) []Symbol {
	have := map[int]bool{}
	for _, s := range syms {
		have[s.Line] = true
	}
	kinds := map[string]string{"func": "function", "type": "type", "var": "variable", "const": "constant"}
	for n, line := range bytes.Split(src, []byte("\n")) {
		m := goDeclLine().FindSubmatchIndex(line)
		if m == nil || have[n+1] || string(line[m[6]:m[7]]) == "_" {
			continue
		}
		kw := string(line[m[2]:m[3]])
		s := Symbol{Name: string(line[m[6]:m[7]]), Kind: kinds[kw], Path: p, Line: n + 1, Column: m[6] + 1,
			EndLine: n + 1, EndColumn: len(line) + 1, Container: pkg, Detail: detailOf(line)}
		if m[4] >= 0 {
			s.Kind = "method"
			if id := goRecvType().FindSubmatch(bytes.TrimSpace(line[m[4]:m[5]])); id != nil {
				s.Container = string(id[1])
			}
		}
		syms = append(syms, s)
	}
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].Line < syms[j].Line })
	return syms
}

type goExtractor struct {
	p   string
	src []byte
	tf  *token.File
	pkg string
}

func (e *goExtractor) sym(id *ast.Ident, kind, container string, start, end token.Pos) Symbol {
	pos := e.tf.PositionFor(id.Pos(), false)
	endPos := e.tf.PositionFor(end, false)
	return Symbol{Name: id.Name, Kind: kind, Path: e.p, Line: pos.Line, Column: pos.Column,
		EndLine: endPos.Line, EndColumn: endPos.Column, Container: container}
}

// text returns the source between two positions with runs of white space
// made one space, cut at max bytes.
func (e *goExtractor) text(from, to token.Pos, max int) string {
	return e.textOff(e.tf.Offset(from), e.tf.Offset(to), max)
}

// textOff is text between two offsets.
func (e *goExtractor) textOff(a, b, max int) string {
	if a < 0 || b > len(e.src) || a >= b {
		return ""
	}
	return cutText(e.src[a:b], max)
}

// cutText is source text with runs of white space made one space, cut at
// max bytes.
func cutText(b []byte, max int) string {
	s := collapseSpace(b)
	if len(s) > max {
		n := max
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

// collapseSpace is strings.Join(strings.Fields(string(b)), " ") for
// source text, in one pass: runs of white space (Unicode's too) become one
// space, none at either end.
func collapseSpace(b []byte) string {
	return string(appendCollapsed(make([]byte, 0, len(b)), b))
}

// appendCollapsed appends collapseSpace(b) to out.
func appendCollapsed(out []byte, b []byte) []byte {
	start := len(out)
	space := false
	for i := 0; i < len(b); {
		// a run of bytes that are not ASCII white space
		j := i
		for j < len(b) {
			if c := b[j]; c < utf8.RuneSelf {
				if asciiSpace[c] {
					break
				}
				j++
				continue
			}
			r, size := utf8.DecodeRune(b[j:])
			if unicode.IsSpace(r) {
				break
			}
			j += size
		}
		if j > i {
			if space {
				out = append(out, ' ')
				space = false
			}
			out = append(out, b[i:j]...)
			i = j
			continue
		}
		// white space, ASCII or not
		size := 1
		if b[i] >= utf8.RuneSelf {
			_, size = utf8.DecodeRune(b[i:])
		}
		space = len(out) > start
		i += size
	}
	return out
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

func (e *goExtractor) spec(d *ast.GenDecl, spec ast.Spec) []Symbol {
	switch s := spec.(type) {
	case *ast.TypeSpec:
		kind := "type"
		var children []Symbol
		switch t := s.Type.(type) {
		case *ast.StructType:
			kind = "struct"
			children = e.fields(t.Fields, "field", s.Name.Name)
		case *ast.InterfaceType:
			kind = "interface"
			children = e.fields(t.Methods, "method", s.Name.Name)
		}
		sym := e.sym(s.Name, kind, e.pkg, s.Pos(), s.End())
		switch kind {
		case "struct", "interface":
			sym.Detail = "type " + s.Name.Name + " " + kind
		default:
			sym.Detail = "type " + e.text(s.Pos(), s.End(), 120)
		}
		sym.Children = children
		return []Symbol{sym}
	case *ast.ValueSpec:
		kind := "variable"
		if d.Tok == token.CONST {
			kind = "constant"
		}
		var out []Symbol
		for _, n := range s.Names {
			if n.Name == "_" {
				continue
			}
			sym := e.sym(n, kind, e.pkg, s.Pos(), s.End())
			sym.Detail = d.Tok.String() + " " + e.text(s.Pos(), s.End(), 120)
			if i := strings.Index(sym.Detail, " = "); i >= 0 && strings.Contains(sym.Detail[i:], "{") {
				sym.Detail = sym.Detail[:i+3] + "…" // a composite literal or function
			}
			out = append(out, sym)
		}
		return out
	}
	return nil
}

// fields lists a struct's fields or an interface's methods; embedded ones
// are named after their type.
func (e *goExtractor) fields(fl *ast.FieldList, kind, container string) []Symbol {
	if fl == nil {
		return nil
	}
	var out []Symbol
	for _, f := range fl.List {
		detail := e.text(f.Pos(), f.End(), 120)
		if len(f.Names) == 0 {
			id := embeddedName(f.Type)
			if id == nil {
				continue
			}
			k := kind
			if kind == "method" {
				k = "interface" // an embedded interface or type set
			}
			s := e.sym(id, k, container, f.Pos(), f.End())
			s.Detail = detail
			out = append(out, s)
			continue
		}
		for _, n := range f.Names {
			s := e.sym(n, kind, container, f.Pos(), f.End())
			s.Detail = detail
			out = append(out, s)
		}
	}
	return out
}

// embeddedName returns the type name of an embedded field (T, *T, p.T, T[X]).
func embeddedName(x ast.Expr) *ast.Ident {
	for {
		switch t := x.(type) {
		case *ast.Ident:
			return t
		case *ast.StarExpr:
			x = t.X
		case *ast.SelectorExpr:
			return t.Sel
		case *ast.IndexExpr:
			x = t.X
		case *ast.IndexListExpr:
			x = t.X
		default:
			return nil
		}
	}
}

// recvTypeName returns the receiver's base type name: T for T, *T, T[K].
func recvTypeName(x ast.Expr) string {
	if id := embeddedName(x); id != nil {
		return id.Name
	}
	return ""
}

// languages maps the extensions (lower case, without the dot) of the files
// the index reads to their language.
var languages = map[string]string{
	"go": "go", "py": "python", "pyi": "python",
	"js": "javascript", "jsx": "javascript", "mjs": "javascript", "cjs": "javascript",
	"ts": "typescript", "tsx": "typescript", "mts": "typescript", "cts": "typescript",
	"rs": "rust", "java": "java", "c": "c", "h": "c",
	"cc": "cpp", "cpp": "cpp", "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "hxx": "cpp",
	"sh": "shell", "bash": "shell", "zsh": "shell", "md": "markdown", "markdown": "markdown",
}

// languageOf names the language of a file by its name, or "" for files the
// index does not read.
func languageOf(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return ""
	}
	return languages[strings.ToLower(name[i+1:])]
}

// SourceExtensions lists, sorted, the extensions (lower case, without the
// dot) of the files the index reads; go.mod, which the Go checker reads
// too, is not among them.
func SourceExtensions() []string {
	return slices.Sorted(maps.Keys(languages))
}

// stripBodies removes from Go source what an outline does not need: the
// contents of every brace block that is not a struct or interface type
// (function bodies, composite literals of variable initialisers). Line
// breaks stay, and the closing brace keeps its column, so that every
// position the outline reports is unchanged; it returns the shortened
// source, which reuses src's array. Bodies are most of the parser's work.
// It is a lexer, not a parser: on source it cannot follow it leaves blocks
// alone, never removes declarations.
func stripBodies(src []byte) []byte {
	return stripBlocks(src, func(_, _ int, _ bool) (bool, []byte) { return true, nil })
}

// stripBlocks is stripBodies for the blocks that strip chooses: it is
// given each top-level block's braces and whether the block is the body of
// a function declaration, and may give text to put in the block instead
// (it must be shorter than what it replaces and hold no line break).
func stripBlocks(src []byte, strip func(open, close int, body bool) (bool, []byte)) []byte {
	type span struct {
		open, close int
		fill        []byte
	}
	var spans []span
	last := 0 // the end of the previous block
	for i := 0; i < len(src); {
		for i < len(src) && !topSpecial[src[i]] {
			i++
		}
		if i >= len(src) {
			break
		}
		switch src[i] {
		case '/':
			i = skipComment(src, i) + 1
		case '"', '\'', '`':
			i = skipQuoted(src, i) + 1
		case '{':
			if afterTypeWord(src, i) {
				i++
				continue
			}
			end := matchBrace(src, i)
			if end < 0 {
				i = len(src)
				break
			}
			// a body: a top-level func keyword came since the last block
			seg := src[last:i]
			body := bytes.HasPrefix(seg, []byte("func ")) || bytes.Contains(seg, []byte("\nfunc "))
			if ok, fill := strip(i, end, body); ok {
				spans = append(spans, span{i, end, fill})
			}
			last = end
			i = end + 1
		}
	}
	if len(spans) == 0 {
		return src
	}
	w, r := 0, 0
	for _, sp := range spans {
		w += copy(src[w:], src[r:sp.open+1])
		// count before writing: the fill may land on the block's first bytes
		lines, pad := 0, sp.close-(sp.open+1)
		for k := sp.open + 1; k < sp.close; k++ {
			if src[k] == '\n' {
				lines++
				pad = sp.close - (k + 1)
			}
		}
		if lines == 0 {
			// one line: the fill takes the place of padding
			if len(sp.fill) <= pad {
				w += copy(src[w:], sp.fill)
				pad -= len(sp.fill)
			}
		} else if len(sp.fill) <= sp.close-(sp.open+1)-lines-pad {
			w += copy(src[w:], sp.fill)
		}
		for ; lines > 0; lines-- {
			src[w] = '\n'
			w++
		}
		for ; pad > 0; pad-- {
			src[w] = ' '
			w++
		}
		r = sp.close
	}
	w += copy(src[w:], src[r:])
	return src[:w]
}

// skipComment returns the index of the last byte of the comment at i (a
// line comment's '\n'), len(src) when the comment does not end, and i when
// no comment starts at i.
func skipComment(src []byte, i int) int {
	if i+1 < len(src) {
		switch src[i+1] {
		case '/':
			if n := bytes.IndexByte(src[i:], '\n'); n >= 0 {
				return i + n
			}
			return len(src)
		case '*':
			return skipBlockComment(src, i)
		}
	}
	return i
}

func skipBlockComment(src []byte, i int) int {
	for j := i + 2; j+1 < len(src); j++ {
		if src[j] == '*' && src[j+1] == '/' {
			return j + 1
		}
	}
	return len(src)
}

// skipQuoted returns the index of the closing quote of the literal at i.
func skipQuoted(src []byte, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case '\n':
			if q != '`' {
				return j - 1 // unterminated: stop at the line's end
			}
		case q:
			return j
		}
	}
	return len(src)
}

// topSpecial and blockSpecial are the bytes stripBlocks and matchBrace
// stop at.
var topSpecial, blockSpecial = byteSet("/\"'`{"), byteSet("/\"'`{}")

func byteSet(s string) *[256]bool {
	var t [256]bool
	for i := 0; i < len(s); i++ {
		t[s[i]] = true
	}
	return &t
}

// matchBrace returns the index of the brace closing the one at i, or -1.
func matchBrace(src []byte, i int) int {
	depth := 0
	for j := i; j < len(src); j++ {
		for j < len(src) && !blockSpecial[src[j]] {
			j++
		}
		if j >= len(src) {
			return -1
		}
		switch src[j] {
		case '/':
			j = skipComment(src, j)
		case '"', '\'', '`':
			j = skipQuoted(src, j)
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// afterTypeWord reports whether the brace at i follows the keyword struct
// or interface (white space between).
func afterTypeWord(src []byte, i int) bool {
	j := i - 1
	for j >= 0 && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
		j--
	}
	end := j + 1
	for j >= 0 && isIdentByte(src[j]) {
		j--
	}
	w := string(src[j+1 : end])
	return w == "struct" || w == "interface"
}
