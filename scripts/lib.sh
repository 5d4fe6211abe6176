# Steps shared by the node-based suites (scripts/mcp-test.sh,
# scripts/claude-e2e.sh, scripts/vscode-test.sh, scripts/vscode-e2e.sh).
# Sourced, never run:
#
#   name=mcp-test; . "$(dirname "$0")/lib.sh"
#
# Sourcing sets `repo` (the checkout) and `work` (a new temporary folder,
# $TMPDIR/agentls-$name.XXXXXX, for the logs; removed at exit, also on a
# failure or an interrupt, unless the caller sets its own EXIT trap, which
# must remove it then). `name` prefixes every
# failure; every failure prints "0 passed, 1 failed" last, as the suites'
# own summary line, and exits 1.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/agentls-$name.XXXXXX") || { echo "$name: cannot make a temporary folder" >&2; exit 1; }
trap 'rm -rf "$work"' EXIT
export npm_config_loglevel=error npm_config_fund=false npm_config_audit=false

# fail MESSAGE...: says what failed and exits 1.
fail() { echo "$name: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

# npm_ci_when_changed: `npm ci` in the current folder (a package with a
# package-lock.json) unless node_modules/ was installed from this very lockfile.
npm_ci_when_changed() {
  local stamp=node_modules/.agentls-lock-stamp
  if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
    echo "== npm ci"
    npm ci >"$work/npm.log" 2>&1 || { tail -30 "$work/npm.log"; fail "npm ci failed"; }
    cp package-lock.json "$stamp"
  fi
}

# lock_vscode_build: the VS Code scripts share editors/vscode's node_modules/
# and out/: one builds at a time. Holds the lock (on the folder itself, so
# that no lock file is left anywhere) on file descriptor 9 until the script
# exits (or runs `flock -u 9`).
lock_vscode_build() {
  exec 9<"$repo/editors/vscode"
  flock 9 || fail "cannot lock the build"
}

# build_agentls DEST: builds ./cmd/agentls to DEST, or copies $AGENTLS_BIN
# (a binary the caller built) there.
build_agentls() {
  if [ -n "${AGENTLS_BIN:-}" ]; then
    cp "$AGENTLS_BIN" "$1" || fail "cannot copy AGENTLS_BIN=$AGENTLS_BIN"
  else
    (cd "$repo" && go build -o "$1" ./cmd/agentls) || fail "go build failed"
  fi
}

# tap_counts TAP RC: sets pass, failn and skip from node:test's TAP report
# TAP; a run that exited RC non-zero without a failing test counts one failure.
tap_counts() {
  pass=$(sed -n 's/^# pass //p' "$1" | tail -1)
  failn=$(sed -n 's/^# fail //p' "$1" | tail -1)
  skip=$(sed -n 's/^# skipped //p' "$1" | tail -1)
  : "${pass:=0}" "${failn:=0}" "${skip:=0}"
  if [ "$2" -ne 0 ] && [ "$failn" -eq 0 ]; then failn=1; fi
}

# node_test ARG...: runs node:test on ARG (its options, then the files or
# folders), with the spec report on stdout and the TAP report in
# $work/tap.txt, and sets the counts of that run (tap_counts).
node_test() {
  node --test --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$work/tap.txt" "$@"
  tap_counts "$work/tap.txt" $?
}

# tap_summary: prints the counts tap_counts set (skipped tests loudly) and
# returns non-zero when a test failed.
tap_summary() {
  [ "$skip" -gt 0 ] && echo "!!! $skip test(s) SKIPPED (see the SKIPPED lines above)"
  echo "$pass passed, $failn failed"
  [ "$failn" -eq 0 ]
}
