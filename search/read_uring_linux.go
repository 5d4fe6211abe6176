package search

import (
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A batch of files read through io_uring: a search that reads thousands
// of files (an output-heavy one reads a fifth of the tree) spends much of
// its time entering and leaving the kernel, four system calls a file
// (openat2, fstat, read, close). batchReader opens a batch of files with
// one io_uring_enter, fstats each (a system call: the type check comes
// before any read, as readBeneathRoot's does), then reads and closes them
// all with a second io_uring_enter: about one system call a file. The
// opens are readBeneathRoot's (openat2 with RESOLVE_BENEATH,
// RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS, O_NOFOLLOW, O_NONBLOCK
// beneath the same root); a file the batch does not read whole, for any
// reason (an error, not regular, too large, grown or shrunk, not in the
// page cache: O_NONBLOCK makes such a read give up), is left to
// readBeneathRoot, which reads it, or fails, as without a batch. Where
// io_uring is missing or refused (an old kernel, a seccomp filter), there
// is no batchReader and every file is read by readBeneathRoot.

// ringEntries are a ring's submission entries: a read and a close for
// each file of a batch (batchFiles: indexed.go).
const ringEntries = 2 * batchFiles

// maxArena bounds the memory that holds a batch's files (kept with its
// ring between searches); a file that does not fit is read alone.
const maxArena = 2 << 20

// The io_uring ABI (include/uapi/linux/io_uring.h).
const (
	opOpenat2 = 28
	opRead    = 22
	opClose   = 19

	sqeIOHardlink = 1 << 3

	enterGetEvents = 1 << 0

	offSQRing = 0
	offSQEs   = 0x10000000

	featSingleMmap    = 1 << 0
	featNativeWorkers = 1 << 9 // Linux 5.12: OPENAT2 (5.6) is there
)

// uringParams is struct io_uring_params, its offsets the ring's fields
// in the mapping.
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU uint32
	sqThreadIdle, features, wqFd             uint32
	resv                                     [3]uint32
	sqOff                                    ringOffsets
	cqOff                                    ringOffsets
}

// ringOffsets are struct io_sqring_offsets (head, tail, ring_mask,
// ring_entries, flags, dropped, array) and struct io_cqring_offsets
// (head, tail, ring_mask, ring_entries, overflow, cqes, flags), which have
// the same layout.
type ringOffsets struct {
	head, tail, ringMask, ringEntries uint32
	a, b, c, resv1                    uint32 // sq: flags, dropped, array; cq: overflow, cqes, flags
	userAddr                          uint64
}

type uringSQE struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off           uint64 // addr2 for openat2: the open_how
	addr          uint64
	len           uint32
	opFlags       uint32
	userData      uint64
	bufIndex      uint16
	personality   uint16
	fileIndex     int32
	addr3, pad2   uint64
}

type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

// ring is one io_uring instance, used by one goroutine at a time.
type ring struct {
	fd             int
	mem, sqeMem    []byte
	sqHead, sqTail *uint32
	sqMask         uint32
	sqArray        []uint32
	sqes           []uringSQE
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []uringCQE
	queued         uint32 // SQEs filled, not yet published to the kernel
	// paths and arena are the buffers of batchReader.read.
	paths, arena []byte
}

// rings keeps the rings of past searches (their setup is a few system
// calls and mappings); off is set once io_uring turned out to be missing.
var rings struct {
	mu   sync.Mutex
	free []*ring
	off  atomic.Bool
}

// maxFreeRings is the most rings kept between searches.
const maxFreeRings = 8

// takeRing returns a ring, nil when io_uring cannot be used.
func takeRing() *ring {
	if rings.off.Load() {
		return nil
	}
	rings.mu.Lock()
	if n := len(rings.free); n > 0 {
		r := rings.free[n-1]
		rings.free = rings.free[:n-1]
		rings.mu.Unlock()
		return r
	}
	rings.mu.Unlock()
	r, err := newRing()
	if err != nil {
		rings.off.Store(true)
		return nil
	}
	return r
}

// putRing keeps r for another search.
func putRing(r *ring) {
	rings.mu.Lock()
	defer rings.mu.Unlock()
	if len(rings.free) < maxFreeRings {
		rings.free = append(rings.free, r)
		return
	}
	r.close()
}

func newRing() (*ring, error) {
	var p uringParams
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, ringEntries, uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, errno
	}
	r := &ring{fd: int(fd)}
	if p.features&(featSingleMmap|featNativeWorkers) != featSingleMmap|featNativeWorkers || p.sqEntries < ringEntries {
		r.close()
		return nil, unix.ENOSYS
	}
	size := max(p.sqOff.c+4*p.sqEntries, p.cqOff.b+uint32(unsafe.Sizeof(uringCQE{}))*p.cqEntries)
	var err error
	if r.mem, err = unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, err
	}
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(uringSQE{})), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, err
	}
	base := unsafe.Pointer(&r.mem[0])
	r.sqHead = (*uint32)(unsafe.Add(base, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(base, p.sqOff.tail))
	r.sqMask = *(*uint32)(unsafe.Add(base, p.sqOff.ringMask))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Add(base, p.sqOff.c)), p.sqEntries)
	r.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Add(base, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(base, p.cqOff.tail))
	r.cqMask = *(*uint32)(unsafe.Add(base, p.cqOff.ringMask))
	r.cqes = unsafe.Slice((*uringCQE)(unsafe.Add(base, p.cqOff.b)), p.cqEntries)
	return r, nil
}

func (r *ring) close() {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.mem != nil {
		unix.Munmap(r.mem)
	}
	unix.Close(r.fd)
}

// sqe returns the next submission entry, zeroed; at most ringEntries
// between two calls of run.
func (r *ring) sqe() *uringSQE {
	i := (atomic.LoadUint32(r.sqTail) + r.queued) & r.sqMask
	r.sqArray[i] = i
	r.queued++
	s := &r.sqes[i]
	*s = uringSQE{}
	return s
}

// run submits the queued entries and calls f with each of their
// completions (as many as there were entries); false when the ring
// failed, then it must not be used again (some completions may be lost).
func (r *ring) run(f func(c uringCQE)) bool {
	want := r.queued
	atomic.StoreUint32(r.sqTail, atomic.LoadUint32(r.sqTail)+r.queued)
	r.queued = 0
	for want > 0 {
		head := atomic.LoadUint32(r.cqHead)
		tail := atomic.LoadUint32(r.cqTail)
		for ; head != tail && want > 0; head++ {
			f(r.cqes[head&r.cqMask])
			want--
		}
		atomic.StoreUint32(r.cqHead, head)
		if want == 0 {
			break
		}
		// The entries the kernel has not taken yet, and a wait for the
		// completions still to come.
		pending := atomic.LoadUint32(r.sqTail) - atomic.LoadUint32(r.sqHead)
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(pending), uintptr(want), enterGetEvents, 0, 0)
		switch errno {
		case 0, unix.EINTR, unix.EAGAIN, unix.EBUSY:
		default:
			return false
		}
	}
	return true
}

// batchReader reads batches of files beneath a root through a ring.
type batchReader struct {
	r    *ring
	how  unix.OpenHow
	fds  [batchFiles]int32
	size [batchFiles]int64
	off  [batchFiles]int
	n    [batchFiles]int32
	out  [batchFiles][]byte
}

// newBatchReader returns a batchReader, nil where io_uring cannot be used.
func newBatchReader() *batchReader {
	r := takeRing()
	if r == nil {
		return nil
	}
	return &batchReader{r: r, how: unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}}
}

// release gives the ring back.
func (b *batchReader) release() {
	if b != nil && b.r != nil {
		putRing(b.r)
		b.r = nil
	}
}

// read reads the files rels (at most batchFiles, relative to root) and
// returns their contents, valid until the next call: nil for a file it did
// not read (the caller reads it with readBeneathRoot). A file over max
// bytes (max > 0) is not read.
func (b *batchReader) read(root *os.File, rels []string, max int64) [][]byte {
	out := b.out[:len(rels)]
	clear(out)
	if b.r == nil {
		return out
	}
	// The paths first, all of them (NUL-terminated): the buffer does not
	// move once the kernel has pointers into it.
	paths := b.r.paths[:0]
	for i, rel := range rels {
		b.off[i] = -1
		if rel == "" || strings.IndexByte(rel, 0) >= 0 {
			continue
		}
		b.off[i] = len(paths)
		paths = append(append(paths, rel...), 0)
	}
	b.r.paths = paths
	dir := int32(root.Fd())
	opens := 0
	for i := range rels {
		b.fds[i] = -1
		if b.off[i] < 0 {
			continue
		}
		s := b.r.sqe()
		s.opcode = opOpenat2
		s.fd = dir
		s.addr = uint64(uintptr(unsafe.Pointer(&paths[b.off[i]])))
		s.off = uint64(uintptr(unsafe.Pointer(&b.how)))
		s.len = uint32(unsafe.Sizeof(b.how))
		s.userData = uint64(i)
		opens++
	}
	if opens == 0 {
		return out
	}
	ok := b.r.run(func(c uringCQE) {
		if c.res >= 0 {
			b.fds[c.userData] = c.res
		}
	})
	runtime.KeepAlive(root)
	if !ok {
		for _, fd := range b.fds[:len(rels)] {
			if fd >= 0 {
				unix.Close(int(fd))
			}
		}
		b.fail()
		return out
	}
	// The type and size of each, then the reads and closes. The type is
	// checked before any read, never left to the read: an io_uring read
	// of a FIFO takes its data, and one of a terminal waits for input
	// whatever O_NONBLOCK says (io_uring polls it). Nor is it io_uring's
	// STATX: that runs on the kernel's worker threads, and a batch took
	// 1.8 times as long with it as with these fstats.
	need := 0
	for i := range rels {
		b.size[i] = -1
		fd := b.fds[i]
		if fd < 0 {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(fd), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || max > 0 && st.Size > max || st.Size >= maxArena {
			continue
		}
		b.size[i] = st.Size
		need += int(st.Size) + 1
	}
	if need > cap(b.r.arena) && cap(b.r.arena) < maxArena {
		b.r.arena = make([]byte, min(need+need/4, maxArena))
	}
	arena := b.r.arena[:cap(b.r.arena)]
	used := 0
	for i := range rels {
		fd := b.fds[i]
		if fd < 0 {
			continue
		}
		if size := int(b.size[i]); size >= 0 && used+size+1 <= len(arena) {
			b.off[i], b.n[i] = used, -1
			used += size + 1
			s := b.r.sqe()
			s.opcode = opRead
			s.flags = sqeIOHardlink // the close comes after the read, however it ends
			s.fd = fd
			s.addr = uint64(uintptr(unsafe.Pointer(&arena[b.off[i]])))
			s.len = uint32(size + 1)
			s.userData = uint64(i)
		} else {
			b.size[i] = -1
		}
		s := b.r.sqe()
		s.opcode = opClose
		s.fd = fd
		s.userData = 1<<32 | uint64(i)
	}
	ok = b.r.run(func(c uringCQE) {
		if c.userData < 1<<32 {
			b.n[c.userData] = c.res
		}
	})
	if !ok {
		// Which closes were done is not known: closing again might close
		// another file that took the number since; the fds are left.
		b.fail()
		return out
	}
	for i := range rels {
		// Read whole: as many bytes as the stat said, then the end.
		if b.fds[i] >= 0 && b.size[i] >= 0 && int64(b.n[i]) == b.size[i] {
			out[i] = arena[b.off[i] : b.off[i]+int(b.n[i]) : b.off[i]+int(b.n[i])]
		}
	}
	return out
}

// failedRings keeps what a failed ring may still be using: the kernel can
// go on reading a batch's paths and open_how and writing into its arena
// after io_uring_enter failed, so none of it is freed, unmapped or reused
// (at most a ring per worker, once: no search uses io_uring again).
var failedRings struct {
	mu   sync.Mutex
	kept []any // the batchReader (its open_how) and its ring (paths, arena)
}

// fail drops a ring that failed (io_uring_enter refused to run it): the
// files of the batch and of those after it are read one by one, and no
// search uses io_uring again. The ring and its buffers are kept, never
// closed (failedRings).
func (b *batchReader) fail() {
	rings.off.Store(true)
	failedRings.mu.Lock()
	failedRings.kept = append(failedRings.kept, b, b.r)
	failedRings.mu.Unlock()
	b.r = nil
}
