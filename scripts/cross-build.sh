#!/usr/bin/env bash
# Type-checks agentls for the systems no suite runs on, so that what
# README.md says of them stays true: macOS with the tests, FreeBSD, and
# the binary's packages for Windows (the tests' shared helpers,
# internal/testenv, are Unix's). It type-checks from the source
# (scripts/typecheck, as gopls does) rather than compile: on an empty
# build cache a compile for each system took 80 to 90 s here, the check
# 7 to 8 s. Nothing runs there.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/typecheck" ./scripts/typecheck # for this system; GOOS below is the checked one's
GOOS=darwin "$bin/typecheck" -tests ./...
GOOS=freebsd "$bin/typecheck" ./...
GOOS=windows "$bin/typecheck" ./cmd/agentls
