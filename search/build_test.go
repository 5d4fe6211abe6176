package search

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

// goSrcTexts returns the contents of up to limit bytes of text files of
// $(go env GOROOT)/src, in walk order.
func goSrcTexts(t testing.TB, limit int) [][]byte {
	t.Helper()
	var out [][]byte
	total := 0
	filepath.WalkDir(testenv.GoSrc(t), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || total >= limit {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil {
			out = append(out, b)
			total += len(b)
		}
		return nil
	})
	return out
}

// TestBuildMatchesReference builds segments as a build's worker does
// (reserve, full, add, build) from 48 MB of the files of $(go env GOROOT)/src and
// from 70000 small files (segments of 1<<16 files), and checks every
// segment against a map of trigram to files made byte by byte: the same
// trigrams, each with the same files in order, a list encoded as a bitmap
// exactly when that is smaller, of the length it takes, found by lookup; each binary file in a
// Bloom filter.
func TestBuildMatchesReference(t *testing.T) {
	trees := map[string][][]byte{"GOROOT/src": goSrcTexts(t, 48<<20)}
	var small [][]byte
	for i := range 70000 {
		small = append(small, fmt.Appendf(nil, "f%d %x", i, i*7919))
	}
	trees["small files"] = small
	for name, texts := range trees {
		var ts triSet
		var b segBuilder
		b.reserve()
		var segs []*segment
		var segTexts [][][]byte
		var cur [][]byte
		for _, d := range texts {
			tris := ts.of(d)
			bin := bytes.IndexByte(d, 0) >= 0
			n := len(tris)
			if bin {
				n = 0
			}
			if b.full(n) {
				segs, segTexts, cur = append(segs, b.build()), append(segTexts, cur), nil
			}
			b.add(&entry{}, tris, bin)
			cur = append(cur, d)
		}
		segs, segTexts = append(segs, b.build()), append(segTexts, cur)
		if name == "small files" && len(segs[0].docs) != maxSegDocs {
			t.Fatalf("%s: the first segment holds %d files, want %d", name, len(segs[0].docs), maxSegDocs)
		}
		for si, s := range segs {
			want := map[uint32][]uint32{}
			bins := 0
			for local, d := range segTexts[si] {
				if bytes.IndexByte(d, 0) >= 0 {
					if s.bins[bins].local != uint32(local) {
						t.Fatalf("%s, segment %d: binary file %d has filter %+v", name, si, local, s.bins[bins])
					}
					bins++
					continue
				}
				for i := 2; i < len(d); i++ {
					tri := uint32(lowerASCII[d[i-2]])<<16 | uint32(lowerASCII[d[i-1]])<<8 | uint32(lowerASCII[d[i]])
					if l := want[tri]; len(l) == 0 || l[len(l)-1] != uint32(local) {
						want[tri] = append(l, uint32(local))
					}
				}
			}
			if bins != len(s.bins) {
				t.Fatalf("%s, segment %d: %d filters, want %d", name, si, len(s.bins), bins)
			}
			lists := 0
			prevTri := -1
			s.each(func(tri uint32, post posting) {
				lists++
				if int(tri) <= prevTri {
					t.Fatalf("%s, segment %d: trigram %06x after %06x", name, si, tri, prevTri)
				}
				prevTri = int(tri)
				var got []uint32
				post.each(func(d uint32) { got = append(got, d) })
				if !slices.Equal(got, want[tri]) {
					t.Fatalf("%s, segment %d, trigram %06x: files %v, want %v", name, si, tri, got, want[tri])
				}
				vlen, prev := 0, uint32(0)
				for _, d := range got {
					vlen += len(binary.AppendUvarint(nil, uint64(d-prev)))
					prev = d
				}
				if bitmap := int(prev/8+1) < vlen; post.bitmap != bitmap || len(post.b) != min(vlen, int(prev/8+1)) {
					t.Fatalf("%s, segment %d, trigram %06x: a bitmap %v of %d bytes, want %v (%d bytes of varints)", name, si, tri, post.bitmap, len(post.b), bitmap, vlen)
				}
				if p, ok := s.lookup(tri); !ok || !bytes.Equal(p.b, post.b) {
					t.Fatalf("%s, segment %d: lookup(%06x) = %v", name, si, tri, ok)
				}
			})
			if lists != len(want) {
				t.Fatalf("%s, segment %d: %d lists, want %d", name, si, lists, len(want))
			}
		}
		t.Logf("%s: %d files, %d segments", name, len(texts), len(segs))
	}
}

// BenchmarkTriSet extracts the trigrams of 32 MB of GOROOT/src; besides
// the wall clock it reports the CPU time (a shared machine's load):
//
//	go test ./search -run '^$' -bench 'TriSet|SegBuild' -benchtime 10x
func BenchmarkTriSet(b *testing.B) {
	texts := goSrcTexts(b, 32<<20)
	var ts triSet
	n := 0
	for _, d := range texts {
		n += len(d)
	}
	b.SetBytes(int64(n))
	c0 := testenv.CPUTime()
	for b.Loop() {
		for _, d := range texts {
			ts.of(d)
		}
	}
	b.ReportMetric(float64(testenv.CPUTime()-c0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkSegBuild adds the trigrams of 64 MB of GOROOT/src's files to a
// builder, as a build's worker does, and builds the segments (the sort
// and the encoding), with the builder's memory warm.
func BenchmarkSegBuild(b *testing.B) {
	texts := goSrcTexts(b, 64<<20)
	var ts triSet
	var bld segBuilder
	bld.reserve()
	var tris [][]uint32
	for _, d := range texts {
		tris = append(tris, append([]uint32(nil), ts.of(d)...))
	}
	c0 := testenv.CPUTime()
	for b.Loop() {
		for _, tr := range tris {
			if bld.full(len(tr)) {
				bld.build()
			}
			bld.add(&entry{}, tr, false)
		}
		bld.build()
	}
	b.ReportMetric(float64(testenv.CPUTime()-c0)/float64(b.N), "cpu-ns/op")
}

// TestAppendUvarint checks appendUvarint against encoding/binary, across
// the one-, two- and three-byte lengths.
func TestAppendUvarint(t *testing.T) {
	for _, v := range []uint32{0, 1, 127, 128, 255, 16383, 16384, 65535, 1<<21 - 1, 1 << 21, 1<<32 - 1} {
		got := appendUvarint([]byte{9}, uint64(v))
		want := binary.AppendUvarint([]byte{9}, uint64(v))
		if !bytes.Equal(got, want) {
			t.Errorf("%d: %x, want %x", v, got, want)
		}
	}
}

// TestCompactBoundsFiles compacts 70 small segments of 1000 files each:
// the merged segment takes no more files than its local numbers hold
// (maxSegDocs), the others stay, and every file remains a candidate of
// the literal only it holds.
func TestCompactBoundsFiles(t *testing.T) {
	ri := &rootIndex{files: map[string]*entry{}}
	var ts triSet
	for i := range 70 {
		var b segBuilder
		for j := range 1000 {
			rel := fmt.Sprintf("<%d.%d>", i, j)
			e := &entry{rel: rel}
			b.add(e, ts.of([]byte(rel)), false)
			ri.files[rel] = e
		}
		s := b.build()
		ri.segs = append(ri.segs, s)
		ri.bytes += s.size()
	}
	ri.compactLocked()
	docs := 0
	for _, s := range ri.segs {
		if len(s.docs) > maxSegDocs {
			t.Fatalf("a segment of %d files", len(s.docs))
		}
		docs += len(s.docs)
	}
	if len(ri.segs) != 1+70-maxSegDocs/1000 || docs != 70000 {
		t.Fatalf("%d segments of %d files, want %d of 70000", len(ri.segs), docs, 1+70-maxSegDocs/1000)
	}
	for i := 0; i < 70000; i += 97 {
		rel := fmt.Sprintf("<%d.%d>", i/1000, i%1000)
		found := false
		for _, s := range ri.segs {
			s.candidates([][]uint32{ts.of([]byte(rel))}, func(e *entry) { found = found || e.rel == rel })
		}
		if !found {
			t.Fatalf("%s is not a candidate of its name", rel)
		}
	}
}
