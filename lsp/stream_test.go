package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// TestAppendMessage: the stream's own encoding of a message is
// json.Marshal's, byte for byte, and it leaves to json.Marshal what it is
// not sure of.
func TestAppendMessage(t *testing.T) {
	t.Parallel()
	values := []any{
		nil, 0, 3.25, "plain", "<html> & \u2028\u2029 \"quoted\" \\ \t\n", "\xff\xfe not UTF-8",
		map[string]any{"b": []any{1, "x", nil, true}, "a": map[string]string{"k": "<&>"}},
		json.RawMessage(` { "spaced" : [ 1 , 2 ] , "html": "<b>" } `),
		struct {
			Name string `json:"name"`
			N    int    `json:"n,omitempty"`
		}{"get_current_directory", 0},
	}
	must := func(m jsonrpc2.Message, err error) jsonrpc2.Message {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var msgs []jsonrpc2.Message
	for i, v := range values {
		msgs = append(msgs,
			must(jsonrpc2.NewResponse(jsonrpc2.NewNumberID(int32(i)), v, nil)),
			must(jsonrpc2.NewResponse(jsonrpc2.NewStringID(fmt.Sprint("id<", i)), v, nil)),
			must(jsonrpc2.NewNotification("tool/event", v)),
			must(jsonrpc2.NewCall(jsonrpc2.NewNumberID(-7), "approval/request", v)),
			must(jsonrpc2.NewCall(jsonrpc2.NewStringID(""), "a<b", v)))
	}
	msgs = append(msgs,
		must(jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "bad <params>"))),
		must(jsonrpc2.NewResponse(jsonrpc2.NewNumberID(2), nil, errors.New("plain error"))),
		must(jsonrpc2.NewNotification("m\u00e9thode", 1)))
	fast := 0
	for _, m := range msgs {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendMessage(nil, m)
		if !ok {
			continue
		}
		fast++
		if !bytes.Equal(got, want) {
			t.Errorf("%T:\n got %s\nwant %s", m, got, want)
		}
	}
	if fast < len(values)*4 {
		t.Errorf("only %d of %d messages were encoded by appendMessage", fast, len(msgs))
	}
}

// TestStreamWrite: every message is one frame written at once, whichever
// way its body was encoded, and the buffers kept do not leak into the next.
func TestStreamWrite(t *testing.T) {
	t.Parallel()
	var out writes
	s, log := writeStream(&out)
	big, _ := jsonrpc2.NewNotification("big", string(bytes.Repeat([]byte("x"), 2*keepBuffer)))
	small, _ := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(3), "ok", nil)
	failed, _ := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(4), nil, jsonrpc2.NewError(jsonrpc2.InternalError, "boom"))
	sent := []jsonrpc2.Message{small, big, failed, small}
	for _, m := range sent {
		if _, err := s.Write(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	if len(out) != len(sent) {
		t.Fatalf("%d writes for %d messages", len(out), len(sent))
	}
	for i, w := range out {
		got := readAll(t, newStream(&pipeRWC{Reader: bytes.NewReader(w)}, log))
		want, _ := json.Marshal(sent[i])
		if len(got) != 1 {
			t.Fatalf("write %d holds %d messages: %.80q", i, len(got), w)
		}
		if b, _ := json.Marshal(got[0]); !bytes.Equal(b, want) {
			t.Errorf("write %d: read back %s, want %s", i, b, want)
		}
	}
}

// writeStream is a stream that writes into out and reads nothing, and the
// logger it logs to.
func writeStream(out *writes) (*stream, *slog.Logger) {
	log := slog.New(slog.DiscardHandler)
	return newStream(struct {
		io.Reader
		io.WriteCloser
	}{bytes.NewReader(nil), out}, log), log
}

// writes records each Write as a copy.
type writes [][]byte

func (w *writes) Write(p []byte) (int, error) {
	*w = append(*w, bytes.Clone(p))
	return len(p), nil
}

func (w *writes) Close() error { return nil }

// FuzzDecodeRequest: a message decodeRequest decodes is the message
// jsonrpc2.DecodeMessage makes of it, and decode answers as before.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":12,"method":"tool/call","params":{"name":"get_current_directory","arguments":{}}}`,
		` { "method" : "tool/event" , "params" : [1, "<&>", {"a" : null}] , "jsonrpc" : "2.0" } `,
		`{"jsonrpc":"2.0","id":"abc","method":"initialize"}`,
		`{"jsonrpc":"2.0","id":"","method":"x","params":{}}`,
		`{"jsonrpc":"2.0","id":-2147483648,"method":"x","params":3}`,
		`{"jsonrpc":"2.0","id":2147483648,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"x"}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","id":2}`,
		`{"jsonrpc":"2.0","id":1,"Method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"me\u0074hod":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"\u0078"}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","result":1}`,
		`{"jsonrpc":"2.0","id":1,"result":{"applied":true}}`,
		`{"jsonrpc":"1.0","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":}`,
		`{}`, `[]`, `{"jsonrpc":"2.0","method":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		trimmed := bytes.TrimSpace(body)
		fast := decodeRequest(trimmed)
		if fast == nil {
			return
		}
		want, err := jsonrpc2.DecodeMessage(trimmed)
		if err != nil {
			t.Fatalf("decodeRequest decoded %s, DecodeMessage fails: %v", body, err)
		}
		if fmt.Sprintf("%T", fast) != fmt.Sprintf("%T", want) {
			t.Fatalf("%s: %T, DecodeMessage %T", body, fast, want)
		}
		switch w := want.(type) {
		case *jsonrpc2.Call:
			g := fast.(*jsonrpc2.Call)
			if g.ID() != w.ID() || g.Method() != w.Method() || !sameParams(g.Params(), w.Params()) {
				t.Fatalf("%s: %v %q %q, DecodeMessage %v %q %q", body, g.ID(), g.Method(), g.Params(), w.ID(), w.Method(), w.Params())
			}
		case *jsonrpc2.Notification:
			g := fast.(*jsonrpc2.Notification)
			if g.Method() != w.Method() || !sameParams(g.Params(), w.Params()) {
				t.Fatalf("%s: %q %q, DecodeMessage %q %q", body, g.Method(), g.Params(), w.Method(), w.Params())
			}
		}
		if _, code, why := decode(body); code != 0 || why != "" {
			t.Fatalf("%s: decodeRequest takes it, yet decode answers %d %s", body, code, why)
		}
	})
}

// sameParams reports whether decodeRequest's params (as jsonrpc2.NewCall
// stores them: compact, with HTML characters escaped, as json.Marshal
// writes a json.RawMessage) are DecodeMessage's raw params.
func sameParams(fast, raw json.RawMessage) bool {
	if fast == nil || raw == nil {
		return fast == nil && raw == nil
	}
	var compact, escaped bytes.Buffer
	if json.Compact(&compact, raw) != nil {
		return false
	}
	json.HTMLEscape(&escaped, compact.Bytes())
	return bytes.Equal(fast, escaped.Bytes())
}

// TestDecodeRequestTaken: the usual messages take the fast way.
func TestDecodeRequestTaken(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":12,"method":"tool/call","params":{"name":"get_current_directory","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":12}}`,
		`{"jsonrpc":"2.0","id":"a","method":"textDocument/hover","params":{"position":{"line":1,"character":2}}}`,
	} {
		if decodeRequest([]byte(s)) == nil {
			t.Errorf("decodeRequest(%s) = nil", s)
		}
	}
	// Absent params stay absent: the general way.
	if m := decodeRequest([]byte(`{"jsonrpc":"2.0","id":"a","method":"shutdown"}`)); m != nil {
		t.Errorf("decodeRequest(shutdown without params) = %v, want nil", m)
	}
}

// TestStreamHold: a held message goes out in the same write as the next
// message, before it, whatever writes that one; then nothing is held.
func TestStreamHold(t *testing.T) {
	t.Parallel()
	var out writes
	s, log := writeStream(&out)
	event, _ := jsonrpc2.NewNotification("tool/event", map[string]string{"kind": "result"})
	answer, _ := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), "ok", nil)
	if !s.hold(event, 0) || !s.hold(event, 0) {
		t.Fatal("hold refused a notification")
	}
	if len(out) != 0 {
		t.Fatalf("a held message was written at once: %q", out)
	}
	s.Write(context.Background(), answer)
	s.hold(event, 0)
	s.writeError(nil, jsonrpc2.ParseError, "bad")
	s.Write(context.Background(), answer)
	want := [][]string{{"tool/event", "tool/event", "answer"}, {"tool/event", "error"}, {"answer"}}
	if len(out) != len(want) {
		t.Fatalf("%d writes, want %d: %q", len(out), len(want), out)
	}
	for i, w := range out {
		var got []string
		in := newStream(&pipeRWC{Reader: bytes.NewReader(w)}, log)
		for {
			body, _, ferr, err := in.readFrame(MaxMessage)
			if err != nil || ferr != "" {
				break
			}
			switch {
			case bytes.Contains(body, []byte(`"method":"tool/event"`)):
				got = append(got, "tool/event")
			case bytes.Contains(body, []byte(`"error"`)):
				got = append(got, "error")
			case bytes.Contains(body, []byte(`"result":"ok"`)):
				got = append(got, "answer")
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want[i]) {
			t.Errorf("write %d holds %v, want %v", i, got, want[i])
		}
	}
}

// TestStreamHoldWithin: a message held with a bound goes out by itself
// when no message comes to take it within the bound, and with the next
// message, in its write, when one does; a write after a bounded hold
// leaves nothing for the bound to send.
func TestStreamHoldWithin(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var out writes
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(out) }
	s := newStream(struct {
		io.Reader
		io.WriteCloser
	}{bytes.NewReader(nil), lockedWriter{&mu, &out}}, slog.New(slog.DiscardHandler))
	event, _ := jsonrpc2.NewNotification("tool/event", map[string]string{"kind": "call"})
	answer, _ := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(1), "ok", nil)

	if !s.hold(event, 5*time.Millisecond) {
		t.Fatal("hold refused a notification")
	}
	for deadline := time.Now().Add(10 * time.Second); count() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a message held with a bound was never written")
		}
	}
	s.Write(context.Background(), answer) // nothing held: the answer alone

	// A bound far beyond the Write that follows (however slow the
	// machine): the event goes in the answer's write, and the write
	// disarms the bound, so that nothing is left to go out by itself.
	s.hold(event, time.Hour)
	s.Write(context.Background(), answer)
	s.wmu.Lock()
	armed, held := s.armed, len(s.held)
	s.wmu.Unlock()
	if armed || held != 0 {
		t.Errorf("after the write: bound armed %v, %d bytes held; want neither", armed, held)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(out) != 3 {
		t.Fatalf("%d writes, want 3: %q", len(out), out)
	}
	for i, want := range []int{1, 1, 2} {
		if got := bytes.Count(out[i], []byte("Content-Length:")); got != want {
			t.Errorf("write %d holds %d messages, want %d: %q", i, got, want, out[i])
		}
	}
	if !bytes.Contains(out[0], []byte("tool/event")) || !bytes.HasPrefix(out[2], out[0]) {
		t.Errorf("the held event is not first in its writes: %q", out)
	}
}

// lockedWriter records writes under a mutex.
type lockedWriter struct {
	mu  *sync.Mutex
	out *writes
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.Write(p)
}

func (w lockedWriter) Close() error { return nil }

// TestValidID: the quick answers of validID are those decoding gives.
func TestValidID(t *testing.T) {
	t.Parallel()
	for _, id := range []string{`"a"`, `""`, `"tc_1 x"`, `"\u00e9"`, `"é"`, `"a\"b"`, `0`, `7`, `00`, `01`, `123456789`,
		`2147483647`, `2147483648`, `-1`, `-2147483648`, `1.0`, `1e3`, `null`, `true`, `{}`, `[1]`, `"`, `"a`} {
		var s string
		var n int32
		want := json.Unmarshal([]byte(id), &s) == nil || json.Unmarshal([]byte(id), &n) == nil
		if got := validID(json.RawMessage(id)); got != want {
			t.Errorf("validID(%s) = %v, want %v", id, got, want)
		}
	}
}

// TestStreamWriteResponse: writeResponse sends the bytes Write sends for
// the same answer made by jsonrpc2 (the result encoded by json.Marshal),
// held frames before it in the same write, or before it by themselves
// when they do not fit in its room; an encoding error writes nothing.
func TestStreamWriteResponse(t *testing.T) {
	t.Parallel()
	result := map[string]any{"content": "a <b> & c\n", "n": 3, "list": []string{"x", "\u2028"}}
	appendResult := func(b []byte) ([]byte, error) {
		data, err := json.Marshal(result)
		return append(b, data...), err
	}
	event, _ := jsonrpc2.NewNotification("tool/event", map[string]string{"kind": "result"})
	bigEvent, _ := jsonrpc2.NewNotification("tool/event", map[string]string{"kind": strings.Repeat("x", responseReserve)})
	for _, tt := range []struct {
		name   string
		id     jsonrpc2.ID
		held   []jsonrpc2.Message
		writes int
	}{
		{"number id", jsonrpc2.NewNumberID(7), nil, 1},
		{"string id", jsonrpc2.NewStringID("a\"<b>"), nil, 1},
		{"held", jsonrpc2.NewNumberID(8), []jsonrpc2.Message{event, event}, 1},
		{"held too large", jsonrpc2.NewNumberID(9), []jsonrpc2.Message{bigEvent}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var want, got writes
			ws, _ := writeStream(&want)
			gs, _ := writeStream(&got)
			for _, m := range tt.held {
				ws.hold(m, 0)
				gs.hold(m, 0)
			}
			resp, err := jsonrpc2.NewResponse(tt.id, result, nil)
			if err != nil {
				t.Fatal(err)
			}
			ws.Write(context.Background(), resp)
			if encErr, werr := gs.writeResponse(tt.id, appendResult); encErr != nil || werr != nil {
				t.Fatal(encErr, werr)
			}
			if len(got) != tt.writes {
				t.Errorf("%d writes, want %d", len(got), tt.writes)
			}
			if g, w := bytes.Join(got, nil), bytes.Join(want, nil); !bytes.Equal(g, w) {
				t.Errorf("writeResponse wrote\n%q\nWrite wrote\n%q", g, w)
			}
			if len(gs.held) != 0 {
				t.Errorf("held frames left: %q", gs.held)
			}
		})
	}
	var out writes
	s, _ := writeStream(&out)
	if encErr, _ := s.writeResponse(jsonrpc2.NewNumberID(1), func(b []byte) ([]byte, error) { return b, errors.New("boom") }); encErr == nil || len(out) != 0 {
		t.Errorf("an encoding error: %v, %d writes", encErr, len(out))
	}
}
