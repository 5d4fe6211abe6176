package schema

import (
	"strings"
	"testing"
)

// TestViolations: what a violation says, for the model to correct its
// arguments. Numbers print as they are written, never in scientific
// notation.
func TestViolations(t *testing.T) {
	t.Parallel()
	s := MustCompile([]byte(`{"type":"object","additionalProperties":false,"required":["r"],"properties":{
		"r":{"type":"string"},
		"max":{"type":"integer","maximum":10000000},
		"min":{"type":"number","minimum":0.5},
		"xmin":{"type":"number","exclusiveMinimum":0},
		"xmax":{"type":"number","exclusiveMaximum":1e21},
		"mul":{"type":"integer","multipleOf":1000000},
		"len":{"type":"string","maxLength":3}}}`))
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`{"r":"x","max":123456789}`, "/max: maximum: got 123456789, want 10000000"},
		{`{"r":"x","min":0.25}`, "/min: minimum: got 0.25, want 0.5"},
		{`{"r":"x","xmin":0}`, "/xmin: exclusiveMinimum: got 0, want more than 0"},
		{`{"r":"x","xmax":2e21}`, "/xmax: exclusiveMaximum: got 2000000000000000000000, want less than 1000000000000000000000"},
		{`{"r":"x","mul":1500000}`, "/mul: multipleOf: got 1500000, not a multiple of 1000000"},
		{`{"r":"x","len":"abcd"}`, "/len: maxLength"},
		{`{}`, `/r: missing required field "r"`},
		{`{"r":"x","zzz":1}`, `/zzz: unknown field "zzz"`},
		{`{"r":"x"}`, ""},
	} {
		v, err := Decode([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, vi := range s.Validate(v) {
			got = append(got, vi.String())
		}
		joined := strings.Join(got, "; ")
		if tc.want == "" && joined != "" || !strings.Contains(joined, tc.want) || strings.Contains(joined, "×10") {
			t.Errorf("%s: got %q, want %q", tc.in, joined, tc.want)
		}
	}
}
