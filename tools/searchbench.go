package tools

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

// SearchQuery is one query of the comparison with ripgrep: the same search
// as grep arguments and as ripgrep's command line.
type SearchQuery struct {
	Name string
	// Args are grep's arguments (JSON).
	Args string
	// Rg are ripgrep's arguments, pattern included, without the path.
	Rg []string
}

// SearchQueries are the queries the benchmark and the correctness test run
// on $(go env GOROOT)/src: literal, regex, case-insensitive, with a glob
// filter or a type, rare and common.
var SearchQueries = []SearchQuery{
	{"literal", `{"pattern":"NewReader"}`, []string{"NewReader"}},
	{"literal-rare", `{"pattern":"xyzzy"}`, []string{"xyzzy"}},
	{"literal-common", `{"pattern":"return nil, err"}`, []string{"return nil, err"}},
	{"regex", `{"pattern":"func \\(\\w+ \\*Reader\\) Read\\w*\\("}`, []string{`func \(\w+ \*Reader\) Read\w*\(`}},
	{"regex-inner-literal", `{"pattern":"[a-z]+Deadline\\("}`, []string{`[a-z]+Deadline\(`}},
	{"case-insensitive", `{"pattern":"deadline exceeded","case_insensitive":true}`, []string{"-i", "deadline exceeded"}},
	{"case-insensitive-regex", `{"pattern":"utf-?8 ?sequence","case_insensitive":true}`, []string{"-i", "utf-?8 ?sequence"}},
	{"glob", `{"pattern":"t\\.Fatalf","glob":"*_test.go"}`, []string{"-g", "*_test.go", `t\.Fatalf`}},
	{"type-word", `{"pattern":"Mutex","type":"go","word":true}`, []string{"-t", "go", "-w", "Mutex"}},
	{"fixed", `{"pattern":"x.(type)","fixed_strings":true}`, []string{"-F", "x.(type)"}},
	{"alternation", `{"pattern":"ErrUnexpectedEOF|ErrShortWrite"}`, []string{"ErrUnexpectedEOF|ErrShortWrite"}},
	{"anchored", `{"pattern":"^import \\($"}`, []string{`^import \($`}},
	{"no-literal", `{"pattern":"[A-Z]{4,}_[0-9]+"}`, []string{`[A-Z]{4,}_[0-9]+`}},
	{"no-literal-unicode", `{"pattern":"\\d{5,}\\s*$"}`, []string{`\d{5,}\s*$`}},
}

var builtinRegistry = sync.OnceValue(NewBuiltinRegistry)

// RunTool runs one call of a built-in tool through the whole pipeline
// (lookup, validation, policy, execution) in this process, with a fresh
// session: what a warm server does for tool/call, without the process start
// of `agentls call`. The warm-server benchmark uses it.
func RunTool(ctx context.Context, ws *workspace.Workspace, name string, args json.RawMessage) *Result {
	r := NewRunner(builtinRegistry(), nil)
	env := &Env{Workspace: ws, Session: NewSession(), Memory: approval.NewMemory("")}
	return r.Run(ctx, env, Request{Name: name, Arguments: args}, nil)
}
