package search

import (
	"io/fs"
	"os"
	"path/filepath"
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

// BenchmarkTriSet extracts the trigrams of 32 MB of GOROOT/src.
func BenchmarkTriSet(b *testing.B) {
	texts := goSrcTexts(b, 32<<20)
	var ts triSet
	n := 0
	for _, d := range texts {
		n += len(d)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		for _, d := range texts {
			ts.of(d)
		}
	}
}

// BenchmarkSegBuild adds GOROOT/src's files to a builder and builds full
// segments (the sort and the encoding).
func BenchmarkSegBuild(b *testing.B) {
	texts := goSrcTexts(b, 32<<20)
	var ts triSet
	var bld segBuilder
	bld.reserve()
	var tris [][]uint32
	for _, d := range texts {
		tris = append(tris, append([]uint32(nil), ts.of(d)...))
	}
	for b.Loop() {
		for i, tr := range tris {
			if bld.full(len(tr)) {
				bld.build()
			}
			bld.add(&entry{}, tr, false)
			_ = i
		}
		bld.build()
	}
}
