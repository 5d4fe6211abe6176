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

func gitleaksPass(s string) string {
	d := detectorFor(s)
	if d == nil {
		return s
	}
	findings := d.DetectString(s)
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
