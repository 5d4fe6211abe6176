package approval

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Memory holds the "always" answers of a session. When it has a file, the
// answers persist there (approval.persistAlways) and are read back by the
// next session of the same workspace. The file is a JSON array of keys.
type Memory struct {
	mu      sync.Mutex
	allowed map[string]bool // key -> persisted
	file    string
}

// NewMemory returns a memory; file may be "" for one that lasts the session.
// A persisted file that cannot be read starts an empty memory.
func NewMemory(file string) *Memory {
	m := &Memory{allowed: map[string]bool{}, file: file}
	if file != "" {
		if b, err := os.ReadFile(file); err == nil {
			var keys []string
			if json.Unmarshal(b, &keys) == nil {
				for _, k := range keys {
					m.allowed[k] = true
				}
			}
		}
	}
	return m
}

// Allowed reports whether the user said "always" for key.
func (m *Memory) Allowed(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.allowed[key]
	return ok
}

// Remember records an "always" answer, and writes it through when persistent.
func (m *Memory) Remember(key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.allowed[key]; !ok {
		m.allowed[key] = false
	}
	if m.file == "" {
		return nil
	}
	if err := m.rewrite(key, ""); err != nil {
		return err
	}
	m.allowed[key] = true
	return nil
}

// Rule is one remembered "always" answer, as approval/rules lists it.
type Rule struct {
	ID        string `json:"id"`    // stable: the same key has the same id in every session
	Tool      string `json:"tool"`  // the tool the answer was given for
	Key       string `json:"key"`   // what the policy matches (Assessment.AlwaysKey)
	Label     string `json:"label"` // the alwaysLabel that created it
	Persisted bool   `json:"persisted"`
}

// Rules lists the remembered answers, sorted by tool and key.
func (m *Memory) Rules() []Rule {
	m.mu.Lock()
	defer m.mu.Unlock()
	rules := make([]Rule, 0, len(m.allowed))
	for k, persisted := range m.allowed {
		r := RuleFor(k)
		r.Persisted = persisted
		rules = append(rules, r)
	}
	slices.SortFunc(rules, func(a, b Rule) int {
		return cmp.Or(strings.Compare(a.Tool, b.Tool), strings.Compare(a.Key, b.Key))
	})
	return rules
}

// Forget removes the rule with that id, from the persisted file too. It
// reports whether there was such a rule; the error says the file could not
// be rewritten (the rule is forgotten for the session all the same).
func (m *Memory) Forget(id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, persisted := range m.allowed {
		if ruleID(k) != id {
			continue
		}
		delete(m.allowed, k)
		if persisted && m.file != "" {
			return true, m.rewrite("", k)
		}
		return true, nil
	}
	return false, nil
}

// rewrite adds add and removes remove (either may be "") in the file,
// atomically. The file, not this session's memory, is the list it edits:
// another session of the workspace may have added or revoked rules since
// this one started, and neither is undone here. m.mu is held.
func (m *Memory) rewrite(add, remove string) error {
	set := map[string]bool{}
	if b, err := os.ReadFile(m.file); err == nil {
		var keys []string
		if json.Unmarshal(b, &keys) == nil {
			for _, k := range keys {
				set[k] = true
			}
		}
	}
	if add != "" {
		set[add] = true
	}
	delete(set, remove)
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b, _ := json.MarshalIndent(keys, "", "  ")
	if err := os.MkdirAll(filepath.Dir(m.file), 0o700); err != nil {
		return fmt.Errorf("persist approvals: %w", err)
	}
	tmp := m.file + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("persist approvals: %w", err)
	}
	if err := os.Rename(tmp, m.file); err != nil {
		return fmt.Errorf("persist approvals: %w", err)
	}
	return nil
}

func ruleID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "r_" + hex.EncodeToString(sum[:6])
}

// RuleFor describes what an "always" answer remembered under key covers.
// Keys are a tool's name, or the AlwaysKey of a tool that remembers less
// than the whole tool: "shell:" (shell_exec), "shell_background:",
// "run_code:", "web_fetch:" and "git_push:" followed by what the call named.
func RuleFor(key string) Rule {
	r := Rule{ID: ruleID(key), Key: key, Tool: key}
	prefix, rest, ok := strings.Cut(key, ":")
	if !ok {
		r.Label = "always allow " + key
		return r
	}
	switch prefix {
	case "shell":
		r.Tool = "shell_exec"
		r.Label = "always allow " + commandParts(rest)
	case "shell_background":
		r.Tool = "shell_background"
		r.Label = "always allow in the background " + commandParts(rest)
	case "run_code":
		r.Tool = "run_code"
		lang, network := strings.CutSuffix(rest, "+network")
		r.Label = "always allow run_code in " + lang
		if network {
			r.Label += " with network access"
		}
	case "web_fetch":
		r.Tool = "web_fetch"
		if method, host, ok := strings.Cut(rest, ":"); ok && method == strings.ToUpper(method) && !strings.Contains(method, ".") {
			r.Label = fmt.Sprintf("always allow web_fetch %s requests to %s", method, host)
		} else {
			r.Label = "always allow web_fetch from " + rest
		}
	case "git_push":
		r.Tool = "git_push"
		r.Label = "always allow git_push to " + rest
	default:
		r.Tool = prefix
		r.Label = "always allow " + prefix + " for " + rest
	}
	return r
}

// commandParts words the parts of a shell key: "`echo …`, `ls …`, writing
// to out.txt, outside the workspace: /etc, setting PATH".
func commandParts(key string) string {
	var parts []string
	for _, p := range strings.Split(key, " ; ") {
		switch {
		case strings.HasPrefix(p, "outside:"):
			parts = append(parts, "paths outside the workspace: "+strings.TrimPrefix(p, "outside:"))
		case strings.HasPrefix(p, ">"):
			parts = append(parts, "writing to "+strings.TrimPrefix(p, ">"))
		case strings.HasPrefix(p, "env:"):
			parts = append(parts, "setting "+strings.TrimPrefix(p, "env:"))
		case p != "":
			parts = append(parts, "`"+p+" …`")
		}
	}
	if len(parts) == 0 {
		return "this command"
	}
	return strings.Join(parts, ", ")
}
