#!/usr/bin/env bash
# The VS Code extension's unit suite: npm ci (when needed), compile
# (type-check against @types/vscode + bundle), package with vsce, and the
# node:test suite of the core module against the REAL agentls binary.
# Prints "N passed, M failed" last; exits non-zero on any failure.
set -uo pipefail
name=vscode-test
. "$(dirname "$0")/lib.sh"

cd "$repo/editors/vscode" || fail "no $repo/editors/vscode"
# One build (and, here, run of out/test) at a time.
lock_vscode_build
npm_ci_when_changed

echo "== compile (tsc type-check + esbuild bundle)"
npm run --silent compile || fail "compile failed"

echo "== package (vsce)"
npx --no-install vsce package --no-dependencies --skip-license -o "$work/agentls.vsix" >"$work/vsce.log" 2>&1 \
  || { cat "$work/vsce.log"; fail "vsce package failed"; }

echo "== build agentls"
build_agentls "$work/agentls"
export AGENTLS_BIN="$work/agentls"

echo "== node:test (core module against $AGENTLS_BIN)"
node_test out/test/
tap_summary
