package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// secretForms are the ways a secret can appear in a sink: as it is,
// JSON-escaped, URL-escaped, and each line of a multi-line one.
func secretForms(secret string) []string {
	forms := []string{secret, url.QueryEscape(secret)}
	if b, err := json.Marshal(secret); err == nil {
		forms = append(forms, strings.Trim(string(b), `"`))
	}
	for _, line := range strings.Split(secret, "\n") {
		if len(line) >= 8 {
			forms = append(forms, line)
		}
	}
	return forms
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// sinks are everything that leaves the server as a log or an event.
type sinks struct {
	mu     sync.Mutex
	events []string
	log    bytes.Buffer
	hist   string // the history file
}

func (s *sinks) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Write(p)
}

func (s *sinks) all(t *testing.T, h *History) string {
	t.Helper()
	b, err := os.ReadFile(s.hist)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := h.Read(0, "")
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := json.Marshal(entries) // what tool/history answers
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(b) + "\n" + string(answer) + "\n" + strings.Join(s.events, "\n") + "\n" + s.log.String()
}

// TestRedactionEndToEnd puts each secret shape of the corpus into real tool
// calls through the Runner — in a shell command, in the env of a command,
// in written file content, in run_code source (as a heredoc and inside a
// JSON-escaped string literal), in the query of a web_fetch to a loopback
// server, and as a real (unquoted) shell command — and
// proves that none reaches the execution log, the tool/history answer, the
// tool/event notifications or the debug log, while the tools still did
// their work with the real value.
func TestRedactionEndToEnd(t *testing.T) {
	t.Parallel()
	corpus := testenv.Secrets(t)
	root := t.TempDir()
	ws := workspacetest.New(t, root)
	cfg := workspace.DefaultConfig()
	cfg.Web.AllowPrivate = true
	cfg.History.Enabled = true
	ws.SetConfig(cfg)

	var fetched sync.Map // the queries the loopback server saw
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Store(r.URL.Query().Get("api_key"), true)
		fmt.Fprintln(w, "ok")
	}))
	defer srv.Close()

	s := &sinks{hist: filepath.Join(t.TempDir(), "history.jsonl")}
	r := NewRunner(NewBuiltinRegistry(), slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug})))
	hist := NewHistory(s.hist)
	env := &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{}), Memory: approval.NewMemory(""), History: hist,
		Approver: approval.ApproverFunc(func(context.Context, approval.Request) (approval.Response, error) {
			return approval.Response{Decision: approval.Approve}, nil
		}),
		Events: EventsFunc(func(e Event) {
			b, _ := json.Marshal(e)
			s.mu.Lock()
			s.events = append(s.events, string(b))
			s.mu.Unlock()
		}),
	}
	unquoted := map[string]bool{"export-token": true, "inline-env-password": true, "mysql-p": true, "password-flag": true}

	type attempt struct{ shape, context string }
	tried, through := 0, []attempt{}
	spent := map[string]time.Duration{}
	defer func() { t.Logf("time per context: %v", spent) }()
	for _, c := range corpus {
		calls := []struct {
			context string
			tool    string
			args    any
		}{
			{"shell command", "shell_exec", map[string]any{"command": "echo " + shQuote(c.Text)}},
			{"env value", "shell_exec", map[string]any{"command": "echo ok", "env": map[string]string{"APP_SETTING": c.Secret}}},
			{"file content", "write_file", map[string]any{"path": "leak/" + c.Shape + ".txt", "content": c.Text}},
			{"run_code source", "run_code", map[string]any{"language": "bash",
				"code": "cat <<'EOF'\n" + c.Text + "\nEOF\nprintf '%s\\n' " + string(mustMarshal(c.Text)) + "\n"}},
			{"web_fetch api_key", "web_fetch", map[string]any{"url": srv.URL + "/v1?city=oslo&api_key=" + url.QueryEscape(c.Secret)}},
		}
		if unquoted[c.Shape] {
			calls = append(calls, struct {
				context string
				tool    string
				args    any
			}{"real command", "shell_exec", map[string]any{"command": c.Text + " ; true"}})
		}
		for _, call := range calls {
			tried++
			b := mustMarshal(call.args)
			t0 := time.Now()
			res := r.Run(context.Background(), env, Request{Name: call.tool, Arguments: b}, nil)
			spent[call.context] += time.Since(t0)
			if call.tool == "write_file" && res.Status != StatusSuccess {
				t.Errorf("%s: write_file: %+v", c.Shape, res)
			}
			out := s.all(t, hist)
			for _, form := range secretForms(c.Secret) {
				if strings.Contains(out, form) {
					through = append(through, attempt{c.Shape, call.context})
					i := strings.Index(out, form)
					t.Errorf("%s in %s: %q reached a log or an event: …%s…", c.Shape, call.context, form, out[max(0, i-300):min(len(out), i+100)])
					break
				}
			}
		}
		// The tools saw the real value: redaction is for what is logged.
		got, err := os.ReadFile(filepath.Join(root, "leak", c.Shape+".txt"))
		if err != nil || string(got) != c.Text {
			t.Errorf("%s: written file = %q, %v; want the text with its secret", c.Shape, got, err)
		}
		if _, ok := fetched.Load(c.Secret); !ok {
			t.Errorf("%s: the loopback server did not get the real api_key", c.Shape)
		}
	}
	// The sinks were fed: every call is in the history, announced as an
	// event and logged, so the checks above had something to look at.
	entries, err := hist.Read(0, "")
	if err != nil || len(entries) != tried {
		t.Fatalf("history has %d entries (%v), want %d", len(entries), err, tried)
	}
	s.mu.Lock()
	calls, logged := 0, strings.Count(s.log.String(), "msg=\"tool call\"")
	for _, e := range s.events {
		if strings.Contains(e, `"kind":"call"`) && strings.Contains(e, `"arguments"`) {
			calls++
		}
	}
	s.mu.Unlock()
	if calls != tried || logged != tried {
		t.Errorf("%d call events with arguments and %d logged calls, want %d", calls, logged, tried)
	}
	if !strings.Contains(s.all(t, hist), "[REDACTED:") {
		t.Error("no redaction marker anywhere")
	}
	t.Logf("redaction end to end: %d secret shapes, %d attempts (shapes × contexts), %d got through", len(corpus), tried, len(through))
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
