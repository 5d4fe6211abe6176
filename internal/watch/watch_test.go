package watch

import "testing"

// TestSet: each registered function hears every change until its stop.
func TestSet(t *testing.T) {
	var s Set[int]
	var a, b []int
	stopA := s.Add(func(v int) { a = append(a, v) })
	s.Add(func(v int) { b = append(b, v) })
	s.Notify(1)
	stopA()
	stopA() // a second stop does nothing
	s.Notify(2)
	if len(a) != 1 || a[0] != 1 {
		t.Errorf("stopped watcher heard %v, want [1]", a)
	}
	if len(b) != 2 || b[0] != 1 || b[1] != 2 {
		t.Errorf("watcher heard %v, want [1 2]", b)
	}
}
