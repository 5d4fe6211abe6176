#!/usr/bin/env bash
# Runs every suite of agentls: `./scripts/test.sh [go|fuzz|mcp|claude-e2e|editors|cross-build]`
# (default: all); one editor suite alone: `./scripts/test.sh
# nvim|emacs|screenshots|vscode|vscode-e2e`. The fuzz suite gives each fuzz target FUZZTIME seconds (default 3;
# `make fuzz` runs them longer through scripts/fuzz.sh).
#
# The whole run (`all`) has two lanes, the Go suites and the others beside
# them (see go_suites and other_suites below); the summary lists every suite.
#
# A suite whose external needs (ripgrep, Neovim 0.10, Emacs 30, code-server
# and Chromium, node packages) are missing installs them through
# scripts/install-deps.sh when it may (in CI, or as root). Otherwise it is
# skipped with a loud message. In CI nothing may be skipped: a suite that
# cannot run fails the run.
#
# Each suite runs with a TMPDIR of its own, made for it and removed after
# it; anything the suite left there is a leak and fails the suite (see
# suite below), so every test removes the temporary files it makes.
set -uo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
# Every tool call in every suite checks its structured result against the
# tool's output schema (tools/runner.go, checkOutput): a result that breaks
# it becomes an INTERNAL error, which fails the test that made the call.
export AGENTLS_CHECK_OUTPUTS=1
# The search index keeps on-disk copies of the suites' temporary workspaces
# in a folder of this run, not in the person's ~/.cache/agentls. The go
# command keeps the person's build cache and go env file (their defaults
# would move with XDG_CACHE_HOME and XDG_CONFIG_HOME).
GOCACHE="$(go env GOCACHE)" GOENV="$(go env GOENV)"
export GOCACHE GOENV
# The person's own agentls folders, which no suite may write into (each
# gives the servers it starts folders of its own); checked after the run
# against a file made now.
user_dirs=("${XDG_CACHE_HOME:-$HOME/.cache}/agentls" "${XDG_STATE_HOME:-$HOME/.local/state}/agentls"
	"${XDG_CONFIG_HOME:-$HOME/.config}/agentls")
started=$(mktemp -t agentls-started.XXXXXX)
XDG_CACHE_HOME="$(mktemp -d -t agentls-test-cache.XXXXXX)"
export XDG_CACHE_HOME
suite_tmp="" # the running suite's TMPDIR
# rm_tmp DIR: removes DIR, also what a test left without write permission.
rm_tmp() { chmod -R u+rwx "$1" 2>/dev/null; rm -rf "$1"; }
# report: one line a suite, PASS, FAIL or SKIP, from whichever lane ran it.
report=$(mktemp -t agentls-report.XXXXXX)
# logs: each suite's output (stdout and stderr), and a failed suite's
# digest (NAME.why), printed again just before the summary.
logs=$(mktemp -d -t agentls-logs.XXXXXX)
lane_pid="" lane_log=""
# (On the way out, the other lane is waited for: an install in it leaves
# apt and dpkg whole.)
trap '[ -z "$lane_pid" ] || wait "$lane_pid"; rm -f "$report" "$lane_log" "$started"; rm -rf "$XDG_CACHE_HOME" "$logs"; [ -z "$suite_tmp" ] || rm_tmp "$suite_tmp"' EXIT
ci="${CI:-}"
may_install=false
if [ -n "$ci" ] || [ "$(id -u)" = 0 ]; then may_install=true; fi

# digest NAME LOG: what a failed suite printed about its failures (the
# lines that say FAIL, failed, panic or timed out, at most 60 of them), then
# its last lines: a log that shows only the end of the run still shows why.
digest() {
	local log=$2
	[ -s "$log" ] || return 0
	echo
	echo "=== why $1 failed (from its output above)"
	grep -n -a -E -m 60 -e '--- FAIL|^FAIL|FAILED|(^|[ :])failed|panic:|^!!!|not ok|[1-9][0-9]* (unexpected|failing)|[Tt]imed out' "$log"
	echo "... its last lines:"
	tail -n 15 "$log"
}

suite() { # suite NAME COMMAND...
	local name=$1; shift
	echo
	echo "=== suite: $name"
	local start=$SECONDS ok=true
	# A TMPDIR of the suite's own (Go's os.TempDir, node's os.tmpdir, mktemp,
	# Emacs's temporary-file-directory and Neovim's tempname all honour it):
	# whatever is still in it when the suite ends is a leak. Its name is
	# short (the tests' unix sockets are below it, and a socket's path has at
	# most 107 bytes), and others may pass through it as through /tmp (the
	# tests run processes of another uid from their folders: testenv.Nobody).
	suite_tmp=$(mktemp -d -t als.XXXXXX) && chmod 711 "$suite_tmp" ||
		{ echo "cannot make a TMPDIR for $name" >&2; exit 1; }
	local log="$logs/${name// /_}"
	# (pipefail: the suite's status, not tee's)
	TMPDIR="$suite_tmp" "$@" 2>&1 | tee "$log.log" || ok=false
	local left
	left=$(cd "$suite_tmp" && find . -mindepth 1 -maxdepth 1 -printf '%f\n' | sort)
	if [ -n "$left" ]; then
		echo "!!! suite $name left $(wc -l <<<"$left") file(s) in its TMPDIR; each test must remove what it makes:" >&2
		head -n 10 <<<"$left" | sed 's/^/    /' >&2
		ok=false
	fi
	rm_tmp "$suite_tmp"
	suite_tmp=""
	$ok || digest "$name" "$log.log" >"$log.why"
	if $ok; then
		echo "PASS  $name ($((SECONDS - start))s)" >>"$report"
	elif [ -n "$left" ]; then
		echo "FAIL  $name ($((SECONDS - start))s; left files in TMPDIR)" >>"$report"
	else
		echo "FAIL  $name ($((SECONDS - start))s)" >>"$report"
	fi
}
skip() { # skip NAME WHY
	echo
	echo "!!! SKIPPED suite $1: $2" >&2
	if [ -n "$ci" ]; then
		echo "FAIL  $1 (cannot run in CI: $2)" >>"$report"
	else
		echo "SKIP  $1 ($2)" >>"$report"
	fi
}
needs() { # needs DEP: true when DEP is present or was installed
	if ./scripts/install-deps.sh --check "$1" >/dev/null 2>&1; then return 0; fi
	if $may_install; then ./scripts/install-deps.sh "$1" && return 0; fi
	return 1
}

# lanes: a whole run (`all`) has two. The Go suites (vet, test, race, fuzz)
# compute: they compile and run tests on every core. The others (MCP, Claude
# Code, the editors) mostly wait: on editors, browsers and timers, after
# installing what they need. So the others run beside the Go suites, in a
# lane of their own (its output follows the Go suites'), and the Go suites
# run at a lower priority (`nice`), since no Go test asserts a time and the
# editors' tests wait for real ones.
go_nice=()

go_suites() {
	if [ "$what" = all ] || [ "$what" = go ]; then
		# The grep and glob tests compare with ripgrep where it is installed.
		needs ripgrep || skip "ripgrep comparisons" "ripgrep is not installed; run scripts/install-deps.sh ripgrep"
		# run_code's tests run Python programs; without python3 they skip
		# those cases.
		needs python3 || skip "run_code's Python cases" "python3 is not installed; run scripts/install-deps.sh python3"
		# run_code and automatic commands run in bubblewrap; without it their
		# tests fail (run_code refuses with NOT_CONFIGURED), so it is a must.
		if needs bwrap; then
			suite "go vet" "${go_nice[@]}" go vet ./...
			# And one JavaScript program: node, which the other lane's MCP
			# suites install first thing (during go vet, in a whole run); asked
			# for here, so that the case does not run or skip by which lane
			# came first.
			needs mcp || skip "run_code's node case" "node is not installed; run scripts/install-deps.sh mcp"
			suite "go test" "${go_nice[@]}" go test -count=1 ./...
			# Again under the race detector (which also checks unsafe pointer
			# conversions: checkptr), with -short (the searches of GOROOT are
			# left out): the packages whose code runs concurrently, and tools,
			# whose tests drive the search index and the processes hardest.
			# It needs cgo (gcc).
			suite "go test -race" "${go_nice[@]}" go test -race -short -count=1 \
				./search/... ./session/... ./lsp/... ./workspace/... ./process/... \
				./internal/... ./mcp/... ./attach/... ./cli/... ./codeindex/... ./tools/...
		else
			suite "go vet" "${go_nice[@]}" go vet ./...
			skip "go test" "bubblewrap is not installed; run scripts/install-deps.sh bwrap"
		fi
	fi

	if [ "$what" = all ] || [ "$what" = fuzz ]; then
		suite "fuzz" "${go_nice[@]}" ./scripts/fuzz.sh "${FUZZTIME:-3}"
	fi
}

other_suites() {
	if [ "$what" = all ] || [ "$what" = mcp ]; then
		# The official MCP TypeScript SDK client against `agentls mcp`.
		if needs mcp; then
			suite "mcp" scripts/mcp-test.sh
		else
			skip "mcp" "node and npm are not installed and this run may not install them (run as root or with CI=true)"
		fi
	fi

	if [ "$what" = all ] || [ "$what" = claude-e2e ]; then
		# Claude Code (from npm, into .cache/) with `agentls mcp`, its model
		# replaced by a scripted server on 127.0.0.1.
		if needs mcp; then
			suite "claude-e2e" scripts/claude-e2e.sh
		else
			skip "claude-e2e" "node and npm are not installed and this run may not install them (run as root or with CI=true)"
		fi
	fi

	editors="nvim emacs screenshots vscode vscode-e2e"
	if [ "$what" = all ] || [ "$what" = editors ] || [[ " $editors " == *" $what "* ]]; then
		for ed in $editors; do
			[ "$what" = all ] || [ "$what" = editors ] || [ "$what" = "$ed" ] || continue
			runner=""
			case $ed in
			nvim) runner=editors/nvim/test/run.sh ;;
			emacs) runner=editors/emacs/test/run.sh ;;
			screenshots) runner=scripts/screenshots.sh ;;
			vscode) runner=scripts/vscode-test.sh ;;
			vscode-e2e) runner=scripts/vscode-e2e.sh ;;
			esac
			if [ ! -x "$runner" ]; then
				skip "$ed" "$runner is missing"
			elif needs "$ed" && { [ "$ed" != nvim ] || needs mcp; }; then
				# (the nvim suite's attached test runs the TypeScript SDK's MCP client: node)
				suite "$ed" "$runner"
			else
				skip "$ed" "its dependencies are not installed and this run may not install them (run as root or with CI=true)"
			fi
		done
	fi

	if [ "$what" = all ] || [ "$what" = cross-build ]; then
		# The systems the code compiles for and no suite runs on (README.md,
		# Set-up): last in this lane, whose suites mostly wait, and at the
		# Go suites' priority.
		suite "cross-build" nice -n 10 scripts/cross-build.sh
	fi
}

if [ "$what" = all ]; then
	lane_log=$(mktemp -t agentls-lane.XXXXXX)
	echo "(the MCP, Claude Code and editor suites run beside the Go suites; their output follows)"
	# The lane's own shell: its suite's TMPDIR is its own to remove. It
	# exits 0 once other_suites has returned, so any other status means it
	# ended early, and the suites it did not run must not pass unseen.
	( trap '[ -z "$suite_tmp" ] || rm_tmp "$suite_tmp"' EXIT; other_suites; exit 0 ) >"$lane_log" 2>&1 &
	lane_pid=$!
	go_nice=(nice -n 10)
	go_suites
	wait "$lane_pid" || echo "FAIL  the lane of the MCP, Claude Code and editor suites (it ended early: see its output)" >>"$report"
	lane_pid=""
	cat "$lane_log"
else
	go_suites
	other_suites
fi

# What changed in the person's agentls folders during the run: in CI, where
# nothing else runs agentls, a suite wrote there (a server started without
# the suite's own XDG folders), which fails the run; elsewhere an editor of
# the person's may have, so it is only said.
wrote=$(find "${user_dirs[@]}" -newer "$started" 2>/dev/null | head -n 5 | tr '\n' ' ')
if [ -n "$wrote" ]; then
	if [ -n "$ci" ]; then
		echo "FAIL  the person's agentls folders (written during the run: $wrote)" >>"$report"
	else
		echo "!!! written during the run in your agentls folders (by a suite, or by an agentls of yours): $wrote" >&2
	fi
fi

# The digests of the failed suites, next to the summary.
cat "$logs"/*.why 2>/dev/null

echo
echo "=== summary"
cat "$report"
passed=$(grep -c '^PASS' "$report") failed=$(grep -c '^FAIL' "$report") skipped=$(grep -c '^SKIP' "$report")
echo "suites: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
