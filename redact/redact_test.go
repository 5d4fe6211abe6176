package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agentls/agentls/internal/testenv"
	"golang.org/x/tools/txtar"
)

// leaks returns the pieces of secret found in out: the secret, and each
// line of a multi-line one that is long enough to mean something.
func leaks(out, secret string) []string {
	var found []string
	for _, piece := range append([]string{secret}, strings.Split(secret, "\n")...) {
		if len(piece) >= 8 && strings.Contains(out, piece) {
			found = append(found, piece)
		}
	}
	return found
}

func TestCorpus(t *testing.T) {
	t.Parallel()
	rules := map[string]int{}
	through := 0
	cs := testenv.Secrets(t)
	for _, c := range cs {
		got := String(c.Text)
		if l := leaks(got, c.Secret); l != nil {
			through++
			t.Errorf("%s: secret got through:\n%s", c.Shape, got)
			continue
		}
		if !strings.Contains(got, Marker) {
			t.Errorf("%s: no marker in %q", c.Shape, got)
		}
		for _, m := range regexp.MustCompile(`\[REDACTED:([a-z0-9-]+)\]`).FindAllStringSubmatch(got, -1) {
			rules[m[1]]++
		}
		t.Logf("%-24s %s", c.Shape, strings.ReplaceAll(got, "\n", `\n`))
	}
	t.Logf("%d shapes, %d got through; rules that fired: %v", len(cs), through, rules)
}

// txtarFiles are the files of the txtar archive at path.
func txtarFiles(tb testing.TB, path string) []txtar.File {
	tb.Helper()
	return testenv.Txtars(tb, path)[0].Archive.Files
}

func TestPlainTextUnchanged(t *testing.T) {
	t.Parallel()
	for _, f := range txtarFiles(t, "testdata/plain.txtar") {
		if got := String(string(f.Data)); got != string(f.Data) {
			t.Errorf("%s: over-redacted:\n got %q\nwant %q", f.Name, got, f.Data)
		}
	}
}

func TestRules(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://user:p%40ss@host/x", "https://user:[REDACTED:url-userinfo]@host/x"},
		{"https://u:a@b@host/x", "https://u:[REDACTED:url-userinfo]@host/x"},
		{"ssh://git@host/repo", "ssh://git@host/repo"},
		{"https://Zx9Kq2Lm8Np4Rt7Vw1Yb3Cd@github.com/o/r", "https://[REDACTED:url-userinfo]@github.com/o/r"},
		{"GET /x?page=2&token=abc123&q=go", "GET /x?page=2&token=[REDACTED:query-param]&q=go"},
		{"GET /x?key=abc123", "GET /x?key=[REDACTED:query-param]"},
		{"Proxy-Authorization: Basic dXNlcjpwYXNz", "Proxy-Authorization: Basic [REDACTED:auth-header]"},
		{`{"Authorization":"token abcdef123"}`, `{"Authorization":"token [REDACTED:auth-header]"}`},
		{"export DB_PASS=swordfish", "export DB_PASS=[REDACTED:assignment]"},
		{"--client-secret=abc --verbose", "--client-secret=[REDACTED:assignment] --verbose"},
		{"--api-key abc123 --x", "--api-key [REDACTED:secret-flag] --x"},
		{"password = 1", "password = 1"},
		{"password = 'hunter2'", "password = '[REDACTED:assignment]'"},
		{"TOKEN=$GITHUB_TOKEN make", "TOKEN=$GITHUB_TOKEN make"},
		{"mysqldump --user=x -psecret1 db", "mysqldump --user=x -p[REDACTED:secret-flag] db"},
		{"mkdir -p build", "mkdir -p build"},
		{"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE", "-----BEGIN EC PRIVATE KEY-----[REDACTED:private-key]"},
		{"-----BEGIN CERTIFICATE-----\nMIIB", "-----BEGIN CERTIFICATE-----\nMIIB"},
		{"short", "short"},
	}
	for _, tt := range tests {
		if got := String(tt.in); got != tt.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestSecretName(t *testing.T) {
	t.Parallel()
	yes := []string{"password", "DB_PASSWORD", "apiKey", "api_key", "X-Api-Key", "X-Auth-Token", "AWS_SECRET_ACCESS_KEY",
		"OPENAI_API_KEY", "STRIPE_KEY", "client_secret", "passphrase", "github-token", "Authorization", "dbpassword", "pass"}
	no := []string{"key", "keys", "monkey", "keyword", "password_file", "token_url", "max_tokens", "secretName",
		"private", "author", "PWD", "tokens", "passthrough", "sort_key", "KEY"}
	for _, n := range yes {
		if !SecretName(n) {
			t.Errorf("SecretName(%q) = false", n)
		}
	}
	for _, n := range no {
		if SecretName(n) {
			t.Errorf("SecretName(%q) = true", n)
		}
	}
}

func TestCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 30000) // 150,000 bytes
	got := Cut(long, Cap)
	if len(got) > Cap {
		t.Fatalf("cut to %d bytes, more than %d", len(got), Cap)
	}
	if !strings.HasSuffix(got, " bytes]") || !strings.Contains(got, "…[cut ") {
		t.Fatalf("no cut marker: %q", got[len(got)-40:])
	}
	kept := got[:strings.Index(got, "…[cut ")]
	var n int
	if _, err := fmtSscan(got[len(kept):], &n); err != nil || len(kept)+n != len(long) {
		t.Errorf("marker says %d bytes cut, kept %d of %d", n, len(kept), len(long))
	}
	if !strings.HasSuffix(kept, " ") {
		t.Errorf("cut inside a word: %q", kept[len(kept)-10:])
	}
	// UTF-8: a run of 3-byte runes with no whitespace.
	u := strings.Repeat("€", 40000)
	if g := Cut(u, Cap); !utf8.ValidString(g) || len(g) > Cap {
		t.Errorf("cut of runes: valid %v, %d bytes", utf8.ValidString(g), len(g))
	}
	if g := String(long); len(g) > Cap {
		t.Errorf("String returned %d bytes", len(g))
	}
	if Cut("abc", Cap) != "abc" {
		t.Error("a short string was cut")
	}
}

// fmtSscan reads the count of "…[cut N bytes]".
func fmtSscan(s string, n *int) (int, error) {
	m := regexp.MustCompile(`…\[cut (\d+) bytes\]$`).FindStringSubmatch(s)
	if m == nil {
		return 0, errors.New("no marker")
	}
	return 1, json.Unmarshal([]byte(m[1]), n)
}

// A private key cut by the cap has no end line: the rest is still a key.
func TestCutPrivateKey(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n", 2000)
	got := String("-----BEGIN PRIVATE KEY-----\n" + body + "-----END PRIVATE KEY-----\n")
	if strings.Contains(got, "MIIEvQIBADANBgkqhkiG9w0") {
		t.Fatalf("key body after the cut: %q", got[:200])
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	in := `{"command":"deploy","env":{"PATH":"/usr/bin","LC_ALL":"C","APP_MODE":"blue","NODE_ENV":"sk_live_aB3dE5fG7hJ9kL1mN3pQ5rS7"},` +
		`"password":"x","private":{"a":"b"},"n":12,"ok":true,"list":["AKIAKUF5XJ4NB4X7JYPI"],"headers":{"X-ghp_Iuwk7tWSNqi0xTEfYiW3rirXJtivfaO99UzC":"1"}}`
	got := string(JSON(json.RawMessage(in)))
	want := `{"command":"deploy","env":{"APP_MODE":"[REDACTED:env]","LC_ALL":"C","NODE_ENV":"[REDACTED:high-entropy]","PATH":"/usr/bin"},` +
		`"headers":{"X-[REDACTED:github-pat]":"1"},"list":["[REDACTED:high-entropy]"],"n":12,"ok":true,"password":"[REDACTED:secret-key]","private":{"a":"b"}}`
	if got != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
	// Past the budget, strings are replaced, not logged unread.
	big := strings.Repeat("a", Cap)
	doc, _ := json.Marshal(map[string]any{"parts": []string{big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, big, "tail"}})
	out := JSON(doc)
	var back struct{ Parts []string }
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if last := back.Parts[len(back.Parts)-1]; last != "…[cut 4 bytes]" {
		t.Errorf("string past the budget: %q", last)
	}
	if len(out) > DocumentBudget+Cap+4096 {
		t.Errorf("document of %d bytes", len(out))
	}
}

type boom struct{}

func (*boom) String() string { panic("boom") }

func TestHandler(t *testing.T) {
	t.Parallel()
	cs := testenv.Secrets(t)
	var buf bytes.Buffer
	log := slog.New(NewHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if Logger(log) != log || NewHandler(log.Handler()) != log.Handler() {
		t.Error("wrapping twice")
	}
	for _, c := range cs {
		l := log.With("with", c.Text).WithGroup("g")
		l.Debug("msg "+c.Text, "s", c.Text, "err", errors.New(c.Text), "b", []byte(c.Text),
			"raw", json.RawMessage(testenv.MarshalJSON(t, map[string]string{"command": c.Text})),
			slog.Group("grp", "inner", c.Text), "list", []string{c.Text})
	}
	var nilBoom *boom
	log.Info("stringer", "v", nilBoom)
	out := buf.String()
	if len(out) == 0 {
		t.Fatal("nothing logged")
	}
	for _, c := range cs {
		if l := leaks(out, c.Secret); l != nil {
			t.Errorf("%s: in the log: %q", c.Shape, l)
		}
	}
	if !strings.Contains(out, "PANIC") {
		t.Errorf("a panicking String method: %s", out[len(out)-200:])
	}
}

// The rules are shared by every session: run them at once (go test -race).
func TestConcurrent(t *testing.T) {
	t.Parallel()
	cs := testenv.Secrets(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range cs {
				if leaks(String(c.Text), c.Secret) != nil {
					t.Errorf("%s leaked under concurrency", c.Shape)
				}
			}
		}()
	}
	wg.Wait()
}

func randomText(n int) string {
	r := rand.New(rand.NewSource(1))
	const a = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 =:\"'_-/.\n"
	b := make([]byte, n)
	for i := range b {
		b[i] = a[r.Intn(len(a))]
	}
	return string(b)
}

// nearMisses is text full of the beginnings of secrets that never complete.
func nearMisses(n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		sb.WriteString("api_key= ghp_ AKIA sk_live_ xoxb- token: Bearer eyJhbGciOi. password=' -----BEGIN PRIVATE KEY---- " +
			"AIza sk-ant- https://u:@ ?sig= Authorization: --password -p export X_TOKEN= glpat- ")
	}
	return sb.String()[:n]
}

func goSource(n int) string {
	src := `func (r *Runner) finish(env *Env, res *Result, args json.RawMessage, d time.Duration) {
	if _, ok := r.lookup(env.Workspace.Config(), res.Tool); ok {
		r.Metrics.Record(res.Tool, res.Status, d)
	}
	password := flag.String("password", "", "db password")
	key := keys[i]
}
`
	return strings.Repeat(src, n/len(src)+1)[:n]
}

func bench(b *testing.B, s string) {
	Load()
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	start := testenv.CPUTime()
	for i := 0; i < b.N; i++ {
		String(s)
	}
	if used := testenv.CPUTime() - start; used > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkRandom64K(b *testing.B)     { bench(b, randomText(Cap)) }
func BenchmarkNearMisses64K(b *testing.B) { bench(b, nearMisses(Cap)) }
func BenchmarkGoSource64K(b *testing.B)   { bench(b, goSource(Cap)) }
func BenchmarkOver1MiB(b *testing.B)      { bench(b, randomText(1<<20)) }
func BenchmarkCommand(b *testing.B) {
	bench(b, "go test ./tools -run TestHistory -count=1 && git status")
}

// Secrets in strings of code arrive escaped: \", \n, \u0026.
func TestEscapedInCode(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, secret string }{
		{`print("curl 'https://h/v1?city=oslo\u0026api_key=DSrPDijrqade\u0026units=metric'")`, "DSrPDijrqade"},
		{`print("{\"client_id\": \"web\", \"client_secret\": \"cs5D1Iu9HQqg\"}")`, "cs5D1Iu9HQqg"},
		{`s = "DEBUG=true\nDATABASE_PASSWORD=dotenvX1y2z3\nPORT=8080"`, "dotenvX1y2z3"},
		{`s = "a\ntoken=tk9f8e7d6c5b"`, "tk9f8e7d6c5b"},
		{`x := "const apiToken = \"goAb12Cd34Ef\"\n"`, "goAb12Cd34Ef"},
	}
	for _, tt := range tests {
		if got := String(tt.in); strings.Contains(got, tt.secret) {
			t.Errorf("String(%s) = %s", tt.in, got)
		}
	}
}

// FuzzString: whatever the input, the output is at most Cap bytes, valid
// UTF-8 when the input was, and redacting it again changes nothing a rule
// would still find (no secret of the seed corpus comes back).
func FuzzString(f *testing.F) {
	for _, file := range txtarFiles(f, "testdata/secrets.txtar") {
		f.Add(strings.NewReplacer("{{", "", "}}", "").Replace(string(file.Data)))
	}
	f.Add(strings.Repeat("password = \"€", 3000))
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if len(out) > Cap {
			t.Fatalf("%d bytes out", len(out))
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of valid input: %q", out)
		}
		if again := String(out); again != out && strings.Count(again, Marker) < strings.Count(out, Marker) {
			t.Fatalf("markers lost on a second pass: %q → %q", out, again)
		}
	})
}
