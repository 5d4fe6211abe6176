package approval

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Memory holds the "always" answers of a session. When it has a file, the
// answers persist there (approval.persistAlways) and are read back by the
// next session of the same workspace.
type Memory struct {
	mu      sync.Mutex
	allowed map[string]bool
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
	return m.allowed[key]
}

// Remember records an "always" answer, and writes it through when persistent.
func (m *Memory) Remember(key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.allowed[key] = true
	if m.file == "" {
		return nil
	}
	keys := make([]string, 0, len(m.allowed))
	for k := range m.allowed {
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
	return os.Rename(tmp, m.file)
}
