// Foreground runs: a process run to the end under a time limit, its output
// streamed as progress and captured (head and tail, process.Capture) for
// the result.

package tools

import (
	"fmt"
	"github.com/agentls/agentls/workspace"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/process"
)

// captureText returns a captured stream, cut in the middle with a marker
// when it is longer than the cap, and whether it was cut. The marker says
// how to read what was cut: with shell_output, or, in a one-shot session
// that keeps nothing after its call, by running the command again.
func captureText(c *process.Capture, id, stream string, oneShot bool) (string, bool) {
	if c.Binary() {
		if oneShot {
			return fmt.Sprintf("[%d bytes of binary output, not shown; this one-shot call keeps nothing after it returns: "+
				"run the command again writing its output to a file]\n", c.Total()), true
		}
		return fmt.Sprintf("[%d bytes of binary output, not shown; read them with shell_output {\"id\":%q,\"stream\":%q,\"encoding\":\"base64\"}]\n",
			c.Total(), id, stream), true
	}
	head, tail, cut := c.Parts()
	if !cut {
		return string(head), false
	}
	from := int64(len(head))
	to := c.Total() - int64(len(tail))
	how := fmt.Sprintf("read them with shell_output {\"id\":%q,\"stream\":%q,\"since\":%d}", id, stream, from)
	if oneShot {
		how = "this one-shot call keeps nothing after it returns: run the command again narrowing its output (head, tail, grep) or writing it to a file"
	}
	marker := fmt.Sprintf("\n[… %d bytes cut (bytes %d to %d of %d); %s …]\n", to-from, from, to, c.Total(), how)
	return string(head) + marker + string(tail), true
}

// maxStreamedFactor caps the output sent as progress reports, in multiples
// of shell.maxOutputBytes.
const maxStreamedFactor = 4

// streamer sends output as progress reports, whole runes at a time, up to a
// cap.
type streamer struct {
	progress Progress
	left     atomic.Int64
	pending  [2][]byte // an incomplete rune at the end of the last chunk
	stopped  atomic.Bool
}

func (s *streamer) send(stream process.Stream, b []byte) {
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
func foreground(c *Call, sp process.Spec, timeout time.Duration, extra func(p *process.Proc) map[string]any) (*Result, error) {
	st, err := shellsOf(c.Session)
	if err != nil {
		return nil, err
	}
	maxOut := c.Workspace.Config().Shell.MaxOutputBytes
	if maxOut <= 0 {
		maxOut = workspace.DefaultOutputBytes
	}
	caps := [2]*process.Capture{process.NewCapture(maxOut), process.NewCapture(maxOut)}
	progress := c.Progress
	if progress == nil {
		progress = noProgress{}
	}
	str := &streamer{progress: progress}
	str.left.Store(int64(maxStreamedFactor * maxOut))
	start := time.Now()
	p, err := startShell(st, sp, func(stream process.Stream, chunk []byte) {
		caps[stream].Write(chunk)
		str.send(stream, chunk)
	})
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut, cancelled := false, false
	select {
	case <-p.Done():
	case <-timer.C:
		timedOut = true
		p.Terminate()
	case <-c.Ctx.Done():
		cancelled = true
		p.Terminate()
	}
	st.Finish(p)
	_, code, sig := p.Exit()
	oneShot := c.Session != nil && c.Session.oneShot
	stdout, cutOut := captureText(caps[0], p.ID(), "stdout", oneShot)
	stderr, cutErr := captureText(caps[1], p.ID(), "stderr", oneShot)
	s := map[string]any{
		"exit_code": code, "stdout": stdout, "stderr": stderr, "truncated": cutOut || cutErr,
		"timed_out": timedOut, "duration_ms": time.Since(start).Milliseconds(), "id": p.ID(), "pid": p.Pid(),
		"stdout_bytes": caps[0].Total(), "stderr_bytes": caps[1].Total(),
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
		res := Success(content+"[exit code 0]", s)
		res.Display = commandDisplay(sp.Command, content, "exit code 0")
		return res, nil
	}
	res := failure(e)
	res.Content = content + "[" + e.Message + "]"
	res.Display = commandDisplay(sp.Command, content, e.Message)
	return res, nil
}

// displayLines is how many of the output's last lines a command's display
// shows.
const displayLines = 20

// commandDisplay is what a person sees of a command's run (the result's
// display): the command, the last lines of its output and how it ended.
func commandDisplay(command, output, end string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(output, "\n"), "\n")
	var b strings.Builder
	b.WriteString("$ " + command + "\n")
	if len(lines) > displayLines {
		fmt.Fprintf(&b, "… (%d lines before)\n", len(lines)-displayLines)
		lines = lines[len(lines)-displayLines:]
	}
	if out := strings.Join(lines, ""); out != "" {
		b.WriteString(strings.TrimSuffix(out, "\n") + "\n")
	}
	b.WriteString("[" + end + "]")
	return b.String()
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
