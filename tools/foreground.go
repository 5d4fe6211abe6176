// Foreground runs: a process run to the end under a time limit, its output
// streamed as progress and captured (head and tail) for the result.

package tools

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// capture keeps the head and the tail of a stream for the result.
type capture struct {
	half  int
	head  []byte
	tail  []byte
	total int64
}

func newCapture(limit int) *capture { return &capture{half: max(limit/2, 1)} }

func (c *capture) write(b []byte) {
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

// text returns the stream, cut in the middle with a marker when it is
// longer than the cap, and whether it was cut.
func (c *capture) text(id, stream string) (string, bool) {
	if c.binary() {
		return fmt.Sprintf("[%d bytes of binary output, not shown; read them with shell_output {\"id\":%q,\"stream\":%q,\"encoding\":\"base64\"}]\n",
			c.total, id, stream), true
	}
	if c.total <= int64(2*c.half) {
		return string(c.head) + string(c.tail), false
	}
	head := c.head
	for n := len(head); n > 0 && n > len(head)-utf8.UTFMax; n-- {
		if utf8.RuneStart(head[n-1]) {
			if !utf8.FullRune(head[n-1:]) {
				head = head[:n-1]
			}
			break
		}
	}
	tail := c.tail
	if len(tail) > c.half {
		tail = tail[len(tail)-c.half:]
	}
	for k := 0; k < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); k++ {
		tail = tail[1:]
	}
	from := int64(len(head))
	to := c.total - int64(len(tail))
	marker := fmt.Sprintf("\n[… %d bytes cut (bytes %d to %d of %d); read them with shell_output {\"id\":%q,\"stream\":%q,\"since\":%d} …]\n",
		to-from, from, to, c.total, id, stream, from)
	return string(head) + marker + string(tail), true
}

// binary reports whether the stream looks like binary data: a NUL byte,
// or bytes that are not UTF-8, in its head.
func (c *capture) binary() bool {
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

// streamer sends output as progress reports, whole runes at a time, up to a
// cap.
type streamer struct {
	progress Progress
	left     atomic.Int64
	pending  [2][]byte // an incomplete rune at the end of the last chunk
	stopped  atomic.Bool
}

func (s *streamer) send(stream int, b []byte) {
	if s.stopped.Load() {
		return
	}
	b = append(s.pending[stream], b...)
	s.pending[stream] = nil
	cut := len(b)
	for k := 1; k <= utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				cut = len(b) - k
			}
			break
		}
	}
	s.pending[stream] = append([]byte(nil), b[cut:]...)
	b = b[:cut]
	if len(b) == 0 {
		return
	}
	if s.left.Add(-int64(len(b))) < 0 {
		s.stopped.Store(true)
		s.progress.Report("[… output continues; no more progress reports for this call]\n", -1)
		return
	}
	s.progress.Report(string(b), -1)
}

// foreground runs a process to the end under a time limit, streaming its
// output, and builds the result shared by shell_exec and run_code. extra,
// when set, adds fields to the structured result once the process ended.
func foreground(c *Call, sp startSpec, timeout time.Duration, extra func(p *proc) map[string]any) (*Result, error) {
	st, err := shellsOf(c.Session)
	if err != nil {
		return nil, err
	}
	maxOut := c.Workspace.Config().Shell.MaxOutputBytes
	if maxOut <= 0 {
		maxOut = 256 << 10
	}
	caps := [2]*capture{newCapture(maxOut), newCapture(maxOut)}
	progress := c.Progress
	if progress == nil {
		progress = noProgress{}
	}
	str := &streamer{progress: progress}
	str.left.Store(int64(maxStreamedFactor * maxOut))
	start := time.Now()
	p, err := st.start(sp, func(stream int, chunk []byte) {
		caps[stream].write(chunk)
		str.send(stream, chunk)
	})
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut, cancelled := false, false
	select {
	case <-p.done:
	case <-timer.C:
		timedOut = true
		p.terminate()
	case <-c.Ctx.Done():
		cancelled = true
		p.terminate()
	}
	st.finish(p)
	p.mu.Lock()
	code, sig := p.exitCode, p.signal
	p.mu.Unlock()
	stdout, cutOut := caps[0].text(p.id, "stdout")
	stderr, cutErr := caps[1].text(p.id, "stderr")
	s := map[string]any{
		"exit_code": code, "stdout": stdout, "stderr": stderr, "truncated": cutOut || cutErr,
		"timed_out": timedOut, "duration_ms": time.Since(start).Milliseconds(), "id": p.id, "pid": p.pid,
		"stdout_bytes": caps[0].total, "stderr_bytes": caps[1].total,
	}
	if sig != "" {
		s["signal"] = sig
	}
	if cancelled {
		s["cancelled"] = true
	}
	if extra != nil {
		for k, v := range extra(p) {
			s[k] = v
		}
	}
	content := shellContent(stdout, stderr)
	var e *Error
	switch {
	case cancelled:
		e = &Error{Code: Cancelled, Message: "the call was cancelled; the command was ended", Structured: s}
	case timedOut:
		e = &Error{Code: Timeout, Message: fmt.Sprintf("the command did not finish within %s and was ended; output so far is kept", timeout),
			Recoverable: true, Structured: s}
	case code != 0:
		msg := fmt.Sprintf("the command exited with code %d", code)
		if sig != "" {
			msg = fmt.Sprintf("the command was killed by %s (exit code %d)", sig, code)
		}
		e = &Error{Code: ExecutionError, Message: msg, Recoverable: true, Structured: s}
	}
	if e == nil {
		if content == "" {
			content = "(no output)\n"
		}
		return Success(content+"[exit code 0]", s), nil
	}
	res := failure(e)
	res.Content = content + "[" + e.Message + "]"
	return res, nil
}

// shellContent is the text the model reads: stdout, then stderr under a
// header.
func shellContent(stdout, stderr string) string {
	var b strings.Builder
	b.WriteString(stdout)
	if stdout != "" && !strings.HasSuffix(stdout, "\n") {
		b.WriteByte('\n')
	}
	if stderr != "" {
		b.WriteString("[stderr]\n")
		b.WriteString(stderr)
		if !strings.HasSuffix(stderr, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
