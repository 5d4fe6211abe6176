package process

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCapture: a stream within the limit is kept whole; a longer one keeps
// its head and tail, cut at rune boundaries, with the cut bytes accounted
// for; binary data is recognised.
func TestCapture(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		limit      int
		chunks     []string
		head, tail string
		cut        bool
		binary     bool
	}{
		{name: "empty", limit: 10, head: ""},
		{name: "short", limit: 10, chunks: []string{"abc", "de"}, head: "abcde"},
		{name: "exactly the limit", limit: 10, chunks: []string{"01234", "56789"}, head: "0123456789"},
		{name: "long", limit: 10, chunks: []string{"0123456789", "abcdefghij", "KLMNO"}, head: "01234", tail: "KLMNO", cut: true},
		{name: "many small chunks", limit: 4, chunks: strings.Split("abcdefghijklmnop", ""), head: "ab", tail: "op", cut: true},
		// "é" is two bytes: a head of 3 bytes would end inside the second.
		{name: "rune at the head's end", limit: 6, chunks: []string{"aéé" + strings.Repeat("x", 10)}, head: "aé", tail: "xxx", cut: true},
		// The tail's first bytes are the end of a rune: they go.
		{name: "rune at the tail's start", limit: 6, chunks: []string{strings.Repeat("x", 10) + "€yy"}, head: "xxx", tail: "yy", cut: true},
		{name: "nul", limit: 10, chunks: []string{"a\x00b"}, head: "a\x00b", binary: true},
		{name: "not utf-8", limit: 10, chunks: []string{"\xffabcd"}, head: "\xffabcd", binary: true},
		// Invalid bytes in the last three could be a rune cut by the
		// limit: they do not make the stream binary.
		{name: "invalid at the end", limit: 10, chunks: []string{"abc\xff"}, head: "abc\xff"},
		{name: "rune cut at the head's end is text", limit: 4, chunks: []string{"ab€", "cdefgh"}, head: "ab", tail: "gh", cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCapture(tt.limit)
			total := 0
			for _, ch := range tt.chunks {
				c.Write([]byte(ch))
				total += len(ch)
			}
			head, tail, cut := c.Parts()
			if string(head) != tt.head || string(tail) != tt.tail || cut != tt.cut {
				t.Errorf("Parts = %q, %q, %v; want %q, %q, %v", head, tail, cut, tt.head, tt.tail, tt.cut)
			}
			if c.Total() != int64(total) {
				t.Errorf("Total = %d, want %d", c.Total(), total)
			}
			if cut && (!utf8.Valid(head) || !utf8.Valid(tail)) && !tt.binary {
				t.Errorf("a rune was cut: %q %q", head, tail)
			}
			if got := c.Binary(); got != tt.binary {
				t.Errorf("Binary = %v, want %v", got, tt.binary)
			}
		})
	}
}
