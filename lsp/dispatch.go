package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"

	"go.lsp.dev/jsonrpc2"
)

// handle dispatches one message through the method table (methods.go). It
// answers every request exactly once and always returns nil: an error
// returned to jsonrpc2 would close the connection.
//
// Before initialize only the table's beforeInitialize methods are served (a
// request gets ServerNotInitialized, a notification is dropped); after
// shutdown only its afterShutdown ones (a request gets InvalidRequest).
// Then an unknown request gets MethodNotFound and an unknown notification
// is ignored. Async requests run on their own goroutine under a context of
// their own, which $/cancelRequest cancels (cancelRequest); everything else
// runs in order here, on the reading goroutine.
func (s *server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	name := req.Method()
	call, isCall := req.(*jsonrpc2.Call)
	m, found := lookup(s.table(), name, isCall)
	var refuse *jsonrpc2.Error
	switch st := s.getState(); {
	case st == stateNew && !(found && m.preInit):
		refuse = jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "the server is not initialized: send initialize first")
	case st >= stateShutdown && !(found && m.postShutdown):
		refuse = jsonrpc2.NewError(jsonrpc2.InvalidRequest, "the server is shutting down: only exit is accepted")
	case !found:
		refuse = jsonrpc2.NewError(jsonrpc2.MethodNotFound, "method not found: "+name)
	}
	switch {
	case refuse != nil && isCall:
		s.reply(name, reply, nil, refuse)
	case refuse != nil:
		s.log.Debug("notification ignored", "method", name, "why", refuse.Message)
	case !isCall || !m.concurrent:
		s.run(ctx, m, req, reply)
	default:
		rctx, done := s.track(call.ID())
		s.goAsync(func() {
			defer done()
			s.run(rctx, m, req, reply)
		})
		// Let the request start here, on this thread, before the reader
		// blocks reading the next message: waking another thread to run it
		// costs more than a trivial call.
		runtime.Gosched()
	}
	return nil
}

// goAsync runs f on a goroutine of its own: one an earlier request left
// waiting (whose stack has grown to what a call needs already, where a new
// goroutine would grow its own, copying it each time) or else a new one.
// A goroutine whose request ended waits for the next one while fewer than
// maxIdleWorkers wait, until the server's context ends.
func (s *server) goAsync(f func()) {
	select {
	case s.work <- f:
	default:
		go s.worker(f)
	}
}

// maxIdleWorkers bounds the goroutines that wait for a request (goAsync).
const maxIdleWorkers = 4

// worker runs f, then the requests goAsync hands it while it waits.
func (s *server) worker(f func()) {
	for {
		f()
		if s.idle.Add(1) > maxIdleWorkers {
			s.idle.Add(-1)
			return
		}
		select {
		case f = <-s.work:
			s.idle.Add(-1)
		case <-s.ctx.Done():
			s.idle.Add(-1)
			return
		}
	}
}

// run runs a handler and answers: the reply of a request, the log line of
// a failed notification. A panic is answered InternalError (and logged);
// a request cancelled by $/cancelRequest is answered RequestCancelled.
func (s *server) run(ctx context.Context, m method, req jsonrpc2.Request, reply jsonrpc2.Replier) {
	name := req.Method()
	var after []func()
	ctx = context.WithValue(ctx, afterReplyKey{}, &after)
	result, err := s.invoke(ctx, m, req)
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), errCancelled) {
		result, err = nil, jsonrpc2.NewError(requestCancelled, "request cancelled")
	}
	if call, isCall := req.(*jsonrpc2.Call); isCall {
		if a, ok := result.(resultAppender); ok && err == nil && s.st != nil {
			encErr, werr := s.st.writeResponse(call.ID(), a.AppendJSON)
			if encErr != nil {
				s.reply(name, reply, nil, fmt.Errorf("encode the result: %w", encErr))
			} else if werr != nil {
				s.log.Warn("reply", "method", name, "err", werr)
			}
		} else {
			s.reply(name, reply, result, err)
		}
	} else if err != nil {
		s.log.Warn("notification failed", "method", name, "err", err)
	}
	for _, f := range after {
		f()
	}
}

// invoke calls the handler, turning a panic into an error.
func (s *server) invoke(ctx context.Context, m method, req jsonrpc2.Request) (result any, err error) {
	name := req.Method()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "method", name, "panic", p)
			result, err = nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error in %s: %v", name, p)
		}
	}()
	if m.needs != "" && !s.feature(m.needs) {
		return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, fmt.Sprintf("%s is off (enable %q in lsp.features)", name, m.needs))
	}
	return m.handle(ctx, s, req)
}

// resultAppender is a result that encodes itself as json.Marshal would
// (tools.Result): it is written to the stream as it encodes
// (stream.writeResponse), not encoded by json.Marshal then again by
// jsonrpc2.
type resultAppender interface {
	AppendJSON([]byte) ([]byte, error)
}

// reply sends a request's one answer. The result is encoded here, so that
// one that cannot be is still answered (InternalError); an error that is
// not a *jsonrpc2.Error is InternalError too. A reply that cannot be sent
// is logged: the connection is failing, and its reader will say so.
func (s *server) reply(name string, reply jsonrpc2.Replier, result any, err error) {
	if err == nil {
		data, merr := json.Marshal(result)
		if merr != nil {
			err = fmt.Errorf("encode the result: %w", merr)
		} else {
			result = json.RawMessage(data)
		}
	}
	if err != nil {
		result = nil
		var werr *jsonrpc2.Error
		if !errors.As(err, &werr) {
			err = jsonrpc2.Errorf(jsonrpc2.InternalError, "%s: %v", name, err)
		}
	}
	if rerr := reply(context.Background(), result, err); rerr != nil {
		s.log.Warn("reply", "method", name, "err", rerr)
	}
}

type afterReplyKey struct{}

// afterReply runs f once the message of ctx is answered (at once when ctx
// is not a handler's): initialize reports configuration errors after its
// result, as clients expect.
func afterReply(ctx context.Context, f func()) {
	if after, ok := ctx.Value(afterReplyKey{}).(*[]func()); ok {
		*after = append(*after, f)
		return
	}
	f()
}

// requestCancelled is LSP's RequestCancelled error code.
const requestCancelled jsonrpc2.Code = -32800

var errCancelled = errors.New("cancelled by the client ($/cancelRequest)")

// track registers an async request under its id: the context it returns
// ends when $/cancelRequest names the id, at shutdown or when the
// connection ends; done must be called when the request is answered.
func (s *server) track(id jsonrpc2.ID) (ctx context.Context, done func()) {
	key := idKey(id)
	ctx, cancel := context.WithCancelCause(s.ctx)
	s.mu.Lock()
	s.inflight[key] = cancel
	s.mu.Unlock()
	s.calls.Add(1)
	return ctx, func() {
		s.mu.Lock()
		delete(s.inflight, key)
		s.mu.Unlock()
		cancel(nil)
		s.calls.Done()
	}
}

// idKey is the id's unambiguous form: #5 for a number, "x" for a string.
func idKey(id jsonrpc2.ID) string { return fmt.Sprintf("%q", id) }

// cancelParams are $/cancelRequest's: an id, a string or a number.
type cancelParams struct {
	ID json.RawMessage `json:"id"`
}

// cancelRequest cancels a running request. Numeric ids arrive as JSON
// numbers of any form (protocol.CancelHandler misses them: they decode as
// float64); they are matched by value (7.0 is 7). An id that names no
// running request, or a number that is no 32-bit integer (7.5, 2^32+7: a
// request's id cannot be one), is ignored.
func (s *server) cancelRequest(_ context.Context, p cancelParams) error {
	var id jsonrpc2.ID
	var n float64
	var str string
	switch {
	case len(p.ID) == 0:
		return nil
	case json.Unmarshal(p.ID, &str) == nil:
		id = jsonrpc2.NewStringID(str)
	case json.Unmarshal(p.ID, &n) == nil && n == math.Trunc(n) && n >= math.MinInt32 && n <= math.MaxInt32:
		id = jsonrpc2.NewNumberID(int32(n))
	default:
		return nil
	}
	s.mu.Lock()
	cancel := s.inflight[idKey(id)]
	s.mu.Unlock()
	if cancel != nil {
		cancel(errCancelled)
	}
	return nil
}
