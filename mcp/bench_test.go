package mcp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/attach"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
)

// The benchmarks measure one tools/call of a trivial tool
// (get_current_datetime) through the real `agentls mcp` binary on stdio,
// from the Go SDK's client: framing, the SDK on both ends, the pipeline and
// the history. They report the median as p50-ms (and p95-ms). Run both in
// one invocation to compare them:
//
//	go test ./mcp -run '^$' -bench 'Call(Stdio|Attached)' -benchtime 2000x
//
// BenchmarkCallAttached also calls a standalone `agentls mcp` in the same
// loop, in turn with the attached one, and reports the difference of the
// medians as added-ms: what attaching adds, measured side by side. With
// AGENTLS_BENCH_BASELINE set to another agentls binary (say, one built
// from main), each benchmark runs that binary's clients in the same loop
// too and reports their figures with the prefix base-.

// benchEnv isolates a benchmark's configuration, state and runtime
// directory.
func benchEnv(b *testing.B) {
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	b.Setenv("XDG_STATE_HOME", b.TempDir())
	testenv.RuntimeDir(b)
}

// binaries are the binary under test and the baseline, if any.
func binaries(b *testing.B) []string {
	bins := []string{lsptest.BuildBinary(b)}
	if base := os.Getenv("AGENTLS_BENCH_BASELINE"); base != "" {
		bins = append(bins, base)
	}
	return bins
}

// prefix is the metric prefix of binary k.
func prefix(k int) string {
	if k > 0 {
		return "base-"
	}
	return ""
}

// BenchmarkCallStdio: a standalone `agentls mcp`.
func BenchmarkCallStdio(b *testing.B) {
	benchEnv(b)
	bins := binaries(b)
	calls := make([]func() error, len(bins))
	var cpu cpuMeter
	for k, bin := range bins {
		var pid int
		calls[k], pid = mcpClient(b, bin, b.TempDir())
		cpu.add(prefix(k)+"cpu-us", pid)
	}
	cpu.begin()
	lat := measure(b, calls)
	cpu.report(b, b.N+warmUp)
	for k := range bins {
		b.ReportMetric(ms(percentile(lat[k], 50)), prefix(k)+"p50-ms")
		b.ReportMetric(ms(percentile(lat[k], 95)), prefix(k)+"p95-ms")
	}
}

// BenchmarkCallAttached: `agentls mcp` attached to an editor's `agentls
// serve`: the call crosses the session's socket and runs in the editor's
// session. The editor is a bare reader of the server's stdout (rawEditor),
// so that the cost of a test harness decoding the session's tool/event
// notifications does not count as the attachment's. A standalone `agentls
// mcp` is called in the same loop: added-ms is the difference of the
// medians.
func BenchmarkCallAttached(b *testing.B) {
	benchEnv(b)
	bins := binaries(b)
	var calls []func() error
	var events []*atomic.Int64
	var cpu cpuMeter
	for k, bin := range bins {
		root := b.TempDir()
		ev, editor := rawEditor(b, bin, root)
		events = append(events, ev)
		if _, ok := attach.FindRoot(root); !ok {
			b.Fatal("the editor's session was not published")
		}
		attached, pid := mcpClient(b, bin, root)
		stdio, spid := mcpClient(b, bin, b.TempDir())
		calls = append(calls, attached, stdio)
		cpu.add(prefix(k)+"cpu-us", pid, editor)
		cpu.add(prefix(k)+"mcp-cpu-us", pid)
		cpu.add(prefix(k)+"editor-cpu-us", editor)
		cpu.add(prefix(k)+"stdio-cpu-us", spid)
	}
	cpu.begin()
	lat := measure(b, calls)
	cpu.report(b, b.N+warmUp)
	for k := range bins {
		attached, stdio := percentile(lat[2*k], 50), percentile(lat[2*k+1], 50)
		b.ReportMetric(ms(attached), prefix(k)+"p50-ms")
		b.ReportMetric(ms(percentile(lat[2*k], 95)), prefix(k)+"p95-ms")
		b.ReportMetric(ms(stdio), prefix(k)+"stdio-p50-ms")
		b.ReportMetric(ms(attached-stdio), prefix(k)+"added-ms")
		if events[k].Load() < int64(b.N) {
			b.Fatalf("%d tool/event notifications for %d calls: the calls did not run in the editor's session", events[k].Load(), b.N)
		}
	}
}

// rawEditor starts `agentls serve` in root, initializes it (answering
// nothing else: no call here needs approval) and counts the tool/event
// notifications it sends. It returns once initialize is answered, with
// the server's process id.
func rawEditor(b *testing.B, bin, root string) (*atomic.Int64, int) {
	in, out, pid := lsptest.ServeRaw(b, bin, root)
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
	return &events, pid
}

// mcpClient starts `agentls mcp` in root and returns a function that
// makes one call through it, and the process's id.
func mcpClient(b *testing.B, bin, root string) (func() error, int) {
	cmd := exec.Command(bin, "mcp")
	cmd.Dir = root
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	params := &sdk.CallToolParams{Name: "get_current_datetime", Arguments: map[string]any{}}
	return func() error {
		res, err := cs.CallTool(context.Background(), params)
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %v", res.Content)
		}
		return err
	}, cmd.Process.Pid
}

// cpuMeter reports the CPU time the processes used during the timed
// calls, per call, as name (the first binary) or base-name: what the load
// of the machine changes least.
type cpuMeter struct {
	pids  [][]int // per metric
	names []string
	start []time.Duration
}

func (m *cpuMeter) add(name string, pids ...int) {
	m.names = append(m.names, name)
	m.pids = append(m.pids, pids)
}

func (m *cpuMeter) total(i int) time.Duration {
	var d time.Duration
	for _, pid := range m.pids[i] {
		d += lsptest.ProcessCPU(pid)
	}
	return d
}

func (m *cpuMeter) begin() {
	m.start = make([]time.Duration, len(m.pids))
	for i := range m.pids {
		m.start[i] = m.total(i)
	}
}

// report reports the CPU per call; calls is how many calls each metric's
// processes made since begin.
func (m *cpuMeter) report(b *testing.B, calls int) {
	for i, name := range m.names {
		if used := m.total(i) - m.start[i]; used > 0 {
			b.ReportMetric(float64(used.Microseconds())/float64(calls), name)
		}
	}
}

// measure times b.N rounds of the calls, each in turn (after a warm-up),
// and returns each one's latencies, sorted.
func measure(b *testing.B, calls []func() error) [][]time.Duration {
	return lsptest.Rounds(b, warmUp, calls)
}

// warmUp is how many calls each client makes before the timed ones.
const warmUp = 20

// percentile is the p-th percentile of sorted latencies.
func percentile(sorted []time.Duration, p int) time.Duration { return sorted[len(sorted)*p/100] }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
