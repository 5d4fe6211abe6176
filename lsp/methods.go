package lsp

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

// methods is the table of what the server answers an editor: every method,
// its handler (built by a typed adapter, request or notification) and how
// it runs. An attached client's smaller table (attachedMethods, attach.go)
// takes its entries from here but for initialize, initialized and
// tool/list.
// server.handle (dispatch.go) reads the connection's table: it gates each
// message by the session's state, runs its handler, replies and cancels
// (server.earlyAnswer, early.go, looks a request up there too, to answer
// it before it is decoded whole). A request whose method is not in the
// table is answered MethodNotFound; a notification whose method is not
// there is ignored ($/ ones included).
var methods = map[string]method{
	// Lifecycle. initialize and shutdown run in order on the reading
	// goroutine: nothing is read until they are answered.
	"initialize":      request((*server).initialize).beforeInitialize(),
	"initialized":     notification((*server).initialized),
	"shutdown":        request((*server).shutdown),
	"exit":            notification((*server).exit).beforeInitialize().afterShutdown().asRequestToo(),
	"$/cancelRequest": notification((*server).cancelRequest),

	// Text synchronisation and workspace changes (textsync.go, config.go),
	// in the order they arrive.
	"textDocument/didOpen":                notification((*server).didOpen),
	"textDocument/didChange":              notification((*server).didChange),
	"textDocument/didClose":               notification((*server).didClose),
	"textDocument/didSave":                notification((*server).didSave),
	"workspace/didChangeWorkspaceFolders": notification((*server).didChangeWorkspaceFolders),
	"workspace/didChangeConfiguration":    notification((*server).didChangeConfiguration),
	"workspace/didChangeWatchedFiles":     notification((*server).didChangeWatchedFiles),
	// A request in the same order, for a client that sends its pending
	// didChange only before a request of its own (textsync.go, sync).
	"workspace/executeCommand": request((*server).executeCommand).async(),

	// agentls methods (tool.go, approver.go): each on its own goroutine, so
	// that a call waiting for approval blocks nothing.
	"tool/list":      request((*server).toolList).async(),
	"tool/call":      request((*server).toolCall).async().undecoded((*server).refuseOversizeCall),
	"tool/metrics":   request((*server).toolMetrics).async(),
	"tool/history":   request((*server).toolHistory).async(),
	"approval/rules": request((*server).approvalRules).async(),

	// Language features served from the index (features.go), each only
	// when the configuration's lsp.features names it.
	"textDocument/documentSymbol": request((*server).documentSymbol).async().feature("documentSymbol"),
	"workspace/symbol":            request((*server).workspaceSymbol).async().feature("workspaceSymbol"),
	"textDocument/definition":     request((*server).definition).async().feature("definition"),
	"textDocument/references":     request((*server).references).async().feature("references"),
	"textDocument/hover":          request((*server).hover).async().feature("hover"),
}

// A handler runs one method for a session. For a request, handle returns
// the result to send or the error to answer with (a *jsonrpc2.Error is sent
// as it is, any other error as InternalError); for a notification the
// result is dropped and an error is logged. handle never replies itself,
// and a handle that waits must return when ctx ends.
type handler interface {
	handle(ctx context.Context, s *server, req jsonrpc2.Request) (any, error)
}

// handlerFunc adapts a function to a handler.
type handlerFunc func(ctx context.Context, s *server, req jsonrpc2.Request) (any, error)

func (f handlerFunc) handle(ctx context.Context, s *server, req jsonrpc2.Request) (any, error) {
	return f(ctx, s, req)
}

var _ handler = handlerFunc(nil)

// ignored is the params of a method that reads none: any JSON is accepted.
type ignored = json.RawMessage

// validator is a params type with rules beyond its JSON shape. validate's
// error is answered InvalidParams.
type validator interface{ validate() error }

// fastDecoder is a params type that decodes the usual shape of its
// params without reflection. decodeFast takes only params whose value
// json.Unmarshal would make the same, without error, and then sets the
// receiver (a zero value) to it; anything else it leaves alone and
// refuses (false), for json.Unmarshal to decode.
type fastDecoder interface{ decodeFast(raw []byte) bool }

// decodeParams decodes a message's params once, into P. Absent or null
// params are P's zero value; params that do not fit P, or that fail P's
// validate, are an InvalidParams error naming the method.
func decodeParams[P any](req jsonrpc2.Request) (P, error) {
	var p P
	if raw := req.Params(); len(raw) > 0 && string(raw) != "null" {
		if f, ok := any(&p).(fastDecoder); ok && f.decodeFast(raw) {
			// decoded as json.Unmarshal would have
		} else if err := json.Unmarshal(raw, &p); err != nil {
			return p, invalidParams(req.Method(), err)
		}
	}
	if v, ok := any(&p).(validator); ok {
		if err := v.validate(); err != nil {
			return p, invalidParams(req.Method(), err)
		}
	}
	return p, nil
}

func invalidParams(method string, err error) error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%s params: %v", method, err)
}

// request is the entry of a request whose params are a P and whose result
// is an R. It runs in order on the reading goroutine unless made async.
func request[P, R any](f func(s *server, ctx context.Context, p P) (R, error)) method {
	return method{call: true, handler: handlerFunc(func(ctx context.Context, s *server, req jsonrpc2.Request) (any, error) {
		p, err := decodeParams[P](req)
		if err != nil {
			return nil, err
		}
		r, err := f(s, ctx, p)
		if err != nil {
			return nil, err
		}
		return r, nil
	})}
}

// notification is the entry of a notification whose params are a P. It
// runs in order on the reading goroutine.
func notification[P any](f func(s *server, ctx context.Context, p P) error) method {
	return method{notify: true, handler: handlerFunc(func(ctx context.Context, s *server, req jsonrpc2.Request) (any, error) {
		p, err := decodeParams[P](req)
		if err != nil {
			return nil, err
		}
		return nil, f(s, ctx, p)
	})}
}

// method is one entry of the table. Its zero flags are the common case: a
// request or notification accepted only between initialize and shutdown,
// run in order on the reading goroutine, not cancellable.
type method struct {
	handler
	call, notify bool // answers requests, notifications
	// concurrent: the request runs on its own goroutine under a context
	// that $/cancelRequest (of its id), shutdown and the end of the
	// connection cancel.
	concurrent   bool
	preInit      bool   // accepted before initialize
	postShutdown bool   // accepted after shutdown
	needs        string // the lsp.features name without which it is not found
	// raw, when set, may answer the request from its raw params before the
	// message is decoded (session.earlyAnswer, early.go); ok false leaves
	// it to the handler.
	raw rawAnswer
}

// rawAnswer answers a request from its params' members as written (see
// members), or says it cannot (ok false). It runs on the reading
// goroutine, before the message is decoded, so it must answer at once.
type rawAnswer func(s *server, params map[string]json.RawMessage) (result json.RawMessage, ok bool)

func (m method) async() method            { m.concurrent = true; return m }
func (m method) beforeInitialize() method { m.preInit = true; return m }
func (m method) afterShutdown() method    { m.postShutdown = true; return m }
func (m method) undecoded(f rawAnswer) method {
	m.raw = f
	return m
}
func (m method) asRequestToo() method { m.call = true; return m }
func (m method) feature(name string) method {
	m.needs = name
	return m
}

// lookup returns the entry that answers a message of this kind.
func lookup(table map[string]method, name string, isCall bool) (method, bool) {
	m, ok := table[name]
	if !ok || isCall && !m.call || !isCall && !m.notify {
		return method{}, false
	}
	return m, true
}
