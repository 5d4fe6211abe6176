package cli

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/agentls/agentls/tools"
)

// writeIndented writes v to w as a json.Encoder with SetIndent("", "  ")
// would, byte for byte (a newline ends it), but piece by piece: the
// elements of slices and the entries of maps with string keys (and the
// structured part of a *tools.Result) are encoded and written one at a time,
// through a buffer. A large result (grep's matches) is thus never encoded
// whole in memory, twice over (compact, then indented), before its first
// byte goes out.
func writeIndented(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	e := &indenter{w: bw}
	if r, ok := v.(*tools.Result); ok && r != nil {
		e.result(r)
	} else {
		e.value(v, "")
	}
	if e.err == nil {
		e.err = bw.WriteByte('\n')
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	return e.err
}

type indenter struct {
	w   *bufio.Writer
	buf bytes.Buffer
	err error
}

// structuredMark stands for a Result's structured field while the rest of
// the Result is encoded; `"structured": "<mark>"` cannot occur inside an
// encoded string (its quotes would be escaped).
const structuredMark = "agentls:structured"

// result writes a Result with its structured field written piece by piece.
func (e *indenter) result(r *tools.Result) {
	if r.Structured == nil {
		e.value(r, "")
		return
	}
	c := *r
	c.Structured = structuredMark
	b, err := json.Marshal(&c)
	if err != nil {
		e.err = err
		return
	}
	e.buf.Reset()
	if e.err = json.Indent(&e.buf, b, "", "  "); e.err != nil {
		return
	}
	text := e.buf.String()
	key := `"structured": "` + structuredMark + `"`
	i := strings.Index(text, key)
	if i < 0 {
		e.err = fmt.Errorf("encoding the result: structured field not found")
		return
	}
	head, tail := text[:i+len(`"structured": `)], text[i+len(key):]
	e.write(head)
	e.value(r.Structured, "  ")
	e.write(tail)
}

func (e *indenter) write(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// value writes v, its nested lines indented by prefix plus two spaces per
// level, its first line not indented (as json.Indent does).
func (e *indenter) value(v any, prefix string) {
	if e.err != nil {
		return
	}
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Interface && !rv.IsNil() {
		rv = rv.Elem()
	}
	custom := rv.IsValid() && (rv.Type().Implements(marshalerType) || rv.Type().Implements(textMarshalerType))
	switch {
	case !custom && rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Uint8 && !rv.IsNil() && rv.Len() > 0:
		e.write("[\n")
		inner := prefix + "  "
		for i := range rv.Len() {
			e.write(inner)
			e.value(rv.Index(i).Interface(), inner)
			if i < rv.Len()-1 {
				e.write(",\n")
			}
		}
		e.write("\n" + prefix + "]")
	case !custom && rv.Kind() == reflect.Map && rv.Type().Key().Kind() == reflect.String && !rv.IsNil() && rv.Len() > 0:
		keys := rv.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		e.write("{\n")
		inner := prefix + "  "
		for i, k := range keys {
			name, err := json.Marshal(k.String())
			if err != nil {
				e.err = err
				return
			}
			e.write(inner + string(name) + ": ")
			e.value(rv.MapIndex(k).Interface(), inner)
			if i < len(keys)-1 {
				e.write(",\n")
			}
		}
		e.write("\n" + prefix + "}")
	default:
		b, err := json.Marshal(v)
		if err != nil {
			e.err = err
			return
		}
		e.buf.Reset()
		if e.err = json.Indent(&e.buf, b, prefix, "  "); e.err == nil {
			_, e.err = e.w.Write(e.buf.Bytes())
		}
	}
}
