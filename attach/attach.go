// Package attach lets a process of the user's reach the agentls session of
// an editor on the same workspace (docs/protocol.md, "Attaching to an
// editor session"): `agentls mcp` started in a workspace the editor has
// open runs its calls in the editor's session.
//
// Discovery is a per-user runtime directory, Dir: $XDG_RUNTIME_DIR/agentls,
// else agentls-UID in the temporary directory. It must be the user's own,
// not a symlink, with no group or other bits (created 0700). An editor
// session publishes itself there (Publish) as two files named after its
// random id: ID.sock, a Unix socket of mode 0600 whose peers of another
// uid are refused (package internal/listen), and ID.json, its Descriptor
// (roots, pid, editor, socket, token file), mode 0600. The token file is
// the generated one of internal/listen, in the same directory.
//
// The rules a reader follows (List, Find, Dial):
//   - A descriptor is read only when it is a regular file of the user's
//     (never through a symlink), with no group or other bits, at most
//     64 KiB, whose id is its file name and whose socket and token file are
//     ID.sock and a token-* file of Dir itself: a descriptor that points
//     anywhere else is ignored.
//   - A session whose process is gone or whose socket refuses connections is
//     stale: it is skipped and its files are removed.
//   - Find picks the session whose root holds the working directory, the
//     innermost one when roots nest; the working directory is compared as
//     written (a symlink inside a repository does not lead to another
//     session's root), and only when no root holds it as written are both
//     compared with their symlinks resolved. An id (--session) chooses a
//     session outright.
//   - Dial connects, checks that the peer is of the user's uid, and opens
//     with the token scheme of `serve --listen`: the first message is
//     initialize with initializationOptions.token.
//
// Not covered: any process of the user's can read the token files and
// connect, as with `serve --listen`.
package attach

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/agentls/agentls/internal/listen"
	"github.com/agentls/agentls/internal/private"
)

// Descriptor is what a published session tells its clients (ID.json).
type Descriptor struct {
	ID        string    `json:"id"`
	Roots     []string  `json:"roots"`
	PID       int       `json:"pid"`
	Editor    string    `json:"editor"` // the editor's clientInfo.name, or ""
	Socket    string    `json:"socket"`
	TokenFile string    `json:"tokenFile"`
	Started   time.Time `json:"started"`
}

// maxDescriptor bounds a descriptor file.
const maxDescriptor = 64 << 10

// ErrNoSession says that no editor session holds the directory.
var ErrNoSession = errors.New("no editor session holds this directory")

// ErrRuntimeDir says that the runtime directory cannot be used (not the
// user's own, not private, a symlink…): nothing is published or found.
var ErrRuntimeDir = errors.New("runtime directory refused")

// Dir returns the runtime directory, created 0700 when missing, after
// checking it is the user's own and private.
func Dir() (string, error) {
	dir := listen.TokenDir()
	if err := private.MakeDir(dir, 0o077); err != nil {
		return "", fmt.Errorf("%w: %w", ErrRuntimeDir, err)
	}
	return dir, nil
}

// Publication is a published session: its listener (whose Accept refuses
// peers of another uid, and whose Token every connection must present) and
// its descriptor. Close unpublishes it.
type Publication struct {
	*listen.Listener
	Descriptor Descriptor
	file       string
	mu         sync.Mutex
	closed     bool
	closeOnce  sync.Once
	closeErr   error
}

// live holds the publications of this process, for CloseAll.
var live = struct {
	sync.Mutex
	m map[*Publication]bool
	// ended: CloseAll ran, the process is exiting; Publish refuses.
	ended bool
}{m: map[*Publication]bool{}}

// errEnded is Publish's error once CloseAll ran.
var errEnded = errors.New("session not published: the server is stopping")

// Publish opens a socket for a session on roots (absolute paths) of the
// editor named editor, and writes its descriptor. It holds the live set
// while it does, so that CloseAll, which a signal handler runs just before
// the process exits, either finds the publication whole or comes first
// (then Publish refuses, errEnded): no socket or token file is left behind.
func Publish(roots []string, editor string) (*Publication, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("session id: %w", err)
	}
	id := hex.EncodeToString(b[:])
	live.Lock()
	defer live.Unlock()
	if live.ended {
		return nil, errEnded
	}
	sock := filepath.Join(dir, id+".sock")
	l, err := listen.Listen("unix:"+sock, listen.Options{})
	if err != nil {
		return nil, err
	}
	p := &Publication{Listener: l, file: filepath.Join(dir, id+".json"), Descriptor: Descriptor{
		ID: id, Roots: cleanRoots(roots), PID: os.Getpid(), Editor: printable(editor, 100),
		Socket: sock, TokenFile: l.TokenFile, Started: time.Now().UTC().Truncate(time.Second),
	}}
	if err := p.write(); err != nil {
		l.Close()
		return nil, err
	}
	live.m[p] = true
	return p, nil
}

// SetRoots rewrites the descriptor with the session's new roots.
func (p *Publication) SetRoots(roots []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.Descriptor.Roots = cleanRoots(roots)
	return p.write()
}

// write replaces the descriptor file in one step (a new 0600 file renamed
// over it), so a reader never sees half of it.
func (p *Publication) write() error {
	data, err := json.MarshalIndent(p.Descriptor, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p.file), "tmp-*")
	if err != nil {
		return fmt.Errorf("session descriptor: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p.file)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("session descriptor: %w", err)
	}
	return nil
}

// Close unpublishes the session: the descriptor goes first, then the
// socket and the token file. It may be called more than once, and at once:
// every call returns when they are gone (a signal handler's CloseAll exits
// the process next, while the session may be closing itself). The
// publication leaves the live set last, so CloseAll finds, and waits for,
// a Close under way.
func (p *Publication) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		os.Remove(p.file)
		p.mu.Unlock()
		p.closeErr = p.Listener.Close()
		live.Lock()
		delete(live.m, p)
		live.Unlock()
	})
	return p.closeErr
}

// CloseAll unpublishes every session of this process, and any Publish
// after it fails (a signal handler's last act before the exit).
func CloseAll() {
	live.Lock()
	live.ended = true
	ps := make([]*Publication, 0, len(live.m))
	for p := range live.m {
		ps = append(ps, p)
	}
	live.Unlock()
	for _, p := range ps {
		p.Close()
	}
}

// printable is s without control characters, at most n runes.
func printable(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if n == 0 {
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			n--
		}
	}
	return b.String()
}

func cleanRoots(roots []string) []string {
	out := make([]string, 0, len(roots))
	for _, r := range roots {
		if filepath.IsAbs(r) {
			out = append(out, filepath.Clean(r))
		}
	}
	return out
}

// List returns the live sessions, oldest first. Stale ones are removed;
// files that are not valid descriptors are ignored.
func List() ([]Descriptor, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Descriptor
	for _, name := range names {
		d, err := readDescriptor(dir, name)
		if err != nil {
			continue
		}
		if !alive(d) {
			removeStale(dir, d)
			continue
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.Before(out[j].Started)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// readDescriptor reads and checks one descriptor file of dir.
func readDescriptor(dir, name string) (Descriptor, error) {
	var d Descriptor
	f, err := private.Open(name)
	if err != nil {
		return d, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDescriptor+1))
	if err != nil {
		return d, err
	}
	if len(data) > maxDescriptor {
		return d, fmt.Errorf("%s: too large", name)
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return d, fmt.Errorf("%s: %w", name, err)
	}
	id := strings.TrimSuffix(filepath.Base(name), ".json")
	switch {
	case d.ID != id || !validID(id):
		return d, fmt.Errorf("%s: the id is not the file's name", name)
	case d.Socket != filepath.Join(dir, id+".sock"):
		return d, fmt.Errorf("%s: the socket is not %s.sock of %s", name, id, dir)
	case filepath.Dir(d.TokenFile) != dir || !strings.HasPrefix(filepath.Base(d.TokenFile), "token-"):
		return d, fmt.Errorf("%s: the token file is not in %s", name, dir)
	case d.PID <= 0:
		return d, fmt.Errorf("%s: no pid", name)
	}
	d.Roots, d.Editor = cleanRoots(d.Roots), printable(d.Editor, 100)
	return d, nil
}

// validID reports whether id is a session id: 16 lowercase hex digits.
func validID(id string) bool {
	if len(id) != 16 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// alive reports whether d's process runs and its socket is there. (A
// socket that refuses connections is found stale by Dial, which removes it:
// probing every socket here would knock at every editor.)
func alive(d Descriptor) bool {
	if !processAlive(d.PID) {
		return false
	}
	fi, err := os.Lstat(d.Socket)
	return err == nil && fi.Mode().Type() == os.ModeSocket
}

// isRefused reports whether a dial failed because nobody listens there.
func isRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// removeStale removes a stale session's files (all of them inside dir, as
// readDescriptor checked).
func removeStale(dir string, d Descriptor) {
	os.Remove(filepath.Join(dir, d.ID+".json"))
	if fi, err := os.Lstat(d.Socket); err == nil && fi.Mode().Type() == os.ModeSocket {
		os.Remove(d.Socket)
	}
	if fi, err := os.Lstat(d.TokenFile); err == nil && fi.Mode().IsRegular() {
		os.Remove(d.TokenFile)
	}
}

// Find returns the session to attach to from the working directory cwd:
// the one of id when id is set (whatever cwd), else the session with the
// innermost root holding cwd (ErrNoSession when none does). root is the
// root that matched (with id: the session's first root).
func Find(cwd, id string) (d Descriptor, root string, err error) {
	sessions, err := List()
	if err != nil {
		return d, "", err
	}
	if id != "" {
		for _, s := range sessions {
			if s.ID == id {
				if len(s.Roots) > 0 {
					root = s.Roots[0]
				}
				return s, root, nil
			}
		}
		return d, "", fmt.Errorf("no editor session %s (agentls sessions lists them)", id)
	}
	d, root, ok := innermost(sessions, cwd, false)
	if !ok {
		d, root, ok = innermost(sessions, cwd, true)
	}
	if !ok {
		return d, "", ErrNoSession
	}
	return d, root, nil
}

// FindRoot returns a live session one of whose roots is root exactly (the
// newest when several are).
func FindRoot(root string) (Descriptor, bool) {
	sessions, err := List()
	if err != nil {
		return Descriptor{}, false
	}
	for i := len(sessions) - 1; i >= 0; i-- {
		for _, r := range sessions[i].Roots {
			if r == root {
				return sessions[i], true
			}
		}
	}
	return Descriptor{}, false
}

// innermost returns the session with the longest root that holds cwd,
// comparing the paths as written, or with their symlinks resolved. Among
// sessions on the same root the newest wins.
func innermost(sessions []Descriptor, cwd string, resolve bool) (Descriptor, string, bool) {
	norm := func(p string) string {
		p = filepath.Clean(p)
		if resolve {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				return r
			}
		}
		return p
	}
	dir := norm(cwd)
	var best Descriptor
	bestRoot, bestLen, found := "", -1, false
	for _, s := range sessions {
		for _, r := range s.Roots {
			n := norm(r)
			if within(dir, n) && len(n) >= bestLen {
				best, bestRoot, bestLen, found = s, r, len(n), true
			}
		}
	}
	return best, bestRoot, found
}

// within reports whether path is root or inside it.
func within(path, root string) bool {
	if path == root {
		return true
	}
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
