// Finding symbols by name: the fuzzy search of workspace symbols (the
// symbols tool, workspace/symbol) and the exact lookups that answers by
// name are built from.

package codeindex

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
)

// scored is a search hit: a symbol of the table (files are replaced, never
// modified in place, so it may be read after the lock is released) and its
// score.
type scored struct {
	path  string
	rec   symRec
	score int
}

func (h *scored) line() int { return h.rec.line }

// better orders hits: higher scores, then shorter paths, then by place.
func better(a, b *scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if len(a.path) != len(b.path) {
		return len(a.path) < len(b.path)
	}
	if a.path != b.path {
		return a.path < b.path
	}
	return a.line() < b.line()
}

// topK keeps the k best hits in a heap whose root is the worst of them.
type topK struct {
	k    int
	hits []scored
}

func (t *topK) add(h *scored) {
	if len(t.hits) < t.k {
		t.hits = append(t.hits, *h)
		for i := len(t.hits) - 1; i > 0; {
			parent := (i - 1) / 2
			if !better(&t.hits[parent], &t.hits[i]) {
				break
			}
			t.hits[parent], t.hits[i] = t.hits[i], t.hits[parent]
			i = parent
		}
		return
	}
	if !better(h, &t.hits[0]) {
		return
	}
	t.hits[0] = *h
	for i := 0; ; {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(t.hits) && better(&t.hits[worst], &t.hits[l]) {
			worst = l
		}
		if r < len(t.hits) && better(&t.hits[worst], &t.hits[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		t.hits[i], t.hits[worst] = t.hits[worst], t.hits[i]
		i = worst
	}
}

// Search finds symbols whose name matches query fuzzily, best first: exact
// matches, then case-insensitive ones, prefixes, substrings and
// subsequences; exported and shallower declarations first among equals. A
// query "pkg.Name" or "Type.Method" also matches the container. It returns
// at most limit symbols (without children) and whether the answer is
// partial.
func (ix *Index) Search(query string, limit int) ([]Symbol, bool) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, ix.partial()
	}
	if limit <= 0 {
		limit = 100
	}
	container, name := "", query
	if i := strings.LastIndexByte(query, '.'); i > 0 && i < len(query)-1 {
		container, name = query[:i], query[i+1:]
	}
	m := newMatcher(name)
	top := &topK{k: limit}
	ix.syncRoots()
	ix.mu.RLock()
	for p, f := range ix.files {
		penalty := 0
		if strings.Contains(p, "/internal/") || strings.HasSuffix(p, "_test.go") {
			penalty = 4
		}
		f.each(func(rec *symRec, depth int) {
			sc := m.score(rec.name)
			if sc <= 0 {
				return
			}
			if container != "" {
				c := containerScore(container, rec.container, p)
				if c == 0 {
					return
				}
				sc += c
			}
			sc -= depth*3 + penalty
			if k := kindName(rec.kind); k == "field" || k == "variable" || k == "constant" {
				sc -= 2
			}
			top.add(&scored{p, *rec, sc})
		})
	}
	ix.mu.RUnlock()
	hits := top.hits
	sort.Slice(hits, func(i, j int) bool { return better(&hits[i], &hits[j]) })
	out := make([]Symbol, len(hits))
	for i, h := range hits {
		out[i] = h.rec.symbol(h.path)
	}
	return out, ix.partial()
}

// containerScore matches the qualifier of a query: the symbol's container
// or the name of its file's directory (a Go package's path element).
func containerScore(q, container, p string) int {
	if i := strings.LastIndexByte(q, '.'); i > 0 {
		// pkg.Type.Method: the type is the container, pkg the directory
		c := containerScore(q[i+1:], container, p)
		if c == 0 || containerScore(q[:i], "", p) == 0 {
			return 0
		}
		return c + 5
	}
	switch {
	case q == container, q == "*"+container:
		return 20
	case strings.EqualFold(q, container):
		return 15
	case q == filepath.Base(filepath.Dir(p)) || strings.HasSuffix(filepath.ToSlash(filepath.Dir(p)), "/"+q):
		return 12
	}
	return 0
}

// matcher scores names against a fuzzy query.
type matcher struct {
	q, lower string
	lb       []byte // lower as bytes
}

func newMatcher(q string) matcher {
	l := strings.ToLower(q)
	return matcher{q: q, lower: l, lb: []byte(l)}
}

// lowerASCII lowers the ASCII letters of s into buf.
func lowerASCII(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

// initials returns the lowered first letters of a name's words (camel
// humps and _-separated parts): "nr" for NewReader, "rf" for read_file.
func initials(name string, buf []byte) string {
	for i := 0; i < len(name); i++ {
		c := name[i]
		start := i == 0 && c != '_' ||
			c >= 'A' && c <= 'Z' && (i == 0 || name[i-1] < 'A' || name[i-1] > 'Z') ||
			i > 0 && name[i-1] == '_' && c != '_'
		if start {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf = append(buf, c)
		}
	}
	return string(buf)
}

// score is 0 for no match, higher for better ones.
func (m matcher) score(name string) int {
	if len(name) < len(m.q) {
		return 0
	}
	if name == m.q {
		return 100
	}
	var buf [128]byte
	lname := lowerASCII(buf[:0], name)
	lq := m.lower
	extra := min(len(name)-len(m.q), 20)
	switch {
	case string(lname) == lq:
		return 90
	case strings.HasPrefix(name, m.q):
		return 80 - extra
	case bytes.HasPrefix(lname, m.lb):
		return 70 - extra
	case len(lq) >= 2 && initials(name, lname[len(lname):]) == lq:
		return 75 - extra/4 // NR for NewReader
	case strings.Contains(name, m.q):
		return 60 - extra
	case bytes.Contains(lname, m.lb):
		return 50 - extra
	}
	// subsequence, favouring matches at word starts (camel humps, _)
	j, bonus := 0, 0
	for i := 0; i < len(lname) && j < len(lq); i++ {
		if lname[i] == lq[j] {
			if i == 0 || name[i] >= 'A' && name[i] <= 'Z' || name[i-1] == '_' {
				bonus++
			}
			j++
		}
	}
	if j < len(lq) {
		return 0
	}
	return max(1, 20+bonus*2-min(len(name)-len(m.q), 18))
}

// family groups languages whose files refer to each other's names: C and
// C++ (headers), JavaScript and TypeScript.
func family(lang string) string {
	switch lang {
	case "cpp":
		return "c"
	case "typescript":
		return "javascript"
	}
	return lang
}

// filesOf lists the indexed files of a language (or of its family), sorted.
func (ix *Index) filesOf(lang string) []string {
	ix.syncRoots()
	ix.mu.RLock()
	out := make([]string, 0, len(ix.files))
	for p, f := range ix.files {
		if lang == "" || family(f.lang) == family(lang) {
			out = append(out, p)
		}
	}
	ix.mu.RUnlock()
	sort.Strings(out)
	return out
}

// SymbolsNamed returns the symbols (children included) named exactly name,
// those of path's file first, then of its language.
func (ix *Index) SymbolsNamed(name, near string) []Symbol {
	lang := Language(near)
	var same, langs, others []Symbol
	ix.syncRoots()
	ix.mu.RLock()
	for p, f := range ix.files {
		for r := f.reader(); r.next(); {
			if r.rec.name != name {
				continue
			}
			s := r.rec.symbol(p)
			switch {
			case p == near:
				same = append(same, s)
			case family(f.lang) == family(lang):
				langs = append(langs, s)
			default:
				others = append(others, s)
			}
		}
	}
	ix.mu.RUnlock()
	for _, l := range [][]Symbol{same, langs, others} {
		sort.Slice(l, func(i, j int) bool {
			if l[i].Path != l[j].Path {
				return l[i].Path < l[j].Path
			}
			return l[i].Line < l[j].Line
		})
	}
	return append(append(same, langs...), others...)
}
