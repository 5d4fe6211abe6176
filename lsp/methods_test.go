package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"reflect"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentls/agentls/tools"
)

// TestMethodTable checks the table's rules that the dispatcher relies on:
// every request but the lifecycle's runs on its own goroutine (so a call
// waiting for approval blocks no other), only requests run so (a
// notification reordered would break text synchronisation), and every
// entry answers some kind of message.
func TestMethodTable(t *testing.T) {
	t.Parallel()
	lifecycle := map[string]bool{"initialize": true, "shutdown": true, "exit": true}
	for name, m := range methods {
		if m.handler == nil || !m.call && !m.notify {
			t.Errorf("%s: no handler or answers nothing", name)
		}
		if m.call && !lifecycle[name] && !m.concurrent {
			t.Errorf("%s: a request that runs on the reading goroutine would block every other", name)
		}
		if m.concurrent && m.notify {
			t.Errorf("%s: a notification must run in order", name)
		}
		if (m.preInit || m.postShutdown) && !lifecycle[name] {
			t.Errorf("%s: only the lifecycle's methods are accepted before initialize or after shutdown", name)
		}
	}
}

// testMethods are entries the table does not have, to attack the
// dispatcher: a panic, a result that cannot be encoded, a plain Go error.
var testMethods = map[string]method{
	"test/panic": request(func(*server, context.Context, ignored) (any, error) { panic("boom") }).async(),
	"test/unencodable": request(func(*server, context.Context, ignored) (chan int, error) {
		return make(chan int), nil
	}).async(),
	"test/plainError": request(func(*server, context.Context, ignored) (any, error) {
		return nil, errors.New("plain")
	}).async(),
	"test/panicSync": request(func(*server, context.Context, ignored) (any, error) { panic("boom") }),
}

// TestDispatcherAlwaysAnswers: whatever a handler does (panic, an
// unencodable result, a plain error), its request is answered with an
// error and the connection keeps serving (TestDispatchParamsAndKinds checks
// that nothing is answered twice).
func TestDispatcherAlwaysAnswers(t *testing.T) {
	t.Parallel()
	table := maps.Clone(methods) // the shared table stays as it is: other tests run beside this one
	maps.Copy(table, testMethods)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, cli := net.Pipe()
	done := make(chan struct{})
	go func() {
		Serve(ctx, srv, Options{Runner: tools.NewRunner(tools.NewBuiltinRegistry(), nil), DefaultRoot: t.TempDir(), methods: table})
		close(done)
	}()
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(cli))
	conn.Go(ctx, jsonrpc2.MethodNotFoundHandler)
	t.Cleanup(func() { conn.Close(); cancel(); <-done })
	if _, err := conn.Call(ctx, "initialize", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"test/panic", "test/unencodable", "test/plainError", "test/panicSync"} {
		_, err := conn.Call(ctx, name, nil, nil)
		var werr *jsonrpc2.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc2.InternalError || werr.Message == "" {
			t.Errorf("%s: %v, want InternalError with a message", name, err)
		}
		var metrics map[string]any
		if _, err := conn.Call(ctx, "tool/metrics", nil, &metrics); err != nil {
			t.Fatalf("after %s: %v", name, err)
		}
	}
}

// fastDecodeCases are tool/call params, the usual and the odd.
var fastDecodeCases = []string{
	`{"name":"get_current_directory","arguments":{}}`,
	` { "name" : "read_file" , "arguments" : { "path" : "a\"b" } , "callId" : "tc_1" , "reason" : "why" , "agent" : "x" } `,
	`{"name":"x","workDoneToken":"w","partialResultToken":7,"arguments":"{\"a\":1}"}`,
	`{"name":"x","arguments":null,"workDoneToken":null}`,
	`{"name":"x","name":"y"}`,             // twice: the last wins
	`{"Name":"x"}`,                        // another case
	`{"name":"caf\u00e9"}`,                // an escape
	`{"name":"café"}`,                     // not ASCII
	`{"name":null}`,                       // null for a string
	`{"name":5}`,                          // not a string
	`{"name":"x","other":[1,{"a":2}]}`,    // a member it does not know
	`{"name":"x","arguments":[1,2,3]}`,    // arguments of any kind
	`{}`, `[]`, `"x"`, `5`, `{"name":"x"`, // not an object, cut short
	`{"name":"x",}`,
}

// TestToolCallFastDecode: what decodeFast takes, it decodes as
// json.Unmarshal does; what it refuses, it leaves untouched.
func TestToolCallFastDecode(t *testing.T) {
	t.Parallel()
	for _, in := range fastDecodeCases {
		checkFastDecode(t, in)
	}
	var p toolCallParams
	if !p.decodeFast([]byte(fastDecodeCases[0])) || p.Name != "get_current_directory" || string(p.Arguments) != "{}" {
		t.Errorf("the usual call was not decoded fast: %+v", p)
	}
}

func FuzzToolCallFastDecode(f *testing.F) {
	for _, in := range fastDecodeCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) { checkFastDecode(t, in) })
}

func checkFastDecode(t *testing.T, in string) {
	var fast, slow toolCallParams
	if !fast.decodeFast([]byte(in)) {
		if !reflect.DeepEqual(fast, toolCallParams{}) {
			t.Errorf("%s: refused, but set %+v", in, fast)
		}
		return
	}
	if err := json.Unmarshal([]byte(in), &slow); err != nil {
		t.Errorf("%s: decoded fast, but json.Unmarshal fails: %v", in, err)
		return
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: decoded fast as %+v, json.Unmarshal makes %+v", in, fast, slow)
	}
}
