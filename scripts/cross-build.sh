#!/usr/bin/env bash
# Builds agentls for the systems no suite runs on, so that what README.md
# says of them stays true: macOS with the tests (go vet type-checks them
# too), FreeBSD, and the binary for Windows (the tests' shared helpers,
# internal/testenv, are Unix's). Nothing runs there: it compiles.
set -euo pipefail
cd "$(dirname "$0")/.."
GOOS=darwin go vet ./...
echo "darwin: go vet ./... passed"
GOOS=freebsd go build -o /dev/null ./cmd/agentls
echo "freebsd: the binary builds"
GOOS=windows go build -o /dev/null ./cmd/agentls
echo "windows: the binary builds"
