// Diagnostics of the Go index: the entry points, and the ranges
// of the problems go/types and the parser report.

package codeindex

import (
	"bytes"
	"cmp"
	"context"
	"go/ast"
	"go/token"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/tools/go/ast/astutil"
)

// diagnosticRanges gives every diagnostic without an end (go/parser,
// go/types and vet report a position) the range of the offending
// expression or identifier: the smallest expression of the syntax tree
// that encloses the position (for vet's reports, which name a call or an
// operand by its start, the largest that starts there), cut at the end of
// its first line; where no
// expression encloses it (a statement, a parse error), the token at the
// position, or the character before it at the end of a line. Editors then
// mark the code itself instead of guessing from an empty range.
func (g *goChecker) diagnosticRanges(files []*ast.File, ds []Diagnostic) {
	byName := map[string]*ast.File{}
	for _, f := range files {
		if tf := g.fset.File(f.Pos()); tf != nil {
			byName[tf.Name()] = f
		}
	}
	srcs := map[string][]byte{}
	for i := range ds {
		d := &ds[i]
		if d.EndLine > 0 || d.Line <= 0 || d.Column <= 0 {
			continue
		}
		src, ok := srcs[d.Path]
		if !ok {
			src, _ = g.readFile(d.Path)
			srcs[d.Path] = src
		}
		lineStart, lineEnd, ok := lineBounds(src, d.Line)
		if !ok {
			continue
		}
		off := lineStart + d.Column - 1
		if off > lineEnd {
			continue
		}
		end := -1
		if f := byName[d.Path]; f != nil {
			end = exprEnd(g.fset, f, src, off, lineEnd, d.Source == "vet")
		}
		if end < 0 {
			off, end = tokenAt(src, off, lineStart, lineEnd)
			d.Column = off - lineStart + 1
		}
		if end <= off {
			continue
		}
		d.EndLine, d.EndColumn = d.Line, end-lineStart+1
	}
}

// lineBounds returns the byte offsets of the start and end (before the
// line break) of a 1-based line.
func lineBounds(src []byte, line int) (start, end int, ok bool) {
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(src[start:], '\n')
		if i < 0 {
			return 0, 0, false
		}
		start += i + 1
	}
	end = len(src)
	if i := bytes.IndexByte(src[start:], '\n'); i >= 0 {
		end = start + i
	}
	if end > start && src[end-1] == '\r' {
		end--
	}
	return start, end, true
}

// exprEnd returns the end offset (at most lineEnd) of the smallest
// expression of f that encloses the byte offset off (with largest, the
// largest expression that starts there), or -1.
func exprEnd(fset *token.FileSet, f *ast.File, src []byte, off, lineEnd int, largest bool) int {
	tf := fset.File(f.Pos())
	if tf == nil || tf.Size() != len(src) || off >= tf.Size() {
		return -1 // the tree is not of this text (a stripped or changed file)
	}
	pos := tf.Pos(off)
	path, _ := astutil.PathEnclosingInterval(f, pos, pos)
	var found ast.Node
	for _, n := range path {
		if _, ok := n.(ast.Expr); !ok || n.Pos() > pos || !n.End().IsValid() {
			break
		}
		if found != nil && (!largest || n.Pos() != found.Pos()) {
			break
		}
		found = n
	}
	if found == nil {
		return -1
	}
	return min(tf.Offset(found.End()), lineEnd)
}

// tokenAt returns the range of the token at off on its line: an
// identifier or number, an operator or bracket character, or, at the end of
// the line or on a blank, the character before (the one a parser complains
// after).
func tokenAt(src []byte, off, lineStart, lineEnd int) (int, int) {
	isWord := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	if off >= lineEnd || src[off] == ' ' || src[off] == '\t' {
		// At the end of the line or on a blank: the last character before.
		e := min(off, lineEnd)
		for e > lineStart && (src[e-1] == ' ' || src[e-1] == '\t') {
			e--
		}
		if e == lineStart {
			return off, off
		}
		_, size := utf8.DecodeLastRune(src[lineStart:e])
		return e - size, e
	}
	if !isWord(src[off]) {
		_, size := utf8.DecodeRune(src[off:lineEnd])
		return off, off + size
	}
	end := off
	for end < lineEnd && isWord(src[end]) {
		end++
	}
	return off, end
}

func sortDiagnostics(ds []Diagnostic) {
	sortByPlace(ds, func(d Diagnostic) (string, int, int) { return d.Path, d.Line, d.Column })
}

// sortByPlace sorts xs by the path, then the line, then the column that
// place gives; equal ones keep their order.
func sortByPlace[T any](xs []T, place func(T) (path string, line, col int)) {
	slices.SortStableFunc(xs, func(a, b T) int {
		pa, la, ca := place(a)
		pb, lb, cb := place(b)
		return cmp.Or(strings.Compare(pa, pb), cmp.Compare(la, lb), cmp.Compare(ca, cb))
	})
}

// diagnostics checks the package of a Go file, or of every Go package in a
// directory tree, and returns the problems of the files asked for.
func (g *goChecker) diagnostics(ctx context.Context, file string) ([]Diagnostic, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refresh()
	u, err := g.unitFor(ctx, file)
	if err != nil {
		return nil, err
	}
	var out []Diagnostic
	for _, d := range u.diags {
		if d.Path == file {
			out = append(out, d)
		}
	}
	return out, nil
}

// packageDiagnostics checks the package in dir (with its tests) and
// returns all its problems.
func (g *goChecker) packageDiagnostics(ctx context.Context, dir string) ([]Diagnostic, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.refresh()
	var out []Diagnostic
	for _, variant := range []string{"tests", "xtest"} {
		if variant == "xtest" && !g.hasXTest(dir) {
			continue
		}
		u, err := g.unit(ctx, dir, variant, false)
		if err != nil {
			if variant == "tests" {
				return nil, err
			}
			continue
		}
		out = append(out, u.diags...)
	}
	sortDiagnostics(out)
	return out, nil
}
