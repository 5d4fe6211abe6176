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

	"github.com/agentls/agentls/internal/watch"
)

// Workspace is one session's view of the project. Roots and config change
// as the editor reports new folders and settings; readers always see a
// consistent snapshot of each.
//
// Paths in tool arguments and results have one form per root that round
// trips: with one root, relative to it; with several, the root's name
// (Folder.Name) first, then the path relative to that root ("api/main.go").
// A relative argument whose first segment is not a root's name is relative
// to the first root, so paths given before a folder was added keep working.
type Workspace struct {
	Overlays *Overlays

	mu    sync.RWMutex
	roots []string // absolute, cleaned; roots[0] is the default
	names []string // names[i] is roots[i]'s: unique, one path segment

	config atomic.Pointer[Config]

	events watch.Set[Event] // the watchers of Event (events.go)

	sens sensitiveState // the sensitive files' identities (sensitive.go)
}

// Folder is a workspace root and the name that stands for it in paths
// when there are several roots.
type Folder struct {
	Path string
	Name string // the workspace folder's name; "" for the directory's
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

// SetRoots replaces the roots, each named after its directory.
func (w *Workspace) SetRoots(roots []string) error {
	fs := make([]Folder, len(roots))
	for i, r := range roots {
		fs[i] = Folder{Path: r}
	}
	return w.SetFolders(fs)
}

// SetFolders replaces the roots. A name that is not a usable path segment
// (empty, ".", "..", with a slash, a backslash or a NUL) is replaced by the
// directory's name; a name already taken gets "-2", "-3", … appended.
func (w *Workspace) SetFolders(folders []Folder) error {
	abs := make([]string, 0, len(folders))
	names := make([]string, 0, len(folders))
	taken := map[string]bool{}
	for _, f := range folders {
		a, err := filepath.Abs(f.Path)
		if err != nil {
			return fmt.Errorf("workspace root %q: %w", f.Path, err)
		}
		a = filepath.Clean(a)
		name := f.Name
		if !validName(name) {
			name = filepath.Base(a)
		}
		if !validName(name) {
			name = "root"
		}
		base := name
		for i := 2; taken[name]; i++ {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		taken[name] = true
		abs = append(abs, a)
		names = append(names, name)
	}
	w.mu.Lock()
	w.roots, w.names = abs, names
	w.mu.Unlock()
	w.announce(Event{Reset: true})
	return nil
}

// validName reports whether a folder name can stand for its root as the
// first segment of a path.
func validName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\\\x00") && strings.TrimSpace(n) == n
}

// Folders returns the roots with their names, the default one first.
func (w *Workspace) Folders() []Folder {
	w.mu.RLock()
	defer w.mu.RUnlock()
	out := make([]Folder, len(w.roots))
	for i, r := range w.roots {
		out[i] = Folder{Path: r, Name: w.names[i]}
	}
	return out
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
func (w *Workspace) SetConfig(c *Config) {
	w.config.Store(c)
	w.announce(Event{Reset: true})
}

// ReadFile returns the text of an open document, or the file on disk: for
// a path inside an allowed root, read beneath it like ReadDisk (a symlink
// leading outside, or a sensitive file, is refused); a path outside every
// root (a definition in the standard library, say) is read as it is.
func (w *Workspace) ReadFile(path string) ([]byte, error) {
	if d, ok := w.Overlays.Get(path); ok {
		return []byte(d.Text), nil
	}
	return w.ReadDiskAny(path)
}

// Rel returns path in the form tool results use: relative to the root
// that holds it (the first such root), with forward slashes, prefixed with
// the root's name when there are several roots (see Workspace); or path
// itself when no root holds it.
func (w *Workspace) Rel(path string) string {
	w.mu.RLock()
	roots, names := w.roots, w.names
	w.mu.RUnlock()
	for i, r := range roots {
		if rel, ok := Within(r, path); ok {
			rel = filepath.ToSlash(rel)
			if len(roots) == 1 {
				return rel
			}
			if rel == "." {
				return names[i]
			}
			return names[i] + "/" + rel
		}
	}
	return path
}

// RootRel returns path relative to the root that holds it (the first such
// root), with forward slashes and without the root's name, "." for the root
// itself, or path when no root holds it. Rules written relative to a root
// (paths.sensitive) are matched against this form.
func (w *Workspace) RootRel(path string) string {
	for _, r := range w.Roots() {
		if rel, ok := Within(r, path); ok {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// StripRootName returns rel without its first segment when there are
// several roots and that segment is a root's name (the form Rel writes),
// and whether it did.
func (w *Workspace) StripRootName(rel string) (string, bool) {
	if _, rest, ok := w.rootOf(rel); ok {
		return filepath.ToSlash(rest), true
	}
	return rel, false
}

// rootOf returns the root named by the first segment of a relative path
// and the rest of the path, when there are several roots and one has that
// name.
func (w *Workspace) rootOf(rel string) (root, rest string, ok bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if len(w.roots) < 2 {
		return "", "", false
	}
	first, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
	for i, n := range w.names {
		if n == first {
			if rest == "" {
				rest = "."
			}
			return w.roots[i], filepath.FromSlash(rest), true
		}
	}
	return "", "", false
}

// Within reports whether path is root or below it, and the relative path.
// It is lexical: both paths are taken as written (clean and absolute, as
// Resolve returns them); no symlink is followed and nothing is read, so it
// decides where a path belongs, never whether it may be opened.
func Within(root, path string) (string, bool) {
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
