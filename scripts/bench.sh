#!/usr/bin/env bash
# bench.sh: agentls beside ripgrep, printed as one Markdown table (the one in
# README.md, "Benchmarks"): for $(go env GOROOT)/src and the monorepo tree
# (eight copies of it, about 92,000 files, built by scripts/monorepo-tree.sh
# on first use), each query of the benchmark set through the warm server
# (tool/call over stdio to the real binary) and the one-shot `agentls call
# grep`, each beside ripgrep, interleaved, medians; then the tool/call round
# trip, the index builds and the server's peak memory (see BenchmarkScale in
# cmd/agentls/scale_bench_test.go); then the heap the indexes hold.
#
# Environment:
#   TREES    directory of the test trees (default $AGENTLS_CACHE/trees, that
#            is .cache/trees of the checkout); the monorepo tree is $TREES/mono
#   MONO=0   leave the monorepo tree out (the Go tree only)
#   RUNS     runs per figure (default 5; the first, a warm-up, is not counted)
#   QUERIES  a regexp of query names (default: the benchmark set; "." for all)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v rg >/dev/null || { echo "bench.sh: ripgrep (rg) is needed: scripts/install-deps.sh ripgrep" >&2; exit 1; }
trees=$(go env GOROOT)/src
if [[ ${MONO:-1} != 0 ]]; then
	mono=${TREES:-${AGENTLS_CACHE:-$PWD/.cache}/trees}/mono
	scripts/monorepo-tree.sh "$mono"
	trees=$trees:$mono
fi
export AGENTLS_BENCH_TREES=$trees
# A fresh XDG_CACHE_HOME (for index copies) must not move the go command's
# build cache and env file with it.
GOCACHE=$(go env GOCACHE) GOENV=$(go env GOENV)
export GOCACHE GOENV
export AGENTLS_BENCH_RUNS=${RUNS:-5}
[[ -n ${QUERIES:-} ]] && export AGENTLS_BENCH_QUERIES=$QUERIES
# The table on stdout; go test's own lines (benchmark metrics) after it.
go test ./cmd/agentls -run '^$' -bench '^BenchmarkScale$' -benchtime 1x -timeout 60m
# The heap the two indexes hold once built, tree by tree, beside the tree's
# size (BenchmarkIndexMemory in session/memory_bench_test.go): the RSS above
# also counts the runtime, the binary and the build's garbage not yet
# handed back.
IFS=: read -ra each <<< "$trees"
for t in "${each[@]}"; do
	echo "$t:"
	AGENTLS_BENCH_TREES=$t go test ./session -run '^$' -bench '^BenchmarkIndexMemory$' -benchtime 1x -timeout 20m | grep '^Benchmark'
done
