package redact

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/report"
)

// TestLazyRules: every rule the catalog compiles is the rule gitleaks'
// own configuration builds (viper, Translate), stop words aside, which are
// the same words in a list instead of a trie.
func TestLazyRules(t *testing.T) {
	t.Parallel()
	want := gitleaksDetector().Config
	c := lazyRules()
	if len(c.rules) != len(want.Rules) {
		t.Fatalf("%d rules, gitleaks has %d", len(c.rules), len(want.Rules))
	}
	keywords := map[string]struct{}{}
	for i := range c.rules {
		got := c.rule(i)
		w, ok := want.Rules[got.RuleID]
		if !ok {
			t.Errorf("rule %s is not gitleaks'", got.RuleID)
			continue
		}
		if g, w := describeRule(got), describeRule(w); g != w {
			t.Errorf("rule %s:\n got %s\nwant %s", got.RuleID, g, w)
		}
		for _, k := range got.Keywords {
			keywords[k] = struct{}{}
		}
	}
	if g, w := slices.Sorted(maps.Keys(keywords)), slices.Sorted(maps.Keys(want.Keywords)); !slices.Equal(g, w) {
		t.Errorf("keywords\n got %q\nwant %q", g, w)
	}
	c.globalOnce.Do(c.loadGlobal)
	if g, w := describeAllowlists(c.global), describeAllowlists(want.Allowlists); g != w {
		t.Errorf("global allowlists:\n got %s\nwant %s", g, w)
	}
}

// describeRule prints what of a rule decides its findings.
func describeRule(r config.Rule) string {
	re := func(x interface{ String() string }) string {
		if x == nil {
			return "<nil>"
		}
		return x.String()
	}
	var req []string
	for _, q := range r.RequiredRules {
		req = append(req, fmt.Sprintf("%s/%v/%v", q.RuleID, deref(q.WithinLines), deref(q.WithinColumns)))
	}
	regex, path := "<nil>", "<nil>"
	if r.Regex != nil {
		regex = re(r.Regex)
	}
	if r.Path != nil {
		path = re(r.Path)
	}
	return fmt.Sprintf("id=%s desc=%q entropy=%v group=%d regex=%q path=%q tags=%q keywords=%q skip=%v required=%q allowlists=%s",
		r.RuleID, r.Description, r.Entropy, r.SecretGroup, regex, path, r.Tags, r.Keywords, r.SkipReport, req, describeAllowlists(r.Allowlists))
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func describeAllowlists(as []*config.Allowlist) string {
	var out []string
	for _, a := range as {
		var paths, regexes []string
		for _, p := range a.Paths {
			paths = append(paths, p.String())
		}
		for _, r := range a.Regexes {
			regexes = append(regexes, r.String())
		}
		commits := slices.Clone(a.Commits)
		sort.Strings(commits)
		words := slices.Clone(a.StopWords)
		sort.Strings(words)
		out = append(out, fmt.Sprintf("{desc=%q cond=%v commits=%q paths=%q target=%q regexes=%q stopwords=%q}",
			a.Description, a.MatchCondition, commits, paths, a.RegexTarget, regexes, words))
	}
	return "[" + strings.Join(out, " ") + "]"
}

// TestLazyDetector: for every sample, the detector of the rules a string
// calls for finds what gitleaks' whole detector finds, and both ways of
// redacting give the same string.
func TestLazyDetector(t *testing.T) {
	t.Parallel()
	full := gitleaksDetector()
	c := lazyRules()
	// The secrets whole and line by line, and a share of the other
	// samples (all of them take long).
	var texts []string
	for _, s := range testenv.Secrets(t) {
		texts = append(texts, s.Text)
		texts = append(texts, strings.Split(s.Text, "\n")...)
	}
	for i, s := range samples(t) {
		if i%7 == 0 {
			texts = append(texts, s)
		}
	}
	// Stop words and allowlists at work: the findings they suppress must
	// stay suppressed.
	texts = append(texts,
		`api_key = "abcdefghijklmnopqrstuvwxyz0123"`,
		`secret_token = "Xy7pQ2mN9vR4sT6uW8zA1bC3dE5fG7hJ"`,
		`password = "aaaaaaaaaaaaaaaaaaaaaaaaa"`,
		`auth_token: "${{ secrets.GITHUB_TOKEN }}"`,
		`keyboard_shortcut = "ctrl+shift+alt+k+9x8y7z"`,
		`access_token = "public_token_1234567890abcdef"`,
		`aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`)
	ran := 0
	for _, s := range texts {
		d := c.detectorFor(s)
		want := describeFindings(full.DetectString(s))
		if d == nil {
			if want != "" {
				t.Errorf("no detector for %q; gitleaks finds %s", s, want)
			}
			continue
		}
		ran++
		if got := describeFindings(d.DetectString(s)); got != want {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	}
	if ran == 0 {
		t.Fatal("no sample called for a detector")
	}
	t.Logf("%d of %d samples ran a detector", ran, len(texts))
}

func describeFindings(fs []report.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s:%d-%d:%q", f.RuleID, f.StartColumn, f.EndColumn, f.Secret))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestLazyWords: a string without a keyword of any rule runs no
// detector, so it compiles nothing.
func TestLazyWords(t *testing.T) {
	t.Parallel()
	c := lazyRules()
	for _, s := range []string{"get_current_directory", "tc_0123456789abcdef01", "result", "grep", `{"pattern":"NewReader"}`} {
		if set, keyed := c.candidates(strings.ToLower(s)); keyed || c.detectorFor(s) != nil {
			t.Errorf("%q calls for rules %v", s, set)
		}
	}
	set, keyed := c.candidates(strings.ToLower(`export GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz`))
	if !keyed {
		t.Fatal("a GitHub token calls for no rule")
	}
	var ids []string
	for _, i := range set {
		ids = append(ids, c.vc.Rules[i].ID)
	}
	if !slices.Contains(ids, "github-pat") {
		t.Errorf("a GitHub token calls for %q, not github-pat", ids)
	}
}
