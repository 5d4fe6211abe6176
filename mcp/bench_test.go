package mcp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/attach"
	"github.com/agentls/agentls/lsp/lsptest"
)

// The benchmarks measure one tools/call of a trivial tool
// (get_current_datetime) through the real `agentls mcp` binary on stdio,
// from the Go SDK's client: framing, the SDK on both ends, the pipeline and
// the history. They report the median as p50-ms (and p95-ms). Run both in
// one invocation to compare them:
//
//	go test ./mcp -run '^$' -bench 'Call(Stdio|Attached)' -benchtime 2000x

// benchEnv isolates a benchmark's configuration, state and runtime
// directory.
func benchEnv(b *testing.B) {
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	b.Setenv("XDG_STATE_HOME", b.TempDir())
	b.Setenv("XDG_RUNTIME_DIR", b.TempDir())
}

// BenchmarkCallStdio: a standalone `agentls mcp`.
func BenchmarkCallStdio(b *testing.B) {
	benchEnv(b)
	bin := lsptest.BuildBinary(b)
	root := b.TempDir()
	measure(b, bin, root)
}

// BenchmarkCallAttached: `agentls mcp` attached to an editor's `agentls
// serve`: the call crosses the session's socket and runs in the editor's
// session. The editor is a bare reader of the server's stdout (rawEditor),
// so that the cost of a test harness decoding the session's tool/event
// notifications does not count as the attachment's.
func BenchmarkCallAttached(b *testing.B) {
	benchEnv(b)
	bin := lsptest.BuildBinary(b)
	root := b.TempDir()
	events := rawEditor(b, bin, root)
	if _, ok := attach.FindRoot(root); !ok {
		b.Fatal("the editor's session was not published")
	}
	measure(b, bin, root)
	if events.Load() < int64(b.N) {
		b.Fatalf("%d tool/event notifications for %d calls: the calls did not run in the editor's session", events.Load(), b.N)
	}
}

// rawEditor starts `agentls serve` in root, initializes it (answering
// nothing else: no call here needs approval) and counts the tool/event
// notifications it sends. It returns once initialize is answered.
func rawEditor(b *testing.B, bin, root string) *atomic.Int64 {
	cmd := exec.Command(bin, "serve")
	cmd.Dir = root
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"rootUri":%q,"capabilities":{}}}`, "file://"+root)
	fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(init), init)
	var events atomic.Int64
	ready := make(chan struct{})
	go func() {
		br := bufio.NewReader(out)
		for {
			n := 0
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Content-Length: "); ok {
					n, _ = strconv.Atoi(v)
				}
				if strings.TrimSpace(line) == "" {
					break
				}
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(br, body); err != nil {
				return
			}
			switch {
			case !bytes.Contains(body, []byte(`"method"`)) && bytes.Contains(body, []byte(`"id":1`)):
				close(ready) // the answer to initialize
			case bytes.Contains(body, []byte(`"method":"tool/event"`)):
				events.Add(1)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(time.Minute):
		b.Fatal("the editor's server did not answer initialize")
	}
	return &events
}

// measure starts `agentls mcp` in root and times b.N calls.
func measure(b *testing.B, bin, root string) {
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = root
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: "get_current_datetime", Arguments: map[string]any{}}
	for i := 0; i < 20; i++ { // warm up
		if _, err := cs.CallTool(context.Background(), params); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := cs.CallTool(context.Background(), params)
		lat = append(lat, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("call: %v %v", err, res)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}
