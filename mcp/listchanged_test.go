package mcp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// listChanges counts notifications/tools/list_changed.
type listChanges chan struct{}

func (c listChanges) hear() {
	select {
	case c <- struct{}{}:
	default:
	}
}

// wait waits until a notification came after which the list is want (a
// change may send more than one), and fails after a bound for a hung
// server, not a timing assertion.
func (c listChanges) wait(t *testing.T, cs *sdk.ClientSession, step string, want []string) {
	t.Helper()
	var got []string
	for bound := time.After(60 * time.Second); ; {
		select {
		case <-c:
		case <-bound:
			t.Fatalf("%s: no notifications/tools/list_changed with the list %v; the last list after one: %v", step, want, got)
		}
		if got = toolNames(t, cs); slices.Equal(got, want) {
			return
		}
	}
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// A standalone server declares tools.listChanged and follows its
// configuration files on disk: the workspace's .agentls.json and the
// user's file.
func TestStandaloneToolListChanged(t *testing.T) {
	isolate(t)
	old := configPoll
	configPoll = 20 * time.Millisecond
	t.Cleanup(func() { configPoll = old })
	root := t.TempDir()
	user := filepath.Join(t.TempDir(), "config.json")
	changes := make(listChanges, 1)
	cs, _ := start(t, setup{root: root, userConfig: user, listChanged: changes.hear})
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("capabilities: %+v", caps.Tools)
	}
	all := toolNames(t, cs)
	if !slices.Contains(all, "read_file") || !slices.Contains(all, "shell_exec") {
		t.Fatalf("tools at start: %v", all)
	}
	withCount := slices.Sorted(slices.Values(append(slices.Clone(all), "count_lines")))
	steps := []struct {
		name, file, content string // content "" removes the file
		want                []string
	}{
		{"the workspace limits tools.enabled", filepath.Join(root, ".agentls.json"),
			`{"tools":{"enabled":["read_file","grep","count_lines"]}}`, []string{"grep", "read_file"}},
		{"the user adds a custom tool", user,
			`{"custom":[{"name":"count_lines","description":"Counts lines.","argv":["wc","-l","{{file}}"],"approval":"ask"}]}`,
			[]string{"count_lines", "grep", "read_file"}},
		{"the workspace file goes", filepath.Join(root, ".agentls.json"), "", withCount},
	}
	for _, st := range steps {
		if st.content == "" {
			os.Remove(st.file)
		} else {
			write(t, st.file, st.content)
		}
		changes.wait(t, cs, st.name, st.want)
	}
	// A tool that left the list cannot be called.
	os.Remove(user)
	write(t, filepath.Join(root, ".agentls.json"), `{"tools":{"enabled":["grep"]}}`)
	changes.wait(t, cs, "grep only", []string{"grep"})
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "x"}}); err == nil {
		t.Error("read_file ran after it left the list")
	}
}

// Attached, the editor's configuration (workspace/didChangeConfiguration)
// reaches the MCP client as notifications/tools/list_changed with the
// session's new list.
func TestAttachedToolListChanged(t *testing.T) {
	bin, root := attachedEnv(t)
	ed := startEditor(t, bin, root)
	changes := make(listChanges, 1)
	cs := startMCP(t, bin, root, &sdk.ClientOptions{ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changes.hear() }})
	if caps := cs.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("capabilities: %+v", caps.Tools)
	}
	all := toolNames(t, cs)
	if !slices.Contains(all, "read_file") || !slices.Contains(all, "edit_file") {
		t.Fatalf("tools at start: %v", all)
	}
	ctx := context.Background()
	settings := func(enabled any) {
		if err := ed.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{
			"agentls": map[string]any{"tools": map[string]any{"enabled": enabled}}}}); err != nil {
			t.Fatal(err)
		}
	}
	settings([]string{"read_file", "grep"})
	changes.wait(t, cs, "the editor limits tools.enabled", []string{"grep", "read_file"})
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "edit_file", Arguments: map[string]any{
		"path": "a.txt", "old_string": "a", "new_string": "b"}}); err == nil {
		t.Error("edit_file ran after it left the list")
	}
	settings("all")
	changes.wait(t, cs, "the editor enables all", all)
}
