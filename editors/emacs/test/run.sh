#!/usr/bin/env bash
# Runs the Emacs client's ERT suite against the real agentls server:
#   editors/emacs/test/run.sh [ERT-SELECTOR-REGEXP]
#   AGENTLS_BIN=/path/to/agentls editors/emacs/test/run.sh   (use that binary)
# Builds agentls into a temporary directory, installs Emacs 30 (through
# scripts/install-emacs.sh) when no Emacs >= 30 is on PATH, byte-compiles
# agentls*.el (the package's files) with warnings as errors, runs the ERT tests
# (every test/agentls*-test.el, with test/agentls-test-helpers.el) in `emacs --batch`,
# then plain-eglot-test.el (Emacs's own eglot, no agentls.el), then (when
# tmux is installed) test/tty.sh in a terminal `emacs -nw`.
# Exits non-zero when anything fails.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
lisp="$repo/editors/emacs"
selector="${1:-}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-emacs-test.XXXXXX")
# Every program below keeps its temporary files in $tmp, removed at exit:
# Emacs's (temporary-file-directory) too, among them what native
# compilation leaves when an Emacs ends while it compiles a package in the
# background (emacs-async-comp-*.el, libgccjit-*). The terminal Emacs of
# tty.sh compiles nothing in the background; should another, such a
# compilation still running would write into $tmp while it is removed
# (which failed the suite once all its tests had passed): it is stopped
# first. (Nothing else is: a server left running is a leak the suite must
# see.)
cleanup() {
	pkill -f -- "$tmp/emacs-async-comp" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
export TMPDIR="$tmp"

if [ -n "${AGENTLS_BIN:-}" ]; then
	# A binary given by the caller (e.g. built from another checkout).
	[ -x "$AGENTLS_BIN" ] || { echo "emacs tests: AGENTLS_BIN=$AGENTLS_BIN is not executable" >&2; exit 1; }
	cp "$AGENTLS_BIN" "$tmp/agentls"
else
	echo "emacs tests: building agentls into $tmp"
	(cd "$repo" && go build -o "$tmp/agentls" ./cmd/agentls)
fi

if ! "$repo/scripts/install-emacs.sh" --check >/dev/null 2>&1; then
	echo "emacs tests: no Emacs >= 30 on PATH; installing it"
	"$repo/scripts/install-emacs.sh"
fi
echo "emacs tests: $(emacs --version | head -n1)"

# Keep the user's agentls config and state out of the tests, and the
# sessions the servers publish (without a runtime directory they would be
# in TMPDIR/agentls-UID).
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state" \
	XDG_CACHE_HOME="$tmp/cache" XDG_DATA_HOME="$tmp/data" XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME" "$XDG_DATA_HOME"
mkdir -m 700 "$XDG_RUNTIME_DIR"
export AGENTLS_BIN="$tmp/agentls"

echo "emacs tests: byte-compiling agentls*.el (warnings are errors)"
mkdir -p "$tmp/lisp"
cp "$lisp"/agentls*.el "$tmp/lisp/"
for f in "$tmp"/lisp/agentls*.el; do
	emacs --batch -Q -L "$tmp/lisp" --eval "(progn
  (setq byte-compile-error-on-warn t)
  (unless (byte-compile-file \"$f\") (kill-emacs 1)))"
done

echo "emacs tests: running ERT"
status=0
# Every agentls*-test.el, each loading agentls-test-helpers.el from this folder.
tests=()
for f in "$here"/agentls*-test.el; do tests+=(-l "$f"); done
AGENTLS_ERT_SELECTOR="$selector" emacs --batch -Q -L "$lisp" -L "$here" "${tests[@]}" </dev/null \
	--eval '(ert-run-tests-batch-and-exit (let ((s (getenv "AGENTLS_ERT_SELECTOR"))) (if (member s (list nil "")) t s)))' \
	|| status=1

echo "emacs tests: plain eglot (emacs -Q, without agentls.el)"
AGENTLS_ERT_SELECTOR="$selector" emacs --batch -Q -L "$here" -l "$here/plain-eglot-test.el" \
	--eval '(ert-run-tests-batch-and-exit (let ((s (getenv "AGENTLS_ERT_SELECTOR"))) (if (member s (list nil "")) t s)))' \
	|| status=1

if [ -z "$selector" ]; then
	"$here/install-test.sh" || status=1
	echo "emacs tests: interactive check in a terminal Emacs (tmux)"
	rc=0
	"$here/tty.sh" "$tmp/agentls" || rc=$?
	case $rc in
	0) ;;
	77) echo "!!! emacs tests: the terminal check was SKIPPED: tmux is not installed" >&2 ;;
	*) status=1 ;;
	esac
fi
[ "$status" = 0 ] && echo "emacs tests: all passed" || echo "emacs tests: FAILED" >&2
exit "$status"
