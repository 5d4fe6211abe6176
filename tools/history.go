package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/agentls/agentls/workspace"
)

// LogEntry is one line of the execution log (PROTOCOL.md's ExecutionLog).
type LogEntry struct {
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Status     Status          `json:"status"`
	Error      *Error          `json:"error,omitempty"`
	DurationMs int64           `json:"durationMs"`
	Timestamp  time.Time       `json:"timestamp"`
	ApprovedBy string          `json:"approvedBy"`
}

// History appends calls to a JSON-lines file and reads them back. Argument
// values that look like secrets are redacted before they are written. It is
// safe for concurrent use, and across processes appends are whole lines.
type History struct {
	mu      sync.Mutex
	file    string
	maxSize int64
}

// NewHistory returns a log that writes to file.
func NewHistory(file string) *History { return &History{file: file, maxSize: 16 << 20} }

// HistoryFile is the default log file for a workspace.
func HistoryFile(roots []string) string { return workspace.StateFile(roots, "history", ".jsonl") }

// Append writes one entry. When the file grows past its cap it is rotated
// to file.1 first.
func (h *History) Append(e LogEntry) error {
	e.Arguments = Redact(e.Arguments)
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode log entry: %w", err)
	}
	line = append(line, '\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(h.file), 0o700); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	if fi, err := os.Stat(h.file); err == nil && fi.Size()+int64(len(line)) > h.maxSize {
		if err := os.Rename(h.file, h.file+".1"); err != nil {
			return fmt.Errorf("history: rotate: %w", err)
		}
	}
	f, err := os.OpenFile(h.file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	_, werr := f.Write(line)
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("history: %w", werr)
	}
	return cerr
}

// Read returns up to limit entries (all when limit <= 0), newest first, of
// one tool when tool is not empty.
func (h *History) Read(limit int, tool string) ([]LogEntry, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []LogEntry
	for _, f := range []string{h.file, h.file + ".1"} {
		entries, err := readLog(f)
		if err != nil {
			return nil, err
		}
		for i := len(entries) - 1; i >= 0; i-- {
			if tool != "" && entries[i].Tool != tool {
				continue
			}
			out = append(out, entries[i])
			if limit > 0 && len(out) == limit {
				return out, nil
			}
		}
	}
	if out == nil {
		out = []LogEntry{}
	}
	return out, nil
}

func readLog(file string) ([]LogEntry, error) {
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	var out []LogEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var e LogEntry
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &e) == nil && e.Tool != "" {
			out = append(out, e) // a torn or foreign line is skipped
		}
	}
	return out, sc.Err()
}

const redacted = "[REDACTED]"

// Redact replaces the values of secret-looking keys (token, password,
// secret, key, ...) and long high-entropy strings in a JSON document.
func Redact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return raw
	}
	return out
}

func redactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if secretKey(k) {
				if _, isObj := e.(map[string]any); !isObj {
					t[k] = redacted
					continue
				}
			}
			t[k] = redactValue(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = redactValue(e)
		}
		return t
	case string:
		if looksSecret(t) {
			return redacted
		}
	}
	return v
}

var secretWords = map[string]bool{
	"token": true, "password": true, "passwd": true, "secret": true, "key": true,
	"apikey": true, "credential": true, "credentials": true, "auth": true, "authorization": true,
	"cookie": true, "passphrase": true, "private": true,
}

// secretKey splits a key into words (snake_case, kebab-case, camelCase) and
// reports whether one of them names a secret.
func secretKey(k string) bool {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(k)
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
		case unicode.IsUpper(r) && i > 0 && unicode.IsLower(rs[i-1]):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	for _, w := range words {
		if secretWords[w] {
			return true
		}
	}
	return secretWords[strings.ToLower(k)]
}

// looksSecret flags strings that look like keys: known prefixes, or 24+
// characters without spaces, mixing letters and digits, of high entropy.
func looksSecret(s string) bool {
	for _, p := range []string{"sk-", "ghp_", "gho_", "github_pat_", "xoxb-", "xoxp-", "AKIA", "glpat-"} {
		if strings.HasPrefix(s, p) && len(s) >= 16 && !strings.ContainsAny(s, " \n") {
			return true
		}
	}
	if len(s) < 24 || len(s) > 512 || strings.ContainsAny(s, " \t\n/\\") {
		return false
	}
	var letters, digits bool
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
		letters = letters || unicode.IsLetter(r)
		digits = digits || unicode.IsDigit(r)
	}
	if !letters || !digits {
		return false
	}
	var h float64
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h >= 4.0
}
