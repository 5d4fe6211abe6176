package hugepages

import (
	"bytes"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

const (
	madvHugepage   = 14 // MADV_HUGEPAGE
	madvNohugepage = 15 // MADV_NOHUGEPAGE
)

// every is how often the marker looks for mappings the heap added (a new
// arena is mapped when the heap outgrows the ones it has).
const every = 5 * time.Millisecond

// reserve is how much room the heap is made to map before the build
// writes to it, when it has less (an allocation dropped at once, never
// written): a build's first allocations then find mappings already
// marked.
const reserve = 48 << 20

// setting is the system's setting of transparent huge pages, the one in
// force in brackets ("always [madvise] never"); empty when unknown.
var setting = sync.OnceValue(func() string {
	data, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return string(data)
})

// supported reports whether transparent huge pages are in "madvise" mode
// (in "always" mode the heap has them without Build).
func supported() bool { return strings.Contains(setting(), "[madvise]") }

var sink []byte

// start marks the heap's mappings, having made it map room for reserve
// bytes; mark goes on from there.
func start() map[span]bool {
	marked := map[span]bool{}
	markNew(marked)
	if unused() < reserve {
		sink = make([]byte, reserve) // mapped, not written
		sink = nil
		markNew(marked)
	}
	return marked
}

// Metrics of the heap's memory: what the runtime mapped, and what of it
// is free (written before, or handed back to the system).
var metricNames = []string{"/memory/classes/total:bytes", "/memory/classes/heap/free:bytes", "/memory/classes/heap/released:bytes"}

func readMetrics() []metrics.Sample {
	s := make([]metrics.Sample, len(metricNames))
	for i, n := range metricNames {
		s[i].Name = n
	}
	metrics.Read(s)
	return s
}

func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}

// unused is the heap's free memory, mapped.
func unused() uint64 {
	s := readMetrics()
	return value(s[1]) + value(s[2])
}

// mapped is the memory the runtime mapped.
func mapped() uint64 { return value(readMetrics()[0]) }

// markNew marks the heap's mappings not marked yet.
func markNew(marked map[span]bool) {
	for _, s := range heapMappings() {
		if !marked[s] && advise(s, madvHugepage) {
			marked[s] = true
		}
	}
}

// mark marks the mappings the heap adds until stop is closed, then
// unmarks every one and closes done.
func mark(marked map[span]bool, stop, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	last := mapped()
	for running := true; running; {
		select {
		case <-tick.C:
			// the mappings are read again only when the runtime
			// mapped more
			if m := mapped(); m != last {
				last = m
				markNew(marked)
			}
		case <-stop:
			running = false
		}
	}
	// The mappings as they are now (marked ones may have merged or
	// split): every writable one of the heap's.
	for _, s := range heapMappings() {
		advise(s, madvNohugepage)
	}
}

// span is a mapping's address range.
type span struct{ lo, hi uintptr }

// advise calls madvise on s. The range is passed as numbers, as the
// kernel takes it: it is memory the runtime mapped, not a Go object, so
// it is never made a Go pointer (which the checkptr instrumentation of
// -race and -d=checkptr rightly refuses).
func advise(s span, advice int) bool {
	_, _, errno := syscall.Syscall(syscall.SYS_MADVISE, s.lo, s.hi-s.lo, uintptr(advice))
	return errno == 0
}

// heapMappings returns the writable anonymous mappings of the Go heap's
// address space: the run of adjacent anonymous mappings (writable, or
// reserved and not yet mapped) around a heap object.
func heapMappings() []span {
	probe := new([64]byte)
	at := uintptr(unsafe.Pointer(probe))
	runtime.KeepAlive(probe)
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil
	}
	type mapping struct {
		span
		writable, anon bool
	}
	var ms []mapping
	for line := range bytes.Lines(data) {
		f := bytes.Fields(line)
		if len(f) < 5 {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		l, err1 := strconv.ParseUint(string(lo), 16, 64)
		h, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		// anonymous: inode 0, no name but the runtime's own
		anon := string(f[4]) == "0" && (len(f) == 5 || bytes.HasPrefix(f[5], []byte("[anon:")))
		ms = append(ms, mapping{span{uintptr(l), uintptr(h)}, string(f[1]) == "rw-p", anon})
	}
	k := -1
	for i, m := range ms {
		if m.lo <= at && at < m.hi {
			k = i
		}
	}
	if k < 0 || !ms[k].anon {
		return nil
	}
	a, b := k, k
	for a > 0 && ms[a-1].anon && ms[a-1].hi == ms[a].lo {
		a--
	}
	for b+1 < len(ms) && ms[b+1].anon && ms[b+1].lo == ms[b].hi {
		b++
	}
	var out []span
	for _, m := range ms[a : b+1] {
		if m.writable {
			out = append(out, m.span)
		}
	}
	return out
}
