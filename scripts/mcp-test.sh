#!/usr/bin/env bash
# The MCP suite: the official MCP TypeScript SDK client (mcp/test, from npm;
# `npm ci` when the lockfile changed) against the REAL `agentls mcp` binary
# over stdio. Prints "N passed, M failed" last; exits non-zero on any failure.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir="$repo/mcp/test"
work=$(mktemp -d /tmp/agentls-mcp-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
export npm_config_loglevel=error npm_config_fund=false npm_config_audit=false

fail() { echo "mcp-test: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

cd "$dir" || fail "no $dir"
stamp=node_modules/.agentls-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "== npm ci"
  npm ci >"$work/npm.log" 2>&1 || { cat "$work/npm.log"; fail "npm ci failed"; }
  cp package-lock.json "$stamp"
fi

if [ -z "${AGENTLS_BIN:-}" ]; then
  echo "== build agentls"
  (cd "$repo" && go build -o "$work/agentls" ./cmd/agentls) || fail "go build failed"
  export AGENTLS_BIN="$work/agentls"
fi

echo "== node:test (@modelcontextprotocol/sdk client against $AGENTLS_BIN mcp)"
"$repo/scripts/node-test.sh" "$work/tap.txt" .
