// Capturing the head and the tail of a stream, for a result that shows a
// long output cut in the middle.

package process

import (
	"bytes"
	"unicode/utf8"
)

// Capture keeps the head and the tail of a stream: the first and the last
// limit/2 bytes. It is not safe for concurrent use: a Start sink calls it
// from one goroutine per stream, so keep one Capture per stream.
type Capture struct {
	half  int
	head  []byte
	tail  []byte
	total int64
}

// NewCapture returns a Capture that keeps about limit bytes.
func NewCapture(limit int) *Capture { return &Capture{half: max(limit/2, 1)} }

// Write records a chunk of the stream.
func (c *Capture) Write(b []byte) {
	c.total += int64(len(b))
	if room := c.half - len(c.head); room > 0 {
		n := min(room, len(b))
		c.head = append(c.head, b[:n]...)
		b = b[n:]
	}
	if len(b) == 0 {
		return
	}
	c.tail = append(c.tail, b...)
	if len(c.tail) > 2*c.half {
		c.tail = append([]byte(nil), c.tail[len(c.tail)-c.half:]...)
	}
}

// Total is how many bytes the stream had.
func (c *Capture) Total() int64 { return c.total }

// Parts returns the stream: whole (cut false, in head), or, when it is
// longer than the limit, its head and tail cut at rune boundaries (cut
// true); the bytes from len(head) to Total()-len(tail) are left out.
func (c *Capture) Parts() (head, tail []byte, cut bool) {
	if c.total <= int64(2*c.half) {
		return append(append([]byte(nil), c.head...), c.tail...), nil, false
	}
	head = c.head
	for n := len(head); n > 0 && n > len(head)-utf8.UTFMax; n-- {
		if utf8.RuneStart(head[n-1]) {
			if !utf8.FullRune(head[n-1:]) {
				head = head[:n-1]
			}
			break
		}
	}
	tail = c.tail
	if len(tail) > c.half {
		tail = tail[len(tail)-c.half:]
	}
	for k := 0; k < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); k++ {
		tail = tail[1:]
	}
	return head, tail, true
}

// Binary reports whether the stream looks like binary data: a NUL byte,
// or bytes that are not UTF-8, in its head.
func (c *Capture) Binary() bool {
	head := c.head
	if len(head) > 8000 {
		head = head[:8000]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	// Allow a rune cut at the end.
	for k := 1; k < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); k++ {
		head = head[:len(head)-1]
	}
	return !utf8.Valid(head)
}
