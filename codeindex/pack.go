// The index's table keeps each file's outline packed: one string holds the
// names, containers and details of the file's symbols (containers once),
// and the symbols are fixed-size records in pre-order, so that a workspace
// of a million files fits in memory (a Symbol with its strings takes about
// twice the room).

package codeindex

import (
	"math"
	"sync"
)

// indexFile is one file of the table.
type indexFile struct {
	lang string
	blob string      // the strings of the symbols
	syms []packedSym // pre-order: a symbol, then its descendants
}

// packedSym is a Symbol of the table without its path (the table's key):
// 40 bytes.
type packedSym struct {
	nameOff, containerOff, detailOff uint32
	line, col, endLine, endCol       int32
	// next is the index just after the symbol's descendants.
	next                             int32
	nameLen, containerLen, detailLen uint16
	kind                             uint8 // in kinds
}

// kinds are the symbol kinds seen so far, by number; a packedSym's kind
// indexes it. There are a few dozen at most (see Symbol.Kind); past 255 a
// kind is kept as "".
var kinds = struct {
	sync.RWMutex
	names []string
	num   map[string]uint8
}{names: []string{""}, num: map[string]uint8{"": 0}}

func kindNum(k string) uint8 {
	kinds.RLock()
	n, ok := kinds.num[k]
	kinds.RUnlock()
	if ok {
		return n
	}
	kinds.Lock()
	defer kinds.Unlock()
	if n, ok := kinds.num[k]; ok {
		return n
	}
	if len(kinds.names) > math.MaxUint8 {
		return 0
	}
	n = uint8(len(kinds.names))
	kinds.names = append(kinds.names, k)
	kinds.num[k] = n
	return n
}

func kindName(n uint8) string {
	kinds.RLock()
	defer kinds.RUnlock()
	return kinds.names[n]
}

// strRef is a string of the file's blob.
type strRef struct {
	off uint32
	n   uint16
}

// packFile packs an outline.
func packFile(lang string, syms []Symbol) *indexFile { return newPacker().pack(lang, syms) }

// packer packs outlines; one may be reused, by one goroutine at a time.
type packer struct {
	f    *indexFile
	blob []byte
	seen map[string]strRef
}

func newPacker() *packer { return &packer{seen: map[string]strRef{}} }

// pack packs an outline; it returns nil for lang "" (a language the index
// does not know).
func (p *packer) pack(lang string, syms []Symbol) *indexFile {
	if lang == "" {
		return nil
	}
	clear(p.seen)
	p.blob = p.blob[:0]
	p.f = &indexFile{lang: lang, syms: make([]packedSym, 0, countSymbols(syms))}
	p.add(syms)
	p.f.blob = string(p.blob)
	return p.f
}

func (p *packer) add(syms []Symbol) {
	for i := range syms {
		s := &syms[i]
		at := len(p.f.syms)
		name, container, detail := p.put(s.Name), p.str(s.Container), p.put(s.Detail)
		p.f.syms = append(p.f.syms, packedSym{
			nameOff: name.off, nameLen: name.n, containerOff: container.off, containerLen: container.n,
			detailOff: detail.off, detailLen: detail.n, kind: kindNum(s.Kind),
			line: clamp32(s.Line), col: clamp32(s.Column), endLine: clamp32(s.EndLine), endCol: clamp32(s.EndColumn),
		})
		p.add(s.Children)
		p.f.syms[at].next = int32(len(p.f.syms))
	}
}

// put adds s to the blob (names and details seldom repeat), cut to 65,535
// bytes.
func (p *packer) put(s string) strRef {
	if len(s) > math.MaxUint16 {
		s = s[:math.MaxUint16]
	}
	r := strRef{uint32(len(p.blob)), uint16(len(s))}
	p.blob = append(p.blob, s...)
	return r
}

// str adds s to the blob once (kinds and containers repeat).
func (p *packer) str(s string) strRef {
	if s == "" {
		return strRef{}
	}
	if r, ok := p.seen[s]; ok {
		return r
	}
	r := p.put(s)
	p.seen[s] = r
	return r
}

func clamp32(n int) int32 { return int32(min(max(n, 0), math.MaxInt32)) }

func (f *indexFile) str(off uint32, n uint16) string { return f.blob[off : off+uint32(n)] }

func (f *indexFile) name(i int) string {
	return f.str(f.syms[i].nameOff, f.syms[i].nameLen)
}

func (f *indexFile) container(i int) string {
	return f.str(f.syms[i].containerOff, f.syms[i].containerLen)
}

// nsyms is the number of symbols, children included.
func (f *indexFile) nsyms() int { return len(f.syms) }

// symbol returns the i-th symbol of the file at path, without children.
func (f *indexFile) symbol(path string, i int) Symbol {
	s := &f.syms[i]
	return Symbol{Name: f.name(i), Kind: kindName(s.kind), Path: path, Line: int(s.line), Column: int(s.col),
		EndLine: int(s.endLine), EndColumn: int(s.endCol), Container: f.container(i), Detail: f.str(s.detailOff, s.detailLen)}
}

// symbols returns the file's outline, nested.
func (f *indexFile) symbols(path string) []Symbol {
	var tree func(from, to int) []Symbol
	tree = func(from, to int) []Symbol {
		var out []Symbol
		for i := from; i < to; i = int(f.syms[i].next) {
			s := f.symbol(path, i)
			if next := int(f.syms[i].next); next > i+1 {
				s.Children = tree(i+1, next)
			}
			out = append(out, s)
		}
		return out
	}
	return tree(0, len(f.syms))
}

// each calls fn with the index and depth of every symbol, in pre-order.
func (f *indexFile) each(fn func(i, depth int)) {
	var ends []int32 // the next of each open ancestor
	for i := range f.syms {
		for len(ends) > 0 && int32(i) >= ends[len(ends)-1] {
			ends = ends[:len(ends)-1]
		}
		fn(i, len(ends))
		if f.syms[i].next > int32(i+1) {
			ends = append(ends, f.syms[i].next)
		}
	}
}
