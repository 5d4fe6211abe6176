package attach

import "sync"

// table is a map safe for concurrent use whose entries live as long as
// something waits on them: the calls waiting for their answers, by id
// (rpc), and the progress of calls, by token (Client). The zero value is
// empty and ready.
type table[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

// put sets k to v until the returned remove is called.
func (t *table[K, V]) put(k K, v V) (remove func()) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[K]V{}
	}
	t.m[k] = v
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.m, k)
		t.mu.Unlock()
	}
}

// get is the value at k, or the zero value.
func (t *table[K, V]) get(k K) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[k]
}
