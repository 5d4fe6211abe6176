package codeindex

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// The line-based symbol extractors of the languages other than Go. They are
// heuristics, good enough for outlines and definition by name: each line is
// matched against a language's rules; nesting follows braces (C-like
// languages), indentation (Python) or heading levels (Markdown).

// rule scopes: where a rule applies.
const (
	scopeAny    = iota // anywhere
	scopeTop           // not inside a function body
	scopeMember        // directly inside a class-like declaration
)

type langRule struct {
	re *regexp.Regexp
	// kind is the symbol's kind; "" takes it from the keyword captured by
	// group 1 (the name is then group 2).
	kind string
	// member is the kind inside a class-like declaration ("method" for a
	// function); "" keeps kind.
	member    string
	scope     int
	container bool // its body holds children
}

var keywordKinds = map[string]string{
	"class": "class", "interface": "interface", "enum": "enum", "record": "class",
	"struct": "struct", "union": "struct", "trait": "interface", "mod": "module",
	"@interface": "interface", "namespace": "module",
}

// notNames are words the loose member and function rules must not take for
// names.
var notNames = map[string]bool{
	"if": true, "for": true, "while": true, "switch": true, "catch": true, "return": true,
	"function": true, "new": true, "else": true, "throw": true, "sizeof": true, "do": true,
	"case": true, "typeof": true, "await": true, "delete": true, "super": true, "this": true,
	"import": true, "export": true, "default": true, "yield": true, "void": true, "with": true,
}

// match matches the rule against line. It returns the submatch indexes,
// the symbol's kind (member's inside a class) and the index in m where
// the name's group starts; m is nil when the rule does not match or
// captured no name.
func (r langRule) match(line []byte, inClass bool) (m []int, kind string, name int) {
	m = r.re.FindSubmatchIndex(line)
	if m == nil {
		return nil, "", 0
	}
	kind, name = r.kind, 2
	if kind == "" {
		kind, name = keywordKinds[string(line[m[2]:m[3]])], 4
	}
	if m[name] < 0 {
		return nil, "", 0
	}
	if inClass && r.member != "" {
		kind = r.member
	}
	return m, kind, name
}

func rules(specs ...langRule) []langRule { return specs }

func re(s string) *regexp.Regexp { return regexp.MustCompile(s) }

var jsRules = sync.OnceValue(func() []langRule {
	return rules(
		langRule{re: re(`^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)`), kind: "function", container: true},
		langRule{re: re(`^\s*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(class)\s+([A-Za-z_$][\w$]*)`), container: true},
		langRule{re: re(`^\s*(?:export\s+)?(?:declare\s+)?(interface)\s+([A-Za-z_$][\w$]*)`), container: true},
		langRule{re: re(`^\s*(?:export\s+)?(?:declare\s+)?(?:const\s+)?(enum)\s+([A-Za-z_$][\w$]*)`), container: true},
		langRule{re: re(`^\s*(?:export\s+)?(?:declare\s+)?(namespace)\s+([\w$.]+)`), container: true},
		langRule{re: re(`^\s*(?:export\s+)?(?:declare\s+)?type\s+([A-Za-z_$][\w$]*)\s*(?:<[^=]*>)?\s*=`), kind: "type", scope: scopeTop},
		langRule{re: re(`^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)`), kind: "function", scope: scopeTop, container: true},
		langRule{re: re(`^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)`), kind: "variable", scope: scopeTop},
		langRule{re: re(`^\s*(?:(?:public|private|protected|static|readonly|async|abstract|override|get|set)\s+)*\*?(#?[A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*\([^;]*$`), kind: "method", scope: scopeMember, container: true},
		langRule{re: re(`^\s*(?:readonly\s+)?([A-Za-z_$][\w$]*)\s*\??\s*(?:<[^>]*>)?\([^)]*\)\s*:\s*[^;{]+;\s*$`), kind: "method", scope: scopeMember},
		langRule{re: re(`^\s*(?:(?:public|private|protected|static|readonly|declare)\s+)*(#?[A-Za-z_$][\w$]*)\s*[?!]?\s*[:=][^=>]`), kind: "property", scope: scopeMember},
	)
})

var rustVis = `(?:pub(?:\([^)]*\))?\s+)?`

var rustRules = sync.OnceValue(func() []langRule {
	return rules(
		langRule{re: re(`^\s*` + rustVis + `(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+([A-Za-z_]\w*)`), kind: "function", member: "method", container: true},
		langRule{re: re(`^\s*` + rustVis + `(struct|enum|trait|union|mod)\s+([A-Za-z_]\w*)`), container: true},
		langRule{re: re(`^\s*(?:unsafe\s+)?impl(?:<[^>]*>)?\s+(?:[\w:<>, &']+\s+for\s+)?(?:[\w]+::)*([A-Za-z_]\w*)`), kind: "impl", container: true},
		langRule{re: re(`^\s*` + rustVis + `(?:const|static)\s+(?:mut\s+)?([A-Za-z_]\w*)\s*:`), kind: "constant", scope: scopeTop},
		langRule{re: re(`^\s*` + rustVis + `type\s+([A-Za-z_]\w*)`), kind: "type"},
		langRule{re: re(`^\s*(?:#\[macro_export\]\s*)?macro_rules!\s*([A-Za-z_]\w*)`), kind: "macro"},
		langRule{re: re(`^\s*` + rustVis + `([a-z_]\w*)\s*:[^:]`), kind: "field", scope: scopeMember},
		langRule{re: re(`^\s*([A-Z]\w*)\s*(?:[,({=]|$)`), kind: "enum_member", scope: scopeMember},
	)
})

var javaMods = `(?:(?:public|protected|private|static|final|abstract|sealed|non-sealed|strictfp|synchronized|native|default|transient|volatile)\s+)*`

var javaRules = sync.OnceValue(func() []langRule {
	return rules(
		langRule{re: re(`^\s*` + javaMods + `(class|interface|enum|record|@interface)\s+([A-Za-z_]\w*)`), container: true},
		langRule{re: re(`^\s*(?:public|protected|private)\s+([A-Z]\w*)\s*\([^;]*$`), kind: "constructor", scope: scopeMember, container: true},
		langRule{re: re(`^\s*` + javaMods + `(?:<[^>]+>\s+)?[\w<>\[\],.? ]*?[\w>\]]\s+([a-zA-Z_]\w*)\s*\([^;]*$`), kind: "method", scope: scopeMember, container: true},
		langRule{re: re(`^\s*` + javaMods + `[\w<>\[\],.? ]*?[\w>\]]\s+([a-zA-Z_]\w*)\s*(?:=[^=]|;)`), kind: "field", scope: scopeMember},
	)
})

var cRules = sync.OnceValue(func() []langRule {
	return rules(
		langRule{re: re(`^\s*(namespace)\s+([A-Za-z_][\w:]*)`), container: true},
		langRule{re: re(`^\s*(?:typedef\s+)?(?:template\s*<[^>]*>\s*)?(struct|union|enum|class)\s+(?:[A-Z_]+\s+)?([A-Za-z_]\w*)\s*(?:final\s*)?(?::[^{;]*)?\{?\s*$`), container: true},
		langRule{re: re(`^#\s*define\s+([A-Za-z_]\w*)`), kind: "macro"},
		langRule{re: re(`^\s*typedef\s+[^;(]*?\b([A-Za-z_]\w*)\s*;`), kind: "type", scope: scopeTop},
		langRule{re: re(`^\}\s*([A-Za-z_]\w*)\s*;`), kind: "type"},
		langRule{re: re(`^(?:[A-Za-z_][\w:<>,]*[ \t\*&]+)*\**&?([A-Za-z_~][\w:~]*)\s*\([^;]*$`), kind: "function", scope: scopeTop, container: true},
		langRule{re: re(`^\s+(?:(?:virtual|static|inline|explicit|constexpr)\s+)*(?:[A-Za-z_][\w:<>,]*[ \t\*&]+)+\**&?([A-Za-z_~][\w~]*)\s*\([^;]*(?:\)\s*(?:const\s*)?(?:override\s*)?[{;]?)?\s*$`), kind: "method", scope: scopeMember, container: true},
		langRule{re: re(`^\s+(?:const\s+|unsigned\s+|signed\s+|struct\s+|static\s+)*[A-Za-z_][\w:<>]*[\s\*&]+([A-Za-z_]\w*)\s*(?:\[[^\]]*\])*\s*(?::\s*\d+\s*)?;`), kind: "field", scope: scopeMember},
	)
})

var shellRules = sync.OnceValue(func() []langRule {
	return rules(
		langRule{re: re(`^\s*function\s+([A-Za-z_][\w:.-]*)`), kind: "function"},
		langRule{re: re(`^\s*([A-Za-z_][\w:.-]*)\s*\(\)`), kind: "function"},
	)
})

var pyRules = sync.OnceValue(func() []langRule {
	return rules(
		langRule{re: re(`^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)`), kind: "function", member: "method", container: true},
		langRule{re: re(`^\s*(class)\s+([A-Za-z_]\w*)`), container: true},
		langRule{re: re(`^([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]`), kind: "variable", scope: scopeTop},
		langRule{re: re(`^\s+self\.([A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]`), kind: "field"},
	)
})

func langRules(lang string) []langRule {
	switch lang {
	case "javascript", "typescript":
		return jsRules()
	case "rust":
		return rustRules()
	case "java":
		return javaRules()
	case "c", "cpp":
		return cRules()
	case "shell":
		return shellRules()
	case "python":
		return pyRules()
	}
	return nil
}

// langSymbols extracts the outline of a file of a language other than Go.
func langSymbols(lang, p string, src []byte) []Symbol {
	switch lang {
	case "markdown":
		return markdownSymbols(p, src)
	case "python":
		return pythonSymbols(p, src)
	}
	rs := langRules(lang)
	if rs == nil {
		return nil
	}
	return braceSymbols(rs, p, src)
}

// tree builds nested symbols from a flat list of (symbol, parent index).
type tree struct {
	syms    []Symbol
	parents []int
}

func (t *tree) add(s Symbol, parent int) int {
	t.syms = append(t.syms, s)
	t.parents = append(t.parents, parent)
	return len(t.syms) - 1
}

// nest assembles the children into their parents, in order.
func (t *tree) nest() []Symbol {
	children := make([][]int, len(t.syms))
	var roots []int
	for i, p := range t.parents {
		if p < 0 {
			roots = append(roots, i)
		} else {
			children[p] = append(children[p], i)
		}
	}
	var build func(ids []int) []Symbol
	build = func(ids []int) []Symbol {
		if len(ids) == 0 {
			return nil
		}
		out := make([]Symbol, len(ids))
		for k, i := range ids {
			out[k] = t.syms[i]
			out[k].Children = build(children[i])
		}
		return out
	}
	return build(roots)
}

type openIdx struct {
	idx     int
	inner   int
	class   bool // a class-like declaration: its members are methods, fields
	module  bool // a module or namespace: it holds top-level declarations
	pending bool // its body's brace has not been seen yet
}

// braceSymbols runs the rules over the lines of a brace language.
func braceSymbols(rs []langRule, p string, src []byte) []Symbol {
	var t tree
	var stack []openIdx
	depth := 0
	inComment := false
	lineNo := 0
	for len(src) > 0 {
		lineNo++
		var line []byte
		line, src = nextLine(src)
		code, opens, closes, still := braces(line, inComment)
		opens0 := opens
		wasComment := inComment
		inComment = still
		if !wasComment || len(bytes.TrimSpace(code)) > 0 {
			parent, inClass, inFunc := -1, false, false
			if n := len(stack); n > 0 {
				top := stack[n-1]
				parent, inClass, inFunc = top.idx, top.class && top.inner == depth, !top.class && !top.module
			}
			for _, r := range rs {
				if r.scope == scopeTop && inFunc || r.scope == scopeMember && !inClass {
					continue
				}
				m, kind, ng := r.match(line, inClass)
				if m == nil {
					continue
				}
				name := string(line[m[ng]:m[ng+1]])
				if notNames[name] {
					continue
				}
				container := ""
				if parent >= 0 {
					container = t.syms[parent].Name
				}
				col := m[ng] + 1
				if i := strings.LastIndex(name, "::"); i > 0 && kind == "function" {
					// a C++ member defined out of its class: Type::name
					container, name, kind = name[:i], name[i+2:], "method"
					col += i + 2
				}
				s := Symbol{Name: name, Kind: kind, Path: p, Line: lineNo, Column: col,
					EndLine: lineNo, EndColumn: len(line) + 1, Container: container,
					Detail: detailOf(line)}
				idx := t.add(s, parent)
				if r.container && (opens > closes || !bytes.Contains(code, []byte(";"))) {
					stack = append(stack, openIdx{idx: idx, inner: depth + 1, pending: opens == 0,
						module: kind == "module",
						class:  kind != "function" && kind != "method" && kind != "constructor" && kind != "module"})
					opens0 = -1 // this line's braces belong to the new declaration
				}
				break
			}
		}
		depth += opens - closes
		if depth < 0 {
			depth = 0
		}
		// A declaration whose body opens on a later line (C, Java style)
		// waits for its brace; a prototype ends at ';'.
		if n := len(stack); n > 0 && stack[n-1].pending && opens0 > 0 {
			stack[n-1].pending = false
		}
		for n := len(stack); n > 0 && stack[n-1].inner > depth; n = len(stack) {
			top := stack[n-1]
			if top.pending && (opens0 == -1 || !bytes.Contains(code, []byte(";"))) {
				break
			}
			// a declaration whose body never opened ends on its own line
			t.syms[top.idx].EndLine = lineNo
			stack = stack[:n-1]
		}
	}
	return t.nest()
}

// braces counts the braces of a line outside strings and comments, and
// returns the code part (comments removed) and whether a block comment is
// still open at its end.
func braces(line []byte, inComment bool) (code []byte, opens, closes int, stillComment bool) {
	var out []byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		if inComment {
			if c == '*' && i+1 < len(line) && line[i+1] == '/' {
				inComment = false
				i++
			}
			continue
		}
		switch c {
		case '/':
			if i+1 < len(line) && line[i+1] == '/' {
				return out, opens, closes, false
			}
			if i+1 < len(line) && line[i+1] == '*' {
				inComment = true
				i++
				continue
			}
		case '"', '`':
			j := i + 1
			for j < len(line) && line[j] != c {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			out = append(out, c, c)
			i = j
			continue
		case '\'':
			// a character literal ('x', '\n'), not a Rust lifetime ('a)
			if i+2 < len(line) && line[i+2] == '\'' {
				i += 2
				continue
			}
			if i+3 < len(line) && line[i+1] == '\\' && line[i+3] == '\'' {
				i += 3
				continue
			}
		case '{':
			opens++
		case '}':
			closes++
		}
		out = append(out, c)
	}
	return out, opens, closes, inComment
}

// detailOf is a declaration's line, trimmed and cut.
func detailOf(line []byte) string {
	s := strings.Join(strings.Fields(string(line)), " ")
	s = strings.TrimSuffix(strings.TrimSuffix(s, "{"), " ")
	if len(s) > 120 {
		n := 120
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

// pythonSymbols nests by indentation.
func pythonSymbols(p string, src []byte) []Symbol {
	var t tree
	type pyOpen struct {
		idx, indent int
		class       bool
	}
	var stack []pyOpen
	lineNo, lastCode := 0, 0
	inString := false
	for len(src) > 0 {
		lineNo++
		var line []byte
		line, src = nextLine(src)
		trimmed := bytes.TrimSpace(line)
		quotes := bytes.Count(line, []byte(`"""`)) + bytes.Count(line, []byte(`'''`))
		if inString {
			if quotes%2 == 1 {
				inString = false
			}
			continue
		}
		if quotes%2 == 1 {
			inString = true
		}
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		indent := len(line) - len(bytes.TrimLeft(line, " \t"))
		for n := len(stack); n > 0 && stack[n-1].indent >= indent; n = len(stack) {
			t.syms[stack[n-1].idx].EndLine = lastCode
			stack = stack[:n-1]
		}
		lastCode = lineNo
		parent, inClass, inFunc := -1, false, false
		if n := len(stack); n > 0 {
			parent, inClass, inFunc = stack[n-1].idx, stack[n-1].class, !stack[n-1].class
		}
		for _, r := range pyRules() {
			if r.scope == scopeTop && (inFunc || parent >= 0) {
				continue
			}
			if r.kind == "field" && !inFunc {
				continue
			}
			m, kind, ng := r.match(line, inClass)
			if m == nil {
				continue
			}
			container := ""
			par := parent
			if r.kind == "field" {
				// self.x = … belongs to the class of the method
				for k := len(stack) - 1; k >= 0; k-- {
					if stack[k].class {
						par = stack[k].idx
						break
					}
				}
				if par < 0 || t.hasChild(par, string(line[m[2]:m[3]])) {
					break
				}
			}
			if par >= 0 {
				container = t.syms[par].Name
			}
			s := Symbol{Name: string(line[m[ng]:m[ng+1]]), Kind: kind, Path: p, Line: lineNo,
				Column: m[ng] + 1, EndLine: lineNo, EndColumn: len(line) + 1, Container: container,
				Detail: detailOf(bytes.TrimSuffix(line, []byte(":")))}
			idx := t.add(s, par)
			if r.container {
				stack = append(stack, pyOpen{idx: idx, indent: indent, class: kind == "class"})
			}
			break
		}
	}
	for _, o := range stack {
		t.syms[o.idx].EndLine = lastCode
	}
	return t.nest()
}

func (t *tree) hasChild(parent int, name string) bool {
	for i, p := range t.parents {
		if p == parent && t.syms[i].Name == name {
			return true
		}
	}
	return false
}

var mdHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$`) })

// markdownSymbols nests headings by level, outside fenced code blocks.
func markdownSymbols(p string, src []byte) []Symbol {
	var t tree
	type level struct{ idx, n int }
	var stack []level
	lineNo := 0
	fence := ""
	for len(src) > 0 {
		lineNo++
		var line []byte
		line, src = nextLine(src)
		tl := bytes.TrimLeft(line, " ")
		if bytes.HasPrefix(tl, []byte("```")) || bytes.HasPrefix(tl, []byte("~~~")) {
			switch {
			case fence == "":
				fence = string(tl[:3])
			case bytes.HasPrefix(tl, []byte(fence)):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		m := mdHeading().FindSubmatchIndex(line)
		if m == nil {
			continue
		}
		n := m[3] - m[2]
		for k := len(stack); k > 0 && stack[k-1].n >= n; k = len(stack) {
			t.syms[stack[k-1].idx].EndLine = lineNo - 1
			stack = stack[:k-1]
		}
		parent, container := -1, ""
		if k := len(stack); k > 0 {
			parent = stack[k-1].idx
			container = t.syms[parent].Name
		}
		idx := t.add(Symbol{Name: string(line[m[4]:m[5]]), Kind: "heading", Path: p, Line: lineNo,
			Column: m[4] + 1, EndLine: lineNo, EndColumn: len(line) + 1, Container: container,
			Detail: string(line[m[2]:m[3]])}, parent)
		stack = append(stack, level{idx, n})
	}
	for _, l := range stack {
		t.syms[l.idx].EndLine = lineNo
	}
	return t.nest()
}

// nextLine splits the first line off src, without its line break (\n or
// \r\n), and returns the rest.
func nextLine(src []byte) (line, rest []byte) {
	if i := bytes.IndexByte(src, '\n'); i >= 0 {
		line, rest = src[:i], src[i+1:]
	} else {
		line = src
	}
	return bytes.TrimRight(line, "\r"), rest
}
