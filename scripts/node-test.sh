#!/usr/bin/env bash
# Runs a node:test suite for the scripts of the node suites:
#   scripts/node-test.sh TAPFILE [ARG...]
# runs `node --test ARG...` in the current folder, its spec report on
# stdout and its TAP report in TAPFILE, then prints "N passed, M failed"
# last and exits non-zero on any failure (also when node failed without
# counting one).
set -uo pipefail
tap=$1; shift
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$tap" "$@"
rc=$?
pass=$(sed -n 's/^# pass //p' "$tap" 2>/dev/null | tail -1)
failn=$(sed -n 's/^# fail //p' "$tap" 2>/dev/null | tail -1)
: "${pass:=0}" "${failn:=0}"
if [ "$rc" -ne 0 ] && [ "$failn" -eq 0 ]; then failn=1; fi
echo "$pass passed, $failn failed"
[ "$failn" -eq 0 ]
