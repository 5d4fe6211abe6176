#!/usr/bin/env bash
# The screenshot suite: the review UI of Neovim and of Emacs in a terminal
# under tmux, with the real agentls server, checked on the captured screen and
# rendered to PNG (the pictures of editors/nvim/README.md and
# editors/emacs/README.md).
#   scripts/screenshots.sh                       run the tests, write the PNGs
#                                                to test-results/screenshots/
#   UPDATE_SCREENSHOTS=1 scripts/screenshots.sh  also copy them over the README
#                                                pictures (editors/*/media/screenshots/)
# Tests: editors/nvim/test/screenshot_review.sh and
# editors/emacs/test/screenshot-review.sh (scripts/tui-shot.sh has their
# tmux functions, scripts/tuishot the renderer); then every picture they took
# must be checked in under editors/*/media/screenshots/ and shown by that
# editor's README.
# Needs tmux, Chromium and DejaVu Sans Mono (scripts/install-deps.sh
# screenshots), Neovim >= 0.10 ($AGENTLS_NVIM, else scripts/install-nvim.sh
# --path) and Emacs >= 30 on PATH. AGENTLS_BIN=/path/to/agentls tests that
# binary instead of building one. Prints "N passed, M failed" last; exits
# non-zero on any failure.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1
export TUI_SHOTS="${AGENTLS_SHOTS:-$repo/test-results/screenshots}"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-screenshots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
die() { echo "screenshots: FAILED: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

command -v tmux >/dev/null || die "tmux is not installed (scripts/install-deps.sh screenshots)"
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || die "no Chromium at ${CHROMIUM:-/usr/bin/chromium} (scripts/install-deps.sh screenshots)"

if [ -n "${AGENTLS_BIN:-}" ]; then
	[ -x "$AGENTLS_BIN" ] || die "AGENTLS_BIN=$AGENTLS_BIN is not executable"
	cp "$AGENTLS_BIN" "$tmp/agentls"
else
	go build -o "$tmp/agentls" ./cmd/agentls || die "go build ./cmd/agentls failed"
fi
go build -o "$tmp/tuishot" ./scripts/tuishot || die "go build ./scripts/tuishot failed"
export AGENTLS_BIN="$tmp/agentls" TUISHOT="$tmp/tuishot"
if [ -z "${AGENTLS_NVIM:-}" ]; then
	AGENTLS_NVIM=$(scripts/install-nvim.sh --path) || die "no Neovim >= 0.10 (scripts/install-nvim.sh)"
fi
export AGENTLS_NVIM
scripts/install-emacs.sh --check >/dev/null 2>&1 || die "no Emacs >= 30 on PATH (scripts/install-emacs.sh)"

# A clean home for the editors and the server: no user config, history or state.
# (TMPDIR stays: the workspaces' paths are in the pictures, short is better.)
mkdir -p "$tmp/config" "$tmp/state" "$tmp/data" "$tmp/cache" "$tmp/run"
chmod 700 "$tmp/run"
export XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state" XDG_DATA_HOME="$tmp/data" \
	XDG_CACHE_HOME="$tmp/cache" XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$TUI_SHOTS"
rm -f "$TUI_SHOTS"/*/*.png "$TUI_SHOTS"/*/*.txt "$TUI_SHOTS"/*/*.ans

passed=0 failed=0
for t in nvim:editors/nvim/test/screenshot_review.sh emacs:editors/emacs/test/screenshot-review.sh; do
	name=${t%%:*} script=${t#*:}
	echo "=== screenshots: $name ($script)"
	if TUI_SHOTS="$TUI_SHOTS/$name" "$script"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done

# Each README shows the pictures its test takes, and they are checked in.
echo "=== screenshots: the READMEs show them"
sync=ok
for name in nvim emacs; do
	for png in "$TUI_SHOTS/$name"/*.png; do
		[ -e "$png" ] || continue
		b=$(basename "$png")
		if [ ! -f "editors/$name/media/screenshots/$b" ]; then
			echo "screenshots: editors/$name/media/screenshots/$b is missing (UPDATE_SCREENSHOTS=1 scripts/screenshots.sh)" >&2
			sync=bad
		fi
		if ! grep -qF "(media/screenshots/$b)" "editors/$name/README.md"; then
			echo "screenshots: editors/$name/README.md does not show media/screenshots/$b" >&2
			sync=bad
		fi
	done
done
if [ "$sync" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
echo "screenshots: $TUI_SHOTS"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
