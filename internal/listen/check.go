package listen

import (
	"io/fs"
	"net"
)

// The checks below are shared with package attach, which publishes editor
// sessions on sockets of this package and connects to them.

// PeerUID returns the uid of the process at the other end of a Unix socket
// (SO_PEERCRED on Linux; an error elsewhere, which callers treat as a
// refusal).
func PeerUID(c net.Conn) (int, error) { return peerUID(c) }

// PrivateDir makes sure dir is a directory of the user's that nobody else
// may enter (no group or other bits), creating it 0700 when it is missing.
// A symlink, another user's directory or one others may use is refused.
func PrivateDir(dir string) error { return privateDir(dir, 0o077) }

// ReadToken reads a token file: a regular file of the user's (not a
// symlink) that nobody else may read, holding MinTokenLength to 4096
// characters.
func ReadToken(path string) (string, error) { return readToken(path) }

// Owner returns the uid that owns fi, when the system says.
func Owner(fi fs.FileInfo) (int, bool) { return owner(fi) }
