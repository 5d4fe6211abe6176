# agentls. `make test` is the one command that runs every suite (CI runs it
# through .ci/run); `make run` starts the server on stdio.

GO ?= go
BIN := bin/agentls
COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS := -X github.com/agentls/agentls/cli.Commit=$(COMMIT)

.PHONY: build run test test-go test-fuzz test-editors fuzz bench bench-go lint race clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/agentls

run: build
	./$(BIN) serve

# Every suite: Go, then the editors (installed first where allowed).
test:
	./scripts/test.sh

test-go:
	./scripts/test.sh go

test-fuzz:
	./scripts/test.sh fuzz

test-editors:
	./scripts/test.sh editors

# Every fuzz target for FUZZTIME seconds (default 60) each; `make test` gives
# them 3 seconds each.
FUZZTIME ?= 60
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

race:
	$(GO) test -race ./lsp/... ./tools/... ./workspace/... ./approval/...

# agentls beside ripgrep on the Go tree and the monorepo tree, one table
# (README.md, "Benchmarks"); bench-go runs the packages' own benchmarks.
bench:
	./scripts/bench.sh
	$(GO) test -run '^$$' -bench 'Call(Stdio|Attached)' -benchtime 3000x ./mcp

bench-go:
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./cmd/agentls
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./mcp
	$(GO) test -run '^$$' -bench . ./search/... ./tools/... ./workspace/... ./redact/...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

clean:
	rm -rf bin
