package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

func testEnv(t *testing.T) *Env {
	ws := workspacetest.New(t, t.TempDir())
	return &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{}), Memory: approval.NewMemory(""),
		History: NewHistory(filepath.Join(t.TempDir(), "h.jsonl"))}
}

// validated is a tool whose schema exercises every kind of violation.
var validated = Define(Def[json.RawMessage]{
	Spec: Spec{
		Name: "validated", Description: "schema test", Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["name"],"properties":{
			"name":{"type":"string"},
			"count":{"type":"integer","minimum":1,"maximum":10,"default":3},
			"opts":{"type":"object","additionalProperties":false,"properties":{"deep":{"type":"boolean","default":true}}}}}`),
	},
	Validate: func(args json.RawMessage) error {
		var a struct{ Name string }
		json.Unmarshal(args, &a)
		if a.Name == "forbidden" {
			return Errorf(InvalidParams, "name may not be forbidden")
		}
		return nil
	},
	Execute: func(c *Call, args json.RawMessage) (*Result, error) { return Success(string(args), nil), nil },
})

func TestValidation(t *testing.T) {
	t.Parallel()
	r := NewRunner(NewRegistry(nil), nil)
	r.Registry.MustRegister(validated)
	tests := []struct {
		name, args string
		pointers   []string // violations expected; nil: success
		content    string
	}{
		{"defaults applied", `{"name":"x"}`, nil, `{"count":3,"name":"x"}`},
		{"nested default", `{"name":"x","opts":{}}`, nil, `{"count":3,"name":"x","opts":{"deep":true}}`},
		{"type mismatch", `{"name":5}`, []string{"/name"}, ""},
		{"missing required", `{}`, []string{"/name"}, ""},
		{"unknown field", `{"name":"x","bogus":1}`, []string{"/bogus"}, ""},
		{"out of range", `{"name":"x","count":11}`, []string{"/count"}, ""},
		{"every violation", `{"count":0,"extra":true,"opts":{"deep":"no"}}`, []string{"/count", "/extra", "/name", "/opts/deep"}, ""},
		{"not an object", `[1]`, []string{""}, ""},
		{"not JSON", `{`, []string{""}, ""},
		{"hook after schema", `{"name":"forbidden"}`, []string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := r.Run(context.Background(), testEnv(t), Request{Name: "validated", Arguments: json.RawMessage(tt.args)}, nil)
			if tt.pointers == nil {
				if res.Status != StatusSuccess || res.Content != tt.content {
					t.Fatalf("result = %+v, want success %s", res, tt.content)
				}
				return
			}
			if res.Status != StatusError || res.Error.Code != InvalidParams {
				t.Fatalf("result = %+v, want INVALID_PARAMS", res)
			}
			if len(tt.pointers) == 0 {
				return
			}
			b, _ := json.Marshal(res.Error.Details)
			var d struct {
				Violations []struct{ Pointer, Reason string }
			}
			json.Unmarshal(b, &d)
			var got []string
			for _, v := range d.Violations {
				if v.Reason == "" {
					t.Errorf("violation at %q without reason", v.Pointer)
				}
				got = append(got, v.Pointer)
			}
			if strings.Join(got, " ") != strings.Join(tt.pointers, " ") {
				t.Errorf("pointers = %q, want %q (%s)", got, tt.pointers, b)
			}
		})
	}
}

func TestPipelineOutcomes(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(nil)
	reg.MustRegister(
		Define(Def[json.RawMessage]{Spec: Spec{Name: "boom", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"}},
			Execute: func(*Call, json.RawMessage) (*Result, error) { return nil, errors.New("disk on fire") }}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "coded", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"}},
			Execute: func(*Call, json.RawMessage) (*Result, error) { return nil, Errorf(FileNotFound, "gone") }}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "panics", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"}},
			Execute: func(*Call, json.RawMessage) (*Result, error) { panic("oops") }}),
		// Instant tools run on the call's goroutine: the same outcomes.
		Define(Def[json.RawMessage]{Spec: Spec{Name: "instant-panics", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"}, Instant: true},
			Execute: func(*Call, json.RawMessage) (*Result, error) { panic("oops") }}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "instant-coded", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"}, Instant: true},
			Execute: func(*Call, json.RawMessage) (*Result, error) { return nil, Errorf(FileNotFound, "gone") }}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "instant-ok", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"}, Instant: true},
			Execute: func(*Call, json.RawMessage) (*Result, error) { return &Result{Content: "ok"}, nil }}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "hangs", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"}, Timeout: 50 * time.Millisecond},
			Execute: func(c *Call, _ json.RawMessage) (*Result, error) { <-c.Ctx.Done(); return nil, c.Ctx.Err() }}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "writes", Description: "x", Annotations: Annotations{Approval: "ask"}},
			Execute: func(*Call, json.RawMessage) (*Result, error) { return Success("wrote", nil), nil }}),
		Define(Def[json.RawMessage]{Spec: Spec{Name: "risky", Description: "x", Annotations: Annotations{Approval: "auto"}},
			Assess: func(*Call, json.RawMessage) (Assessment, error) {
				return Assessment{Assessment: approval.Assessment{Blocked: "rm -rf /"}}, nil
			},
			Execute: func(*Call, json.RawMessage) (*Result, error) { return Success("ran", nil), nil }}),
	)
	r := NewRunner(reg, nil)
	tests := []struct {
		tool       string
		approver   approval.Approver
		status     Status
		code       Code
		approvedBy string
	}{
		{"boom", nil, StatusError, Internal, "auto"},
		{"coded", nil, StatusError, FileNotFound, "auto"},
		{"panics", nil, StatusError, Internal, "auto"},
		{"instant-panics", nil, StatusError, Internal, "auto"},
		{"instant-coded", nil, StatusError, FileNotFound, "auto"},
		{"instant-ok", nil, StatusSuccess, "", "auto"},
		{"hangs", nil, StatusError, Timeout, "auto"},
		{"writes", nil, StatusRejected, Rejected, "none"},
		{"writes", approval.Fixed(approval.Reject, "no thanks"), StatusRejected, Rejected, "none"},
		{"writes", approval.Fixed(approval.Approve, ""), StatusSuccess, "", "user"},
		{"risky", approval.Fixed(approval.Approve, ""), StatusError, CommandBlocked, "none"},
	}
	for _, tt := range tests {
		env := testEnv(t)
		env.Approver = tt.approver
		res := r.Run(context.Background(), env, Request{Name: tt.tool}, nil)
		if res.Status != tt.status || (tt.code != "" && (res.Error == nil || res.Error.Code != tt.code)) || res.ApprovedBy != tt.approvedBy {
			t.Errorf("%s: result = %+v (error %+v), want %s %s approvedBy %s", tt.tool, res, res.Error, tt.status, tt.code, tt.approvedBy)
		}
		if res.Tool != tt.tool || !strings.HasPrefix(res.CallID, "tc_") {
			t.Errorf("%s: tool/callId = %q/%q", tt.tool, res.Tool, res.CallID)
		}
		entries, err := env.History.Read(1, "")
		if err != nil || len(entries) != 1 || entries[0].Status != res.Status || entries[0].CallID != res.CallID {
			t.Errorf("%s: history = %+v %v", tt.tool, entries, err)
		}
	}
	// Cancellation answers with status cancelled although Execute never
	// returns: the runner does not wait for the tool.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	reg.MustRegister(Define(Def[json.RawMessage]{Spec: Spec{Name: "forever", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"}},
		Execute: func(c *Call, _ json.RawMessage) (*Result, error) { select {} }}))
	res := r.Run(ctx, testEnv(t), Request{Name: "forever"}, nil)
	if res.Status != StatusCancelled || res.Error == nil || res.Error.Code != Cancelled {
		t.Errorf("cancelled call: %+v", res)
	}
	m := map[string]ToolMetrics{}
	for _, x := range r.Metrics.Snapshot() {
		m[x.Name] = x
	}
	if w := m["writes"]; w.TotalCalls != 3 || w.Rejected != 2 || w.Success != 1 {
		t.Errorf("metrics of writes = %+v", w)
	}
	if res := r.Run(context.Background(), testEnv(t), Request{Name: "read_fil"}, nil); res.Error == nil || res.Error.Code != UnknownTool {
		t.Errorf("unknown: %+v", res)
	}
}

// TestCallEventNamesTheAgent: the call event names the call's agent, else
// the session's, and none when neither is known.
func TestCallEventNamesTheAgent(t *testing.T) {
	reg := NewRegistry(nil)
	reg.MustRegister(validated)
	r := NewRunner(reg, nil)
	tests := []struct{ request, session, want string }{
		{"Claude Code", "VS Code agent", "Claude Code"},
		{"", "VS Code agent", "VS Code agent"},
		{"", "", ""},
	}
	for _, tt := range tests {
		env := testEnv(t)
		env.Agent = tt.session
		var got []Event
		env.Events = EventsFunc(func(e Event) { got = append(got, e) })
		r.Run(context.Background(), env, Request{Name: "validated", Arguments: json.RawMessage(`{"name":"x"}`), Agent: tt.request}, nil)
		if len(got) == 0 || got[0].Kind != "call" || got[0].Agent != tt.want {
			t.Errorf("request %q, session %q: events %+v, want a call event of agent %q first", tt.request, tt.session, got, tt.want)
		}
	}
}

func TestApprovalTimeout(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(nil)
	reg.MustRegister(Define(Def[json.RawMessage]{Spec: Spec{Name: "writes", Description: "x", Annotations: Annotations{Approval: "ask"}},
		Execute: func(*Call, json.RawMessage) (*Result, error) { return Success("wrote", nil), nil }}))
	env := testEnv(t)
	cfg := workspace.DefaultConfig()
	cfg.Approval.TimeoutSeconds = 1
	env.Workspace.SetConfig(cfg)
	env.Approver = approval.ApproverFunc(func(ctx context.Context, _ approval.Request) (approval.Response, error) {
		<-ctx.Done()
		return approval.Response{}, ctx.Err()
	})
	res := NewRunner(reg, nil).Run(context.Background(), env, Request{Name: "writes"}, nil)
	if res.Status != StatusRejected || !strings.Contains(res.Message, "approval.timeoutSeconds") {
		t.Errorf("result = %+v", res)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	root := env.Workspace.Root()
	long := strings.Repeat("é", 3000)
	os.WriteFile(filepath.Join(root, "f.txt"), []byte("a\nb\r\nc\n"+long+"\n"), 0o644)
	os.WriteFile(filepath.Join(root, "bin"), []byte("\x89PNG\r\n\x1a\n\x00\x00"), 0o644)
	os.Mkdir(filepath.Join(root, "dir"), 0o755)
	os.WriteFile(filepath.Join(root, "empty"), nil, 0o644)
	r := NewRunner(NewBuiltinRegistry(), nil)
	tests := []struct {
		name, args string
		code       Code
		content    string // prefix
		check      func(map[string]any) bool
	}{
		{"whole", `{"path":"f.txt"}`, "", "     1\ta\n     2\tb\n     3\tc\n     4\téé", func(s map[string]any) bool {
			return s["total_lines"] == 4.0 && s["truncated"] == false && len(s["cut_lines"].([]any)) == 1
		}},
		{"range", `{"path":"f.txt","offset":2,"limit":1}`, "", "     2\tb\n(lines 2-2 of 4; continue with offset 3)", func(s map[string]any) bool {
			return s["start_line"] == 2.0 && s["end_line"] == 2.0 && s["truncated"] == true
		}},
		{"past end", `{"path":"f.txt","offset":9}`, InvalidParams, "", nil},
		{"binary", `{"path":"bin"}`, "", "bin is a binary file (image/png", func(s map[string]any) bool { return s["binary"] == true }},
		{"base64", `{"path":"bin","encoding":"base64"}`, "", "iVBORw0KGgoAAA==", nil},
		{"directory", `{"path":"dir"}`, NotAFile, "", nil},
		{"empty", `{"path":"empty"}`, "", "empty is empty.", nil},
		{"missing", `{"path":"nope"}`, FileNotFound, "", nil},
		{"sensitive", `{"path":".env"}`, SensitivePath, "", nil},
		{"outside", `{"path":"/etc/passwd"}`, InvalidPath, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := r.Run(context.Background(), env, Request{Name: "read_file", Arguments: json.RawMessage(tt.args)}, nil)
			if tt.code != "" {
				if res.Error == nil || res.Error.Code != tt.code {
					t.Fatalf("result = %+v, want %s", res, tt.code)
				}
				return
			}
			if res.Status != StatusSuccess || !strings.HasPrefix(res.Content, tt.content) {
				t.Fatalf("result = %+v\nwant content prefix %q", res, tt.content)
			}
			if tt.check != nil {
				b, _ := json.Marshal(res.Structured)
				var s map[string]any
				json.Unmarshal(b, &s)
				if !tt.check(s) {
					t.Errorf("structured = %s", b)
				}
			}
		})
	}
	if _, ok := LastRead(env.Session, filepath.Join(root, "f.txt")); !ok {
		t.Error("read not recorded in the session")
	}
}

// TestCurrentDatetime: the tool answers, under its alias, the real time
// (between the clock read before and after the call) in the zone asked
// for; Asia/Tokyo has no daylight saving time, so its offset is always
// +09:00.
func TestCurrentDatetime(t *testing.T) {
	t.Parallel()
	r := NewRunner(NewBuiltinRegistry(), nil)
	before := time.Now()
	res := r.Run(context.Background(), testEnv(t), Request{Name: "getCurrentDateTime", Arguments: json.RawMessage(`{"timezone":"Asia/Tokyo"}`)}, nil)
	after := time.Now()
	s, _ := res.Structured.(map[string]any)
	if res.Status != StatusSuccess || s["timezone"] != "Asia/Tokyo" || s["utc_offset"] != "+09:00" {
		t.Fatalf("result = %+v", res)
	}
	got, err := time.Parse(time.RFC3339, fmt.Sprint(s["iso8601"]))
	if err != nil {
		t.Fatalf("iso8601 %v: %v", s["iso8601"], err)
	}
	// RFC 3339 here keeps whole seconds, so the lower bound is too.
	if got.Before(before.Truncate(time.Second)) || got.After(after) {
		t.Errorf("iso8601 %s is not between %s and %s", got, before, after)
	}
	if ms, _ := s["unix_ms"].(int64); ms < before.UnixMilli() || ms > after.UnixMilli() {
		t.Errorf("unix_ms %v is not between %d and %d", s["unix_ms"], before.UnixMilli(), after.UnixMilli())
	}
	tokyo := got.In(time.FixedZone("JST", 9*60*60))
	if !strings.HasSuffix(fmt.Sprint(s["iso8601"]), "+09:00") || s["unix"] != got.Unix() ||
		s["date"] != tokyo.Format("2006-01-02") || s["time"] != tokyo.Format("15:04:05") || s["weekday"] != tokyo.Weekday().String() {
		t.Errorf("the fields disagree with iso8601 %s: %v", got, s)
	}
	res = r.Run(context.Background(), testEnv(t), Request{Name: "get_current_datetime", Arguments: json.RawMessage(`{"timezone":"Mars/Olympus"}`)}, nil)
	if res.Error == nil || res.Error.Code != InvalidParams {
		t.Errorf("bad zone: %+v", res)
	}
}

// TestCallCarriesTheModel: the model the client declared reaches the tool.
func TestCallCarriesTheModel(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(nil)
	reg.MustRegister(Define(Def[json.RawMessage]{Spec: Spec{Name: "model", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"}},
		Execute: func(c *Call, _ json.RawMessage) (*Result, error) {
			return Success(c.Model.Provider+"/"+c.Model.Name, nil), nil
		}}))
	env := testEnv(t)
	env.Model = Model{Name: "gpt-5", Provider: "openai"}
	if res := NewRunner(reg, nil).Run(context.Background(), env, Request{Name: "model"}, nil); res.Content != "openai/gpt-5" {
		t.Errorf("the tool saw %q, want openai/gpt-5", res.Content)
	}
}

// TestEmptyArgumentsFastPath: for every built-in tool, and tools whose
// schema requires a field or sets defaults, prepare answers {} (worked
// out once per tool) exactly as the whole validation does.
func TestEmptyArgumentsFastPath(t *testing.T) {
	t.Parallel()
	reg := NewBuiltinRegistry()
	reg.MustRegister(validated, Define(Def[json.RawMessage]{Spec: Spec{
		Name: "defaults", Description: "x", Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","default":7},"o":{"type":"object","default":{"a":[1]}}}}`),
	},
		Execute: func(*Call, json.RawMessage) (*Result, error) { return Success("ok", nil), nil }}))
	cfg := testEnv(t).Workspace.Config()
	for _, tool := range reg.List(nil) {
		slow := *tool
		slow.emptyArgs = nil
		for _, raw := range []string{`{}`, ` { } `, "{\n}", ``, `null`, `"{}"`} {
			args, typed, e := prepare(tool, json.RawMessage(raw), cfg)
			wargs, wtyped, we := prepare(&slow, json.RawMessage(raw), cfg)
			if string(args) != string(wargs) || !reflect.DeepEqual(typed, wtyped) || !reflect.DeepEqual(e, we) {
				t.Errorf("%s %q: fast path gives %s %#v %v, the whole validation %s %#v %v", tool.Name, raw, args, typed, e, wargs, wtyped, we)
			}
		}
	}
	if args, _, _ := prepare(mustLookup(t, reg, "defaults"), json.RawMessage(`{}`), cfg); string(args) != `{"n":7,"o":{"a":[1]}}` {
		t.Errorf("defaults of {}: %s", args)
	}
	for name, fast := range map[string]bool{"defaults": true, "get_current_directory": true, "validated": false} {
		if _, ok := mustLookup(t, reg, name).emptyArgs(); ok != fast {
			t.Errorf("%s: {} worked out once = %v, want %v", name, ok, fast)
		}
	}
}

func mustLookup(t *testing.T, reg *Registry, name string) *Tool {
	t.Helper()
	tool, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tool
}
