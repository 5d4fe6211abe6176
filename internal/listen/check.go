package listen

import (
	"net"
)

// The checks below are shared with package attach, which publishes editor
// sessions on sockets of this package and connects to them.

// PeerUID returns the uid of the process at the other end of a Unix socket
// (SO_PEERCRED on Linux; an error elsewhere, which callers treat as a
// refusal).
func PeerUID(c net.Conn) (int, error) { return peerUID(c) }

// ReadToken reads a token file: a regular file of the user's (not a
// symlink) that nobody else may read, holding MinTokenLength to 4096
// characters.
func ReadToken(path string) (string, error) { return readToken(path) }
