// Package listen opens the listeners of `agentls serve --listen` (and of any
// other server of agentls that takes connections) so that only the person
// who started the server gets in:
//
//   - "unix:PATH" is a Unix socket, mode 0600, in a directory that is the
//     user's own and writable by nobody else (created 0700 when missing);
//     Accept refuses a peer whose uid (SO_PEERCRED) is not the server's.
//   - "HOST:PORT" (or "tcp:HOST:PORT") is TCP, on a loopback address only
//     unless Options.AllowRemote.
//   - Every listener has a token: read from Options.TokenFile, or generated
//     (256 bits from crypto/rand) into a new 0600 file in a private
//     directory. The protocol on top must refuse a connection whose first
//     message does not present it (TokenMatches compares).
//
// What it does not cover: a process of the same user can read the token and
// connect (it could also ptrace the server), and with AllowRemote the token
// travels in clear text.
package listen

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/internal/private"
)

// Options configure Listen.
type Options struct {
	// AllowRemote permits TCP on an address that is not loopback.
	AllowRemote bool
	// TokenFile, when set, holds the token (surrounding blanks ignored). It
	// must be a regular file of the user's that nobody else may read.
	TokenFile string
	// Log receives refused connections (nil: discarded).
	Log *slog.Logger
}

// MinTokenLength is the shortest token a token file may hold.
const MinTokenLength = 16

// Listener is a listener with its token. Accept refuses Unix-socket peers
// of another uid; Close also removes a generated token file.
type Listener struct {
	net.Listener
	// Token is the secret the first message of a connection must carry.
	Token string
	// TokenFile is the file that holds Token.
	TokenFile string

	generated bool
	unix      bool
	log       *slog.Logger
	closeOnce sync.Once
	closeErr  error
}

// Listen opens addr ("unix:PATH", "HOST:PORT" or "tcp:HOST:PORT") and
// settles its token.
func Listen(addr string, opts Options) (*Listener, error) {
	l := &Listener{log: opts.Log}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if opts.TokenFile != "" {
		l.Token, err = readToken(opts.TokenFile)
		l.TokenFile = opts.TokenFile
	} else {
		l.Token, l.TokenFile, err = newToken()
		l.generated = err == nil
	}
	if err != nil {
		return nil, err
	}
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		l.unix = true
		l.Listener, err = listenUnix(path)
	} else {
		l.Listener, err = listenTCP(strings.TrimPrefix(addr, "tcp:"), opts.AllowRemote)
	}
	if err != nil {
		l.removeToken()
		return nil, err
	}
	return l, nil
}

// Accept waits for the next connection. On a Unix socket it closes, logs
// and skips connections from processes of another uid.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || !l.unix {
			return c, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == os.Getuid() {
			return c, nil
		}
		if err != nil {
			l.log.Warn("connection refused: peer credentials unknown", "err", err)
		} else {
			l.log.Warn("connection refused: peer of another user", "uid", uid)
		}
		c.Close()
	}
}

// Close closes the listener (removing a Unix socket) and a generated token
// file. It may be called more than once, concurrently.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.closeErr = l.Listener.Close()
		l.removeToken()
	})
	return l.closeErr
}

func (l *Listener) removeToken() {
	if l.generated {
		os.Remove(l.TokenFile)
		l.generated = false
	}
}

// TokenMatches reports whether got is want, in time that depends on
// neither (both are hashed first). An empty got never matches.
func TokenMatches(got, want string) bool {
	if got == "" || want == "" {
		return false
	}
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// listenTCP listens on addr, loopback only unless remote.
func listenTCP(addr string, remote bool) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w (want HOST:PORT or unix:PATH)", addr, err)
	}
	if !remote {
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return nil, fmt.Errorf("--listen %s: not a loopback address (127.0.0.1, ::1 or localhost); other hosts could connect — pass --allow-remote to mean it", addr)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !remote && (!ok || !a.IP.IsLoopback()) {
		ln.Close()
		return nil, fmt.Errorf("--listen %s: bound to %s, which is not loopback", addr, ln.Addr())
	}
	return ln, nil
}

// listenUnix listens on a socket at path in a private directory.
func listenUnix(path string) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("--listen unix: needs a path")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := private.MakeDir(filepath.Dir(path), 0o022); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%s is in use by another server", path)
		}
		if err := os.Remove(path); err != nil { // a stale socket
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// Between bind and chmod the directory keeps others out (and Accept
	// checks every peer's uid anyway).
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod socket: %w", err)
	}
	return ln, nil
}

// TokenDir is where generated token files go: $XDG_RUNTIME_DIR/agentls, or
// agentls-UID in the temporary directory.
func TokenDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "agentls")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("agentls-%d", os.Getuid()))
}

// newToken generates a token into a new 0600 file in TokenDir.
func newToken() (token, file string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("generate token: %w", err)
	}
	token = hex.EncodeToString(b[:])
	dir := TokenDir()
	if err := private.MakeDir(dir, 0o077); err != nil {
		return "", "", fmt.Errorf("token directory: %w", err)
	}
	f, err := os.CreateTemp(dir, "token-*") // mode 0600, a new name
	if err != nil {
		return "", "", fmt.Errorf("token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", "", fmt.Errorf("write token file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", "", fmt.Errorf("write token file: %w", err)
	}
	return token, f.Name(), nil
}

// readToken reads a token file that only its owner, the user, may read.
func readToken(path string) (string, error) {
	f, err := private.Open(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	defer f.Close()
	b := make([]byte, 4097)
	n, _ := f.Read(b)
	if n > 4096 {
		return "", fmt.Errorf("--token-file %s: a token is at most 4096 bytes", path)
	}
	tok := strings.TrimSpace(string(b[:n]))
	if len(tok) < MinTokenLength {
		return "", fmt.Errorf("--token-file %s: the token must be at least %d characters", path, MinTokenLength)
	}
	return tok, nil
}
