package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPCommand runs `agentls mcp` through Main: its flags, and one
// session over pipes that ends with exit 0 when the client closes stdin.
func TestMCPCommand(t *testing.T) {
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "HOME"} {
		t.Setenv(v, t.TempDir())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", "--root", filepath.Join(t.TempDir(), "missing")}, "is not a directory"},
		{[]string{"mcp", "extra"}, "unexpected arguments"},
		{[]string{"mcp", "--bogus"}, "flag provided but not defined"},
	} {
		var stderr strings.Builder
		if code := Main(context.Background(), tc.args, IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr}); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q", tc.args, code, stderr.String())
		}
	}

	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), []string{"mcp", "--root", root}, IO{Stdin: inR, Stdout: outW, Stderr: io.Discard})
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	send := func(msg string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, `"id"`) {
			return nil
		}
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		return m
	}
	if m := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	m := send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`)
	if b, _ := json.Marshal(m); !strings.Contains(string(b), `hello`) || strings.Contains(string(b), `"isError":true`) {
		t.Errorf("read_file: %s", b)
	}
	inW.Close()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after stdin closed", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("agentls mcp did not end when stdin closed")
	}
}
