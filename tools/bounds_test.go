package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"

	"github.com/agentls/agentls/workspace/workspacetest"
)

// walkSchema calls fn on every subschema of s with its pointer.
func walkSchema(s any, ptr string, fn func(ptr string, m map[string]any)) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	fn(ptr, m)
	if props, ok := m["properties"].(map[string]any); ok {
		for k, v := range props {
			walkSchema(v, ptr+"/"+k, fn)
		}
	}
	walkSchema(m["items"], ptr+"/[]", fn)
	walkSchema(m["additionalProperties"], ptr+"/*", fn)
}

// TestEverySchemaStatesItsCaps: in the exported definitions of every
// built-in tool, each string has a maxLength, each array a maxItems and
// each map a propertyNames cap; the schemas keep their key order.
func TestEverySchemaStatesItsCaps(t *testing.T) {
	t.Parallel()
	defs, err := Export(NewBuiltinRegistry().List(nil), "agentls")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(defs)
	var tools []struct {
		Name        string
		InputSchema any
	}
	json.Unmarshal(b, &tools)
	strs := 0
	for _, tl := range tools {
		walkSchema(tl.InputSchema, "", func(ptr string, m map[string]any) {
			_, enum := m["enum"]
			switch m["type"] {
			case "string":
				strs++
				if _, ok := m["maxLength"]; !ok {
					t.Errorf("%s %s: a string without maxLength", tl.Name, ptr)
				}
			case nil:
				if _, ok := m["maxLength"]; !ok && !enum {
					t.Errorf("%s %s: an untyped value without maxLength", tl.Name, ptr)
				}
			case "array":
				if _, ok := m["maxItems"]; !ok {
					t.Errorf("%s %s: an array without maxItems", tl.Name, ptr)
				}
			}
			if ap, ok := m["additionalProperties"].(map[string]any); ok && ap != nil && m["propertyNames"] == nil {
				t.Errorf("%s %s: a map without propertyNames", tl.Name, ptr)
			}
		})
	}
	if strs < 40 {
		t.Errorf("only %d strings seen: the walk is broken", strs)
	}
	caps := map[string]float64{}
	for _, tl := range tools {
		walkSchema(tl.InputSchema, tl.Name, func(ptr string, m map[string]any) {
			if n, ok := m["maxLength"].(float64); ok {
				caps[ptr] = n
			}
		})
	}
	for ptr, want := range map[string]float64{
		"read_file/path": MaxPathLength, "move_file/from": MaxPathLength, "copy_file/dest": MaxPathLength,
		"git_commit/files/[]": MaxPathLength, "shell_exec/cwd": MaxPathLength,
		"grep/pattern": MaxStringLength, "glob/pattern": MaxStringLength, "shell_exec/command": MaxStringLength,
		"shell_exec/env/*": MaxStringLength, "web_fetch/url": MaxURLLength, "web_search/query": 400,
		"write_file/content": MaxContentLength, "multi_edit/edits/[]/old_string": MaxContentLength,
		"apply_patch/patch": MaxContentLength, "run_code/code": MaxContentLength,
	} {
		if caps[ptr] != want {
			t.Errorf("%s: maxLength %v, want %v", ptr, caps[ptr], want)
		}
	}
	if !strings.HasPrefix(string(ReadFile.InputSchema), `{"type":"object","additionalProperties":false,"required"`) {
		t.Errorf("read_file's schema lost its key order: %.80s", ReadFile.InputSchema)
	}
}

// TestOversizeArguments: a value over its cap is INVALID_PARAMS naming the
// value's pointer and the cap; a value at the cap passes the size check.
func TestOversizeArguments(t *testing.T) {
	t.Parallel()
	r := NewRunner(NewBuiltinRegistry(), nil)
	env := testEnv(t)
	cfg := env.Workspace.Config()
	cfg.Limits.MaxFileBytes = 2048
	env.Workspace.SetConfig(cfg)
	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	long := func(n int) string { return strings.Repeat("a", n) }
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	files := make([]string, MaxArgumentItems+1)
	for i := range files {
		files[i] = `"f"`
	}
	tests := []struct {
		name, tool, args string
		pointer          string // "" with no reason: no size violation
		reason           string
		limit            int
	}{
		{"path over", "read_file", `{"path":` + str(long(4097)) + `}`, "/path", "4096 characters", 4096},
		{"path at the cap", "read_file", `{"path":` + str(long(4096)) + `}`, "", "", 0},
		{"multibyte path at the cap", "read_file", `{"path":` + str(strings.Repeat("é", 4096)) + `}`, "", "", 0},
		{"multibyte path over", "read_file", `{"path":` + str(strings.Repeat("é", 4097)) + `}`, "/path", "4096", 4096},
		{"escaped path at the cap", "read_file", `{"path":"` + strings.Repeat(`\u00e9`, 4096) + `"}`, "", "", 0},
		{"escaped pairs at the cap", "read_file", `{"path":"` + strings.Repeat(`\ud83d\ude00`, 4096) + `"}`, "", "", 0},
		{"escaped path over", "read_file", `{"path":"` + strings.Repeat(`\n`, 4097) + `"}`, "/path", "4096", 4096},
		{"pattern over", "grep", `{"pattern":` + str(long(65537)) + `}`, "/pattern", "65536", 65536},
		{"glob over", "glob", `{"pattern":"*","path":` + str(long(5000)) + `}`, "/path", "4096", 4096},
		{"command over", "shell_exec", `{"command":` + str(long(70000)) + `}`, "/command", "65536", 65536},
		{"env value over", "shell_exec", `{"command":"ls","env":{"A_B":` + str(long(70000)) + `}}`, "/env/A_B", "65536", 65536},
		{"env name over", "shell_exec", `{"command":"ls","env":{` + str(long(5000)) + `:"x"}}`, "/env", "4096", 4096},
		{"content over the config", "write_file", `{"path":"a","content":` + str(long(2049)) + `}`, "/content", "limits.maxFileBytes (2048 bytes)", 2048},
		{"content at the config", "write_file", `{"path":"a","content":` + str(long(2048)) + `}`, "", "", 0},
		{"nested old_string", "multi_edit", `{"path":"a","edits":[{"old_string":"x","new_string":"y"},{"old_string":` + str(long(3000)) + `,"new_string":""}]}`, "/edits/1/old_string", "maxFileBytes", 2048},
		{"url over", "web_fetch", `{"url":"http://x/` + long(9000) + `"}`, "/url", "8192", 8192},
		{"too many files", "git_commit", `{"message":"m","files":[` + strings.Join(files, ",") + `]}`, "/files", "more than 10000 items", 10000},
		{"unknown field", "read_file", `{"path":"a","junk":` + str(long(70000)) + `}`, "/junk", "65536", 65536},
		{"too deep", "read_file", `{"path":"a","junk":` + deep + `}`, "/junk" + strings.Repeat("/a", 32), "nested", 32},
		{"long number", "read_file", `{"path":"a","limit":` + strings.Repeat("9", 200) + `}`, "/limit", "literal", 100},
		{"escaped key", "read_file", `{"p\u0061th":` + str(long(4097)) + `}`, "/path", "4096", 4096},
		{"whole arguments", "read_file", `{"path":"a","junk":"` + long(MaxArgumentsBytes) + `"}`, "", "over the cap of 67108864 bytes", MaxArgumentsBytes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := r.Run(context.Background(), env, Request{Name: tc.tool, Arguments: json.RawMessage(tc.args)}, nil)
			var details struct { // as the wire carries them
				Violations []map[string]any
				Limit      *int
			}
			if res.Error != nil {
				b, _ := json.Marshal(res.Error.Details)
				json.Unmarshal(b, &details)
			}
			sizeErr := res.Error != nil && res.Error.Code == InvalidParams && details.Limit != nil
			if tc.reason == "" {
				if sizeErr {
					t.Fatalf("refused for size: %s", res.Error.Message)
				}
				return
			}
			if !sizeErr {
				t.Fatalf("not refused for size: %+v", res.Error)
			}
			if len(details.Violations) != 1 {
				t.Fatalf("violations %v, want one", details.Violations)
			}
			v := details.Violations[0]
			if v["pointer"] != tc.pointer || !strings.Contains(v["reason"].(string), tc.reason) {
				t.Errorf("violation %v, want %s: …%s…", v, tc.pointer, tc.reason)
			}
			if *details.Limit != tc.limit {
				t.Errorf("limit %d, want %d", *details.Limit, tc.limit)
			}
			if !strings.Contains(res.Error.Message, tc.reason) {
				t.Errorf("message %q does not say %q", res.Error.Message, tc.reason)
			}
		})
	}
}

// TestOversizeNotLogged: refused oversize arguments leave a marker in the
// history, not the value.
func TestOversizeNotLogged(t *testing.T) {
	t.Parallel()
	r := NewRunner(NewBuiltinRegistry(), nil)
	env := testEnv(t)
	path := strings.Repeat("p", 1<<20)
	res := r.Run(context.Background(), env, Request{Name: "read_file", Arguments: json.RawMessage(`{"path":"` + path + `"}`)}, nil)
	if res.Error == nil || res.Error.Code != InvalidParams {
		t.Fatalf("result %+v", res)
	}
	entries, err := env.History.Read(0, "")
	if err != nil || len(entries) != 1 {
		t.Fatalf("history: %v %v", entries, err)
	}
	if got := string(entries[0].Arguments); len(got) > 200 || !strings.Contains(got, "not logged") {
		t.Errorf("history kept %d bytes of arguments: %.100s", len(got), got)
	}
	if fi, _ := os.Stat(env.History.file); fi.Size() > 4096 {
		t.Errorf("history file is %d bytes", fi.Size())
	}
}

// BenchmarkOversizeArgument measures the refusal of a 50 MB path, the whole
// call through Runner.Run with the history on: the cost is the cap's, not
// the value's.
func BenchmarkOversizeArgument(b *testing.B) {
	r := NewRunner(NewBuiltinRegistry(), nil)
	dir := b.TempDir()
	ws := workspacetest.New(b, dir)
	env := &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{}), Memory: approval.NewMemory(""), History: NewHistory(dir + "/h.jsonl")}
	args := json.RawMessage(`{"path":"` + strings.Repeat("x", 50<<20) + `"}`)
	b.ResetTimer()
	for b.Loop() {
		res := r.Run(context.Background(), env, Request{Name: "read_file", Arguments: args}, nil)
		if res.Error == nil || res.Error.Code != InvalidParams {
			b.Fatal(fmt.Sprint(res.Error))
		}
	}
}
