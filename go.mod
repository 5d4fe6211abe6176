module github.com/agentls/agentls

go 1.26.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/sourcegraph/go-diff v0.9.0
	go.lsp.dev/jsonrpc2 v0.10.0
	go.lsp.dev/protocol v0.12.0
	golang.org/x/net v0.62.0
	golang.org/x/tools v0.52.0
	mvdan.cc/sh/v3 v3.14.1
)

require (
	go.lsp.dev/pkg v0.0.0-20210717090340-384b27a52fb2 // indirect
	go.lsp.dev/uri v0.3.0 // indirect
	go.uber.org/atomic v1.9.0 // indirect
	go.uber.org/multierr v1.8.0 // indirect
	go.uber.org/zap v1.21.0 // indirect
)

require (
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.3.4 // indirect
	golang.org/x/sys v0.49.0
	golang.org/x/text v0.43.0
)
