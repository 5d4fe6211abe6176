// Package watch keeps the functions registered to hear of changes: the
// workspace's events and buffers, an attached session's tool list.
package watch

import (
	"maps"
	"slices"
	"sync"
)

// Set holds the functions registered to hear of changes of type T. The
// zero value has none; it is safe for concurrent use.
type Set[T any] struct {
	mu      sync.Mutex
	nextID  int
	watches map[int]func(T)
}

// Add registers f until stop is called.
func (s *Set[T]) Add(f func(T)) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watches == nil {
		s.watches = map[int]func(T){}
	}
	id := s.nextID
	s.nextID++
	s.watches[id] = f
	return func() {
		s.mu.Lock()
		delete(s.watches, id)
		s.mu.Unlock()
	}
}

// Notify calls every registered function with v, outside the lock, on the
// caller's goroutine.
func (s *Set[T]) Notify(v T) {
	s.mu.Lock()
	fs := slices.Collect(maps.Values(s.watches))
	s.mu.Unlock()
	for _, f := range fs {
		f(v)
	}
}
