package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/internal/schema"
	"github.com/agentls/agentls/workspace"
)

// Argument size caps. Every string of a tool's arguments has a cap, stated
// as maxLength (characters, as JSON Schema counts) in the tool's input
// schema: the schema's own when it has one, otherwise one added at
// registration by the argument's name (see capFor). Arrays without maxItems
// get MaxArgumentItems, maps get propertyNames.maxLength. Before anything
// else looks at a call's arguments (schema validation, the history, the
// approval), checkBounds scans the raw JSON once and refuses the first value
// over its cap, reading no further than that value.
const (
	// MaxArgumentsBytes caps a call's whole arguments (the frame cap of the
	// LSP transport, lsp.MaxMessage).
	MaxArgumentsBytes = 64 << 20
	// MaxPathLength caps paths and names (path, from, to, source, dest,
	// cwd, files, ref, branch, symbol, …): PATH_MAX.
	MaxPathLength = 4096
	// MaxURLLength caps url.
	MaxURLLength = 8192
	// MaxStringLength caps every other string (patterns, globs, queries,
	// commands, messages, argv and env values).
	MaxStringLength = 64 << 10
	// MaxContentLength is the schema's cap of file contents and code
	// (content, old_string, new_string, patch, code, body); a call is
	// further held to limits.maxFileBytes bytes.
	MaxContentLength = MaxArgumentsBytes
	// MaxArgumentItems caps arrays whose schema states no maxItems.
	MaxArgumentItems = 10000
	// maxNesting and maxNumber bound what no tool needs.
	maxNesting = 32
	maxNumber  = 100
)

// role of an argument, by its name (for array items and map values: the
// name of the array or map).
func capFor(name string) (max int, content bool) {
	switch name {
	case "path", "paths", "from", "to", "source", "dest", "destination", "cwd", "dir", "directory",
		"file", "files", "root", "ref", "branch", "start_point", "remote", "name", "symbol", "id", "timezone":
		return MaxPathLength, false
	case "url":
		return MaxURLLength, false
	case "content", "old_string", "new_string", "patch", "code", "body", "text":
		return MaxContentLength, true
	}
	return MaxStringLength, false
}

// bounds are the caps of one position in the arguments; nil means
// unknown (anyOf and the like): only the ceiling holds there.
type bounds struct {
	maxLen   int  // characters of a string here
	content  bool // also held to limits.maxFileBytes bytes
	maxItems int
	props    map[string]*bounds
	extra    *bounds // additionalProperties' schema
	closed   bool    // additionalProperties: false
	items    *bounds
}

// boundSchema returns the schema with caps added where it states none,
// keeping its keys in order, and the bounds the scan checks.
func boundSchema(raw json.RawMessage) (json.RawMessage, *bounds, error) {
	out, b, err := boundNode(raw, "")
	if err != nil {
		return nil, nil, err
	}
	return out, b, nil
}

func boundNode(raw json.RawMessage, name string) (json.RawMessage, *bounds, error) {
	obj, err := parseObject(raw)
	if err != nil || obj == nil {
		return raw, nil, err // true, false: nothing to bound
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "$ref", "not", "if", "patternProperties", "prefixItems"} {
		if obj.has(k) {
			return raw, nil, nil // unknown shape: the ceiling holds
		}
	}
	b := &bounds{maxLen: MaxStringLength} // a string where none is valid: refused anyway
	types := obj.types()
	isString := types == nil || types["string"]
	enum := obj.has("enum") || obj.has("const")
	switch {
	case obj.has("maxLength"):
		n, err := strconv.Atoi(string(obj.get("maxLength")))
		if err != nil {
			return nil, nil, fmt.Errorf("maxLength: %w", err)
		}
		b.maxLen = n
		_, b.content = capFor(name)
	case enum:
		b.maxLen = MaxStringLength // a longer value is no member either
	case isString:
		b.maxLen, b.content = capFor(name)
		obj.set("maxLength", strconv.Itoa(b.maxLen))
	}
	b.maxItems = MaxArgumentsBytes // no cap but the ceiling where the schema states none
	if obj.has("maxItems") {
		n, err := strconv.Atoi(string(obj.get("maxItems")))
		if err != nil {
			return nil, nil, fmt.Errorf("maxItems: %w", err)
		}
		b.maxItems = n
	} else if types["array"] {
		b.maxItems = MaxArgumentItems
		obj.set("maxItems", strconv.Itoa(MaxArgumentItems))
	}
	if it := obj.get("items"); it != nil {
		v, ib, err := boundNode(it, name)
		if err != nil {
			return nil, nil, err
		}
		obj.set("items", string(v))
		b.items = ib
	}
	if p := obj.get("properties"); p != nil {
		props, err := parseObject(p)
		if err != nil || props == nil {
			return nil, nil, fmt.Errorf("properties: not an object")
		}
		b.props = map[string]*bounds{}
		for i, k := range props.keys {
			v, pb, err := boundNode(props.vals[i], k)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", k, err)
			}
			props.vals[i] = v
			b.props[k] = pb
		}
		obj.set("properties", string(props.marshal()))
	}
	switch ap := obj.get("additionalProperties"); {
	case ap == nil, string(ap) == "true":
		// anything goes: only the ceiling holds
	case string(ap) == "false":
		b.closed = true
	default:
		v, eb, err := boundNode(ap, name)
		if err != nil {
			return nil, nil, err
		}
		obj.set("additionalProperties", string(v))
		b.extra = eb
		if !obj.has("propertyNames") {
			obj.set("propertyNames", fmt.Sprintf(`{"maxLength":%d}`, MaxPathLength))
		}
	}
	return obj.marshal(), b, nil
}

// object is a JSON object with its keys in order.
type object struct {
	keys []string
	vals []json.RawMessage
}

// parseObject parses raw when it is an object; nil otherwise.
func parseObject(raw json.RawMessage) (*object, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if _, err := d.Token(); err != nil {
		return nil, err
	}
	o := &object{}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		o.keys = append(o.keys, t.(string))
		o.vals = append(o.vals, v)
	}
	return o, nil
}

func (o *object) has(k string) bool { return o.get(k) != nil }

func (o *object) get(k string) json.RawMessage {
	for i, key := range o.keys {
		if key == k {
			return o.vals[i]
		}
	}
	return nil
}

func (o *object) set(k, v string) {
	for i, key := range o.keys {
		if key == k {
			o.vals[i] = json.RawMessage(v)
			return
		}
	}
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, json.RawMessage(v))
}

// types returns the schema's "type" as a set; nil when it has none.
func (o *object) types() map[string]bool {
	raw := o.get("type")
	if raw == nil {
		return nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return map[string]bool{one: true}
	}
	var many []string
	json.Unmarshal(raw, &many)
	set := map[string]bool{}
	for _, t := range many {
		set[t] = true
	}
	return set
}

func (o *object) marshal() json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(o.vals[i])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// Oversize reports whether raw arguments for the tool called name (or an
// alias) break a size cap: Run refuses such a call before any other work.
// A front end asks it to refuse a huge call without decoding it in full.
func (r *Runner) Oversize(cfg *workspace.Config, name string, raw json.RawMessage) bool {
	t, ok := r.lookup(cfg, name)
	if !ok {
		return false
	}
	v, _ := checkBounds(raw, t.bounds, cfg.Limits.MaxFileBytes)
	return v != nil
}

// checkBounds scans raw arguments and returns the first value over its cap,
// or nil. maxContent caps content strings in bytes (limits.maxFileBytes; 0:
// no further cap). Malformed JSON is left to the decoder: the scan stops
// without a violation. It reads no further than the value that breaks a
// cap, so an oversize value costs the cap, not its size.
func checkBounds(raw []byte, b *bounds, maxContent int) (v *schema.Violation, limit int) {
	if len(raw) > MaxArgumentsBytes {
		return &schema.Violation{Reason: fmt.Sprintf("the arguments are %d bytes, over the cap of %d bytes", len(raw), MaxArgumentsBytes)}, MaxArgumentsBytes
	}
	s := &scanner{data: raw, maxContent: maxContent}
	s.skipSpace()
	s.value(b, 0)
	if s.violation == nil {
		return nil, 0
	}
	s.violation.Pointer = s.pointer()
	return s.violation, s.limit
}

type scanner struct {
	data       []byte
	i          int
	path       []string
	maxContent int
	violation  *schema.Violation
	limit      int
	bad        bool // malformed JSON: stop
}

func (s *scanner) stop() bool { return s.violation != nil || s.bad }

func (s *scanner) fail(limit int, format string, args ...any) {
	s.violation = &schema.Violation{Reason: fmt.Sprintf(format, args...)}
	s.limit = limit
}

func (s *scanner) pointer() string {
	var b strings.Builder
	for _, t := range s.path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func (s *scanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// value scans one value at bounds b (nil: unknown).
func (s *scanner) value(b *bounds, depth int) {
	if s.i >= len(s.data) {
		s.bad = true
		return
	}
	if depth > maxNesting {
		s.fail(maxNesting, "nested more than %d levels deep", maxNesting)
		return
	}
	switch c := s.data[s.i]; {
	case c == '"':
		maxLen, maxBytes := MaxArgumentsBytes, 0
		if b != nil {
			maxLen = b.maxLen
			if b.content {
				maxBytes = s.maxContent
			}
		}
		s.str(maxLen, maxBytes)
	case c == '{':
		s.object(b, depth)
	case c == '[':
		s.array(b, depth)
	default:
		start := s.i
		for s.i < len(s.data) && strings.IndexByte(",]} \t\r\n", s.data[s.i]) < 0 {
			s.i++
			if s.i-start > maxNumber {
				s.fail(maxNumber, "a literal longer than %d characters", maxNumber)
				return
			}
		}
	}
}

// str scans a string: at most maxLen characters (code points) and, when
// maxBytes > 0, at most maxBytes bytes once decoded. The counts may fall
// short of the truth by a character per escaped surrogate pair, never
// exceed it: the scan refuses nothing the schema would accept.
func (s *scanner) str(maxLen, maxBytes int) string {
	s.i++ // the quote
	start := s.i
	chars, nbytes := 0, 0
	for {
		if s.i >= len(s.data) {
			s.bad = true
			return ""
		}
		c := s.data[s.i]
		switch {
		case c == '"':
			s.i++
			return string(s.data[start : s.i-1])
		case c == '\\':
			if s.i+1 >= len(s.data) {
				s.bad = true
				return ""
			}
			if s.data[s.i+1] == 'u' && s.i+5 < len(s.data) {
				r, err := strconv.ParseUint(string(s.data[s.i+2:s.i+6]), 16, 32)
				if err != nil {
					s.bad = true
					return ""
				}
				switch {
				case r < 0x80:
					nbytes++
				case r < 0x800:
					nbytes += 2
				case r >= 0xD800 && r < 0xE000: // half of a pair: 4 bytes, 1 character
					nbytes += 2
					if r >= 0xDC00 {
						chars--
					}
				default:
					nbytes += 3
				}
				chars++
				s.i += 6
			} else {
				chars++
				nbytes++
				s.i += 2
			}
		default:
			if c&0xC0 != 0x80 {
				chars++
			}
			nbytes++
			s.i++
		}
		if chars > maxLen {
			s.fail(maxLen, "longer than the cap of %d characters", maxLen)
			return ""
		}
		if maxBytes > 0 && nbytes > maxBytes {
			s.fail(maxBytes, "longer than limits.maxFileBytes (%d bytes)", maxBytes)
			return ""
		}
	}
}

func (s *scanner) object(b *bounds, depth int) {
	if s.open('}') {
		return
	}
	for !s.stop() {
		s.skipSpace()
		if s.i >= len(s.data) || s.data[s.i] != '"' {
			s.bad = true
			return
		}
		keyMax := MaxArgumentsBytes // names are free only where the schema lets them be
		if b != nil && (b.closed || b.extra != nil) {
			keyMax = MaxPathLength
		}
		key := s.str(keyMax, 0)
		if s.stop() {
			return
		}
		if strings.IndexByte(key, '\\') >= 0 || !utf8.ValidString(key) {
			// Decoded as the decoder will: escapes, and invalid UTF-8 as U+FFFD.
			var k string
			if json.Unmarshal([]byte(`"`+key+`"`), &k) != nil {
				s.bad = true
				return
			}
			key = k
		}
		s.path = append(s.path, key)
		var child *bounds
		if b != nil {
			child = b.extra
			if pb, ok := b.props[key]; ok {
				child = pb
			} else if b.closed {
				child = &bounds{maxLen: MaxStringLength, maxItems: MaxArgumentItems} // refused anyway
			}
		}
		s.skipSpace()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			s.bad = true
			return
		}
		s.i++
		if s.element(child, depth, '}') {
			return
		}
	}
}

// open steps into an object or array (s.i at its opener) and reports
// whether it is empty, when it steps over its closer too.
func (s *scanner) open(closer byte) bool {
	s.i++
	s.skipSpace()
	if s.i < len(s.data) && s.data[s.i] == closer {
		s.i++
		return true
	}
	return false
}

// element scans a member's value or an item, whose key or index is the
// last of the path, and what follows it; it reports whether the scan of
// the object or array is over (its closer, or a stop).
func (s *scanner) element(b *bounds, depth int, closer byte) bool {
	s.skipSpace()
	s.value(b, depth+1)
	if s.stop() {
		return true
	}
	s.path = s.path[:len(s.path)-1]
	return s.next(closer)
}

// next steps over what follows a member or an item: a comma (false) or
// closer (true); anything else is malformed (bad, and true).
func (s *scanner) next(closer byte) bool {
	s.skipSpace()
	if s.i < len(s.data) {
		switch s.data[s.i] {
		case ',':
			s.i++
			return false
		case closer:
			s.i++
			return true
		}
	}
	s.bad = true
	return true
}

func (s *scanner) array(b *bounds, depth int) {
	if s.open(']') {
		return
	}
	var items *bounds
	maxItems := MaxArgumentsBytes
	if b != nil {
		items, maxItems = b.items, b.maxItems
	}
	for n := 0; !s.stop(); n++ {
		if n >= maxItems {
			s.fail(maxItems, "more than %d items", maxItems)
			return
		}
		s.path = append(s.path, strconv.Itoa(n))
		if s.element(items, depth, ']') {
			return
		}
	}
}
