package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"api_key":"abc","apiKey":"abc","token":"t","password":"p","X-Auth-Token":"x"}`,
			`{"X-Auth-Token":"[REDACTED:secret-key]","apiKey":"[REDACTED:secret-key]","api_key":"[REDACTED:secret-key]","password":"[REDACTED:secret-key]","token":"[REDACTED:secret-key]"}`},
		{`{"headers":{"Authorization":"Bearer x"},"path":"src/main.go"}`, `{"headers":{"Authorization":"[REDACTED:secret-key]"},"path":"src/main.go"}`},
		{`{"env":{"OPENAI_KEY":"sk-abcdefghijklmnopqrstu","GOOS":"linux"}}`, `{"env":{"GOOS":"linux","OPENAI_KEY":"[REDACTED:env]"}}`},
		// a secret inside a string, not only a whole value
		{`{"command":"echo ghp_abcdefghijklmnopqrstuvwxyz0123"}`, `{"command":"echo [REDACTED:known-prefix]"}`},
		{`{"value":"ghp_abcdefghijklmnopqrstuvwxyz0123"}`, `{"value":"[REDACTED:high-entropy]"}`},
		{`{"value":"q8Zp3KxW9vTn2LmR7yHb4CdF6gJs1Ae5"}`, `{"value":"[REDACTED:high-entropy]"}`},
		{`{"value":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa11"}`, `{"value":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa11"}`},
		{`{"keyword":"x","monkey":"y","old_string":"password = 1"}`, `{"keyword":"x","monkey":"y","old_string":"password = 1"}`},
		{`{"items":[{"secret":"s"}]}`, `{"items":[{"secret":"[REDACTED:secret-key]"}]}`},
		{`not json ghp_abcdefghijklmnopqrstuvwxyz0123`, `"not json [REDACTED:known-prefix]"`},
	}
	for _, tt := range tests {
		if got := string(Redact(json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("Redact(%s)\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestHistoryReadBack(t *testing.T) {
	t.Parallel()
	h := NewHistory(filepath.Join(t.TempDir(), "sub", "h.jsonl"))
	h.maxSize = 600 // rotate after a few entries
	for i := 0; i < 10; i++ {
		tool := "a"
		if i%2 == 1 {
			tool = "b"
		}
		if err := h.Append(LogEntry{CallID: "tc_" + string(rune('0'+i)), Tool: tool, Arguments: json.RawMessage(`{"password":"x"}`),
			Status: StatusSuccess, Timestamp: time.Now(), ApprovedBy: "auto"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := h.Read(0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 4 || all[0].CallID != "tc_9" {
		t.Fatalf("read %d entries, newest %q", len(all), all[0].CallID)
	}
	for i := 1; i < len(all); i++ {
		if all[i].CallID > all[i-1].CallID {
			t.Fatalf("not newest first: %v then %v", all[i-1].CallID, all[i].CallID)
		}
	}
	bs, _ := h.Read(2, "b")
	if len(bs) != 2 || bs[0].CallID != "tc_9" || bs[1].CallID != "tc_7" {
		t.Errorf("filtered = %+v", bs)
	}
	if strings.Contains(string(all[0].Arguments), `"x"`) {
		t.Errorf("secret written to the log: %s", all[0].Arguments)
	}
}

// TestHistoryFollowsThePath: the log keeps its append handle between
// entries, yet an entry always goes to the file at its path when another
// process rotated, removed or replaced the one it holds.
func TestHistoryFollowsThePath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(file string) error
		old    int // entries left in the file the change moved away ("" + ".moved")
	}{
		{"unchanged", func(string) error { return nil }, -1},
		{"removed", os.Remove, -1},
		{"rotated", func(f string) error { return os.Rename(f, f+".moved") }, 1},
		{"replaced", func(f string) error {
			if err := os.Rename(f, f+".moved"); err != nil {
				return err
			}
			return os.WriteFile(f, nil, 0o600)
		}, 1},
		{"directory removed", func(f string) error { return os.RemoveAll(filepath.Dir(f)) }, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "sub", "h.jsonl")
			h := NewHistory(file)
			defer h.Close()
			for _, id := range []string{"tc_1", "tc_2"} {
				if id == "tc_2" {
					if err := tt.change(file); err != nil {
						t.Fatal(err)
					}
				}
				if err := h.Append(LogEntry{CallID: id, Tool: "a", Status: StatusSuccess, Timestamp: time.Now()}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := h.Read(0, "")
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"tc_2"}
			if tt.name == "unchanged" {
				want = []string{"tc_2", "tc_1"}
			}
			var ids []string
			for _, e := range got {
				ids = append(ids, e.CallID)
			}
			if strings.Join(ids, ",") != strings.Join(want, ",") {
				t.Errorf("entries at the path = %v, want %v", ids, want)
			}
			if tt.old >= 0 {
				moved, err := readLog(file + ".moved")
				if err != nil || len(moved) != tt.old {
					t.Errorf("moved file holds %d entries (%v), want %d", len(moved), err, tt.old)
				}
			}
		})
	}
}

func TestMetricsPercentiles(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	for i := 1; i <= 100; i++ {
		m.Record("t", StatusSuccess, time.Duration(i)*time.Millisecond)
	}
	m.Record("t", StatusError, 0)
	m.Record("t", StatusCancelled, 0)
	s := m.Snapshot()[0]
	if s.TotalCalls != 102 || s.Success != 100 || s.Error != 1 || s.Cancelled != 1 {
		t.Errorf("counts = %+v", s)
	}
	if s.P50Ms != 49 || s.P95Ms != 95 { // nearest rank of 102 samples: the 51st and the 97th
		t.Errorf("p50/p95 = %v/%v", s.P50Ms, s.P95Ms)
	}
}

// Every field of an entry that holds text from the agent or a tool is
// redacted before it is written, not only the arguments.
func TestHistoryRedactsEveryField(t *testing.T) {
	t.Parallel()
	const secret = "ghp_Iuwk7tWSNqi0xTEfYiW3rirXJtivfaO99UzC"
	file := filepath.Join(t.TempDir(), "h.jsonl")
	h := NewHistory(file)
	err := h.Append(LogEntry{CallID: "tc_" + secret, Tool: "x " + secret, Arguments: json.RawMessage(`{"command":"echo ` + secret + `"}`),
		Status: StatusError, ApprovedBy: "auto", Timestamp: time.Now(), Summary: "error: token " + secret,
		Error: &Error{Code: Internal, Message: "failed: token " + secret, Details: map[string]any{"stderr": "auth " + secret}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || strings.Count(string(b), "[REDACTED:") < 6 {
		t.Fatalf("history line: %s", b)
	}
	es, err := h.Read(0, "")
	if err != nil || len(es) != 1 || es[0].Redaction != redactionVersion {
		t.Fatalf("read back %+v, %v", es, err)
	}
}

// Lines written before there was a redaction (no "redaction" field) are
// redacted when read: tool/history never answers with them as they are.
func TestHistoryRedactsOldEntries(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "h.jsonl")
	old := `{"callId":"tc_1","tool":"shell_exec","arguments":{"command":"export SERVICE_TOKEN=hunter2-abc123 \u0026\u0026 ./deploy"},` +
		`"status":"success","durationMs":3,"timestamp":"2026-01-02T03:04:05Z","approvedBy":"user"}` + "\n"
	if err := os.WriteFile(file, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	es, err := NewHistory(file).Read(0, "")
	if err != nil || len(es) != 1 {
		t.Fatalf("read %+v, %v", es, err)
	}
	if strings.Contains(string(es[0].Arguments), "hunter2-abc123") || es[0].Redaction != redactionVersion {
		t.Errorf("old entry answered as it was: %s", es[0].Arguments)
	}
}

// A huge argument is cut: no string in the log is longer than redact.Cap.
func TestHistoryCutsHugeStrings(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "h.jsonl")
	h := NewHistory(file)
	huge := strings.Repeat("x ", 1<<20) // 2 MB
	args, _ := json.Marshal(map[string]string{"path": huge})
	if err := h.Append(LogEntry{CallID: "tc_1", Tool: "read_file", Arguments: args, Status: StatusError, Timestamp: time.Now()}); err != nil {
		t.Fatal(err)
	}
	es, err := h.Read(0, "")
	if err != nil || len(es) != 1 {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal(es[0].Arguments, &back); err != nil {
		t.Fatal(err)
	}
	if p := back["path"]; len(p) > 64<<10 || !strings.HasSuffix(p, " bytes]") {
		t.Errorf("logged path of %d bytes, ends %q", len(p), p[max(0, len(p)-30):])
	}
}

// TestSummarize: an entry keeps the start of the result's content, cut
// where a line ends and marked when cut.
func TestSummarize(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 150) + "\n" + strings.Repeat("y", 100)
	for _, tc := range []struct{ in, want string }{
		{"  short answer\n", "short answer"},
		{long, strings.Repeat("x", 150) + "…"},
		{strings.Repeat("é", 250), strings.Repeat("é", 200) + "…"},
	} {
		if got := summarize(tc.in); got != tc.want {
			t.Errorf("summarize(%.20q…) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
