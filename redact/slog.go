package redact

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
)

// handler redacts a record's message and every attribute that is text
// before its next handler formats it.
//
// The attributes and groups a logger adds with With and WithGroup are
// redacted only when a record is handled: a logger made for every call
// (With("callId", …)) whose records are all below the level costs no
// redaction. Each handler resolves its chain once: the redacted
// attributes are then handed to next's WithAttrs, as before.
type handler struct {
	// root is the handler NewHandler made; its next is the handler that
	// formats, and decides Enabled.
	root *handler
	next slog.Handler // root only

	parent *handler    // the handler With or WithGroup was called on
	attrs  []slog.Attr // With's attributes, as given
	group  string      // WithGroup's name, when attrs is nil

	once     sync.Once
	resolved slog.Handler // next with the chain's attributes, redacted
}

// NewHandler returns a slog.Handler that passes records to next with their
// message and attributes redacted by String: string values, errors,
// Stringers, byte slices and JSON (json.RawMessage through JSON), and any
// other value of kind Any as its %+v text. Numbers, booleans, times and
// durations pass as they are. Wrapping a handler that redacts already
// returns it.
func NewHandler(next slog.Handler) slog.Handler {
	if h, ok := next.(*handler); ok {
		return h
	}
	h := &handler{next: next}
	h.root = h
	return h
}

// Logger returns a logger whose output is redacted (see NewHandler); nil
// stays nil.
func Logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	if _, ok := l.Handler().(*handler); ok {
		return l
	}
	return slog.New(NewHandler(l.Handler()))
}

// Enabled asks the formatting handler: With and WithGroup do not change
// the level of a handler.
func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.root.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(attr(a))
		return true
	})
	return h.resolve().Handle(ctx, nr)
}

// resolve returns next with the attributes and groups of the chain from
// the root to h, redacted, added in their order.
func (h *handler) resolve() slog.Handler {
	if h.parent == nil {
		return h.next
	}
	h.once.Do(func() {
		p := h.parent.resolve()
		if h.attrs == nil {
			h.resolved = p.WithGroup(h.group)
			return
		}
		out := make([]slog.Attr, len(h.attrs))
		for i, a := range h.attrs {
			out[i] = attr(a)
		}
		h.resolved = p.WithAttrs(out)
	})
	return h.resolved
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	return &handler{root: h.root, parent: h, attrs: slices.Clone(as)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{root: h.root, parent: h, group: name}
}

func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String()))
	case slog.KindGroup:
		gs := v.Group()
		out := make([]any, len(gs))
		for i, g := range gs {
			out[i] = attr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case nil:
			return slog.Attr{Key: a.Key, Value: v}
		case json.RawMessage:
			return slog.String(a.Key, string(JSON(x)))
		case []byte:
			return slog.String(a.Key, String(string(x)))
		case error:
			return slog.String(a.Key, String(x.Error()))
		default:
			return slog.String(a.Key, String(text(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// text formats a value as slog's text handler would, a panicking String
// method included.
func text(v any) (s string) {
	defer func() {
		if p := recover(); p != nil {
			s = fmt.Sprintf("!PANIC: %v", p)
		}
	}()
	if st, ok := v.(fmt.Stringer); ok {
		return st.String()
	}
	return fmt.Sprintf("%+v", v)
}
