// This file holds the parsing half of the shell command judge: shell
// source parsed and walked, words after quote removal, and the expansions
// that bash would evaluate again.

package approval

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// source parses and judges shell source.
func (j *judge) source(src string, depth int) {
	if depth > maxDepth {
		j.unjudgeable("shell strings nested more than %d deep", maxDepth)
		return
	}
	if forkBomb(src) {
		j.block("fork bomb")
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		j.unjudgeable("the command does not parse: %v", err)
		return
	}
	j.file(f, depth)
}

// forkBombText matches f(){ f|f& } with spaces removed.
var forkBombText = regexp.MustCompile(`([^(){}|&;]+)\(\)\{([^(){}|&;]+)\|([^(){}|&;]+)&;?\}`)

// forkBomb finds the classic fork bomb in text, even where it does not parse.
func forkBomb(src string) bool {
	for _, m := range forkBombText.FindAllStringSubmatch(strings.Join(strings.Fields(src), ""), -1) {
		if m[1] == m[2] && m[2] == m[3] {
			return true
		}
	}
	return false
}

// file judges every statement of a parsed program, however nested.
func (j *judge) file(f *syntax.File, depth int) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			var stdin *syntax.Word
			for _, r := range n.Redirs {
				j.redirect(r)
				switch r.Op {
				case syntax.Hdoc, syntax.DashHdoc:
					stdin = r.Hdoc
				case syntax.WordHdoc:
					stdin = r.Word
				}
			}
			if call, ok := n.Cmd.(*syntax.CallExpr); ok {
				j.assigns(call.Assigns)
				if len(call.Args) > 0 {
					j.command(words(call.Args), stdin, depth)
				}
			}
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				j.pipe(n)
			}
		case *syntax.FuncDecl:
			j.function(n)
		case *syntax.DeclClause:
			j.decl(n)
		case *syntax.CoprocClause:
			j.ask("coproc", "starts a coprocess")
		case *syntax.TestDecl:
			j.ask("@test", "declares a test function")
		case *syntax.ArithmExp:
			j.arith(n.X)
		case *syntax.ArithmCmd:
			j.arith(n.X)
		case *syntax.LetClause:
			for _, x := range n.Exprs {
				j.arith(x)
			}
		case *syntax.CStyleLoop:
			j.arith(n.Init)
			j.arith(n.Cond)
			j.arith(n.Post)
		case *syntax.ParamExp:
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && strings.Contains(n.Exp.Word.Lit(), "P") {
				j.unjudgeable("${%s@P} expands a prompt string, which runs command substitutions", paramName(n))
			}
			j.arith(n.Index)
			if n.Slice != nil {
				j.arith(n.Slice.Offset)
				j.arith(n.Slice.Length)
			}
		case *syntax.BinaryTest:
			if n.Op >= syntax.TsEql && n.Op <= syntax.TsGtr {
				j.reEval = true // [[ a -eq b ]] evaluates both sides as arithmetic
			}
		case *syntax.Word:
			if codeText(n) {
				j.codeText = true
			}
		}
		return true
	})
}

func paramName(p *syntax.ParamExp) string {
	if p.Param != nil {
		return p.Param.Value
	}
	return "…"
}

// arith notes arithmetic that reads variables: bash evaluates a variable's
// value as arithmetic again, and an array subscript in it
// (a[$(cmd)]) runs commands.
func (j *judge) arith(x syntax.ArithmExpr) {
	if x == nil || j.reEval {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			j.reEval = true
		case *syntax.Word:
			if l := n.Lit(); l == "" || !isNumber(l) {
				j.reEval = true
			}
		}
		return !j.reEval
	})
}

func isNumber(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c == '#' || c == 'x' || c == 'X' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// codeText reports whether a word's literal text holds a command
// substitution that a later evaluation would run ('$(cmd)', '`cmd`').
func codeText(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted:
			if CodeLike(p.Value) {
				return true
			}
		case *syntax.Lit:
			if CodeLike(unescape(p.Value, "")) {
				return true
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok && CodeLike(unescape(l.Value, "$`\"\\\n")) {
					return true
				}
			}
		}
	}
	return false
}

// CodeLike reports whether a value holds text that bash would run if it
// evaluated the value again: a command substitution.
func CodeLike(v string) bool {
	return strings.Contains(v, "$(") || strings.Contains(v, "`")
}

// word is one shell word after quote removal. A word that is not static
// holds a rendering of its expansions ($NAME, $(…)).
type word struct {
	text   string
	static bool
	glob   bool // an unquoted *, ? or [ (the shell would expand it)
	raw    *syntax.Word
}

func words(ws []*syntax.Word) []word {
	out := make([]word, len(ws))
	for i, w := range ws {
		out[i] = render(w)
	}
	return out
}

// globChars matches the pattern characters of a glob: *, ? or [...].
var globChars = regexp.MustCompile(`[*?]|\[.*\]`)

// braceExpansion matches an unquoted {a,b} or {1..3}.
var braceExpansion = regexp.MustCompile(`\{[^{}]*(,|\.\.)[^{}]*\}`)

// render removes quotes from a word and reports whether its value is known.
func render(w *syntax.Word) word {
	out := word{static: true, raw: w}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if globChars.MatchString(unescapedOnly(v)) {
				out.glob = true
			}
			if braceExpansion.MatchString(unescapedOnly(v)) {
				out.static = false
			}
			b.WriteString(unescape(v, ""))
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				out.static = false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescape(l.Value, "$`\"\\\n"))
					continue
				}
				out.static = false
				b.WriteString(renderDynamic(q))
			}
		case *syntax.ExtGlob:
			out.glob = true
			b.WriteString(p.Op.String() + p.Pattern.Value + ")")
		default:
			out.static = false
			b.WriteString(renderDynamic(p))
		}
	}
	out.text = b.String()
	return out
}

func renderDynamic(p syntax.WordPart) string {
	switch p := p.(type) {
	case *syntax.ParamExp:
		if p.Param != nil {
			return "$" + p.Param.Value
		}
		return "${…}"
	case *syntax.CmdSubst:
		return "$(…)"
	case *syntax.ArithmExp:
		return "$((…))"
	case *syntax.ProcSubst:
		return "/dev/fd/…"
	}
	return "…"
}

// unescape removes backslashes; in double quotes (special != "") only those
// before a special character.
func unescape(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (special == "" || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapedOnly drops escaped characters, leaving those the shell interprets.
func unescapedOnly(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func texts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}
