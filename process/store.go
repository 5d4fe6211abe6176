// The Store: a session's processes, their ids, the limit on background
// processes, and ending them all.

package process

import (
	"fmt"
	"maps"
	"slices"
	"sync"
)

// keptForeground is how many finished foreground processes a Store keeps.
const keptForeground = 32

// MaxBackground caps the background processes running at once in a Store.
const MaxBackground = 32

// Store holds the processes of one session by id: running ones, finished
// background ones and the last finished foreground ones, so that their
// output stays readable. Close ends them all. Its methods are safe for
// concurrent use; the zero Store is not ready, use NewStore.
type Store struct {
	mu       sync.Mutex
	procs    map[string]*Proc
	finished []string // ids of finished foreground processes, oldest first
	seq      int
	closed   bool
}

// NewStore returns an empty Store.
func NewStore() *Store { return &Store{procs: map[string]*Proc{}} }

// Start starts a process in its own process group and keeps it under a
// new id. sink, when set, sees every chunk of output as it arrives (from
// two goroutines, one a stream). It fails with ErrClosed after Close, with
// a *TooManyError when MaxBackground background processes run already,
// with a *SandboxError when sp.Box is set and bwrap cannot run, and with a
// *StartError when the program cannot be started; any other error is the
// machine's (pipes, temporary files).
func (st *Store) Start(sp Spec, sink func(s Stream, chunk []byte)) (*Proc, error) {
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return nil, ErrClosed
	}
	if sp.Background {
		running := 0
		for _, p := range st.procs {
			if p.background && !p.isEnded() {
				running++
			}
		}
		if running >= MaxBackground {
			st.mu.Unlock()
			return nil, &TooManyError{Running: running}
		}
	}
	st.seq++
	id := fmt.Sprintf("sh_%d", st.seq)
	st.mu.Unlock()

	p, err := start(id, sp, sink)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	closed := st.closed
	if !closed {
		st.procs[id] = p
	}
	st.mu.Unlock()
	if closed {
		// The Store was closed while this process started: Close did not
		// see it.
		p.Terminate()
		p.closeLogs(true)
		return nil, ErrClosed
	}
	return p, nil
}

// Get returns a process by id, or false when the Store holds none (never
// started, forgotten, or the Store was closed).
func (st *Store) Get(id string) (*Proc, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := st.procs[id]
	return p, ok
}

// IDs lists the ids of the processes the Store holds, sorted.
func (st *Store) IDs() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return slices.Sorted(maps.Keys(st.procs))
}

// Finish records that a foreground process's caller is done with it: the
// Store keeps the last finished ones readable and forgets (and deletes the
// output of) older ones.
func (st *Store) Finish(p *Proc) {
	st.mu.Lock()
	st.finished = append(st.finished, p.id)
	var old []*Proc
	for len(st.finished) > keptForeground {
		id := st.finished[0]
		st.finished = st.finished[1:]
		if q, ok := st.procs[id]; ok {
			old = append(old, q)
			delete(st.procs, id)
		}
	}
	st.mu.Unlock()
	for _, q := range old {
		q.closeLogs(true)
	}
}

// Close ends every process of the Store (their whole process groups) and
// deletes their output; it returns when they have ended. Later calls of
// Start fail with ErrClosed; Close again does nothing.
func (st *Store) Close() {
	st.mu.Lock()
	st.closed = true
	procs := make([]*Proc, 0, len(st.procs))
	for _, p := range st.procs {
		procs = append(procs, p)
	}
	st.procs = map[string]*Proc{}
	st.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Terminate()
			p.closeLogs(true)
		}()
	}
	wg.Wait()
}
