#!/usr/bin/env bash
# The MCP suite: the official MCP TypeScript SDK client (mcp/test, from npm;
# `npm ci` when the lockfile changed) against the REAL `agentls mcp` binary
# over stdio. Prints "N passed, M failed" last; exits non-zero on any failure.
set -uo pipefail
name=mcp-test
. "$(dirname "$0")/lib.sh"

cd "$repo/mcp/test" || fail "no $repo/mcp/test"
npm_ci_when_changed

echo "== build agentls"
build_agentls "$work/agentls"
export AGENTLS_BIN="$work/agentls"

# Only the *.test.mjs files: node --test would also run every other .mjs
# under a test/ folder (client.mjs is the Neovim suite's MCP client).
echo "== node:test (@modelcontextprotocol/sdk client against $AGENTLS_BIN mcp)"
node_test ./*.test.mjs
tap_summary
