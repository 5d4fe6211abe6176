package workspace

import (
	"math/rand"
	"sort"
	"testing"
)

func TestOffsetAndPosition(t *testing.T) {
	t.Parallel()
	text := "é中😀x\r\nsecond\rthird\nlast"
	tests := []struct {
		pos  Position
		off  int
		back bool // PositionOf(off) gives pos back
	}{
		{Position{0, 0}, 0, true},
		{Position{0, 1}, 2, true},  // after é (2 bytes, 1 unit)
		{Position{0, 2}, 5, true},  // after 中 (3 bytes, 1 unit)
		{Position{0, 3}, 5, false}, // inside 😀's surrogate pair: stays before it
		{Position{0, 4}, 9, true},  // after 😀 (4 bytes, 2 units)
		{Position{0, 5}, 10, true}, // after x
		{Position{0, 99}, 10, false},
		{Position{1, 0}, 12, true}, // after \r\n
		{Position{2, 0}, 19, true}, // after a lone \r
		{Position{3, 4}, 29, true},
	}
	for _, tt := range tests {
		off, err := Offset(text, tt.pos)
		if err != nil || off != tt.off {
			t.Errorf("Offset(%v) = %d, %v; want %d", tt.pos, off, err, tt.off)
		}
		if tt.back {
			if p := PositionOf(text, tt.off); p != tt.pos {
				t.Errorf("PositionOf(%d) = %v, want %v", tt.off, p, tt.pos)
			}
			if p := NewLineIndex(text).Position(tt.off); p != tt.pos {
				t.Errorf("LineIndex.Position(%d) = %v, want %v", tt.off, p, tt.pos)
			}
		}
	}
	if _, err := Offset(text, Position{9, 0}); err == nil {
		t.Error("line past the end accepted")
	}
	if off, err := Offset("a\n", Position{1, 0}); err != nil || off != 2 {
		t.Errorf("position after the final newline: %d %v", off, err)
	}
}

func TestOverlayChanges(t *testing.T) {
	t.Parallel()
	o := NewOverlays()
	o.Open(Document{Path: "/w/a", Version: 1, Text: "hello wörld\n"})
	var seen []int32
	stop := o.Watch(func(d Document) { seen = append(seen, d.Version) })
	r := func(l1, c1, l2, c2 uint32) *Range { return &Range{Position{l1, c1}, Position{l2, c2}} }
	steps := []struct {
		changes []Change
		want    string
	}{
		{[]Change{{Range: r(0, 6, 0, 11), Text: "😀"}}, "hello 😀\n"},
		{[]Change{{Range: r(0, 0, 0, 0), Text: ">"}, {Range: r(0, 7, 0, 9), Text: "!"}}, ">hello !\n"},
		{[]Change{{Range: r(1, 0, 1, 0), Text: "tail"}}, ">hello !\ntail"},
		{[]Change{{Text: "full"}}, "full"},
	}
	for i, s := range steps {
		if err := o.Change("/w/a", int32(i+2), s.changes); err != nil {
			t.Fatal(err)
		}
		if d, _ := o.Get("/w/a"); d.Text != s.want || d.Version != int32(i+2) {
			t.Fatalf("step %d: %q v%d, want %q", i, d.Text, d.Version, s.want)
		}
	}
	stop()
	if len(seen) != 4 {
		t.Errorf("watch saw %v", seen)
	}
	if err := o.Change("/w/b", 2, nil); err == nil {
		t.Error("change to a closed document accepted")
	}
	if err := o.Change("/w/a", 9, []Change{{Range: r(5, 0, 5, 1), Text: "x"}}); err == nil {
		t.Error("out of range change accepted")
	}
	o.Close("/w/a")
	if _, ok := o.Get("/w/a"); ok {
		t.Error("closed document still open")
	}
}

// TestPositionWalker: the walker gives the positions LineIndex gives, for
// ascending offsets of texts with every kind of line break.
func TestPositionWalker(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	parts := []string{"a", "é", "😀", "\n", "\r\n", "\r", "xyz"}
	for i := 0; i < 2000; i++ {
		var text string
		for n := rng.Intn(40); n > 0; n-- {
			text += parts[rng.Intn(len(parts))]
		}
		offs := make([]int, rng.Intn(6))
		for j := range offs {
			offs[j] = rng.Intn(len(text) + 1)
		}
		sort.Ints(offs)
		idx, w := NewLineIndex(text), NewPositionWalker(text)
		for _, off := range offs {
			if got, want := w.Position(off), idx.Position(off); got != want {
				t.Fatalf("%q at %d (of %v): walker %+v, index %+v", text, off, offs, got, want)
			}
		}
	}
}
