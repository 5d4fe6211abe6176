//go:build !linux

package listen

import (
	"errors"
	"net"
)

// peerUID is not implemented here: every Unix-socket peer is refused.
func peerUID(c net.Conn) (int, error) {
	return -1, errors.New("peer credentials are only checked on Linux")
}
