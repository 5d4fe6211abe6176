// Package schema compiles JSON Schemas once and reports every violation of a
// value as a JSON pointer and a reason, the shape INVALID_PARAMS details and
// configuration errors share.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Violation is one reason a value does not match its schema.
type Violation struct {
	Pointer string `json:"pointer"` // JSON pointer into the value, "" for the value itself
	Reason  string `json:"reason"`
}

func (v Violation) String() string {
	p := v.Pointer
	if p == "" {
		p = "/"
	}
	return p + ": " + v.Reason
}

// Schema is a compiled schema. It is immutable and safe for concurrent use.
type Schema struct {
	raw      map[string]any
	compiled *jsonschema.Schema
}

var seq atomic.Int64

// Compile compiles a JSON Schema document.
func Compile(raw []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("schema is not an object")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := fmt.Sprintf("mem:///schema-%d.json", seq.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("add schema: %w", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("compile schema: %w", err)
	}
	return &Schema{raw: m, compiled: s}, nil
}

// MustCompile is Compile for schemas that ship with the program.
func MustCompile(raw []byte) *Schema {
	s, err := Compile(raw)
	if err != nil {
		panic(err)
	}
	return s
}

// Decode parses JSON the way the validator wants it (numbers kept exact).
func Decode(data []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

// Validate checks v, a value as Decode returns it, and lists every violation
// in a stable order. It returns nil when v is valid.
func (s *Schema) Validate(v any) []Violation {
	err := s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Reason: err.Error()}}
	}
	var out []Violation
	collect(ve, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return dedupe(out)
}

var printer = message.NewPrinter(language.English)

func collect(e *jsonschema.ValidationError, out *[]Violation) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, out)
		}
		return
	}
	ptr := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, Violation{Pointer: ptr + "/" + escape(p), Reason: "unknown field " + quote(p)})
		}
	case *kind.Required:
		for _, p := range k.Missing {
			*out = append(*out, Violation{Pointer: ptr + "/" + escape(p), Reason: "missing required field " + quote(p)})
		}
	case *kind.Minimum:
		*out = append(*out, Violation{Pointer: ptr, Reason: "minimum: got " + plain(k.Got) + ", want " + plain(k.Want)})
	case *kind.Maximum:
		*out = append(*out, Violation{Pointer: ptr, Reason: "maximum: got " + plain(k.Got) + ", want " + plain(k.Want)})
	case *kind.ExclusiveMinimum:
		*out = append(*out, Violation{Pointer: ptr, Reason: "exclusiveMinimum: got " + plain(k.Got) + ", want more than " + plain(k.Want)})
	case *kind.ExclusiveMaximum:
		*out = append(*out, Violation{Pointer: ptr, Reason: "exclusiveMaximum: got " + plain(k.Got) + ", want less than " + plain(k.Want)})
	case *kind.MultipleOf:
		*out = append(*out, Violation{Pointer: ptr, Reason: "multipleOf: got " + plain(k.Got) + ", not a multiple of " + plain(k.Want)})
	default:
		*out = append(*out, Violation{Pointer: ptr, Reason: e.ErrorKind.LocalizedString(printer)})
	}
}

// plain prints a number as a model writes it: 10000000, 0.25, never
// 1×10⁰⁷ (the validator's printer uses scientific notation).
func plain(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	s := r.FloatString(12)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

func quote(s string) string { return `"` + s + `"` }

func dedupe(vs []Violation) []Violation {
	out := vs[:0]
	for i, v := range vs {
		if i > 0 && v == vs[i-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape(t))
	}
	return b.String()
}

func escape(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// ApplyDefaults fills fields that v lacks with the "default" their schema
// declares, in nested objects too. v must be an object as Decode returns it.
func (s *Schema) ApplyDefaults(v any) {
	applyDefaults(s.raw, v)
}

func applyDefaults(schema map[string]any, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	props, _ := schema["properties"].(map[string]any)
	for name, p := range props {
		ps, ok := p.(map[string]any)
		if !ok {
			continue
		}
		cur, present := obj[name]
		if !present {
			if d, ok := ps["default"]; ok {
				obj[name] = clone(d)
			}
			continue
		}
		applyDefaults(ps, cur)
	}
}

// clone deep-copies a decoded JSON value so defaults are never shared.
func clone(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = clone(e)
		}
		return m
	case []any:
		a := make([]any, len(t))
		for i, e := range t {
			a[i] = clone(e)
		}
		return a
	default:
		return v
	}
}

// Raw returns the schema document as JSON.
func (s *Schema) Raw() json.RawMessage {
	b, _ := json.Marshal(s.raw)
	return b
}
