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

	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/tools"
)

// writeIndented writes v to w as a json.Encoder with SetIndent("", "  ")
// would, byte for byte (a newline ends it), but piece by piece: the
// elements of slices and the entries of maps with string keys (and the
// structured part of a *tools.Result) are encoded and written one at a time,
// through a buffer; grep's matches a few hundred at a time. A large result
// (grep's matches) is thus never encoded whole in memory, twice over
// (compact, then indented), before its first byte goes out. The pieces are
// encoded as json.Marshal encodes them, by tools.AppendJSONValue (without
// reflection for the values of structured results), and indented as
// json.Indent indents them, by appendIndented.
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
	w       *bufio.Writer
	compact []byte // a piece as json.Marshal encodes it
	out     []byte // the piece indented
	err     error
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
	text := string(appendIndented(nil, b, ""))
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
	if ms, ok := v.(search.MatchRuns); ok && ms.Len() > 0 {
		e.matches(ms, prefix)
		return
	}
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
		e.compact, e.err = tools.AppendJSONValue(e.compact[:0], v)
		if e.err == nil {
			e.out = appendIndented(e.out[:0], e.compact, prefix)
			_, e.err = e.w.Write(e.out)
		}
	}
}

// matchChunk is how many of grep's matches are encoded at a time.
const matchChunk = 256

// matches writes grep's matches (at least one), as value writes a slice,
// a chunk at a time: each chunk's elements are encoded together, and
// indented as the elements of one array (appendIndented at depth 0 puts
// ",\n" and the prefix between them, as between a slice's elements).
func (e *indenter) matches(ms search.MatchRuns, prefix string) {
	inner := prefix + "  "
	e.write("[\n" + inner)
	first := true
	for chunk := range ms.Chunks(matchChunk) {
		if e.err != nil {
			break
		}
		if !first {
			e.write(",\n" + inner)
		}
		first = false
		e.compact, e.err = tools.AppendJSONValue(e.compact[:0], chunk)
		if e.err == nil {
			// Without the array's brackets: its elements.
			e.out = appendIndented(e.out[:0], e.compact[1:len(e.compact)-1], inner)
			_, e.err = e.w.Write(e.out)
		}
	}
	e.write("\n" + prefix + "]")
}

// appendIndented appends the JSON src, as json.Marshal encodes it (no
// space outside strings, though any is dropped), to dst indented as
// json.Indent(dst, src, prefix, "  ") indents it: a newline, the prefix
// and two spaces per level after an opening bracket and a comma and
// before a closing one (an empty object or array stays "{}" or "[]"), a
// space after a colon; strings as they are.
func appendIndented(dst, src []byte, prefix string) []byte {
	depth := 0
	needIndent := false // an opening bracket's newline, until its first element
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, "  "...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			newline()
		}
		switch c {
		case '"':
			// The string, escapes and all, up to its closing quote:
			// the first quote after an even number of backslashes.
			j := i + 1
			for {
				k := bytes.IndexByte(src[j:], '"')
				if k < 0 {
					j = len(src) - 1
					break
				}
				j += k
				n := 0
				for n < j-i-1 && src[j-1-n] == '\\' {
					n++
				}
				if n%2 == 0 {
					break
				}
				j++
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			needIndent = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				newline()
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
