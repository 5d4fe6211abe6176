package redact

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

// samples are texts for the fast paths' checks: the secrets corpus, the
// plain texts, their lines and windows of them, strings the server repeats
// on every call, and random text.
func samples(t *testing.T) []string {
	t.Helper()
	var out []string
	add := func(s string) {
		out = append(out, s)
		for _, line := range strings.Split(s, "\n") {
			out = append(out, line)
			for i := 0; i+24 <= len(line); i += 7 {
				out = append(out, line[i:i+24], line[i:])
			}
		}
	}
	for _, c := range testenv.Secrets(t) {
		add(c.Text)
	}
	for _, f := range txtarFiles(t, "testdata/plain.txtar") {
		add(string(f.Data))
	}
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 300; i++ {
		out = append(out, fmt.Sprintf("tc_%018x", r.Uint64()), randomText(10+r.Intn(200)))
	}
	add(nearMisses(4096))
	return append(out, "get_current_directory", "read_file", "awaitingApproval", "result", "ok")
}

// TestCannotFind: whenever cannotFind says gitleaks would find nothing,
// gitleaks finds nothing; and it does say so for plain strings, or it saves
// nothing.
func TestCannotFind(t *testing.T) {
	t.Parallel()
	d := gitleaksDetector()
	skipped := 0
	for _, s := range samples(t) {
		if !cannotFind(s) {
			continue
		}
		skipped++
		if f := d.DetectString(s); len(f) > 0 {
			t.Errorf("cannotFind(%q) but gitleaks finds %s", s, f[0].RuleID)
		}
	}
	for _, s := range []string{"get_current_directory", "tc_0123456789abcdef01", "result"} {
		if !cannotFind(s) {
			t.Errorf("cannotFind(%q) = false: a plain string pays gitleaks' whole cost", s)
		}
	}
	if cannotFind(`aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`) {
		t.Error("cannotFind is true for a string with gitleaks keywords")
	}
	t.Logf("%d samples skip gitleaks", skipped)
}

// TestGuardedRules: a rule's guard (the word every match holds) changes
// none of its answers.
func TestGuardedRules(t *testing.T) {
	t.Parallel()
	extra := []string{"AUTHORIZATION: Basic dXNlcjpwYXNzd29yZA==", "curl -H 'authorization: token ghp_abcdefgh12345678'",
		"BeArEr abcdefgh12345678", "x ?token=abc123def456 y", "mysql --password hunter22 -u root"}
	for _, s := range append(samples(t), extra...) {
		for _, r := range []struct {
			name           string
			guarded, plain rule
		}{
			{"authHeaders", authHeaders, groupRule(authRe, "auth-header", "")},
			{"bearer", bearer, groupRule(bearerRe, "auth-header", "")},
		} {
			if g, p := r.guarded(s), r.plain(s); g != p {
				t.Errorf("%s(%q) = %q, without its guard %q", r.name, s, g, p)
			}
		}
	}
}

// TestCleanSet: a string String changed is never remembered as clean, and
// a full set starts over.
func TestCleanSet(t *testing.T) {
	t.Parallel()
	secret := `export DB_PASSWORD=hunter2hunter2`
	for i := 0; i < 3; i++ {
		if got := String(secret); strings.Contains(got, "hunter2hunter2") {
			t.Fatalf("pass %d: %q", i, got)
		}
	}
	if clean.has(secret) {
		t.Error("a string with a secret is remembered as clean")
	}
	var c cleanSet
	for i := 0; i < cleanSize+10; i++ {
		c.add(fmt.Sprint("s", i))
	}
	if c.n.Load() > cleanSize || !c.has(fmt.Sprint("s", cleanSize+9)) || c.has("s0") {
		t.Errorf("the set holds %d strings after %d adds", c.n.Load(), cleanSize+10)
	}
	if c.add(strings.Repeat("x", cleanLen+1)); c.has(strings.Repeat("x", cleanLen+1)) {
		t.Error("a long string is remembered")
	}
}

// counted is a LogValuer that counts its resolutions.
type counted struct{ n *int }

func (c counted) LogValue() slog.Value { *c.n++; return slog.StringValue("v") }

// TestHandlerLazyWith: the attributes of With are redacted when a record is
// handled, once per logger, in their order and groups; a logger whose
// records are all below the level redacts nothing.
func TestHandlerLazyWith(t *testing.T) {
	t.Parallel()
	var got, want bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	n := 0
	l := slog.New(NewHandler(slog.NewTextHandler(&got, opts))).With("v", counted{&n}, "secret", "export DB_PASSWORD=hunter2hunter2")
	l.Debug("below the level")
	if n != 0 {
		t.Errorf("With's attributes resolved %d times for a record below the level", n)
	}
	l = l.WithGroup("g").With("a", 1).WithGroup("h")
	l.Info("one", "b", 2)
	l.Info("two")
	if n != 1 {
		t.Errorf("With's attributes resolved %d times for two records, want once", n)
	}
	plain := slog.New(slog.NewTextHandler(&want, opts)).With("v", "v", "secret", String("export DB_PASSWORD=hunter2hunter2")).
		WithGroup("g").With("a", 1).WithGroup("h")
	plain.Info("one", "b", 2)
	plain.Info("two")
	if got.String() != want.String() || strings.Contains(got.String(), "hunter2") {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want.String())
	}
}
