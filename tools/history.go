package tools

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/redact"
	"github.com/agentls/agentls/workspace"
)

// LogEntry is one line of the execution log, as tool/history answers it
// (docs/protocol.md, Methods).
type LogEntry struct {
	CallID     string          `json:"callId"`
	Tool       string          `json:"tool"`
	Arguments  json.RawMessage `json:"arguments"`
	Status     Status          `json:"status"`
	Error      *Error          `json:"error,omitempty"`
	DurationMs int64           `json:"durationMs"`
	Timestamp  time.Time       `json:"timestamp"`
	ApprovedBy string          `json:"approvedBy"`
	// Summary is the start of the result's content (summaryLen runes at
	// most, redacted): what the call answered, without its bulk.
	Summary string `json:"summary,omitempty"`
	// Redaction is the version of the redaction the entry went through
	// when it was written; Read redacts entries of an older one (written
	// before there was one) again.
	Redaction int `json:"redaction,omitempty"`
	// Cached: the session's result cache answered the call.
	Cached bool `json:"cached,omitempty"`
}

// redactionVersion is the current Redaction: gitleaks' rules and agentls's
// own (package redact).
const redactionVersion = 1

// History appends calls to a JSON-lines file and reads them back. Every
// field that holds text from the agent or a tool (arguments, call id, tool
// name, error message and details) goes through package redact before it
// is written: secrets are replaced by "[REDACTED:<rule>]" and no string is
// longer than redact.Cap. It is safe for concurrent use, and across
// processes appends are whole lines.
//
// It keeps one append handle on the file between calls rather than opening
// it for each entry; before each append it stats the path, and reopens
// when the file there is no longer the one it holds (another process
// rotated or removed it). Close releases the handle.
type History struct {
	mu      sync.Mutex
	file    string
	maxSize int64
	f       *os.File    // the append handle, nil until the first append
	id      os.FileInfo // f's identity, for os.SameFile
}

// NewHistory returns a log that writes to file.
func NewHistory(file string) *History { return &History{file: file, maxSize: 16 << 20} }

// HistoryFile is the default log file for a workspace.
func HistoryFile(roots []string) string { return workspace.StateFile(roots, "history", ".jsonl") }

// Append writes one entry. When the file grows past its cap it is rotated
// to file.1 first.
func (h *History) Append(e LogEntry) error { return h.append(redactEntry(e, false)) }

// appendRedacted appends an entry whose arguments were redacted already.
func (h *History) appendRedacted(e LogEntry) error { return h.append(redactEntry(e, true)) }

func (h *History) append(e LogEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode log entry: %w", err)
	}
	line = append(line, '\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	fi, err := os.Stat(h.file)
	if err == nil && fi.Size()+int64(len(line)) > h.maxSize {
		if err := os.Rename(h.file, h.file+".1"); err != nil {
			return fmt.Errorf("history: rotate: %w", err)
		}
		fi, err = nil, os.ErrNotExist
	}
	if h.f != nil && (err != nil || !os.SameFile(fi, h.id)) {
		h.closeFile() // rotated or removed: the entry goes to the file at the path
	}
	if h.f == nil {
		if err := h.open(); err != nil {
			return fmt.Errorf("history: %w", err)
		}
	}
	if _, err := h.f.Write(line); err != nil {
		h.closeFile()
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

// open opens the append handle, creating the file and its directory.
func (h *History) open() error {
	if err := os.MkdirAll(filepath.Dir(h.file), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(h.file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	id, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	h.f, h.id = f, id
	return nil
}

func (h *History) closeFile() {
	if h.f != nil {
		h.f.Close()
		h.f, h.id = nil, nil
	}
}

// Close releases the append handle; a later Append opens the file again.
func (h *History) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closeFile()
	return nil
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
			if e.Redaction < redactionVersion {
				e = redactEntry(e, false) // written before this redaction
			}
			out = append(out, e) // a torn or foreign line is skipped
		}
	}
	return out, sc.Err()
}

// Redact returns a JSON document with its secrets redacted: redact.JSON,
// the one redaction of everything agentls logs or emits.
func Redact(raw json.RawMessage) json.RawMessage { return redact.JSON(raw) }

// summaryLen is the most runes of a result's content an entry keeps.
const summaryLen = 200

// summarize is the start of a result's content for the log: at most
// summaryLen runes, cut where a line ends when there is one, marked "…"
// when cut.
func summarize(content string) string {
	r := []rune(strings.TrimSpace(content))
	if len(r) <= summaryLen {
		return string(r)
	}
	s := string(r[:summaryLen])
	if i := strings.LastIndexByte(s, '\n'); i > summaryLen/2 {
		s = s[:i]
	}
	return s + "…"
}

// redactEntry redacts every field of an entry that holds text from the
// agent or a tool, the arguments too unless argsDone.
func redactEntry(e LogEntry, argsDone bool) LogEntry {
	if !argsDone {
		e.Arguments = redact.JSON(e.Arguments)
	}
	e.CallID = redact.String(e.CallID)
	e.Tool = redact.String(e.Tool)
	e.ApprovedBy = redact.String(e.ApprovedBy)
	e.Summary = redact.String(e.Summary)
	if e.Error != nil {
		re := *e.Error
		re.Message = redact.String(re.Message)
		re.Details = redactAny(re.Details)
		e.Error = &re
	}
	e.Redaction = redactionVersion
	return e
}

// redactAny redacts a JSON-encodable value through its encoding.
func redactAny(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return redact.String(fmt.Sprint(v))
	}
	return json.RawMessage(redact.JSON(b))
}
