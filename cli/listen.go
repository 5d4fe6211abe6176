package cli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/agentls/agentls/internal/listen"
)

// listenFlags are serve's flags for listening instead of stdio.
type listenFlags struct {
	addr        string // --listen
	allowRemote bool   // --allow-remote
	tokenFile   string // --token-file
}

// open opens the listener and tells stderr where it listens and where its
// token is (never the token itself).
func (lo listenFlags) open(log *slog.Logger, stderr io.Writer) (*listen.Listener, error) {
	l, err := listen.Listen(lo.addr, listen.Options{AllowRemote: lo.allowRemote, TokenFile: lo.tokenFile, Log: log})
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	if l.Addr().Network() == "unix" {
		addr = "unix:" + addr
	}
	fmt.Fprintf(stderr, "agentls: listening on %s\n", addr)
	fmt.Fprintf(stderr, "agentls: token file %s (clients send its content as initializationOptions.token)\n", l.TokenFile)
	if lo.allowRemote {
		fmt.Fprintln(stderr, "agentls: warning: --allow-remote: the token crosses the network in clear text")
	}
	return l, nil
}
