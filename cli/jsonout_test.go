package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// TestWriteIndented: writeIndented writes what json.Encoder with
// SetIndent("", "  ") writes, byte for byte.
func TestWriteIndented(t *testing.T) {
	dir := t.TempDir()
	for i, text := range []string{"alpha <b>&\nbeta alpha\n", "no\n", "\talpha \"quoted\" é\n"} {
		if err := os.WriteFile(filepath.Join(dir, string(rune('a'+i))+".txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws := workspacetest.New(t, dir)
	grep := func(args string) *tools.Result {
		r := tools.RunTool(context.Background(), ws, "grep", json.RawMessage(args))
		if r.Status != tools.StatusSuccess {
			t.Fatalf("grep %s: %s", args, r.Content)
		}
		return r
	}
	var nilMap map[string]int
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"grep content", grep(`{"pattern":"alpha"}`)},
		{"grep no match", grep(`{"pattern":"zzz"}`)},
		{"grep count", grep(`{"pattern":"alpha","output_mode":"count"}`)},
		{"grep files", grep(`{"pattern":"a","output_mode":"files_with_matches"}`)},
		{"error result", &tools.Result{Tool: "x", Status: tools.StatusError, Error: &tools.Error{Code: "c", Message: "m", Details: map[string]any{"a": []any{}}}}},
		{"structured scalar", &tools.Result{Tool: "x", Structured: 3}},
		{"structured with the mark in content", &tools.Result{Content: `"structured": "agentls:structured"`, Structured: map[string]any{"k": "v"}}},
		{"nested", map[string]any{"b": []any{1, "x", map[string]any{}, []string{}, nil, []any{map[string]any{"z": 1, "a": []int{1, 2}}}}, "a": nilMap, "c": json.RawMessage(`{"r":[1, 2]}`)}},
		{"slice of structs", []tools.GrepMatch{{Path: "a", Line: 1}, {Path: "b"}}},
		{"matches over chunks", map[string]any{"matches": manyMatches(2*matchChunk + 3), "n": 1}},
		{"matches, one chunk", manyMatches(matchChunk)},
		{"bytes", []byte("abc")},
		{"nil", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(tc.v); err != nil {
				t.Fatal(err)
			}
			if err := writeIndented(&got, tc.v); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("writeIndented:\n%s\njson.Encoder:\n%s", got.String(), want.String())
			}
			if strings.Contains(tc.name, "grep content") && !strings.Contains(got.String(), `"matches": [`) {
				t.Errorf("no matches in %s", got.String())
			}
		})
	}
}

// manyMatches are n of grep's matches, with text that JSON escapes, as
// grep holds them: runs of uneven lengths (search.MatchRuns).
func manyMatches(n int) search.MatchRuns {
	ms := make([]tools.GrepMatch, n)
	texts := []string{"plain", "a \"quoted\" \\ back", "<html> & \u2028", "tab\there", "", "{[,:]}", "invalid \xff utf-8", "é"}
	for i := range ms {
		ms[i] = tools.GrepMatch{Path: "dir/f" + strings.Repeat("x", i%3) + ".go", Line: i + 1, Column: i % 7, Text: texts[i%len(texts)]}
	}
	var runs search.MatchRuns
	for lo := 0; lo < n; {
		hi := min(n, lo+1+lo%37)
		runs = append(runs, ms[lo:hi])
		lo = hi
	}
	return runs
}

// TestAppendIndented: appendIndented indents what json.Marshal writes as
// json.Indent does, under a prefix or none.
func TestAppendIndented(t *testing.T) {
	for _, v := range []any{
		nil, 1, -2.5, "s", "a\"b\\", `\"`, true, []any{}, map[string]any{},
		[]any{[]any{}, map[string]any{}, []any{[]any{1}}, "]", "}", ",", ":", "\\"},
		map[string]any{"a": map[string]any{"b": []any{1, 2, map[string]any{"c": nil}}}, "d": "x:y,z"},
		manyMatches(9), json.RawMessage(`{ "r" : [1, 2] }`),
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, prefix := range []string{"", "  ", "\t"} {
			var want bytes.Buffer
			if err := json.Indent(&want, b, prefix, "  "); err != nil {
				t.Fatal(err)
			}
			if got := appendIndented([]byte("head:"), b, prefix); string(got) != "head:"+want.String() {
				t.Errorf("appendIndented(%s, %q):\n%s\njson.Indent:\n%s", b, prefix, got, want.String())
			}
		}
	}
}
