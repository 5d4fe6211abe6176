// Package lsp is the protocol adapter: it speaks LSP and the tool/* methods
// of docs/protocol.md over a jsonrpc2 connection, keeps the connection's
// state (lifecycle, client capabilities, the buffers' overlays, published
// diagnostics), opens a session.Session at initialize and closes it at the
// end, and delegates every tool call, configuration change and file change
// to it. It never reaches into a tool or a service: the session's services
// follow the workspace by themselves. It also publishes an editor's session
// (package attach) and serves the connections attached to it (attach.go).
//
// methods.go is the one table of the methods it answers: each entry is a
// handler built by a typed adapter (request or notification, which decode
// the params once) and says how it runs. dispatch.go is the one place that
// gates a message by the lifecycle, runs its handler, replies and cancels.
// The handlers, one file per area (tool.go, textsync.go, config.go,
// features.go, approver.go, initialize.go), look up state and delegate.
//
// Rules the dispatcher keeps: every request is answered exactly once and
// nothing is returned to jsonrpc2 (an error would close the connection);
// notifications are handled in order on the reading goroutine, so a tool
// call always sees the buffer changes sent before it; requests other than
// initialize and shutdown run on their own goroutines, so a call waiting
// for approval never delays another request, and $/cancelRequest cancels
// them by id.
package lsp
