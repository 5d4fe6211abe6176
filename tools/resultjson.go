package tools

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/agentls/agentls/search"
)

// AppendJSON appends r to b as json.Marshal(r) encodes it, byte for byte,
// without reflection for the values tools put in a structured result
// (maps with string keys, slices, strings, numbers, booleans, grep's
// matches), and without encoding again a structured result the result
// cache kept as JSON: an output-heavy grep (tens of thousands of matches)
// is encoded in one pass. What it does not know it leaves to json.Marshal.
// resultjson_test.go holds it to json.Marshal.
func (r *Result) AppendJSON(b []byte) ([]byte, error) {
	if r == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"callId":`...)
	b = appendJSONString(b, r.CallID)
	b = append(b, `,"tool":`...)
	b = appendJSONString(b, r.Tool)
	b = append(b, `,"status":`...)
	b = appendJSONString(b, string(r.Status))
	b = append(b, `,"content":`...)
	b = appendJSONString(b, r.Content)
	if r.Display != "" {
		b = append(b, `,"display":`...)
		b = appendJSONString(b, r.Display)
	}
	var err error
	if r.Structured != nil {
		b = append(b, `,"structured":`...)
		if r.structuredJSON != nil {
			b = append(b, r.structuredJSON...)
		} else if b, err = appendJSONValue(b, r.Structured); err != nil {
			return b, err
		}
	}
	if r.Error != nil {
		b = append(b, `,"error":`...)
		if b, err = appendMarshal(b, r.Error); err != nil {
			return b, err
		}
	}
	if r.Message != "" {
		b = append(b, `,"message":`...)
		b = appendJSONString(b, r.Message)
	}
	b = append(b, `,"approvedBy":`...)
	b = appendJSONString(b, r.ApprovedBy)
	b = append(b, `,"durationMs":`...)
	b = strconv.AppendInt(b, r.DurationMs, 10)
	if r.Cached {
		b = append(b, `,"cached":true`...)
	}
	return append(b, '}'), nil
}

// encodeBufs are encodeJSON's scratch buffers.
var encodeBufs sync.Pool // of *[]byte

// encodeJSON returns json.Marshal(v), in a slice of its own length: it is
// encoded in a scratch buffer kept between calls, then copied.
func encodeJSON(v any) ([]byte, error) {
	var b []byte
	if bp, ok := encodeBufs.Get().(*[]byte); ok {
		b = (*bp)[:0]
	}
	b, err := appendJSONValue(b, v)
	out := bytes.Clone(b)
	if cap(b) <= 64<<20 {
		encodeBufs.Put(&b)
	}
	return out, err
}

// AppendJSONValue appends v as json.Marshal encodes it, without reflection
// for the values appendJSONValue knows (those of structured results).
func AppendJSONValue(b []byte, v any) ([]byte, error) { return appendJSONValue(b, v) }

// appendJSONValue appends v as json.Marshal encodes it.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case search.MatchRuns:
		return appendMatchArray(b, v), nil
	case []string:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, s)
		}
		return append(b, ']'), nil
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		var err error
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSONValue(b, e); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		return appendJSONMap(b, v, appendJSONValue)
	case map[string]int:
		return appendJSONMap(b, v, func(b []byte, n int) ([]byte, error) { return strconv.AppendInt(b, int64(n), 10), nil })
	case search.Match:
		return appendMatch(b, &v), nil
	}
	return appendMarshal(b, v)
}

// appendJSONMap appends m with its keys sorted, as json.Marshal does.
func appendJSONMap[V any](b []byte, m map[string]V, value func([]byte, V) ([]byte, error)) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	b = append(b, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		if b, err = value(b, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendMatchArray appends the JSON array of the matches v.
func appendMatchArray(b []byte, v search.MatchRuns) []byte {
	// Room for them all at once: an output-heavy grep's tens of
	// thousands would grow b by doubling, a garbage of twice its size.
	b = slices.Grow(b, 2+matchesJSONLen(v))
	return append(appendMatches(append(b, '['), v), ']')
}

// minMatchesPart is the fewest matches appendMatches encodes on a
// goroutine of their own.
const minMatchesPart = 4096

// appendMatches appends the matches v separated by commas. Tens of
// thousands of them (an output-heavy grep, megabytes) are encoded in
// parts on the processors at once, each into a buffer of its own, then
// appended in order.
func appendMatches(b []byte, v search.MatchRuns) []byte {
	n := v.Len()
	parts := min(runtime.GOMAXPROCS(0), n/minMatchesPart)
	if parts < 2 {
		return appendMatchRun(b, v)
	}
	bufs := make([][]byte, parts)
	var first search.MatchRuns
	var wg sync.WaitGroup
	i := 0
	for part := range v.Chunks((n + parts - 1) / parts) {
		if i == 0 {
			first = part
		} else {
			k := i
			wg.Go(func() {
				var buf []byte
				if bp, ok := encodeBufs.Get().(*[]byte); ok {
					buf = (*bp)[:0]
				}
				bufs[k] = appendMatchRun(slices.Grow(buf, matchesJSONLen(part)), part)
			})
		}
		i++
	}
	b = appendMatchRun(b, first)
	wg.Wait()
	for _, buf := range bufs[1:i] {
		b = append(append(b, ','), buf...)
		if cap(buf) <= 64<<20 {
			encodeBufs.Put(&buf)
		}
	}
	return b
}

// matchesJSONLen is about the bytes of the JSON of the matches v: an
// eighth more than without escapes, for the tabs that indent source
// lines (each two bytes in JSON), so that the buffer seldom grows (by
// doubling, a copy of it all) near its end.
func matchesJSONLen(v search.MatchRuns) int {
	n := 0
	for m := range v.All() {
		n += len(m.Path) + len(m.Text) + matchJSONExtra
	}
	return n + n/8
}

// appendMatchRun appends the matches v separated by commas.
func appendMatchRun(b []byte, v search.MatchRuns) []byte {
	first := true
	for m := range v.All() {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendMatch(b, m)
	}
	return b
}

// matchJSONExtra is about the bytes of one match's JSON beside its path
// and text: the keys, quotes, braces, comma and numbers (appendMatch).
const matchJSONExtra = len(`{"path":"","line":,"column":,"text":""},`) + 8

// appendMatch appends one of grep's matches (search.Match's JSON tags).
func appendMatch(b []byte, m *search.Match) []byte {
	b = append(b, `{"path":`...)
	b = appendJSONString(b, m.Path)
	b = append(b, `,"line":`...)
	b = strconv.AppendInt(b, int64(m.Line), 10)
	b = append(b, `,"column":`...)
	b = strconv.AppendInt(b, int64(m.Column), 10)
	b = append(b, `,"text":`...)
	b = appendJSONString(b, m.Text)
	return append(b, '}')
}

// appendMarshal appends json.Marshal(v).
func appendMarshal(b []byte, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, data...), nil
}

const hexDigits = "0123456789abcdef"

// jsonPlain marks the bytes appendJSONString copies as they are: ASCII
// but control characters, '"', '\\' and the HTML characters.
var jsonPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// plainWord reports whether the eight bytes of x are all plain
// (jsonPlain), in whatever order they were loaded: none is a control
// character, '"', '\\', '<', '>', '&' or above ASCII.
func plainWord(x uint64) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	// zero has the high bit of some byte set when y has a zero byte.
	zero := func(y uint64) uint64 { return (y - lo) &^ y & hi }
	return (x-0x20*lo)&^x&hi|x&hi|
		zero(x^'"'*lo)|zero(x^'\\'*lo)|zero(x^'<'*lo)|zero(x^'>'*lo)|zero(x^'&'*lo) == 0
}

// appendJSONString appends s quoted as json.Marshal quotes a string: HTML
// characters (<, >, &), U+2028 and U+2029 escaped, invalid UTF-8 as
// U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	raw := unsafe.Slice(unsafe.StringData(s), len(s))
	for i := 0; i < len(s); {
		// Eight plain bytes at a time (most text is).
		for i+8 <= len(s) && plainWord(binary.LittleEndian.Uint64(raw[i:])) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if jsonPlain[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
