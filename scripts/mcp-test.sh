#!/usr/bin/env bash
# The MCP suite: the official MCP TypeScript SDK client (mcp/test, from npm;
# `npm ci` when the lockfile changed) against the REAL `agentls mcp` binary
# over stdio. Prints "N passed, M failed" last; exits non-zero on any failure.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir="$repo/mcp/test"
work=$(mktemp -d /tmp/agentls-mcp-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
name=mcp-test
. "$repo/scripts/lib.sh"

cd "$dir" || fail "no $dir"
npm_ci_when_changed

echo "== build agentls"
build_agentls "$work/agentls"
export AGENTLS_BIN="$work/agentls"

echo "== node:test (@modelcontextprotocol/sdk client against $AGENTLS_BIN mcp)"
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$work/tap.txt" .
tap_counts "$work/tap.txt" $?
tap_summary
