package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// These tests compare grep and glob with ripgrep on the Go source tree. They
// are skipped when rg is not installed (Debian: apt-get install ripgrep; the
// project's scripts/install-deps.sh installs it).

func goSrc(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("ripgrep (rg) is not installed: apt-get install ripgrep")
	}
	return testenv.GoSrc(t)
}

// rgWorkspace is GOROOT/src as a workspace without sensitive globs, which
// ripgrep does not have.
func rgWorkspace(t *testing.T, src string) *workspace.Workspace {
	t.Helper()
	ws := workspacetest.New(t, src)
	cfg := *ws.Config()
	cfg.Paths.Sensitive = nil
	cfg.Limits.MaxOutputBytes = 1 << 30 // the whole text, to compare with rg's
	ws.SetConfig(&cfg)
	return ws
}

func TestGrepMatchesRipgrep(t *testing.T) {
	t.Parallel()
	src := goSrc(t)
	ws := rgWorkspace(t, src)
	for _, q := range search.Queries {
		t.Run(q.Name, func(t *testing.T) {
			var args map[string]any
			if err := json.Unmarshal([]byte(q.Args), &args); err != nil {
				t.Fatal(err)
			}
			args["max_results"] = 100000
			raw, _ := json.Marshal(args)
			res := RunTool(context.Background(), ws, "grep", raw)
			if res.Status != StatusSuccess {
				t.Fatalf("grep %s: %s", raw, res.Content)
			}
			st := res.Structured.(map[string]any)
			if st["truncated"] == true {
				t.Fatalf("grep %s truncated", raw)
			}
			got := map[string]bool{}
			for _, m := range grepMatches(t, st) {
				got[fmt.Sprintf("%s:%d", m.Path, m.Line)] = true
			}
			want := testenv.RgLines(t, src, q.Rg...)
			if len(want) == 0 && q.Name != "literal-rare" {
				t.Fatalf("rg found nothing for %v", q.Rg)
			}
			diff(t, "agentls", got, "rg", want)
			t.Logf("%d matching lines", len(got))
		})
	}
}

// TestGrepCountAndFilesMatchRipgrep checks the other output modes on a
// common query.
func TestGrepCountAndFilesMatchRipgrep(t *testing.T) {
	t.Parallel()
	src := goSrc(t)
	ws := rgWorkspace(t, src)
	res := RunTool(context.Background(), ws, "grep", json.RawMessage(`{"pattern":"if err != nil","output_mode":"count","max_results":100000}`))
	counts := res.Structured.(map[string]any)["counts"].(map[string]int)
	cmd := exec.Command("rg", "--null", "-c", "if err != nil")
	cmd.Dir = src
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if p, n, ok := strings.Cut(line, "\x00"); ok {
			want[p+":"+n] = true
		}
	}
	got := map[string]bool{}
	for p, n := range counts {
		got[fmt.Sprintf("%s:%d", p, n)] = true
	}
	diff(t, "agentls -c", got, "rg -c", want)

	res = RunTool(context.Background(), ws, "grep", json.RawMessage(`{"pattern":"sync\\.Once\\b","output_mode":"files_with_matches","max_results":100000}`))
	files := res.Structured.(map[string]any)["files"].([]string)
	cmd = exec.Command("rg", "-l", `sync\.Once\b`)
	cmd.Dir = src
	out, err = cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got, want = setOf(files), setOf(strings.Fields(string(out)))
	diff(t, "agentls -l", got, "rg -l", want)
	if !sort.SliceIsSorted(files, func(i, j int) bool { return workspace.ComparePaths(files[i], files[j]) < 0 }) {
		t.Error("files are not sorted")
	}
}

func TestGlobMatchesRipgrep(t *testing.T) {
	t.Parallel()
	src := goSrc(t)
	ws := workspacetest.New(t, src)
	for _, tt := range []struct{ pattern, rg string }{
		{"**/*_test.go", "*_test.go"},
		{"**/testdata/**/*.txt", "**/testdata/**/*.txt"},
		{"net/**/*.go", "net/**/*.go"},
	} {
		res := RunTool(context.Background(), ws, "glob", json.RawMessage(fmt.Sprintf(`{"pattern":%q,"limit":100000}`, tt.pattern)))
		if res.Status != StatusSuccess {
			t.Fatalf("glob %s: %s", tt.pattern, res.Content)
		}
		files := res.Structured.(map[string]any)["files"].([]string)
		cmd := exec.Command("rg", "--files", "-g", tt.rg)
		cmd.Dir = src
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want := setOf(strings.Fields(string(out)))
		if len(want) == 0 {
			t.Fatalf("rg --files -g %s found nothing", tt.rg)
		}
		diff(t, "glob "+tt.pattern, setOf(files), "rg --files -g "+tt.rg, want)
		t.Logf("%s: %d files", tt.pattern, len(files))
	}
}

func setOf(ss []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		m[s] = true
	}
	return m
}

// diff reports the elements of one set missing from the other (at most ten
// each way).
func diff(t *testing.T, gotName string, got map[string]bool, wantName string, want map[string]bool) {
	t.Helper()
	var missing, extra []string
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("%d in %s but not in %s, e.g. %q", len(missing), wantName, gotName, missing[:min(10, len(missing))])
	}
	if len(extra) > 0 {
		t.Errorf("%d in %s but not in %s, e.g. %q", len(extra), gotName, wantName, extra[:min(10, len(extra))])
	}
}

// TestGrepMultilineMatchesRipgrep compares the lines multiline matches
// print (every line a match spans) with rg -U.
func TestGrepMultilineMatchesRipgrep(t *testing.T) {
	t.Parallel()
	src := goSrc(t)
	ws := rgWorkspace(t, src)
	for _, q := range []struct{ pattern, rg string }{
		{`func main\(\) \{\n\s+os\.Exit`, `func main\(\) \{\n\s+os\.Exit`},
		{`if err != nil \{\n\s+return err\n\s+\}`, `if err != nil \{\n\s+return err\n\s+\}`},
		{`Deadline\(\)\s*\n`, `Deadline\(\)\s*\n`},
	} {
		raw, _ := json.Marshal(map[string]any{"pattern": q.pattern, "multiline": true, "max_results": 100000})
		res := RunTool(context.Background(), ws, "grep", raw)
		if res.Status != StatusSuccess {
			t.Fatalf("grep %s: %s", raw, res.Content)
		}
		got := map[string]bool{}
		for _, line := range strings.Split(res.Content, "\n") {
			if path, rest, ok := strings.Cut(line, ":"); ok {
				n, _, _ := strings.Cut(rest, ":")
				got[path+":"+n] = true
			}
		}
		want := testenv.RgLines(t, src, "-U", q.rg)
		if len(want) == 0 {
			t.Fatalf("rg -U %s found nothing", q.rg)
		}
		diff(t, "agentls multiline", got, "rg -U", want)
	}
}
