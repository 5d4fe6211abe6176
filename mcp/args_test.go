package mcp

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestArgumentsAsString: an MCP client that sends a tool's arguments as a
// JSON string holding the object (OpenAI's function calling delivers them
// so) gets the call run with that object.
func TestArgumentsAsString(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	write(t, filepath.Join(root, "a.txt"), "hello\n")
	cs, _ := start(t, setup{root: root})
	res := call(t, cs, "read_file", `{"path":"a.txt"}`)
	if res.IsError || !strings.Contains(text(res), "hello") {
		t.Fatalf("read_file with string arguments: isError %v, %q", res.IsError, text(res))
	}
	res = call(t, cs, "read_file", "path=a.txt")
	if !res.IsError || !strings.Contains(text(res), "does not hold JSON") {
		t.Fatalf("read_file with a string that holds no JSON: isError %v, %q", res.IsError, text(res))
	}
}
