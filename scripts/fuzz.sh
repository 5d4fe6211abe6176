#!/usr/bin/env bash
# Runs every fuzz target of the module: `./scripts/fuzz.sh [SECONDS]`
# (default 10 seconds each). Targets are found by grep (every `func FuzzX(`
# in a _test.go file git knows or would add), and run one after the other
# with `go test -run '^$' -fuzz '^FuzzX$' -fuzztime Ns ./pkg`. Their seed
# corpora live in the repository (PKG/testdata/fuzz/FuzzX/), and a failing
# input found here is written there too, so that `go test` replays it until
# it is fixed. Exits non-zero when any target fails.
set -uo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
case $secs in '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;; esac

mapfile -t found < <(git ls-files --cached --others --exclude-standard -- '*_test.go' |
	xargs grep -H -o -E '^func Fuzz[A-Za-z0-9_]+\(' | sed -E 's/\($//' | sort -u)
if [ "${#found[@]}" = 0 ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# fuzz NAME PKG: one run; its output also kept in $log.
fuzz() { go test -run '^$' -fuzz "^${1}\$" -fuzztime "${secs}s" "$2" 2>&1 | tee "$log"; return "${PIPESTATUS[0]}"; }
# deadline_race: the run failed only by Go's fuzz coordinator racing its own
# -fuzztime deadline (go.dev/issue/75804, fixed in Go 1.27): "context
# deadline exceeded" and no failing input, panic or test failure of ours.
deadline_race() {
	grep -q 'context deadline exceeded' "$log" &&
		! grep -q -E 'Failing input written|panic:|_test\.go:[0-9]+:' "$log"
}
failed=() passed=0
for f in "${found[@]}"; do
	file=${f%%:*}
	name=${f##*func }
	pkg=./$(dirname "$file")
	echo "=== fuzz $name in $pkg (${secs}s)"
	if fuzz "$name" "$pkg"; then
		passed=$((passed + 1))
	elif deadline_race && echo "=== fuzz $name: the coordinator's deadline race (go.dev/issue/75804), once more" && fuzz "$name" "$pkg"; then
		passed=$((passed + 1))
	else
		failed+=("$name ($pkg)")
	fi
done
echo "fuzz: ${#found[@]} targets, $passed passed, ${#failed[@]} failed"
for f in "${failed[@]}"; do echo "FAIL  $f"; done
[ "${#failed[@]}" = 0 ]
