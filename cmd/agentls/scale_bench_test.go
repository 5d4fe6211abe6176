package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
	"github.com/agentls/agentls/search"
)

// BenchmarkScale is the comparison with ripgrep that scripts/bench.sh (make
// bench) prints as one Markdown table, tree by tree:
//
//   - for each query of the benchmark set, ripgrep (`rg ARGS` in the tree,
//     stdout read through a pipe) beside agentls three ways:
//     "server", grep through tool/call to the real binary over stdio,
//     warm (the index built, one warm-up call) but with its result cache
//     off, so that every call is searched (through the index) as a new
//     query is, timed from bare frames: the request written, the answer
//     read whole and checked (rawClient.toolCall), not decoded, as
//     ripgrep's output is read and not parsed; "jsonrpc2 client", the
//     same call to a second server from the tests' go.lsp.dev/jsonrpc2
//     client, which decodes the answer (twice: the envelope, then the
//     result), shown so that a client's own cost is in sight; and
//     "call", the one-shot `agentls call grep ARGS` (a process of its
//     own, no server). They run interleaved, query by query, and each
//     figure is the median of the runs; the ratios are of those medians,
//     measured side by side. Beside the table, the server's minor page
//     faults a call (median) are reported as the metric
//     server-faults/call:TREE:QUERY: memory its heap grew into.
//   - the tool/call round trip (p50) of a trivial tool through the binary,
//     from bare frames and from the tests' jsonrpc2 client;
//   - the index builds the server reports with $/progress (begin → end);
//   - the server's peak RSS beside the tree's size.
//
// Environment: AGENTLS_BENCH_TREES (colon-separated directories; default
// $(go env GOROOT)/src; scripts/bench.sh adds the monorepo tree of
// scripts/monorepo-tree.sh), AGENTLS_BENCH_RUNS (default 5),
// AGENTLS_BENCH_QUERIES (a regexp of query names; default the benchmark
// set below, "." for all of search.Queries), AGENTLS_BENCH_BIN (the
// agentls binary to measure; default one built from this checkout, so that
// another build can be measured beside it). Skipped without rg.
func BenchmarkScale(b *testing.B) {
	if _, err := exec.LookPath("rg"); err != nil {
		b.Skip("ripgrep is not installed (scripts/install-deps.sh ripgrep)")
	}
	trees := benchTrees()
	runs := 5
	if n, err := strconv.Atoi(os.Getenv("AGENTLS_BENCH_RUNS")); err == nil && n > 0 {
		runs = n
	}
	sel := `^(literal|literal-rare|no-match|case-insensitive|regex-inner-literal|alternation|no-literal|output-heavy)$`
	if s := os.Getenv("AGENTLS_BENCH_QUERIES"); s != "" {
		sel = s
	}
	re, err := regexp.Compile(sel)
	if err != nil {
		b.Fatalf("AGENTLS_BENCH_QUERIES: %v", err)
	}
	var qs []search.Query
	for _, q := range benchQueries() {
		if re.MatchString(q.Name) {
			qs = append(qs, q)
		}
	}
	bin := os.Getenv("AGENTLS_BENCH_BIN")
	if bin == "" {
		bin = lsptest.BuildBinary(b)
	}
	for b.Loop() {
		fmt.Printf("\nagentls vs ripgrep, median of %d interleaved runs (%s, GOMAXPROCS %d)\n\n", runs, runtime.Version(), runtime.GOMAXPROCS(0))
		fmt.Println("| tree | query | rg ms | server ms | server/rg | jsonrpc2 client ms | call ms | call/rg |")
		fmt.Println("|---|---|--:|--:|--:|--:|--:|--:|")
		for _, tree := range trees {
			benchTree(b, bin, tree, qs, runs)
		}
	}
}

// benchQueries are search.Queries and, when it has none of those names,
// a query that matches nothing and an output-heavy one (about 10,000
// matching lines in GOROOT/src, 80,000 in the monorepo tree, all of them
// asked for).
func benchQueries() []search.Query {
	qs := append([]search.Query(nil), search.Queries...)
	extra := []search.Query{
		{Name: "no-match", Args: `{"pattern":"qzxv_nomatch_jqk"}`, Rg: []string{"qzxv_nomatch_jqk"}},
		{Name: "output-heavy", Args: `{"pattern":"return nil","max_results":100000}`, Rg: []string{"return nil"}},
	}
	for _, e := range extra {
		found := false
		for _, q := range qs {
			found = found || q.Name == e.Name
		}
		if !found {
			qs = append(qs, e)
		}
	}
	return qs
}

func benchTrees() []string {
	if s := os.Getenv("AGENTLS_BENCH_TREES"); s != "" {
		return filepath.SplitList(s)
	}
	return []string{filepath.Join(runtime.GOROOT(), "src")}
}

// benchConfig is the servers' initializationOptions.
var benchConfig = map[string]any{"config": map[string]any{
	"history": map[string]any{"enabled": false},
	// Each call is searched: a repeated call is not answered from the
	// session's result cache, which would measure the cache.
	"tools": map[string]any{"resultCache": false},
}}

// benchTree prints the rows of one tree.
func benchTree(b *testing.B, bin, tree string, qs []search.Query, runs int) {
	ctx := context.Background()
	files, bytes := testenv.TreeSize(tree)
	label := fmt.Sprintf("%s (%dk files, %d MB)", filepath.Base(tree), (files+500)/1000, bytes>>20)

	// The tree's files in the page cache first, as ripgrep's runs find
	// them: the builds are timed reading memory, not the disk.
	warm := exec.Command("rg", "-c", "--no-messages", "qzxv_warm_the_page_cache")
	warm.Dir = tree
	warm.Run()

	// The server, with its index builds timed from their $/progress.
	p := lsptest.Binary(b, bin, tree)
	prog := &progressClock{begin: map[string]time.Time{}, title: map[string]string{}, took: map[string]time.Duration{}, ended: map[string]time.Time{}}
	p.SetHooks(lsptest.Hooks{Other: func(method string, params json.RawMessage) (any, error) { return nil, nil }})
	prog.start = time.Now()
	if _, err := p.Initialize(ctx, tree, lsptest.AgentlsCaps(), benchConfig); err != nil {
		b.Fatal(err)
	}
	if !prog.wait(p.Client, 10*time.Minute) {
		b.Fatalf("%s: the index builds did not end: %v", tree, prog.pending())
	}
	// Background work that reports no progress must not share the CPU
	// with the measures: wait until the server is idle. A build whose
	// progress began after the others ended (its token's creation is a
	// round trip of its own) is waited for too.
	// The progress is polled meanwhile, so that each end is timed when it
	// arrives.
	stop := make(chan struct{})
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				prog.poll(p.Client)
			}
		}
	}()
	for {
		waitIdle(p.Cmd.Process.Pid, 10*time.Minute)
		if n := prog.begun(); !prog.wait(p.Client, 10*time.Minute) {
			b.Fatalf("%s: the index builds did not end: %v", tree, prog.pending())
		} else if prog.begun() == n {
			break
		}
	}
	close(stop)
	built := rss(p.Cmd.Process.Pid, "VmRSS:")
	// The server timed from bare frames: a second one on the same tree,
	// once it is idle (its index is loaded from the on-disk copy the
	// first one wrote).
	raw := rawServer(b, bin, tree, benchConfig)
	waitIdle(raw.pid, 10*time.Minute)

	runProc := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Stdout = tree, io.Discard
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if e, ok := err.(*exec.ExitError); err != nil && (!ok || e.ExitCode() > 1) {
			b.Fatalf("%s %v: %v", name, args, err)
		}
		return d
	}
	for _, q := range qs {
		var rg, server, client, call []time.Duration
		var faults []int64
		params := []byte(fmt.Sprintf(`{"name":"grep","arguments":%s}`, q.Args))
		for i := 0; i <= runs; i++ {
			r := runProc("rg", q.Rg...)
			f0 := minorFaults(raw.pid)
			start := time.Now()
			if _, err := raw.toolCall(params); err != nil {
				b.Fatalf("%s on %s: %v", q.Name, tree, err)
			}
			s := time.Since(start)
			if i > 0 {
				faults = append(faults, minorFaults(raw.pid)-f0)
			}
			start = time.Now()
			var res struct {
				Status  string `json:"status"`
				Content json.RawMessage
			}
			if err := p.Call(ctx, "tool/call", map[string]any{"name": "grep", "arguments": json.RawMessage(q.Args)}, &res); err != nil || res.Status != "success" {
				b.Fatalf("%s on %s: %v %s", q.Name, tree, err, res.Content)
			}
			j := time.Since(start)
			c := runProc(bin, "call", "grep", q.Args, "--root", ".", "--approve", "no")
			if i > 0 { // the first run warms the caches
				rg, server, client, call = append(rg, r), append(server, s), append(client, j), append(call, c)
			}
		}
		mr, ms, mj, mc := testenv.MedianMs(rg), testenv.MedianMs(server), testenv.MedianMs(client), testenv.MedianMs(call)
		fmt.Printf("| %s | %s | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2fx |\n", label, q.Name, mr, ms, ms/mr, mj, mc, mc/mr)
		b.ReportMetric(ms/mr, "server/rg:"+filepath.Base(tree)+":"+q.Name)
		b.ReportMetric(mc/mr, "call/rg:"+filepath.Base(tree)+":"+q.Name)
		slices.Sort(faults)
		b.ReportMetric(float64(faults[len(faults)/2]), "server-faults/call:"+filepath.Base(tree)+":"+q.Name)
	}

	// The round trip of a trivial tool, from two clients: the tests'
	// go.lsp.dev/jsonrpc2 client, whose own work per call (goroutines,
	// decoding into maps) is most of what it measures, and bare frames
	// written and read back.
	var rt, bare []time.Duration
	for i := 0; i < 250; i++ {
		start := time.Now()
		if _, err := p.ToolCall(ctx, "get_current_directory", map[string]any{}); err != nil {
			b.Fatal(err)
		}
		if i >= 50 {
			rt = append(rt, time.Since(start))
		}
	}
	for i := 0; i < 550; i++ {
		start := time.Now()
		if err := raw.call(); err != nil {
			b.Fatal(err)
		}
		if i >= 50 {
			bare = append(bare, time.Since(start))
		}
	}
	fmt.Printf("| %s | tool/call round trip p50 (get_current_directory), bare frames | | %.2f | | | |\n", label, testenv.MedianMs(bare))
	fmt.Printf("| %s | tool/call round trip p50 (get_current_directory), go.lsp.dev/jsonrpc2 client | | %.2f | | | |\n", label, testenv.MedianMs(rt))
	for _, t := range prog.done() {
		fmt.Printf("| %s | index build: %s | | %.0f | | | |\n", label, t.title, float64(t.took.Microseconds())/1000)
		fmt.Printf("| %s | index build: %s, from initialize | | %.0f | | | |\n", label, t.title, float64(t.since.Microseconds())/1000)
	}
	if built > 0 {
		fmt.Printf("| %s | server RSS MB once indexed (x tree size) | | %d | %.2fx | | |\n", label, built>>20, float64(built)/float64(bytes))
	}
	if hwm := rss(p.Cmd.Process.Pid, "VmHWM:"); hwm > 0 {
		fmt.Printf("| %s | server peak RSS MB, after the queries (x tree size) | | %d | %.2fx | | |\n", label, hwm>>20, float64(hwm)/float64(bytes))
	}
	p.Call(ctx, "shutdown", nil, nil)
	p.Notify(ctx, "exit", nil)
	p.Wait(10 * time.Second)
}

// progressClock times the $/progress tokens of a server, begin to end,
// and from the initialize request (start) to the end, polling what the
// client received.
type progressClock struct {
	mu    sync.Mutex
	start time.Time
	begin map[string]time.Time
	title map[string]string
	took  map[string]time.Duration
	ended map[string]time.Time
	seen  int
}

type progressTime struct {
	title       string
	took, since time.Duration
}

// poll reads the progress notifications that arrived since the last poll.
func (pc *progressClock) poll(c *lsptest.Client) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	msgs := c.Received("$/progress")
	for _, m := range msgs[pc.seen:] {
		var v struct {
			Token any `json:"token"`
			Value struct {
				Kind  string `json:"kind"`
				Title string `json:"title"`
			} `json:"value"`
		}
		if json.Unmarshal(m.Params, &v) != nil {
			continue
		}
		tok := fmt.Sprint(v.Token)
		switch v.Value.Kind {
		case "begin":
			pc.begin[tok], pc.title[tok] = time.Now(), v.Value.Title
		case "end":
			if t, ok := pc.begin[tok]; ok {
				pc.took[tok], pc.ended[tok] = time.Since(t), time.Now()
			}
		}
	}
	pc.seen = len(msgs)
}

// wait waits until a token began (or two seconds passed without one) and
// every token that began ended.
func (pc *progressClock) wait(c *lsptest.Client, limit time.Duration) bool {
	start := time.Now()
	for time.Since(start) < limit {
		pc.poll(c)
		pc.mu.Lock()
		ended := (len(pc.begin) > 0 || time.Since(start) > 2*time.Second) && len(pc.begin) == len(pc.took)
		pc.mu.Unlock()
		if ended {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// begun is the number of tokens that began.
func (pc *progressClock) begun() int {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return len(pc.begin)
}

func (pc *progressClock) pending() []string {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	var out []string
	for tok := range pc.begin {
		if _, ok := pc.took[tok]; !ok {
			out = append(out, pc.title[tok])
		}
	}
	return out
}

func (pc *progressClock) done() []progressTime {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	var out []progressTime
	for tok, d := range pc.took {
		out = append(out, progressTime{strings.TrimPrefix(pc.title[tok], "agentls: "), d, pc.ended[tok].Sub(pc.start)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].title < out[j].title })
	return out
}

// rss is a process's resident set (field "VmRSS:") or its peak ("VmHWM:")
// in bytes, 0 when unknown.
func rss(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// waitIdle waits until the process used less than 20 ms of CPU in a
// second, or limit passed.
func waitIdle(pid int, limit time.Duration) {
	start := time.Now()
	last := cpuTicks(pid)
	for time.Since(start) < limit {
		time.Sleep(time.Second)
		now := cpuTicks(pid)
		if now-last < 2 { // clock ticks of 10 ms
			return
		}
		last = now
	}
}

// cpuTicks is a process's user and system time in clock ticks.
func cpuTicks(pid int) int64 {
	f := procStat(pid)
	return f[14] + f[15] // utime, stime
}

// minorFaults is the minor page faults of process pid so far (a first
// touch of memory: /proc/PID/stat field 10).
func minorFaults(pid int) int64 { return procStat(pid)[10] }

// procStat returns the numeric fields of /proc/PID/stat by their number
// in proc(5) (from 1; fields 1 to 3 are left 0); all 0 when it
// cannot be read.
func procStat(pid int) [53]int64 {
	var out [53]int64
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return out
	}
	s := string(data)
	for i, f := range strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) { // fields from 3 on
		if n, err := strconv.ParseInt(f, 10, 64); err == nil && 3+i < len(out) {
			out[3+i] = n
		}
	}
	return out
}

// TestIndexProgress: the real server reports the build of its code index on
// $/progress, on a token it created with window/workDoneProgress/create,
// begin then end (with the number of files), only to a client with
// window.workDoneProgress; after the end, workspace/symbol finds every
// file's symbols.
func TestIndexProgress(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	const files = 40
	for i := range files {
		src := fmt.Sprintf("package p\n\n// F%d is.\nfunc F%d() int { return %d }\n", i, i, i)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.go", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name     string
		progress bool
	}{{"workDoneProgress", true}, {"no workDoneProgress", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			p := lsptest.Binary(t, lsptest.BuildBinary(t), root)
			var created []string
			var mu sync.Mutex
			p.SetHooks(lsptest.Hooks{Other: func(method string, params json.RawMessage) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				created = append(created, method+" "+string(params))
				return nil, nil
			}})
			caps := map[string]any{"window": map[string]any{"workDoneProgress": tc.progress}}
			opts := map[string]any{"config": map[string]any{"lsp": map[string]any{"features": []string{"workspaceSymbol"}}}}
			if _, err := p.Initialize(ctx, root, caps, opts); err != nil {
				t.Fatal(err)
			}
			var syms []map[string]any
			// the symbols appear once the build ended (workspace/symbol
			// answers at once, from what is indexed)
			for len(syms) < files && ctx.Err() == nil {
				if err := p.Call(ctx, "workspace/symbol", map[string]any{"query": "F"}, &syms); err != nil {
					t.Fatal(err)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(syms) != files {
				t.Fatalf("workspace/symbol found %d symbols, want %d", len(syms), files)
			}
			if !tc.progress {
				time.Sleep(200 * time.Millisecond) // a progress would have been sent by now
				if got := p.Received("$/progress"); len(got) > 0 || len(created) > 0 {
					t.Errorf("progress for a client without window.workDoneProgress: %v %v", created, got)
				}
				return
			}
			// The code index's progress; the search index reports on
			// tokens of its own (agentls/search-index/N).
			const ours = `"agentls/index/`
			end, err := p.WaitFor(ctx, "$/progress", func(m json.RawMessage) bool {
				return strings.Contains(string(m), ours) && strings.Contains(string(m), `"end"`)
			})
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			created = slices.DeleteFunc(created, func(c string) bool { return !strings.Contains(c, ours) })
			if len(created) != 1 || !strings.HasPrefix(created[0], "window/workDoneProgress/create ") {
				t.Errorf("requests = %v, want one window/workDoneProgress/create", created)
			}
			mu.Unlock()
			type value struct {
				Kind, Title, Message string
				Percentage           *int
			}
			var kinds []string
			var token any
			for _, m := range p.Received("$/progress") {
				var v struct {
					Token any
					Value value
				}
				if err := json.Unmarshal(m.Params, &v); err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(fmt.Sprint(v.Token), ours[1:]) {
					continue
				}
				if token == nil {
					token = v.Token
				}
				if fmt.Sprint(v.Token) != fmt.Sprint(token) || !strings.Contains(created[0], fmt.Sprint(token)) {
					t.Errorf("progress on token %v, created %s", v.Token, created[0])
				}
				kinds = append(kinds, v.Value.Kind)
				if v.Value.Kind == "begin" && v.Value.Title != "agentls: indexing the workspace" {
					t.Errorf("begin = %+v", v.Value)
				}
			}
			if len(kinds) < 2 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" || slices.Contains(kinds[1:len(kinds)-1], "begin") || slices.Contains(kinds[:len(kinds)-1], "end") {
				t.Errorf("progress kinds = %v, want begin, reports, end", kinds)
			}
			if !strings.Contains(string(end.Params), fmt.Sprintf("indexed %d files", files)) {
				t.Errorf("end = %s, want indexed %d files", end.Params, files)
			}
		})
	}
}
