// The index's table keeps each file's outline packed in one string: the
// symbols in pre-order, each a record of varints followed by its strings,
// so that a workspace of a million files fits in memory. A record takes
// about a dozen bytes besides its detail: lines are deltas from the
// previous symbol's, a name found inside the symbol's detail (as a Go
// declaration's always is) is kept as its place there, and a container is
// written once per file and referred to afterwards.
//
// A record, every number a varint (signed ones zig-zag encoded):
//
//	kind           index in kinds
//	descendants    how many symbols follow that are its descendants
//	line           signed: minus the previous record's line (0 before the first)
//	column
//	end line       signed: minus the line
//	end column
//	detail         length, then the bytes
//	name           length, then 0 and the bytes, or its offset in the detail plus 1
//	container      0: none; 1: the previous record's; 2: the previous record's
//	               name; 3: new, its length and bytes follow; 4+n: the container
//	               written new at offset n of the file's string

package codeindex

import (
	"encoding/binary"
	"math"
	"strings"
	"sync"
)

// indexFile is one file of the table.
type indexFile struct {
	lang string
	n    int32  // the number of symbols, children included
	data string // the records
}

// kinds are the symbol kinds seen so far, by number; a record's kind
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

// The container codes of a record.
const (
	contNone = iota
	contPrev
	contPrevName
	contNew
	contAt
)

// packFile packs an outline.
func packFile(lang string, syms []Symbol) *indexFile { return newPacker().pack(lang, syms) }

// packer packs outlines; one may be reused, by one goroutine at a time.
type packer struct {
	buf  []byte
	n    int
	seen map[string]int // container → offset of its length in buf
	// the previous record's line, name and container
	line            int
	name, container string
}

func newPacker() *packer { return &packer{seen: map[string]int{}} }

// pack packs an outline; it returns nil for lang "" (a language the index
// does not know).
func (p *packer) pack(lang string, syms []Symbol) *indexFile {
	if lang == "" {
		return nil
	}
	clear(p.seen)
	p.buf, p.n, p.line, p.name, p.container = p.buf[:0], 0, 0, "", ""
	p.add(syms)
	return &indexFile{lang: lang, n: int32(min(p.n, math.MaxInt32)), data: string(p.buf)}
}

func (p *packer) add(syms []Symbol) {
	for i := range syms {
		s := &syms[i]
		p.n++
		b := p.buf
		b = binary.AppendUvarint(b, uint64(kindNum(s.Kind)))
		b = binary.AppendUvarint(b, uint64(countSymbols(s.Children)))
		line := int(clamp32(s.Line))
		b = binary.AppendVarint(b, int64(line-p.line))
		b = binary.AppendUvarint(b, uint64(clamp32(s.Column)))
		b = binary.AppendVarint(b, int64(int(clamp32(s.EndLine))-line))
		b = binary.AppendUvarint(b, uint64(clamp32(s.EndColumn)))
		detail, name := cut16(s.Detail), cut16(s.Name)
		b = binary.AppendUvarint(b, uint64(len(detail)))
		b = append(b, detail...)
		b = binary.AppendUvarint(b, uint64(len(name)))
		if k := strings.Index(detail, name); k >= 0 && name != "" {
			b = binary.AppendUvarint(b, uint64(k+1))
		} else {
			b = append(b, 0)
			b = append(b, name...)
		}
		container := cut16(s.Container)
		switch off, ok := p.seen[container]; {
		case container == "":
			b = append(b, contNone)
		case container == p.container:
			b = append(b, contPrev)
		case container == p.name:
			b = append(b, contPrevName)
		case ok:
			b = binary.AppendUvarint(b, uint64(contAt+off))
		default:
			b = append(b, contNew)
			p.seen[container] = len(b)
			b = binary.AppendUvarint(b, uint64(len(container)))
			b = append(b, container...)
		}
		p.buf, p.line, p.name, p.container = b, line, name, container
		p.add(s.Children)
	}
}

// cut16 cuts s to 65,535 bytes.
func cut16(s string) string {
	if len(s) > math.MaxUint16 {
		return s[:math.MaxUint16]
	}
	return s
}

func clamp32(n int) int32 { return int32(min(max(n, 0), math.MaxInt32)) }

// symRec is a record of a file, decoded; its strings share the file's.
type symRec struct {
	kind                       uint8
	desc                       int // the number of its descendants
	line, col, endLine, endCol int
	name, container, detail    string
}

// symbol returns the record as a Symbol of the file at path, without
// children.
func (r *symRec) symbol(path string) Symbol {
	return Symbol{Name: r.name, Kind: kindName(r.kind), Path: path, Line: r.line, Column: r.col,
		EndLine: r.endLine, EndColumn: r.endCol, Container: r.container, Detail: r.detail}
}

// symReader reads the records of a file in order.
type symReader struct {
	data string
	off  int
	rec  symRec
}

func (f *indexFile) reader() symReader { return symReader{data: f.data} }

func (r *symReader) uvarint() int {
	var x uint64
	var s uint
	for {
		c := r.data[r.off]
		r.off++
		if c < 0x80 {
			return int(x | uint64(c)<<s)
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
}

func (r *symReader) varint() int {
	u := r.uvarint()
	return u>>1 ^ -(u & 1)
}

func (r *symReader) str(n int) string {
	s := r.data[r.off : r.off+n]
	r.off += n
	return s
}

// next decodes the next record into r.rec; false at the end.
func (r *symReader) next() bool {
	if r.off >= len(r.data) {
		return false
	}
	rec := &r.rec
	prevName := rec.name
	rec.kind = uint8(r.uvarint())
	rec.desc = r.uvarint()
	rec.line += r.varint()
	rec.col = r.uvarint()
	rec.endLine = rec.line + r.varint()
	rec.endCol = r.uvarint()
	rec.detail = r.str(r.uvarint())
	n := r.uvarint()
	if at := r.uvarint(); at == 0 {
		rec.name = r.str(n)
	} else {
		rec.name = rec.detail[at-1 : at-1+n]
	}
	switch c := r.uvarint(); c {
	case contNone:
		rec.container = ""
	case contPrev:
	case contPrevName:
		rec.container = prevName
	case contNew:
		rec.container = r.str(r.uvarint())
	default:
		at := symReader{data: r.data, off: c - contAt}
		rec.container = at.str(at.uvarint())
	}
	return true
}

// nsyms is the number of symbols, children included.
func (f *indexFile) nsyms() int { return int(f.n) }

// symbols returns the file's outline, nested.
func (f *indexFile) symbols(path string) []Symbol {
	r := f.reader()
	var tree func(n int) []Symbol // the next n records and their descendants
	tree = func(n int) []Symbol {
		var out []Symbol
		for n > 0 && r.next() {
			s := r.rec.symbol(path)
			n -= 1 + r.rec.desc
			if d := r.rec.desc; d > 0 {
				s.Children = tree(d)
			}
			out = append(out, s)
		}
		return out
	}
	return tree(int(f.n))
}

// each calls fn with every record and its depth, in pre-order; rec is
// reused from call to call.
func (f *indexFile) each(fn func(rec *symRec, depth int)) {
	var left []int // the descendants still to come of each open ancestor
	r := f.reader()
	for r.next() {
		for len(left) > 0 && left[len(left)-1] == 0 {
			left = left[:len(left)-1]
		}
		fn(&r.rec, len(left))
		for k := range left {
			left[k]--
		}
		if r.rec.desc > 0 {
			left = append(left, r.rec.desc)
		}
	}
}
