package redact

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
)

// handler redacts a record's message and every attribute that is text
// before its next handler formats it.
type handler struct{ next slog.Handler }

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
	return &handler{next: next}
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

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	nr := slog.NewRecord(r.Time, r.Level, String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		nr.AddAttrs(attr(a))
		return true
	})
	return h.next.Handle(ctx, nr)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = attr(a)
	}
	return &handler{next: h.next.WithAttrs(out)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{next: h.next.WithGroup(name)}
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
