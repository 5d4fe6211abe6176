package lsp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/tools"
)

// BenchmarkOneLineEditOfOpenBuffer measures a one-line edit_file of a
// 20,000-line file open in the editor with unsaved changes, end to end
// through the real server: the tool call, the workspace/applyEdit the test
// client answers (applying it to its buffer and sending didChange), and the
// check of what landed. TestOneLineEditSendsOneLine asserts the size of
// the edit sent.
func BenchmarkOneLineEditOfOpenBuffer(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root := b.TempDir()
	c := lsptest.Pipe(b, testRunner(b))
	if _, err := c.Initialize(ctx, root, annotatedCaps(), nil); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(root, "big.txt")
	disk := numberedLines(20000)
	if err := os.WriteFile(path, []byte(disk), 0o644); err != nil {
		b.Fatal(err)
	}
	c.OpenDoc(ctx, path, strings.Replace(disk, "line 3\n", "line 3 (unsaved)\n", 1))
	c.SetHooks(lsptest.Hooks{ApplyEdit: func(raw json.RawMessage) lsptest.ApplyResult { return c.ApplyEdit(ctx, raw, false) }})
	from, to := "line 10000\n", "line 10000 edited\n"
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		res, err := c.ToolCall(ctx, "edit_file", map[string]any{"path": "big.txt", "old_string": from, "new_string": to})
		if err != nil || res.Status != tools.StatusSuccess {
			b.Fatalf("edit: %+v %v", res, err)
		}
		from, to = to, from
	}
	// The CPU time of server and client (one process), which the load of
	// a shared machine changes less than the wall time.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// numberedLines is n lines "line 1" to "line n".
func numberedLines(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}
