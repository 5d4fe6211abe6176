package search

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentls/agentls/internal/private"
	"github.com/agentls/agentls/workspace"
)

// The on-disk copy of a root's index, so that a restarted server does not
// read every file again.
//
// Where: one file per root in the cache's directory ($XDG_CACHE_HOME/agentls,
// by default ~/.cache/agentls; Cache.SetPersistDir), named by a hash of the
// root's absolute path. The directory is made 0700 and the files 0600; a
// directory or file that is not ours alone (owner, mode, a symlink) is
// neither read nor written. A copy is written after a build (a temporary
// file renamed over the old copy) and read by the next build of the root.
//
// The copy is untrusted input: it may be truncated, corrupt or written by
// another version. Everything is checked before any of it is used (magic,
// version, the root it is of, lengths and bounds, a CRC-32 of the whole,
// every posting list decoded in full: trigrams in order, file numbers in
// order and in range, paths relative, clean and below the root); on any
// problem it is ignored and the root is built from scratch. The copy never
// names what the index holds: the build still walks the root with the
// walk's rules, and a walked file reuses its trigrams from the copy only
// when its stat (size, mtime, ctime, inode, device) is the one it was read
// under and it was not racy then; the other files are read again and the
// files of the copy the walk does not reach are dropped. Paths in the copy
// are only looked up by the walked path, so no file outside the root is
// ever opened through it, and a search still reads every candidate.
//
// Layout (integers are uvarints unless said otherwise):
//
//	magic (16 bytes) | version (4 bytes LE) | body | CRC-32 (IEEE) of what precedes (4 bytes LE)
//	body: root, max file bytes, segment count, then per segment:
//	  file count; per file: flags (bit 0: dead), and unless dead its
//	  path (length, bytes), size, mtime, ctime (zigzag varints), inode,
//	  device; then the blob (length, bytes) as index.go encodes it; then
//	  the binary files' Bloom filters: their count, and per filter the
//	  file's local number (increasing), its size in bytes (a multiple of
//	  8, at most maxBloomBytes) and its bytes.
//
// The skip entries are not stored: they are rebuilt while the blob is
// checked.

const (
	persistMagic   = "agentls-trigrams"
	persistVersion = 3
	// maxPersistBytes bounds the file read back.
	maxPersistBytes = maxIndexBytes + 256<<20
	// maxPersistCopies is how many copies the directory keeps (the oldest
	// go first): roots come and go, tests make many.
	maxPersistCopies = 32
	persistExt       = ".trigrams"
)

// crcTable is the IEEE polynomial's, which Go computes with carry-less
// multiplication (PCLMULQDQ, PMULL): 16 GB/s where Castagnoli's CRC32
// instruction gave 0.4 GB/s (version 2 used it; a virtual machine's CPU).
var crcTable = crc32.IEEETable

// defaultPersistDir returns $XDG_CACHE_HOME/agentls (the platform's user
// cache directory), or "" when there is none.
func defaultPersistDir() string {
	d, err := os.UserCacheDir()
	if err != nil || d == "" {
		return ""
	}
	return filepath.Join(d, "agentls")
}

// SetPersistDir sets the directory of the on-disk copies of the indexes;
// "" turns them off. The default is $XDG_CACHE_HOME/agentls.
func (c *Cache) SetPersistDir(dir string) {
	c.mu.Lock()
	c.persistDir = dir
	c.mu.Unlock()
}

// persistFile returns the path of root's copy in dir.
func persistFile(dir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+persistExt)
}

// checkPrivateDir reports whether dir is a directory (not a symlink) owned
// by this user that no one else may enter; with create it is made first
// (0700, its parents too) when missing.
func checkPrivateDir(dir string, create bool) error {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("index cache directory: %w", err)
		}
	}
	if err := private.Dir(dir, 0o077); err != nil {
		return fmt.Errorf("index cache directory: %w", err)
	}
	return nil
}

// loaded is an index read back from disk: its segments and its live
// files by path.
type loaded struct {
	segs  []*segment
	files map[string]*entry
	bytes int64
	dead  int // files written dead
}

// loadIndex reads root's copy from dir, built under the size cap max; an
// error says why there is none to use.
func loadIndex(dir, root string, max int64) (*loaded, error) {
	f, size, err := openCopy(dir, root)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("index copy: %w", err)
	}
	return decodeIndex(data, root, max)
}

// viewIndex is loadIndex for a one-shot look: the copy is mapped, not
// read (mapFile), and decoded lazily (decodeCopy). Once done is called the
// segments' blobs are gone (nil); the files and their numbers stay.
func viewIndex(dir, root string, max int64) (ld *loaded, done func(), err error) {
	f, size, err := openCopy(dir, root)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, unmap, err := mapFile(f, int(size))
	if err != nil {
		return nil, nil, fmt.Errorf("index copy: %w", err)
	}
	kept := false
	defer func() {
		if !kept { // an error, or a fault (a panic: mapFile)
			unmap()
		}
	}()
	if ld, err = decodeCopy(data, root, max, true); err != nil {
		return nil, nil, err
	}
	kept = true
	return ld, func() {
		for _, s := range ld.segs {
			s.blob, s.blooms = nil, nil
		}
		unmap()
	}, nil
}

// openCopy opens root's copy in dir, checked private (internal/private),
// with its size.
func openCopy(dir, root string) (*os.File, int64, error) {
	if err := checkPrivateDir(dir, false); err != nil {
		return nil, 0, err
	}
	f, err := private.Open(persistFile(dir, root))
	if err != nil {
		return nil, 0, fmt.Errorf("index copy: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && (fi.Size() > maxPersistBytes || fi.Size() < int64(len(persistMagic))+8) {
		err = fmt.Errorf("index copy: size %d out of bounds", fi.Size())
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// decodeIndex checks and decodes a copy (the layout above).
func decodeIndex(data []byte, root string, max int64) (*loaded, error) {
	return decodeCopy(data, root, max, false)
}

// decodeCopy is decodeIndex; with lazy, the segments' posting lists are
// checked as checkHeaders does, and each list must pass checkList before
// its numbers are used (a one-shot search looks up a few lists of an index
// a build would take whole).
func decodeCopy(data []byte, root string, max int64, lazy bool) (*loaded, error) {
	n := len(data)
	if n < len(persistMagic)+8 || string(data[:len(persistMagic)]) != persistMagic {
		return nil, errors.New("index copy: bad magic")
	}
	if v := binary.LittleEndian.Uint32(data[len(persistMagic):]); v != persistVersion {
		return nil, fmt.Errorf("index copy: version %d", v)
	}
	if crc32.Checksum(data[:n-4], crcTable) != binary.LittleEndian.Uint32(data[n-4:]) {
		return nil, errors.New("index copy: bad checksum")
	}
	d := decoder{b: data[len(persistMagic)+4 : n-4]}
	if string(d.bytes(4096)) != root {
		return nil, errors.New("index copy: of another root")
	}
	if int64(d.uvarint(1<<62)) != max {
		return nil, errors.New("index copy: built under another size cap")
	}
	ld := &loaded{files: map[string]*entry{}}
	nsegs := d.uvarint(maxIndexFiles)
	total := 0
	for range nsegs {
		if d.err != nil {
			break
		}
		ndocs := int(d.uvarint(maxIndexFiles))
		if total += ndocs; total > maxIndexFiles {
			return nil, errors.New("index copy: too many files")
		}
		s := &segment{docs: make([]*entry, ndocs)}
		for i := range s.docs {
			flags := d.uvarint(0xFF)
			e := &entry{seg: s, local: uint32(i), dead: flags&1 != 0, flags: uint8(flags >> 1)}
			s.docs[i] = e
			if e.dead {
				ld.dead++
				continue
			}
			e.rel = string(d.bytes(4096))
			e.st.Size = d.varint()
			e.st.Mtime = d.varint()
			e.st.Ctime = d.varint()
			e.st.Ino = d.uvarint(1<<64 - 1)
			e.st.Dev = d.uvarint(1<<64 - 1)
			if d.err != nil {
				break
			}
			if !cleanRel(e.rel) {
				return nil, fmt.Errorf("index copy: path %q is not below the root", e.rel)
			}
			had := len(ld.files)
			if ld.files[e.rel] = e; len(ld.files) == had {
				return nil, fmt.Errorf("index copy: path %q twice", e.rel)
			}
		}
		s.blob = d.bytes(maxIndexBytes)
		nbins := int(d.uvarint(uint64(ndocs)))
		// Lazily, the filters stay where they are in data (s.blooms is
		// data, and the offsets are into it): not copied.
		lazyBlooms := 0
		if !lazy {
			s.blooms = make([]byte, 0, bloomsSize(&d, nbins))
		}
		for j := range nbins {
			local := d.uvarint(uint64(ndocs) - 1)
			size := d.uvarint(maxBloomBytes)
			if d.err != nil {
				break
			}
			if size == 0 || size%8 != 0 || j > 0 && uint32(local) <= s.bins[j-1].local {
				return nil, errors.New("index copy: bad bloom filter")
			}
			at := n - 4 - len(d.b) // where the filter is in data
			f := d.fixed(size)
			if total := len(s.blooms) + lazyBlooms + len(f); total > maxIndexBytes {
				return nil, errors.New("index copy: too large")
			}
			if lazy {
				s.bins = append(s.bins, binDoc{local: uint32(local), off: uint32(at), n: uint32(size)})
				lazyBlooms += len(f)
				continue
			}
			s.bins = append(s.bins, binDoc{local: uint32(local), off: uint32(len(s.blooms)), n: uint32(size)})
			s.blooms = append(s.blooms, f...)
		}
		if lazy {
			s.blooms = data[:n-4]
		}
		if d.err != nil {
			break
		}
		check := s.check
		if lazy {
			check = s.checkHeaders
		}
		if err := check(); err != nil {
			return nil, fmt.Errorf("index copy: %w", err)
		}
		ld.segs = append(ld.segs, s)
		size := s.size()
		if lazy {
			size += int64(lazyBlooms - cap(s.blooms)) // its filters, not all of data
		}
		ld.bytes += size
	}
	if d.err != nil {
		return nil, fmt.Errorf("index copy: %w", d.err)
	}
	if len(d.b) != 0 {
		return nil, errors.New("index copy: trailing bytes")
	}
	if ld.bytes > maxIndexBytes {
		return nil, errors.New("index copy: too large")
	}
	return ld, nil
}

// cleanRel reports whether rel is a clean relative slash path below the
// root: no empty, "." or ".." element, no leading '/', no NUL.
func cleanRel(rel string) bool {
	if rel == "" || strings.IndexByte(rel, 0) >= 0 {
		return false
	}
	for rest, more := rel, true; more; {
		var el string
		el, rest, more = strings.Cut(rest, "/")
		if el == "" || el == "." || el == ".." {
			return false
		}
	}
	return true
}

// bloomsSize returns the bytes of the nbins Bloom filters that d holds
// next (their sum, capped at maxIndexBytes: the caller checks each), d
// left as it was; so that they are copied once.
func bloomsSize(d *decoder, nbins int) int {
	c := *d
	total := uint64(0)
	for range nbins {
		c.uvarint(1<<32 - 1)
		size := c.uvarint(maxBloomBytes)
		c.fixed(size)
		if c.err != nil || total+size > maxIndexBytes {
			break
		}
		total += size
	}
	return int(total)
}

// check decodes the whole blob of a segment read back (its docs set):
// every trigram in order and below 1<<24, every posting list non-empty,
// its numbers in order and below the segment's file count (a bitmap's
// bits too), every length in bounds; and rebuilds the skip entries.
func (s *segment) check() error { return s.checkBlob(true) }

// checkHeaders is check without decoding the delta lists (their length is
// checked, and a bitmap's bits): each must pass checkList before use.
func (s *segment) checkHeaders() error { return s.checkBlob(false) }

// checkList reports whether the delta list p (of a segment of n files)
// holds numbers in order and below n; a bitmap was checked whole by
// checkHeaders.
func checkList(p posting, n int) bool {
	if p.bitmap {
		return true
	}
	post := p.b
	var doc uint64
	for j := 0; len(post) > 0; j++ {
		v, k := binary.Uvarint(post)
		if k <= 0 || (j > 0 && v == 0) {
			return false
		}
		post = post[k:]
		if doc += v; doc >= uint64(n) {
			return false
		}
	}
	return true
}

func (s *segment) checkBlob(lists bool) error {
	blob := s.blob
	var last uint32
	for i, off := 0, 0; off < len(blob); i++ {
		d, n := binary.Uvarint(blob[off:])
		if n <= 0 || d >= 1<<24 {
			return errors.New("bad trigram")
		}
		var base uint32
		if i%skipEvery != 0 {
			base = last
		}
		tri := base + uint32(d)
		if tri >= 1<<24 || (i > 0 && tri <= last) || (i%skipEvery != 0 && d == 0) {
			return errors.New("trigrams out of order")
		}
		if i%skipEvery == 0 {
			s.skip = append(s.skip, skipEntry{tri: tri, off: uint32(off)})
		}
		off += n
		l, n := binary.Uvarint(blob[off:])
		bitmap := l&1 != 0
		l >>= 1
		if n <= 0 || l == 0 || l > uint64(len(blob)-off-n) {
			return errors.New("bad posting list length")
		}
		off += n
		post := blob[off : off+int(l)]
		off += int(l)
		if bitmap {
			// no byte past the last one set, no bit past the files
			if post[l-1] == 0 || (l-1)*8+uint64(bits.Len8(post[l-1])) > uint64(len(s.docs)) {
				return errors.New("bad bitmap")
			}
			last = tri
			continue
		}
		if lists && !checkList(posting{b: post}, len(s.docs)) {
			return errors.New("bad posting list")
		}
		last = tri
	}
	return nil
}

// decoder reads a copy's integers and byte strings; the first error
// sticks and makes every later read return zero.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.b = nil
}

// uvarint reads a uvarint no larger than max.
func (d *decoder) uvarint(max uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > max {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes reads a length (at most max) and that many bytes.
func (d *decoder) bytes(max uint64) []byte {
	return d.fixed(d.uvarint(max))
}

// fixed reads l bytes.
func (d *decoder) fixed(l uint64) []byte {
	if d.err != nil {
		return nil
	}
	if l > uint64(len(d.b)) {
		d.fail("truncated")
		return nil
	}
	b := d.b[:l:l]
	d.b = d.b[l:]
	return b
}

// persistSeg is a segment and its files as they were when a copy was
// taken (the entries change under the cache's lock).
type persistSeg struct {
	s    *segment
	docs []persistDoc
}

type persistDoc struct {
	rel   string
	st    workspace.Stamp
	flags uint8
	dead  bool
}

// snapshotLocked takes what a copy of ri holds; racy files are written
// dead (their stat cannot vouch for their content next time).
func (ri *rootIndex) snapshotLocked() []persistSeg {
	segs := make([]persistSeg, len(ri.segs))
	for i, s := range ri.segs {
		ps := persistSeg{s: s, docs: make([]persistDoc, len(s.docs))}
		for j, e := range s.docs {
			dead := e.dead || e.seg != s || e.flags&fRacy != 0 || ri.files[e.rel] != e
			ps.docs[j] = persistDoc{rel: e.rel, st: e.st, flags: e.flags, dead: dead}
		}
		segs[i] = ps
	}
	return segs
}

// writeIndex writes a copy of root's index to w, a segment at a time (a
// large index is not copied whole into memory).
func writeIndex(w io.Writer, root string, max int64, segs []persistSeg) error {
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	b := append([]byte(persistMagic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[len(persistMagic):], persistVersion)
	putBytes := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	putBytes(root)
	b = binary.AppendUvarint(b, uint64(max))
	b = binary.AppendUvarint(b, uint64(len(segs)))
	for _, ps := range segs {
		b = binary.AppendUvarint(b, uint64(len(ps.docs)))
		for _, d := range ps.docs {
			if d.dead {
				b = binary.AppendUvarint(b, 1)
				continue
			}
			b = binary.AppendUvarint(b, uint64(d.flags)<<1)
			putBytes(d.rel)
			b = binary.AppendVarint(b, d.st.Size)
			b = binary.AppendVarint(b, d.st.Mtime)
			b = binary.AppendVarint(b, d.st.Ctime)
			b = binary.AppendUvarint(b, d.st.Ino)
			b = binary.AppendUvarint(b, d.st.Dev)
		}
		b = binary.AppendUvarint(b, uint64(len(ps.s.blob)))
		if _, err := bw.Write(b); err != nil {
			return err
		}
		if _, err := bw.Write(ps.s.blob); err != nil {
			return err
		}
		b = binary.AppendUvarint(b[:0], uint64(len(ps.s.bins)))
		for _, bd := range ps.s.bins {
			b = binary.AppendUvarint(b, uint64(bd.local))
			b = binary.AppendUvarint(b, uint64(bd.n))
			b = append(b, ps.s.blooms[bd.off:bd.off+bd.n]...)
		}
	}
	if _, err := bw.Write(b); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// encodeIndex returns a copy of root's index (writeIndex).
func encodeIndex(root string, max int64, segs []persistSeg) []byte {
	var buf bytes.Buffer
	writeIndex(&buf, root, max, segs) // a bytes.Buffer does not fail
	return buf.Bytes()
}

// encodeChecksum appends the checksum of b to b.
func encodeChecksum(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

// saveIndex writes root's copy into dir: a temporary file renamed over the
// old copy; then the oldest copies beyond maxPersistCopies are removed.
func saveIndex(dir, root string, max int64, segs []persistSeg) error {
	if err := checkPrivateDir(dir, true); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = writeIndex(f, root, max, segs)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, persistFile(dir, root))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("index copy: %w", err)
	}
	pruneCopies(dir)
	return nil
}

// pruneCopies removes the oldest copies in dir beyond maxPersistCopies,
// and temporary files over an hour old.
func pruneCopies(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type copyFile struct {
		name  string
		mtime int64
	}
	var cs []copyFile
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "tmp-") {
			// left by a write that did not finish (a crash)
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.Remove(filepath.Join(dir, e.Name()))
			}
			continue
		}
		if !strings.HasSuffix(e.Name(), persistExt) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			cs = append(cs, copyFile{e.Name(), fi.ModTime().UnixNano()})
		}
	}
	if len(cs) <= maxPersistCopies {
		return
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].mtime > cs[j].mtime })
	for _, c := range cs[maxPersistCopies:] {
		os.Remove(filepath.Join(dir, c.name))
	}
}

// reuse returns the entry of the walked file f from the copy when its
// stat is the one its trigrams were read under (and its size within the
// cap max); nil when it must be read. ld may be nil.
func (ld *loaded) reuse(f *workspace.File, max int64) *entry {
	if ld == nil {
		return nil
	}
	e := ld.files[f.Rel]
	if e == nil || e.flags&^fHidden != 0 || e.st.Size > max {
		return nil
	}
	st, ok := walkedStamp(f)
	if !ok || st != e.st {
		return nil
	}
	e.flags = 0
	if f.Name[0] == '.' {
		e.flags = fHidden
	}
	return e
}

// dropUnused marks dead the files of the copy that the build of ri did
// not reuse, and returns how many. ld may be nil.
func (ld *loaded) dropUnused(ri *rootIndex) int {
	if ld == nil {
		return 0
	}
	n := 0
	for rel, e := range ld.files {
		if !e.dead && ri.files[rel] != e {
			e.dead = true
			ri.dead++
			n++
		}
	}
	return n
}
