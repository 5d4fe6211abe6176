# shellcheck shell=bash
# Functions for the editors' screenshot tests (sourced, not run): a terminal
# editor in a tmux server of its own, its screen polled and captured, and the
# capture rendered to a PNG by scripts/tuishot.
#
# The caller sets TUI_SHOTS (where every run writes its PNGs: test-results/…)
# and TUISHOT (the tuishot binary; scripts/screenshots.sh sets both).
#
#   tui_init NAME DOCS              a temporary folder TUI_TMP (the TMPDIR from then on),
#                                   removed at exit with the tmux server; DOCS is where
#                                   UPDATE_SCREENSHOTS=1 copies the pictures; `fail MESSAGE` says NAME
#   fail MESSAGE                    report (with TUI_TMP/result, the agent's last
#                                   result, when there is one) and exit 1
#   tui_workspace DIR               the small Go module both editors' pictures show
#   tui_start COLS ROWS COMMAND     start COMMAND (a shell line) in a COLSxROWS pane
#   tui_screen                      print the pane's plain text
#   tui_keys KEY...                 tmux send-keys (key names: Enter, Escape, C-x…)
#   tui_type TEXT                   type TEXT literally
#   tui_wait_for TEXT [WHAT]        poll until the screen shows TEXT (fixed string)
#   tui_wait_gone TEXT [WHAT]       poll until the screen no longer shows TEXT
#   tui_wait_file PATH GREP-ARGS    poll until grep GREP-ARGS PATH succeeds
#   tui_settled                     poll until two captures in a row are the same
#   tui_assert_shows TEXT...        every TEXT is on the screen (fails otherwise)
#   tui_shot NAME TITLE             capture to TUI_SHOTS/NAME.ans (the screen with its
#                                   escapes) and NAME.txt (plain), render NAME.png (and
#                                   copy it to TUI_DOCS when UPDATE_SCREENSHOTS=1)
#   tui_stop                        end the tmux server (call it from the EXIT trap)
#
# Polls never assert a time: a deadline of TUI_DEADLINE seconds (default 90)
# only turns a hang into a failure on a loaded machine.

TUI_DEADLINE=${TUI_DEADLINE:-90}
tui_sock=""

tui_init() { # tui_init NAME DOCS
	tui_name=$1 TUI_DOCS=$2
	TUI_TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentls-$1-shot.XXXXXX")
	trap 'tui_stop; rm -rf "$TUI_TMP"' EXIT
	# The editors keep their temporary files in TUI_TMP, removed at exit:
	# among them what Emacs's native compilation leaves when the editor ends
	# while it compiles a package in the background (emacs-async-comp-*.el,
	# libgccjit-*), which the tests cannot prevent.
	export TMPDIR="$TUI_TMP"
}

fail() {
	echo "$tui_name screenshots: FAILED: $*" >&2
	[ -f "$TUI_TMP/result" ] && echo "the agent's last result: $(cat "$TUI_TMP/result")" >&2
	exit 1
}

tui_workspace() { # tui_workspace DIR
	mkdir -p "$1/build"
	echo 'module example.com/hello' >"$1/go.mod"
	echo 'old output' >"$1/build/hello"
	cat >"$1/main.go" <<'EOF'
package main

import "fmt"

// greet returns the greeting for name.
func greet(name string) string {
	return "hello " + name
}

func main() {
	fmt.Println(greet("world"))
}
EOF
}

tmx() { tmux -L "$tui_sock" "$@"; }

tui_start() { # tui_start COLS ROWS COMMAND
	tui_cols=$1 tui_rows=$2
	tui_sock="agentls-shot-$$-${RANDOM}"
	cat >"$TUI_TMP/tmux.conf" <<'EOF'
set -g status off
set -g default-terminal tmux-256color
set -g escape-time 10
EOF
	tmux -L "$tui_sock" -f "$TUI_TMP/tmux.conf" new-session -d -s shot -x "$tui_cols" -y "$tui_rows" "$3" ||
		fail "tmux could not start the editor"
	tmx set-option -t shot remain-on-exit on >/dev/null
}

tui_stop() {
	[ -n "$tui_sock" ] && tmux -L "$tui_sock" kill-server 2>/dev/null
	tui_sock=""
	return 0
}

tui_screen() { tmx capture-pane -p -t shot; }
tui_keys() { tmx send-keys -t shot "$@"; }
tui_type() { tmx send-keys -t shot -l "$1"; }

# tui_poll WHAT COMMAND...: run COMMAND every 0.2 s until it succeeds.
tui_poll() {
	local what=$1 end=$((SECONDS + TUI_DEADLINE))
	shift
	while ! "$@"; do
		if [ "$SECONDS" -ge "$end" ]; then
			fail "no $what within ${TUI_DEADLINE}s; the screen:
$(tui_screen)"
		fi
		if [ "$(tmx display-message -p -t shot '#{pane_dead}')" = 1 ]; then
			fail "the editor exited while waiting for $what; the screen:
$(tui_screen)"
		fi
		sleep 0.2
	done
}

tui_shows() { tui_screen | grep -qF -- "$1"; }
tui_lacks() { ! tui_screen | grep -qF -- "$1"; }
tui_wait_for() { tui_poll "${2:-"\"$1\" on the screen"}" tui_shows "$1"; }
tui_wait_gone() { tui_poll "${2:-"\"$1\" gone from the screen"}" tui_lacks "$1"; }
tui_wait_file() { local f=$1; shift; tui_poll "$f with $*" grep -qs "$@" "$f"; }

tui_same_twice() {
	local a b
	a=$(tmx capture-pane -e -p -t shot)
	sleep 0.3
	b=$(tmx capture-pane -e -p -t shot)
	[ "$a" = "$b" ]
}
tui_settled() { tui_poll "a settled screen" tui_same_twice; }

tui_assert_shows() {
	local t
	for t in "$@"; do
		tui_shows "$t" || fail "the screen does not show \"$t\"; the screen:
$(tui_screen)"
	done
}

# tui_shot NAME TITLE: the picture of the screen as it is now, cursor included.
tui_shot() {
	local name=$1 title=$2 cur
	mkdir -p "$TUI_SHOTS"
	tmx capture-pane -e -p -N -t shot >"$TUI_SHOTS/$name.ans" || fail "capture-pane failed"
	cur=$(tmx display-message -p -t shot '#{cursor_x},#{cursor_y}')
	"$TUISHOT" -in "$TUI_SHOTS/$name.ans" -cols "$tui_cols" -rows "$tui_rows" -cursor "$cur" \
		-title "$title" -text "$TUI_SHOTS/$name.txt" -png "$TUI_SHOTS/$name.png" ||
		fail "rendering $name.png failed"
	echo "screenshot: $TUI_SHOTS/$name.png"
	if [ "${UPDATE_SCREENSHOTS:-}" = 1 ]; then
		mkdir -p "$TUI_DOCS"
		cp "$TUI_SHOTS/$name.png" "$TUI_DOCS/$name.png"
		echo "screenshot: updated $TUI_DOCS/$name.png"
	fi
}
