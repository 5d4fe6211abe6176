package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
)

// Workspace is one session's view of the project. Roots and config change
// as the editor reports new folders and settings; readers always see a
// consistent snapshot of each.
type Workspace struct {
	Overlays *Overlays

	mu    sync.RWMutex
	roots []string // absolute, cleaned; roots[0] is the default

	config atomic.Pointer[Config]
}

// New returns a workspace with the given roots (made absolute) and the
// default configuration.
func New(roots ...string) (*Workspace, error) {
	w := &Workspace{Overlays: NewOverlays()}
	w.config.Store(DefaultConfig())
	if err := w.SetRoots(roots); err != nil {
		return nil, err
	}
	return w, nil
}

// SetRoots replaces the roots.
func (w *Workspace) SetRoots(roots []string) error {
	abs := make([]string, 0, len(roots))
	for _, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return fmt.Errorf("workspace root %q: %w", r, err)
		}
		abs = append(abs, filepath.Clean(a))
	}
	w.mu.Lock()
	w.roots = abs
	w.mu.Unlock()
	return nil
}

// Roots returns the workspace roots, the default one first.
func (w *Workspace) Roots() []string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return append([]string(nil), w.roots...)
}

// Root returns the default root, or "" when there is none.
func (w *Workspace) Root() string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if len(w.roots) == 0 {
		return ""
	}
	return w.roots[0]
}

// Config returns the configuration in force. Callers must not modify it.
func (w *Workspace) Config() *Config { return w.config.Load() }

// SetConfig replaces the configuration in force.
func (w *Workspace) SetConfig(c *Config) { w.config.Store(c) }

// ReadFile returns the text of an open document, or the file on disk.
func (w *Workspace) ReadFile(path string) ([]byte, error) {
	if d, ok := w.Overlays.Get(path); ok {
		return []byte(d.Text), nil
	}
	return os.ReadFile(path)
}

// Rel returns path relative to the root that holds it, with forward slashes,
// or path itself when no root holds it.
func (w *Workspace) Rel(path string) string {
	for _, r := range w.Roots() {
		if rel, ok := within(r, path); ok {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// within reports whether path is root or below it, and the relative path.
func within(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// URIToPath converts a file:// URI to a cleaned absolute path.
func URIToPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("parse uri %q: %w", uri, err)
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("uri %q: scheme %q is not file", uri, u.Scheme)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("uri %q: remote host %q", uri, u.Host)
	}
	if u.Path == "" {
		return "", errors.New("uri has no path")
	}
	return filepath.Clean(filepath.FromSlash(u.Path)), nil
}

// PathToURI converts an absolute path to a file:// URI.
func PathToURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// StateFile is a per-workspace file in the user's state directory
// ($XDG_STATE_HOME/agentls/KIND, or ~/.local/state/agentls/KIND): one file
// per set of roots, named after the first root and a hash of all of them.
func StateFile(roots []string, kind, ext string) string {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		dir = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(strings.Join(roots, "\x00")))
	name := "none"
	if len(roots) > 0 {
		name = strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' {
				return r
			}
			return '_'
		}, filepath.Base(roots[0]))
	}
	return filepath.Join(dir, "agentls", kind, name+"-"+hex.EncodeToString(sum[:6])+ext)
}
