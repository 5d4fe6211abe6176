package search

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"sort"
)

// The trigram index's data: posting lists of files by trigram, in
// segments (as Russ Cox's codesearch and zoekt have them).
//
// A trigram is three bytes of a file, ASCII letters folded to lower case
// (lowerASCII), as a 24-bit number. A segment holds a few thousand files
// (local numbers 0..n-1, in the order they were added) and, for every
// trigram of any of its text files, the sorted list of the files that
// contain it: the lists are encoded one after the other in one byte slice
// ordered by trigram, each as delta varints or, when that is smaller (a
// trigram most files hold), as a bitmap of the segment's files, with a
// skip entry (trigram, offset) every skipEvery lists, so that a lookup is
// a binary search and a short scan.
//
// A binary file (one with a NUL byte) has no posting lists: its trigrams,
// mostly noise that no other file shares (on $(go env GOROOT)/src its 6%
// of the files hold 94% of the distinct trigrams, and a quarter of the
// pairs), go into a Bloom filter of its own (one bit a trigram, about four
// bits a trigram of the file: bloomBytes), which may let through a file
// that does not hold them (a search then reads it for nothing) but never
// leaves out one that does.
//
// On $(go env GOROOT)/src that is about 0.11 bytes of index per byte of
// text (it was 0.25 with varints alone and binary files in the lists).
// Segments never change once built: a file that changes is marked dead in
// its segment (its entry's seg no longer points there) and added to a new
// segment.

// skipEvery is how many posting lists a skip entry covers.
const skipEvery = 32

// segment is one immutable part of the index.
type segment struct {
	docs []*entry // by local number
	blob []byte
	skip []skipEntry
	// bins are the binary files, by local number, and blooms their
	// filters one after the other.
	bins   []binDoc
	blooms []byte
}

type skipEntry struct{ tri, off uint32 }

// binDoc is a binary file's Bloom filter: n bytes at off in
// segment.blooms.
type binDoc struct {
	local, off, n uint32
}

// maxBloomBytes bounds a Bloom filter (a larger file's fills up: it is
// then a candidate of most searches).
const maxBloomBytes = 128 << 10

// bloomBit returns the bit of tri in a filter of n bytes (a multiplicative
// hash, mapped onto the filter's bits).
func bloomBit(tri uint32, n uint32) uint32 {
	return uint32(uint64(tri*0x9E3779B1) * uint64(8*n) >> 32)
}

// bloomBytes returns the size of the filter of n trigrams: about four bits
// a trigram (a trigram that is not there passes one time in five), whole
// words.
func bloomBytes(n int) uint32 {
	return uint32(min(max(n/2+7, 8)&^7, maxBloomBytes))
}

// mayHold reports whether the filter of bd may hold every trigram of tris.
func (s *segment) mayHold(bd binDoc, tris []uint32) bool {
	f := s.blooms[bd.off : bd.off+bd.n]
	for _, t := range tris {
		b := bloomBit(t, bd.n)
		if f[b>>3]&(1<<(b&7)) == 0 {
			return false
		}
	}
	return true
}

// posting is one encoded posting list: delta varints of the local
// numbers, or a bitmap of them (bit i of byte j: number 8j+i).
type posting struct {
	b      []byte
	bitmap bool
}

// each calls f with every number of the list, in order.
func (p posting) each(f func(uint32)) {
	if p.bitmap {
		for j, c := range p.b {
			for c != 0 {
				f(uint32(j*8 + bits.TrailingZeros8(c)))
				c &= c - 1
			}
		}
		return
	}
	var d uint32
	for b := p.b; len(b) > 0; {
		v, n := binary.Uvarint(b)
		b = b[n:]
		d += uint32(v)
		f(d)
	}
}

// triSet extracts the distinct trigrams of a file. The zero value is
// ready; it holds a 2 MB bit set and a 64 KB buffer, so each worker
// keeps one.
type triSet struct {
	seen []uint64
	list []uint32
	low  *[triChunk + 2]byte // a chunk of the file folded, and the two bytes after it
}

// triChunk is how many trigrams of a file triSet.of takes at a time.
const triChunk = 64 << 10

// of returns the distinct folded trigrams of data, in the order they
// first occur; the slice is reused by the next call.
//
// Each chunk is folded first (foldASCII, eight bytes at a time) and each
// trigram is read from its own three bytes of the folded copy, so that no
// trigram waits for the one before it (built from it, t<<8 | next, each
// waited for its predecessor's shift, or and mask), and a trigram already
// seen costs a load and a test, no store: 15% less CPU time in
// BenchmarkTriSet than that loop (median of six interleaved runs of each).
func (ts *triSet) of(data []byte) []uint32 {
	if ts.seen == nil {
		ts.seen = make([]uint64, 1<<24/64)
		ts.low = new([triChunk + 2]byte)
	}
	seen := (*[1 << 24 / 64]uint64)(ts.seen)
	n := 0
	for at := 0; at+3 <= len(data); at += triChunk {
		chunk := data[at:min(len(data), at+triChunk+2)]
		m := len(chunk) - 2 // the trigrams that start in this chunk
		if cap(ts.list)-n < m {
			// Double: a large file's list grows a few times only.
			list := make([]uint32, max(2*cap(ts.list), n+m))
			copy(list, ts.list[:n])
			ts.list = list
		}
		foldASCII(ts.low[:], chunk)
		n = newTrigrams(seen, ts.list[:cap(ts.list)], ts.low, m, n)
	}
	for _, t := range ts.list[:n] {
		seen[t>>6] = 0
	}
	return ts.list[:n]
}

// foldASCII writes src into dst folded as lowerASCII folds it, eight
// bytes at a time: a byte below 0x80 that is at least 'A' and at most
// 'Z' gains 0x20 (len(dst) >= len(src)).
func foldASCII(dst, src []byte) {
	const ones = 0x0101010101010101
	i := 0
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		low7 := x &^ (0x80 * ones)         // each byte without its high bit: no carry between bytes below
		atLeastA := low7 + (0x80-'A')*ones // high bit: >= 'A'
		aboveZ := low7 + (0x80-'Z'-1)*ones // high bit: > 'Z'
		upper := atLeastA &^ aboveZ &^ x & (0x80 * ones)
		binary.LittleEndian.PutUint64(dst[i:], x|upper>>2)
	}
	for ; i < len(src); i++ {
		dst[i] = lowerASCII[src[i]]
	}
}

// newTrigrams goes through the first m trigrams of the folded chunk low:
// it appends each to list at n when seen did not hold it, and sets it in
// seen. It returns the new n. Each trigram is read from its own three
// bytes, so the loop carries only n from one to the next.
//
//go:noinline
func newTrigrams(seen *[1 << 24 / 64]uint64, list []uint32, low *[triChunk + 2]byte, m, n int) int {
	m = min(m, triChunk) // (for the compiler: low[i+2] is in bounds)
	for i := range m {
		t := uint32(low[i])<<16 | uint32(low[i+1])<<8 | uint32(low[i+2])
		w := t >> 6
		old := seen[w]
		if bit := uint64(1) << (t & 63); old&bit == 0 {
			seen[w] = old | bit
			list[n] = t
			n++
		}
	}
	return n
}

// segBuilder collects files for a segment.
//
// It spreads the text files' trigrams, as they are added, into 256
// buckets by the trigram's high byte, each element the trigram's low 16
// bits and the file's local number (a segment holds at most 1<<16 files):
// within a bucket every trigram's files are in order. A bucket is a chain
// of blocks of one slab, which a builder reuses from segment to segment,
// so that the pairs take their room once, not again in a buffer to sort
// them in. build then sorts each bucket by the low 16 bits, stably (two
// passes through buffers as large as the largest bucket, in the cache),
// and encodes its lists.
type segBuilder struct {
	docs         []*entry
	slab         []uint32      // the buckets' blocks, blockLen elements each
	used         int           // blocks of slab handed out
	next         [256]uint32   // each bucket's next free element in slab; 0 mod blockLen: none (a new block)
	chain        [256][]uint32 // each bucket's blocks (their first elements in slab), in order
	pairs        int           // the text files' trigrams
	room         int           // the pairs the slab was reserved for, 0 when not
	sortA, sortB []uint32      // the sort's buffers
	blob         []byte        // the encoding's buffer
	bins         []binDoc      // the binary files' filters
	blooms       []byte
}

// blockLen is the elements of a block of a bucket (4 KB): a segment's 256
// buckets leave at most 256 blocks part empty.
const blockLen = 1024

// maxSegPairs bounds a segment's (trigram, file) pairs: the builder's
// memory (4 bytes a pair: 8 MB).
const maxSegPairs = 1 << 21

// maxSegDocs bounds a segment's files (their local numbers take 16 bits in
// the buckets).
const maxSegDocs = 1 << 16

// reserve gives the builder the room of a full segment at once (a build
// fills many).
func (b *segBuilder) reserve() {
	room := maxSegPairs + 1<<16
	// Besides the room's blocks, one partly filled block a bucket (257:
	// the rounding of a file's blocks): addPairs's bound counts a new
	// block for every bucket, so that a segment that full lets fill up to
	// its room never outgrows the slab (which a larger one would replace,
	// fresh memory, at nearly every segment).
	if n := slabBlocks(room) + 257; len(b.slab) < n*blockLen {
		b.slab = make([]uint32, n*blockLen)
	}
	b.room = room
}

// slabBlocks is the blocks that hold n pairs whatever their buckets.
func slabBlocks(n int) int { return (n+blockLen-1)/blockLen + 256 }

// add adds a file with its trigrams; a binary file's go to its Bloom
// filter.
func (b *segBuilder) add(e *entry, tris []uint32, bin bool) {
	id := uint32(len(b.docs))
	e.local = id
	b.docs = append(b.docs, e)
	if bin {
		size := bloomBytes(len(tris))
		off := len(b.blooms)
		b.blooms = append(b.blooms, make([]byte, size)...)
		f := b.blooms[off:]
		for _, t := range tris {
			k := bloomBit(t, size)
			f[k>>3] |= 1 << (k & 7)
		}
		b.bins = append(b.bins, binDoc{local: id, off: uint32(off), n: size})
		return
	}
	b.addPairs(id, tris)
}

// addPairs spreads the trigrams of the text file id into the buckets.
func (b *segBuilder) addPairs(id uint32, tris []uint32) {
	if need := (b.used + slabBlocks(len(tris))) * blockLen; need > len(b.slab) {
		// More than the slab holds (no reserve, or one huge file): the
		// blocks keep their places in a larger one.
		slab := make([]uint32, max(need, 2*len(b.slab)))
		copy(slab, b.slab[:b.used*blockLen])
		b.slab = slab
	}
	slab := b.slab
	for _, t := range tris {
		k := t >> 16 & 0xFF
		p := b.next[k]
		if p%blockLen == 0 {
			p = uint32(b.used * blockLen)
			b.used++
			b.chain[k] = append(b.chain[k], p)
		}
		slab[p] = t<<16 | id
		b.next[k] = p + 1
	}
	b.pairs += len(tris)
}

// full reports whether the segment is full, or would outgrow the room
// reserve gave the builder with n more pairs (better a smaller segment
// than a larger slab).
func (b *segBuilder) full(n int) bool {
	return b.pairs >= maxSegPairs || len(b.docs) >= maxSegDocs ||
		len(b.docs) > 0 && b.room > maxSegPairs && b.pairs+n > b.room
}

// bucketLen returns the elements of bucket k.
func (b *segBuilder) bucketLen(k int) int {
	c := len(b.chain[k])
	if c == 0 {
		return 0
	}
	return (c-1)*blockLen + int((b.next[k]-1)%blockLen) + 1
}

// largestBucket returns the elements of the largest bucket.
func (b *segBuilder) largestBucket() int {
	most := 0
	for k := range b.chain {
		most = max(most, b.bucketLen(k))
	}
	return most
}

// build returns the segment of what was added and empties the builder;
// nil when nothing was.
func (b *segBuilder) build() *segment {
	if len(b.docs) == 0 {
		return nil
	}
	n := b.pairs
	s := &segment{docs: b.docs}
	if len(b.bins) > 0 {
		s.bins = append([]binDoc(nil), b.bins...)
		s.blooms = append([]byte(nil), b.blooms...)
	}
	b.bins, b.blooms = b.bins[:0], b.blooms[:0]
	for _, e := range b.docs {
		e.seg = s
	}
	blob := b.blob[:0]
	if want := 2*n + 1024; cap(blob) < want {
		// A pair takes a byte or two: no growing (and copying) on the way.
		blob = make([]byte, 0, want)
	}
	if most := b.largestBucket(); cap(b.sortA) < most {
		b.sortA, b.sortB = make([]uint32, most), make([]uint32, most)
	}
	var post []byte
	var lastTri uint32
	nLists := 0
	for hi := range 256 {
		// The bucket, sorted by the trigrams' low 16 bits.
		bucket := b.sortBucket(hi)
		for i := 0; i < len(bucket); {
			key := bucket[i] >> 16
			tri := uint32(hi)<<16 | key
			post = post[:0]
			prev := uint32(0)
			j := i
			for ; j < len(bucket) && bucket[j]>>16 == key; j++ {
				d := bucket[j] & 0xFFFF
				post = appendUvarint(post, uint64(d-prev))
				prev = d
			}
			kind := uint64(0)
			if prev/8+1 < uint32(len(post)) {
				// a bitmap is smaller
				kind = 1
				post = append(post[:0], make([]byte, prev/8+1)...)
				for _, p := range bucket[i:j] {
					d := p & 0xFFFF
					post[d>>3] |= 1 << (d & 7)
				}
			}
			var prevTri uint32
			if nLists%skipEvery == 0 {
				s.skip = append(s.skip, skipEntry{tri: tri, off: uint32(len(blob))})
			} else {
				prevTri = lastTri
			}
			blob = appendUvarint(blob, uint64(tri-prevTri))
			blob = appendUvarint(blob, uint64(len(post))<<1|kind)
			blob = append(blob, post...)
			lastTri = tri
			nLists++
			i = j
		}
	}
	s.blob = append([]byte(nil), blob...)
	b.blob = blob[:0]
	s.skip = append([]skipEntry(nil), s.skip...)
	b.docs, b.used, b.pairs = nil, 0, 0
	clear(b.next[:])
	for k := range b.chain {
		b.chain[k] = b.chain[k][:0]
	}
	return s
}

// sortBucket returns the elements of bucket hi (trigram's low 16 bits<<16
// | local number) sorted by their high 16 bits, stably: two passes of 8
// bits, from the bucket's blocks through sortA into sortB (as large as the
// largest bucket).
func (b *segBuilder) sortBucket(hi int) []uint32 {
	n := b.bucketLen(hi)
	if n == 0 {
		return nil
	}
	a, out := b.sortA[:n], b.sortB[:n]
	// each block of the chain, the last one as far as it is filled
	blocks := b.chain[hi]
	block := func(i int) []uint32 {
		p := int(blocks[i])
		if i == len(blocks)-1 {
			return b.slab[p : p+n-i*blockLen]
		}
		return b.slab[p : p+blockLen]
	}
	var count [2][257]uint32
	for i := range blocks {
		for _, p := range block(i) {
			count[0][(p>>16)&0xFF+1]++
			count[1][p>>24+1]++
		}
	}
	for pass := range 2 {
		c := &count[pass]
		for i := 1; i < len(c); i++ {
			c[i] += c[i-1]
		}
	}
	c := &count[0]
	for i := range blocks {
		for _, p := range block(i) {
			k := (p >> 16) & 0xFF
			a[c[k]] = p
			c[k]++
		}
	}
	c = &count[1]
	for _, p := range a {
		k := p >> 24
		out[c[k]] = p
		c[k]++
	}
	return out
}

// appendUvarint is binary.AppendUvarint, the one- and two-byte cases
// inlined (most deltas of a posting list).
func appendUvarint(b []byte, v uint64) []byte {
	if v < 1<<7 {
		return append(b, byte(v))
	}
	if v < 1<<14 {
		return append(b, byte(v)|0x80, byte(v>>7))
	}
	return binary.AppendUvarint(b, v)
}

// lookup returns the posting list of tri; ok is false when there is none.
func (s *segment) lookup(tri uint32) (p posting, ok bool) {
	i := sort.Search(len(s.skip), func(i int) bool { return s.skip[i].tri > tri }) - 1
	if i < 0 {
		return posting{}, false
	}
	off := int(s.skip[i].off)
	end := len(s.blob)
	if i+1 < len(s.skip) {
		end = int(s.skip[i+1].off)
	}
	var cur uint32
	for off < end {
		d, post, next := entryAt(s.blob, off)
		if cur += d; cur == tri {
			return post, true
		}
		if cur > tri {
			return posting{}, false
		}
		off = next
	}
	return posting{}, false
}

// entryAt decodes the entry of a valid blob (checkBlob) at off: its
// trigram's distance from the entry before (from 0 at a skip entry) and
// its posting list; next is the offset of the entry after it.
func entryAt(blob []byte, off int) (delta uint32, p posting, next int) {
	d, n := binary.Uvarint(blob[off:])
	off += n
	l, n := binary.Uvarint(blob[off:])
	off += n
	next = off + int(l>>1)
	return uint32(d), posting{b: blob[off:next], bitmap: l&1 != 0}, next
}

// bitset is a set of a segment's local numbers.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

// setPosting sets the bits of a posting list.
func (b bitset) setPosting(p posting) {
	if p.bitmap {
		c := p.b
		i := 0
		for ; i+8 <= len(c); i += 8 {
			b[i>>3] |= binary.LittleEndian.Uint64(c[i:])
		}
		for ; i < len(c); i++ {
			b[i>>3] |= uint64(c[i]) << (8 * (i & 7))
		}
		return
	}
	post := p.b
	var d uint32
	for len(post) > 0 {
		v, n := binary.Uvarint(post)
		post = post[n:]
		d += uint32(v)
		b[d>>6] |= 1 << (d & 63)
	}
}

func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

func (b bitset) or(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

func (b bitset) clear() {
	for i := range b {
		b[i] = 0
	}
}

func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

// has reports whether i is in the set.
func (b bitset) has(i int32) bool { return b[i>>6]&(1<<(i&63)) != 0 }

// count returns how many numbers are in the set.
func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// each calls f with every number in the set.
func (b bitset) each(f func(int)) {
	for i, w := range b {
		for w != 0 {
			f(i*64 + bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
}

// candidates returns the segment's files that may hold one of lits (each a
// list of trigrams, all of which a file must have).
func (s *segment) candidates(lits [][]uint32, f func(*entry)) {
	n := len(s.docs)
	any := newBitset(n)
	acc, one := newBitset(n), newBitset(n)
	for _, tris := range lits {
		ok := true
		for i, t := range tris {
			post, found := s.lookup(t)
			if !found {
				ok = false
				break
			}
			if i == 0 {
				acc.clear()
				acc.setPosting(post)
				continue
			}
			one.clear()
			one.setPosting(post)
			acc.and(one)
			if acc.empty() {
				ok = false
				break
			}
		}
		if ok {
			any.or(acc)
		}
		for _, bd := range s.bins {
			if s.mayHold(bd, tris) {
				any[bd.local>>6] |= 1 << (bd.local & 63)
			}
		}
	}
	any.each(func(i int) { f(s.docs[i]) })
}

// size returns the segment's memory in bytes (roughly).
func (s *segment) size() int64 {
	return int64(cap(s.blob) + 8*cap(s.skip) + 8*cap(s.docs) + 12*cap(s.bins) + cap(s.blooms))
}

// each calls f with every trigram of the segment and its posting list,
// in trigram order.
func (s *segment) each(f func(tri uint32, post posting)) {
	var cur uint32
	for i, off := 0, 0; off < len(s.blob); i++ {
		if i%skipEvery == 0 {
			cur = 0
		}
		d, p, next := entryAt(s.blob, off)
		cur += d
		f(cur, p)
		off = next
	}
}

// smallSeg is the most files a segment holds to be merged with others.
const smallSeg = 1024

// compactLocked merges the small segments that updates leave (one per
// batch of changes) into one, without their dead files, once there are
// more than a few: as many as make at most maxSegDocs files, the others
// wait for the next compaction.
func (ri *rootIndex) compactLocked() {
	var small []*segment
	merging := map[*segment]bool{}
	total := 0
	for _, s := range ri.segs {
		// the merged segment's files fit its local numbers (maxSegDocs)
		if len(s.docs) < smallSeg && total+len(s.docs) <= maxSegDocs {
			small = append(small, s)
			merging[s] = true
			total += len(s.docs)
		}
	}
	if len(small) <= 8 {
		return
	}
	var b segBuilder
	var pairs []uint64 // local number<<32 | trigram
	for _, s := range small {
		ids := make([]int32, len(s.docs)) // old local number → new, -1: dead
		for i, e := range s.docs {
			ids[i] = -1
			if !e.dead && e.seg == s {
				ids[i] = int32(len(b.docs))
				b.docs = append(b.docs, e)
			}
		}
		for _, bd := range s.bins {
			if id := ids[bd.local]; id >= 0 {
				off := len(b.blooms)
				b.blooms = append(b.blooms, s.blooms[bd.off:bd.off+bd.n]...)
				b.bins = append(b.bins, binDoc{local: uint32(id), off: uint32(off), n: bd.n})
			}
		}
		s.each(func(tri uint32, post posting) {
			post.each(func(d uint32) {
				if id := ids[d]; id >= 0 {
					pairs = append(pairs, uint64(id)<<32|uint64(tri))
				}
			})
		})
	}
	// The builder takes the trigrams file by file.
	slices.Sort(pairs)
	var tris []uint32
	for i, e := range b.docs {
		e.local = uint32(i)
		tris = tris[:0]
		for len(pairs) > 0 && pairs[0]>>32 == uint64(i) {
			tris = append(tris, uint32(pairs[0]))
			pairs = pairs[1:]
		}
		b.addPairs(uint32(i), tris)
	}
	merged := b.build()
	keep := ri.segs[:0]
	for _, s := range ri.segs {
		if !merging[s] {
			keep = append(keep, s)
		} else {
			ri.bytes -= s.size()
		}
	}
	ri.segs = keep
	if merged != nil {
		ri.segs = append(ri.segs, merged)
		ri.bytes += merged.size()
	}
	ri.dead = 0
	for _, s := range ri.segs {
		for _, e := range s.docs {
			if e.dead || e.seg != s {
				ri.dead++
			}
		}
	}
}
