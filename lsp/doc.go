// Package lsp is the protocol adapter: it speaks LSP and the tool/* methods
// of PROTOCOL.md over a jsonrpc2 connection, keeps the session's state
// (lifecycle, client capabilities, workspace, overlays), and delegates every
// tool call to the tools.Runner.
//
// Rules the handlers follow: every request is answered exactly once and the
// handler returns nil (an error would close the connection); notifications
// are handled in order on the reading goroutine, so a tool call always sees
// the buffer changes sent before it; requests run on their own goroutines,
// so a call waiting for approval never delays another request.
package lsp
