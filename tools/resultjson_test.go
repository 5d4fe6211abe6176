package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/agentls/agentls/search"
)

// TestResultAppendJSON holds AppendJSON to json.Marshal, byte for byte, on
// results of every shape its fast paths know and some they leave to it.
func TestResultAppendJSON(t *testing.T) {
	type other struct {
		A string  `json:"a"`
		F float64 `json:"f,omitempty"`
	}
	matches := []search.Match{{Path: "a/b.go", Line: 3, Column: 7, Text: "\treturn nil // <&> \u2028"}, {Path: "é.go", Line: 1, Column: 1, Text: "x\x00\x1f\x7f\xff"}}
	marshaled, _ := json.Marshal(map[string]any{"matches": search.MatchRuns{matches}, "truncated": true})
	// Enough matches to be encoded in parts (appendMatches).
	var many []search.Match
	for i := range 3*minMatchesPart + 7 {
		many = append(many, search.Match{Path: fmt.Sprintf("d%d/f.go", i%13), Line: i, Column: i % 5, Text: matches[i%2].Text})
	}
	// The same as runs of a grep result: uneven, one empty, the parts'
	// bounds inside runs.
	var runs search.MatchRuns
	for lo := 0; lo < len(many); {
		hi := min(len(many), lo+1+lo%977)
		runs = append(runs, many[lo:hi])
		if len(runs) == 3 {
			runs = append(runs, many[hi:hi])
		}
		lo = hi
	}
	tests := []struct {
		name string
		res  Result
	}{
		{"empty", Result{}},
		{"plain", Result{CallID: "c1", Tool: "grep", Status: StatusSuccess, Content: "a:1:x\n", ApprovedBy: "auto", DurationMs: 12}},
		{"grep", *Success("text", map[string]any{
			"truncated": false, "matches": search.MatchRuns{matches}, "files_searched": int64(9), "skipped_binary": int64(0),
		})},
		{"grep many", *Success("text", map[string]any{"truncated": true, "matches": search.MatchRuns{many}})},
		{"grep runs", *Success("text", map[string]any{"truncated": true, "matches": runs})},
		{"grep few runs", *Success("text", map[string]any{"matches": search.MatchRuns{matches[:1], nil, matches[1:]}})},
		{"grep empty", *Success("No matches found.\n", map[string]any{"truncated": false, "matches": search.MatchRuns{}})},
		{"grep nil runs", *Success("", map[string]any{"matches": search.MatchRuns(nil)})},
		{"files and counts", *Success("", map[string]any{
			"files": []string{"b", "a\"<"}, "counts": map[string]int{"z": 1, "a": 2, "<": 3}, "streamed": 4, "none": nil,
		})},
		{"nil values", *Success("", map[string]any{"m": map[string]any(nil), "s": []string(nil), "g": []GrepMatch(nil), "a": []any(nil), "c": map[string]int(nil)})},
		{"nested", *Success("", map[string]any{"list": []any{1, "two", true, nil, map[string]any{"k": []any{}}}, "match": matches[0]})},
		{"fallback", *Success("", map[string]any{"other": other{A: "<x>", F: 1.5}, "ptr": &other{}, "f": 2.5, "u": uint8(3), "raw": json.RawMessage(` { "a" : [1, 2] } `)})},
		{"typed nil", *Success("", []string(nil))},
		{"struct", *Success("", other{A: "b"})},
		{"raw", *Success("", json.RawMessage(`{"x": 1}`))},
		{"kept", Result{Status: StatusSuccess, Structured: json.RawMessage(marshaled), structuredJSON: marshaled, Cached: true, Display: "d", Message: "m"}},
		{"error", *failure(Errorf(NoMatch, "no <match>").WithDetails(map[string]any{"line": 3}))},
	}
	// Every exported field set, so that a field added to Result and not
	// to AppendJSON fails here, omitempty or not.
	var full Result
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("s")
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Interface:
			f.Set(reflect.ValueOf(map[string]any{"k": "v"}))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("Result.%s: a field of kind %s; set it here and encode it in AppendJSON", v.Type().Field(i).Name, f.Kind())
		}
	}
	tests = append(tests, struct {
		name string
		res  Result
	}{"every field", full})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := json.Marshal(&tt.res)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tt.res.AppendJSON([]byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Errorf("AppendJSON:\n%s\njson.Marshal:\n%s", got, want)
			}
		})
	}
	if _, err := (&Result{Structured: map[string]any{"c": make(chan int)}}).AppendJSON(nil); err == nil {
		t.Error("a value json.Marshal cannot encode: no error")
	}
}

// FuzzResultAppendJSON holds AppendJSON to json.Marshal on any strings (in
// every string of a result: invalid UTF-8, control and HTML characters,
// U+2028) and numbers.
func FuzzResultAppendJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "tab\there\nnew\r\x00\x01\x1f\x7f", "\u2028\u2029\ufffd", "\xff\xfe\xc3", "é日本\U0001F600", "\\\"/"} {
		f.Add(s, s+"x", 42, int64(-1))
	}
	f.Fuzz(func(t *testing.T, s, u string, n int, m int64) {
		res := &Result{CallID: s, Tool: u, Status: Status(s), Content: u + s, Display: s, Message: u, ApprovedBy: s, DurationMs: m, Cached: n%2 == 0,
			Structured: map[string]any{
				s: search.MatchRuns{{{Path: s, Line: n, Column: -n, Text: u}}}, u: []string{s, u}, s + u: map[string]int{s: n, u: -n},
				"n": n, "m": m, "b": n > 0, "l": []any{s, n, m, map[string]any{u: s}},
			}}
		want, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		got, err := res.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON:\n%q\njson.Marshal:\n%q", got, want)
		}
		raw, _ := json.Marshal(res.Structured)
		kept := *res
		kept.Structured, kept.structuredJSON = json.RawMessage(raw), raw
		if got, _ := kept.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Fatalf("kept AppendJSON:\n%q\njson.Marshal:\n%q", got, want)
		}
	})
}

// TestPlainWord holds plainWord to jsonPlain: every byte value at every
// place of a word of plain bytes, and appendJSONString to json.Marshal on
// strings with it at every place of a long run of plain text.
func TestPlainWord(t *testing.T) {
	for pos := range 8 {
		for c := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(c)
			x := uint64(0)
			for i := 7; i >= 0; i-- {
				x = x<<8 | uint64(w[i])
			}
			if got, want := plainWord(x), bytes.IndexFunc(w, func(r rune) bool { return r >= 0x80 || !jsonPlain[r] }) < 0; got != want {
				t.Errorf("plainWord(%q) = %v, want %v", w, got, want)
			}
		}
	}
	for c := range 256 {
		for _, at := range []int{0, 1, 7, 8, 9, 15, 16, 23, 29, 30} {
			b := []byte("0123456789abcdefghijklmnopqrstu")
			b[at] = byte(c)
			want, _ := json.Marshal(string(b))
			if got := appendJSONString(nil, string(b)); !bytes.Equal(got, want) {
				t.Errorf("appendJSONString(%q) = %s, want %s", b, got, want)
			}
		}
	}
}
