package lsp_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// startedRaw is a raw client after initialize, with every index feature on
// (so that their params are decoded, not refused as off).
func startedRaw(t *testing.T) (*rawClient, string) {
	root := t.TempDir()
	c := newRaw(t, testRunner(t))
	init := map[string]any{
		"rootUri":      "file://" + filepath.ToSlash(root),
		"capabilities": map[string]any{},
		"initializationOptions": map[string]any{"config": map[string]any{"lsp": map[string]any{
			"features": []string{"documentSymbol", "workspaceSymbol", "definition", "references", "hover"}}}},
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
	c.send(string(b))
	if m := c.response("1"); m["error"] != nil {
		t.Fatalf("initialize: %v", m)
	}
	c.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	return c, root
}

// TestDispatchParamsAndKinds attacks the method table's adapters: params
// that do not fit a method's are InvalidParams (never a dropped request or
// a closed connection), a notification's name sent as a request is not
// found, a request's name sent as a notification is never run nor answered,
// and after each the server answers the next request, and only it.
func TestDispatchParamsAndKinds(t *testing.T) {
	t.Parallel()
	c, root := startedRaw(t)
	uri := "file://" + filepath.ToSlash(filepath.Join(root, "a.go"))
	tests := []struct {
		name   string
		msg    string // the message, with %d for its id when it has one
		code   int    // the error code expected; 0: a result; -1: no answer
		result bool   // with code 0: the result must not be null
	}{
		{"tool/list bad member", `"method":"tool/list","params":{"format":5}`, -32602, false},
		{"tool/list no params", `"method":"tool/list"`, 0, true},
		{"tool/call params not an object", `"method":"tool/call","params":"read_file"`, -32602, false},
		{"tool/call name not a string", `"method":"tool/call","params":{"name":5}`, -32602, false},
		{"tool/call no name", `"method":"tool/call","params":{"arguments":{}}`, -32602, false},
		{"tool/call no params", `"method":"tool/call"`, -32602, false},
		{"tool/history bad limit", `"method":"tool/history","params":{"limit":"x"}`, -32602, false},
		{"tool/metrics ignores params", `"method":"tool/metrics","params":[1]`, 0, true},
		{"approval/rules bad remove", `"method":"approval/rules","params":{"remove":5}`, -32602, false},
		{"approval/rules null params", `"method":"approval/rules","params":null`, 0, true},
		{"definition bad position", `"method":"textDocument/definition","params":{"textDocument":{"uri":"` + uri + `"},"position":"x"}`, -32602, false},
		{"definition bad uri", `"method":"textDocument/definition","params":{"textDocument":{"uri":"http://x/a.go"},"position":{"line":0,"character":0}}`, -32602, false},
		{"references bad context", `"method":"textDocument/references","params":{"textDocument":{"uri":"` + uri + `"},"position":{"line":0,"character":0},"context":{"includeDeclaration":"yes"}}`, -32602, false},
		{"hover bad document", `"method":"textDocument/hover","params":{"textDocument":5}`, -32602, false},
		{"documentSymbol bad document", `"method":"textDocument/documentSymbol","params":{"textDocument":[]}`, -32602, false},
		{"workspace/symbol bad query", `"method":"workspace/symbol","params":{"query":5}`, -32602, false},
		{"executeCommand agentls.sync", `"method":"workspace/executeCommand","params":{"command":"agentls.sync"}`, 0, false},
		{"executeCommand unknown command", `"method":"workspace/executeCommand","params":{"command":"rm -rf"}`, -32602, false},
		{"executeCommand bad arguments", `"method":"workspace/executeCommand","params":{"command":"agentls.sync","arguments":5}`, -32602, false},
		{"notification name as a request", `"method":"textDocument/didOpen","params":{}`, -32601, false},
		{"unknown $/ request", `"method":"$/unknown","params":{}`, -32601, false},
		{"unknown request", `"method":"no/such","params":{}`, -32601, false},
		{"second initialize", `"method":"initialize","params":{"capabilities":{}}`, -32600, false},
		// notifications: never answered, whatever they hold
		{"request name as a notification", `"method":"tool/call","params":{"name":"touch","arguments":{"x":1}}`, -1, false},
		{"bad didOpen params", `"method":"textDocument/didOpen","params":5`, -1, false},
		{"bad cancel params", `"method":"$/cancelRequest","params":"x"`, -1, false},
		{"unknown $/ notification", `"method":"$/unknown","params":{}`, -1, false},
	}
	id := 100
	for _, tt := range tests {
		id++
		if tt.code == -1 {
			c.send(`{"jsonrpc":"2.0",` + tt.msg + `}`)
		} else {
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, tt.msg))
			m := c.only(fmt.Sprint(id))
			if got := errCode(m); got != tt.code {
				t.Errorf("%s: code %d, want %d: %v", tt.name, got, tt.code, m)
			}
			if e, _ := m["error"].(map[string]any); e != nil {
				if msg, _ := e["message"].(string); msg == "" {
					t.Errorf("%s: error without a message: %v", tt.name, m)
				}
			} else if tt.result && m["result"] == nil {
				t.Errorf("%s: null result: %v", tt.name, m)
			}
		}
		// The server still serves, and answers nothing else first.
		id++
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tool/metrics"}`, id))
		if m := c.only(fmt.Sprint(id)); m["error"] != nil {
			t.Fatalf("%s: next request: %v", tt.name, m)
		}
	}
	// The tool/call sent as a notification never ran.
	c.send(`{"jsonrpc":"2.0","id":1000,"method":"tool/history","params":{"tool":"touch"}}`)
	m := c.only(`1000`)
	if r, _ := m["result"].(map[string]any); r == nil || len(r["entries"].([]any)) != 0 {
		t.Errorf("a request sent as a notification ran: %v", m)
	}
}

// TestCancelMatchesIDExactly: $/cancelRequest cancels the request of that
// id and no other: a string id "7" is not the number 7; a number matches by
// value whatever its JSON form (7.0); ids of nothing running, null,
// objects, fractions (7.5) and numbers that wrap to 7 in 32 bits are ignored. A cancelled request is answered once, -32800.
func TestCancelMatchesIDExactly(t *testing.T) {
	t.Parallel()
	c, _ := startedRaw(t)
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tool/call","params":{"name":"slow","arguments":{"ms":60000}}}`)
	c.send(`{"jsonrpc":"2.0","id":"7","method":"tool/call","params":{"name":"slow","arguments":{"ms":60000}}}`)
	time.Sleep(100 * time.Millisecond) // both running
	for _, id := range []string{`99`, `"99"`, `null`, `{}`, `[7]`, `true`, `7.5`, `4294967303`, `-4294967289`, `"7 "`} {
		c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + id + `}}`)
	}
	c.send(`{"jsonrpc":"2.0","id":8,"method":"tool/metrics"}`)
	c.only(`8`) // no cancel above ended a call

	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"7"}}`)
	if m := c.only(`"7"`); errCode(m) != -32800 {
		t.Fatalf("string id 7: %v, want -32800", m)
	}
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tool/metrics"}`)
	c.only(`9`) // the number 7 still runs

	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7.0}}`)
	if m := c.only(`7`); errCode(m) != -32800 {
		t.Fatalf("number id 7: %v, want -32800", m)
	}
	// Cancelling again, once it is answered, answers nothing more.
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}`)
	c.send(`{"jsonrpc":"2.0","id":10,"method":"tool/metrics"}`)
	c.only(`10`)
}

// TestNotificationsBeforeInitializeDropped: before initialize, requests get
// -32002 and notifications (a cancel, a didOpen) are dropped, unanswered;
// exit is accepted in every state.
func TestNotificationsBeforeInitializeDropped(t *testing.T) {
	t.Parallel()
	c := newRaw(t, testRunner(t))
	c.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)
	c.send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"no/such"}`)
	if got := errCode(c.only(`1`)); got != -32002 {
		t.Errorf("unknown request before initialize: %d, want -32002", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"exit"}`)
	select {
	case _, ok := <-c.msgs:
		if ok {
			t.Fatal("exit was answered")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("exit before initialize did not end the connection")
	}
}
