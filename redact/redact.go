// Package redact removes secrets from text before agentls writes it to a log
// or sends it as an event: the execution log (tool/history), tool/event
// notifications and the server's slog output.
//
// String is the one function every such path uses. It first cuts a string
// longer than Cap bytes (the cut is marked), then replaces every secret it
// finds with "[REDACTED:<rule>]". Two rule sets run, in this order:
//
//   - gitleaks' detectors (github.com/zricethezav/gitleaks/v8, its default
//     configuration of about 220 rules: cloud keys, tokens of code hosts,
//     chat, payment and AI providers, JWTs, private keys, generic
//     "key = value" assignments of high entropy); the rule is gitleaks' id;
//   - agentls's own rules for what gitleaks leaves alone because its values
//     may be of low entropy: the password in URL userinfo (url-userinfo),
//     query parameters named like secrets (query-param), Authorization and
//     Bearer credentials (auth-header), assignments and flags whose name
//     looks secret — `export DB_PASSWORD=…`, `--token …`, `"password":
//     "…"`, `mysql -p…` (assignment, secret-flag), PEM private key blocks
//     (private-key), well-known token prefixes of any length past 16
//     (known-prefix) and JWTs (jwt).
//
// JSON walks a JSON document: every string in it goes through String, the
// value of an object key that looks secret is replaced whole, and so is the
// value of every variable in an "env" object unless the variable is on a
// short list of well-known, non-secret names (PATH, HOME, LANG, GOOS, …).
//
// Every function is safe for concurrent use. Time is linear in the length
// of the input, and the input is at most Cap bytes per string and
// DocumentBudget bytes per JSON document (strings past the budget are
// replaced, not logged unread).
package redact

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// Cap is the longest string String returns, in bytes.
const Cap = 64 << 10

// Marker is how every replacement begins: "[REDACTED:<rule>]".
const Marker = "[REDACTED"

// minLen is the shortest string that can hold a secret worth a rule.
const minLen = 6

// String returns s cut to at most Cap bytes (see Cut) with every secret
// found replaced by "[REDACTED:<rule>]".
func String(s string) string {
	s = Cut(s, Cap)
	if len(s) < minLen || clean.has(s) {
		return s
	}
	in := s
	s = gitleaksPass(s)
	for _, r := range ownRules {
		s = r(s)
	}
	if s == in {
		clean.add(in)
	}
	return s
}

// Cut returns s unchanged when it has at most limit bytes. A longer string is
// cut so that the result, marker included, has at most limit bytes and ends
// in "…[cut N bytes]". The cut falls on a UTF-8 boundary and, when there is
// whitespace in the last KiB kept, just after it, so that a token is not
// split into a piece too short for a rule to know.
func Cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	longest := cutMarker(len(s))
	keep := limit - len(longest)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	if lo := max(keep-1024, 0); keep > 0 {
		if i := strings.LastIndexAny(s[lo:keep], " \t\n\r"); i >= 0 {
			keep = lo + i + 1
		}
	}
	return s[:keep] + cutMarker(len(s)-keep)
}

func cutMarker(n int) string { return fmt.Sprintf("…[cut %d bytes]", n) }

var (
	detectorOnce sync.Once
	detector     *detect.Detector
	// prefilter holds every keyword of gitleaks' rules, lowercased, and
	// unkeyed the rules that have none (see cannotFind).
	prefilter *ahocorasick.Trie
	unkeyed   []config.Rule
)

// gitleaksDetector loads gitleaks' default rules once. They are embedded in
// the module, so a failure to load them is a broken build.
func gitleaksDetector() *detect.Detector {
	detectorOnce.Do(func() {
		// gitleaks logs to stderr; what it logs can hold what it found.
		logging.Logger = zerolog.Nop()
		d, err := detect.NewDetectorDefaultConfig()
		if err != nil {
			panic(fmt.Sprintf("redact: gitleaks default rules: %v", err))
		}
		detector = d
		var kw []string
		for _, r := range d.Config.Rules {
			if len(r.Keywords) == 0 {
				unkeyed = append(unkeyed, r)
			}
			for _, k := range r.Keywords {
				kw = append(kw, strings.ToLower(k))
			}
		}
		prefilter = ahocorasick.NewTrieBuilder().AddStrings(kw).Build()
	})
	return detector
}

// cannotFind reports whether gitleaks' detector is sure to find nothing in
// s, which costs a keyword scan instead of the detector's fixed cost per
// string (tens of µs: it walks all of its rules). The detector runs a rule
// only when the lowercased text holds one of the rule's keywords, or for
// the rules that have none; with no keyword in s and no keyword-less rule
// that could match, it finds nothing. It answers false (run the detector)
// whenever it is not sure: when the detector decodes encoded text
// (MaxDecodeDepth), for a keyword-less rule it cannot judge.
func cannotFind(s string) bool {
	d := gitleaksDetector()
	if d.MaxDecodeDepth > 0 || prefilter.MatchFirstString(strings.ToLower(s)) != nil {
		return false
	}
	for _, r := range unkeyed {
		switch {
		case r.Regex != nil:
			if r.Regex.MatchString(s) {
				return false
			}
		case r.Path != nil:
			// A rule on file paths alone: the fragment has none.
			if r.Path.MatchString("") {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Load loads the rule sets now rather than on the first String call (about
// 100 ms). Servers call it at start.
func Load() { gitleaksDetector() }

func gitleaksPass(s string) string {
	if cannotFind(s) {
		return s
	}
	findings := gitleaksDetector().DetectString(s)
	if len(findings) == 0 {
		return s
	}
	type hit struct{ secret, rule string }
	var hits []hit
	for _, f := range findings {
		secret := f.Secret
		if secret == "" {
			secret = f.Match
		}
		if len(secret) < 4 {
			continue
		}
		hits = append(hits, hit{secret, f.RuleID})
	}
	// The longest first, so a secret that contains another goes whole.
	sort.Slice(hits, func(i, j int) bool { return len(hits[i].secret) > len(hits[j].secret) })
	for _, h := range hits {
		s = strings.ReplaceAll(s, h.secret, "[REDACTED:"+h.rule+"]")
	}
	return s
}

// clean remembers short strings in which String found nothing, so that the
// strings every call repeats (tool names, call ids, kinds of events) are
// scanned once. It holds no secret String can recognise: only strings
// String returned unchanged. The rules are fixed once loaded, so the
// answer for a string never changes.
var clean cleanSet

// cleanSet is a bounded set of strings: when full, it starts over empty.
type cleanSet struct {
	m atomic.Pointer[sync.Map]
	n atomic.Int64
}

const (
	cleanLen  = 256  // the longest string remembered, in bytes
	cleanSize = 4096 // strings remembered before the set starts over
)

func (c *cleanSet) has(s string) bool {
	if len(s) > cleanLen {
		return false
	}
	m := c.m.Load()
	if m == nil {
		return false
	}
	_, ok := m.Load(s)
	return ok
}

func (c *cleanSet) add(s string) {
	if len(s) > cleanLen {
		return
	}
	m := c.m.Load()
	if m == nil || c.n.Load() >= cleanSize {
		m = new(sync.Map)
		c.m.Store(m)
		c.n.Store(0)
	}
	if _, loaded := m.LoadOrStore(strings.Clone(s), struct{}{}); !loaded {
		c.n.Add(1)
	}
}
