#!/usr/bin/env bash
# The VS Code extension's unit suite: npm ci (when needed), compile
# (type-check against @types/vscode + bundle), package with vsce, and the
# node:test suite of the core module against the REAL agentls binary.
# Prints "N passed, M failed" last; exits non-zero on any failure.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
ext="$repo/editors/vscode"
work=$(mktemp -d /tmp/agentls-vscode-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
export npm_config_loglevel=error npm_config_fund=false npm_config_audit=false

fail() { echo "vscode-test: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

cd "$ext" || fail "no $ext"
# The two VS Code scripts share node_modules/ and out/: one builds (and, here, runs out/test) at a time.
exec 9>"${TMPDIR:-/tmp}/agentls-vscode-build.lock"
flock 9 || fail "cannot lock the build"
stamp=node_modules/.agentls-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "== npm ci"
  npm ci >"$work/npm.log" 2>&1 || { cat "$work/npm.log"; fail "npm ci failed"; }
  cp package-lock.json "$stamp"
fi

echo "== compile (tsc type-check + esbuild bundle)"
npm run --silent compile || fail "compile failed"

echo "== package (vsce)"
npx --no-install vsce package --no-dependencies --skip-license -o "$work/agentls.vsix" >"$work/vsce.log" 2>&1 \
  || { cat "$work/vsce.log"; fail "vsce package failed"; }

echo "== build agentls"
if [ -z "${AGENTLS_BIN:-}" ]; then
  (cd "$repo" && go build -o "$work/agentls" ./cmd/agentls) || fail "go build failed"
  export AGENTLS_BIN="$work/agentls"
fi

echo "== node:test (core module against $AGENTLS_BIN)"
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$work/tap.txt" out/test/
rc=$?
pass=$(sed -n 's/^# pass //p' "$work/tap.txt" | tail -1)
failn=$(sed -n 's/^# fail //p' "$work/tap.txt" | tail -1)
skip=$(sed -n 's/^# skipped //p' "$work/tap.txt" | tail -1)
: "${pass:=0}" "${failn:=0}" "${skip:=0}"
if [ "$rc" -ne 0 ] && [ "$failn" -eq 0 ]; then failn=1; fi
[ "$skip" -gt 0 ] && echo "!!! $skip test(s) SKIPPED (see the SKIPPED lines above)"
echo "$pass passed, $failn failed"
[ "$failn" -eq 0 ]
