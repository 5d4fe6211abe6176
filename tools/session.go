package tools

import "sync"

// Session is the per-connection state tools share across calls: a typed
// key/value store. It is safe for concurrent use.
type Session struct {
	mu     sync.Mutex
	values map[any]any
}

// NewSession returns an empty session.
func NewSession() *Session { return &Session{values: map[any]any{}} }

// Key names a value of type T in a Session. Make keys with NewKey, once, in
// a package variable.
type Key[T any] struct{ id *string }

// NewKey returns a new key; name is for debugging.
func NewKey[T any](name string) Key[T] { return Key[T]{id: &name} }

// Get returns the value stored under k.
func Get[T any](s *Session, k Key[T]) (T, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.values[k.id].(T)
	return v, ok
}

// Set stores v under k.
func Set[T any](s *Session, k Key[T], v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[k.id] = v
}

// Update replaces the value under k with f(old) atomically and returns it.
// f runs under the session's lock and must not call back into the session.
func Update[T any](s *Session, k Key[T], f func(old T, ok bool) T) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.values[k.id].(T)
	v := f(old, ok)
	s.values[k.id] = v
	return v
}
