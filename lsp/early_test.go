package lsp

import (
	"strings"
	"testing"
)

// TestMembers: the scanner that finds a huge call's members agrees with the
// decoder on what it accepts, and refuses what it cannot be sure of.
func TestMembers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want map[string]string // nil: refused
	}{
		{`{}`, map[string]string{}},
		{` {"a":1 , "b" : "x\"}" ,"c":[1,{"d":"]"}],"e":null} `, map[string]string{"a": `1`, "b": `"x\"}"`, "c": `[1,{"d":"]"}]`, "e": `null`}},
		{`{"a":"x\\"}`, map[string]string{"a": `"x\\"`}},
		{`{"a":"x\\\"}"}`, map[string]string{"a": `"x\\\"}"`}},
		{`{"na\u006de":"v"}`, map[string]string{`na\u006de`: `"v"`}},
		{`{"a":{}}x`, nil},
		{`{"a":1`, nil},
		{`{"a":"open}`, nil},
		{`{"a" 1}`, nil},
		{`{"a":1,}`, nil},
		{`{a:1}`, nil},
		{`[1]`, nil},
		{`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, nil},
	} {
		got, ok := members([]byte(tc.in))
		if ok != (tc.want != nil) {
			t.Errorf("%.40s: ok %v, want %v", tc.in, ok, tc.want != nil)
		}
		if !ok || tc.want == nil {
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%.40s: %d members, want %d", tc.in, len(got), len(tc.want))
		}
		for k, v := range tc.want {
			if string(got[k]) != v {
				t.Errorf("%.40s: %s = %s, want %s", tc.in, k, got[k], v)
			}
		}
	}
}
