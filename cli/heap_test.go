package cli

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

func TestServerGCPercent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 100},
		{1 << 20, 100},
		{serverGarbage, 100},
		{serverGarbage + 1, 99},
		{2 * serverGarbage, 50},
		{3 * serverGarbage, 33},
		{4 * serverGarbage, minServerGCPercent},
		{100 * serverGarbage, minServerGCPercent},
	} {
		if got := serverGCPercent(tc.live); got != tc.want {
			t.Errorf("serverGCPercent(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}

// TestServerHeap runs serverHeap in a process of its own (this test
// binary again, serverHeapChild), whose collector it paces from then on:
// the GC percent falls to its floor while the live heap is large and
// comes back to 100 once it is small, unless GOGC is set, which decides.
func TestServerHeap(t *testing.T) {
	if os.Getenv("AGENTLS_SERVERHEAP_CHILD") != "" {
		serverHeapChild(t)
		return
	}
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"paced", nil},
		{"GOGC set", []string{"GOGC=150"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestServerHeap$", "-test.count=1", "-test.v")
			env := []string{"AGENTLS_SERVERHEAP_CHILD=1"}
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
					env = append(env, kv)
				}
			}
			cmd.Env = append(env, tc.env...)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestServerHeap") {
				t.Errorf("the child: %v\n%s", err, out)
			}
		})
	}
}

func serverHeapChild(t *testing.T) {
	gogc := func() int {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return int(s[0].Value.Uint64())
	}
	// waitFor collects garbage until the GC percent is want (the pace is
	// set after a collection, by a cleanup that runs on its own).
	waitFor := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); gogc() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("GC percent %d, want %d", gogc(), want)
			}
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
	}
	set := os.Getenv("GOGC") != ""
	start := gogc()
	serverHeap()
	live := make([]byte, 4*serverGarbage) // numbers: not touched, not scanned
	if set {
		// GOGC decides: the percent stays through collections.
		for range 20 {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
			if got := gogc(); got != start {
				t.Fatalf("GC percent %d with GOGC=%s, want it unchanged", got, os.Getenv("GOGC"))
			}
		}
		return
	}
	waitFor(minServerGCPercent)
	runtime.KeepAlive(live)
	live = nil
	waitFor(100)
}
