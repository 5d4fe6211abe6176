#!/usr/bin/env bash
# End-to-end suite with a real coding agent: Claude Code
# (@anthropic-ai/claude-code from npm, the version pinned in
# mcp/e2e-claude/package-lock.json) in print mode, with the REAL
# `agentls mcp` binary as its MCP server and its model replaced by a
# scripted server on 127.0.0.1 (mcp/e2e-claude/model.mjs: the only fake
# part). See mcp/e2e-claude/claude.test.mjs.
#
# Installs Claude Code into $AGENTLS_CACHE/claude-code (default .cache/ of
# the repo) with `npm ci` when the lockfile changed; needs node and npm
# (scripts/install-deps.sh mcp). AGENTLS_BIN: a built agentls to test
# (default: built here). AGENTLS_E2E_KEEP=1 keeps the work folder (each
# run's Claude Code debug log, the recorded requests).
# Prints "N passed, M failed" last; exits non-zero on any failure.
set -uo pipefail
name=claude-e2e
. "$(dirname "$0")/lib.sh"
dir="$repo/mcp/e2e-claude"
cache="${AGENTLS_CACHE:-$repo/.cache}"
export npm_config_update_notifier=false
cleanup() { if [ -z "${AGENTLS_E2E_KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work"; fi; }
trap cleanup EXIT

command -v node >/dev/null && command -v npm >/dev/null || fail "node and npm are missing (scripts/install-deps.sh mcp)"

# ---- Claude Code, from npm ----
cc="$cache/claude-code"
mkdir -p "$cc" || fail "cannot create $cc"
# Worktrees share the cache: one installs at a time.
exec 9>"$cc/.lock"
flock 9 || fail "cannot lock $cc"
stamp="$cc/node_modules/.agentls-lock-stamp"
if [ ! -f "$stamp" ] || ! cmp -s "$dir/package-lock.json" "$stamp"; then
  echo "== npm ci (Claude Code, into $cc)"
  cp "$dir/package.json" "$dir/package-lock.json" "$cc/" || fail "cannot copy the package files"
  # The package's post-install copies its platform's native binary over
  # bin/claude.exe; the binary is also found below if it did not run.
  (cd "$cc" && npm_config_yes=true npm ci) >"$work/npm.log" 2>&1 || { tail -30 "$work/npm.log"; fail "npm ci failed"; }
  cp "$dir/package-lock.json" "$stamp"
fi
want=$(node -p "require('$dir/package-lock.json').packages['node_modules/@anthropic-ai/claude-code'].version")
claude=""
for c in "$cc/node_modules/.bin/claude" "$cc"/node_modules/@anthropic-ai/claude-code-*/claude; do
  if [ -x "$c" ] && [ "$("$c" --version 2>/dev/null)" = "$want (Claude Code)" ]; then claude=$c; break; fi
done
# Shared from here on: a run of another worktree may test at the same time,
# but not reinstall under this one.
flock -s 9
[ -n "$claude" ] || fail "no Claude Code $want runs from $cc"
export CLAUDE_BIN="$claude"

# ---- agentls ----
echo "== build agentls"
build_agentls "$work/agentls"
export AGENTLS_BIN="$work/agentls"

echo "== node:test (Claude Code $want against $AGENTLS_BIN mcp)"
cd "$dir" || fail "no $dir"
AGENTLS_E2E_WORK="$work" node_test claude.test.mjs
tap_summary
