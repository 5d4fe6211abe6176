package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

func TestExpandArgv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tmpl []string
		args string
		want string
		err  bool
	}{
		{[]string{"echo", "{{msg}}"}, `{"msg":"hi there"}`, "echo|hi there", false},
		{[]string{"echo", "--n={{n}}", "{{files}}"}, `{"n":3,"files":["a","b"]}`, "echo|--n=3|a|b", false},
		{[]string{"echo", "{{absent}}", "x"}, `{}`, "echo|x", false},
		{[]string{"echo", "{{msg}}"}, `{"msg":"--output=/tmp/x"}`, "", true},
		{[]string{"echo", "{{files}}"}, `{"files":["ok","-rf"]}`, "", true},
		{[]string{"echo", "{{o}}"}, `{"o":{"a":1}}`, "", true},
		{[]string{"{{x}}"}, `{}`, "", true},
	}
	for _, tt := range tests {
		var args map[string]any
		json.Unmarshal([]byte(tt.args), &args)
		got, err := expandArgv(tt.tmpl, args)
		if (err != nil) != tt.err || strings.Join(got, "|") != tt.want {
			t.Errorf("expandArgv(%q, %s) = %q, %v", tt.tmpl, tt.args, got, err)
		}
	}
}

func TestCustomTools(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	root := env.Workspace.Root()
	os.WriteFile(filepath.Join(root, "f.txt"), []byte("x\n"), 0o644)
	cfg := workspace.DefaultConfig()
	cfg.Custom = []workspace.CustomTool{
		{Name: "count_lines", Description: "Counts lines.", Argv: []string{"wc", "-l", "{{file}}"}, Approval: "auto",
			InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["file"],"properties":{"file":{"type":"string"}}}`)},
		{Name: "say", Description: "Says.", Argv: []string{"echo", "{{text}}; rm -rf /"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		{Name: "read_file", Description: "Shadows a built-in.", Argv: []string{"true"}},
	}
	env.Workspace.SetConfig(cfg)
	r := NewRunner(NewBuiltinRegistry(), nil)
	res := r.Run(context.Background(), env, Request{Name: "count_lines", Arguments: json.RawMessage(`{"file":"f.txt"}`)}, nil)
	if res.Status != StatusSuccess || !strings.Contains(res.Content, "1 f.txt") || res.ApprovedBy != "auto" {
		t.Fatalf("count_lines: %+v", res)
	}
	if res := r.Run(context.Background(), env, Request{Name: "count_lines", Arguments: json.RawMessage(`{}`)}, nil); res.Error == nil || res.Error.Code != InvalidParams {
		t.Errorf("schema not enforced: %+v", res)
	}
	// Asks, and no shell interprets the argument.
	env.Approver = approval.Fixed(approval.Approve, "")
	res = r.Run(context.Background(), env, Request{Name: "say", Arguments: json.RawMessage(`{"text":"$(id)"}`)}, nil)
	if res.Status != StatusSuccess || res.ApprovedBy != "user" || !strings.Contains(res.Content, "$(id); rm -rf /") {
		t.Errorf("say: %+v", res)
	}
	var names []string
	for _, tl := range r.Available(cfg, "") {
		names = append(names, tl.Name)
	}
	joined := "," + strings.Join(names, ",") + ","
	if !strings.Contains(joined, ",count_lines,") || strings.Count(joined, ",read_file,") != 1 {
		t.Errorf("available = %v", names)
	}
	if rf, _ := r.lookup(cfg, "read_file"); rf.Description == "Shadows a built-in." {
		t.Error("a custom tool replaced a built-in one")
	}
}

// TestWritesIntoGitAsk: a write into .git asks even where an ordinary
// write runs without asking (yolo mode, or a rule that makes write_file
// automatic), because git run later would run the hook it writes.
func TestWritesIntoGitAsk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		set  func(*workspace.Config)
	}{
		{"write_file rule auto", func(c *workspace.Config) { c.Approval.Tools = map[string]string{"write_file": "auto"} }},
		{"yolo mode", func(c *workspace.Config) { c.Approval.Mode = "yolo" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t)
			root := env.Workspace.Root()
			os.MkdirAll(filepath.Join(root, ".git", "hooks"), 0o755)
			cfg := workspace.DefaultConfig()
			tt.set(cfg)
			env.Workspace.SetConfig(cfg)
			var asked []string
			env.Approver = approval.ApproverFunc(func(_ context.Context, req approval.Request) (approval.Response, error) {
				asked = append(asked, string(req.Arguments))
				return approval.Response{Decision: approval.Reject}, nil
			})
			r := NewRunner(NewBuiltinRegistry(), nil)
			// The ordinary write runs unasked: without that, the write
			// into .git below would ask for a reason that is not git's.
			res := r.Run(context.Background(), env, Request{Name: "write_file", Arguments: json.RawMessage(`{"path":"notes/new.txt","content":"x\n"}`)}, nil)
			if res.Status != StatusSuccess || len(asked) != 0 {
				t.Fatalf("an ordinary write: %+v; questions %q", res, asked)
			}
			res = r.Run(context.Background(), env, Request{Name: "write_file", Arguments: json.RawMessage(`{"path":".git/hooks/pre-commit","content":"#!/bin/sh\n"}`)}, nil)
			if res.Status != StatusRejected || len(asked) != 1 {
				t.Errorf("a write into .git: %+v; questions %q", res, asked)
			}
			if _, err := os.Stat(filepath.Join(root, ".git", "hooks", "pre-commit")); !os.IsNotExist(err) {
				t.Errorf("the hook was written although the write was rejected: %v", err)
			}
		})
	}
}

// TestCustomToolChecksBeforeAsking: arguments a custom tool's command
// refuses (a value that would become an option) are refused before the
// person is asked.
func TestCustomToolChecksBeforeAsking(t *testing.T) {
	t.Parallel()
	env := testEnv(t)
	cfg := workspace.DefaultConfig()
	cfg.Custom = []workspace.CustomTool{{Name: "say", Description: "Says.", Argv: []string{"echo", "{{text}}"},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}}
	env.Workspace.SetConfig(cfg)
	asked := false
	env.Approver = approval.ApproverFunc(func(context.Context, approval.Request) (approval.Response, error) {
		asked = true
		return approval.Response{Decision: approval.Approve}, nil
	})
	res := NewRunner(NewBuiltinRegistry(), nil).Run(context.Background(), env, Request{Name: "say", Arguments: json.RawMessage(`{"text":"-rf"}`)}, nil)
	if res.Error == nil || res.Error.Code != InvalidParams || !strings.Contains(res.Content, `may not start with "-"`) {
		t.Errorf("result = %+v, want INVALID_PARAMS about the leading -", res)
	}
	if asked {
		t.Error("the person was asked about a call its command refuses")
	}
}
