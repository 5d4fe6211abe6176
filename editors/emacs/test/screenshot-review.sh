#!/usr/bin/env bash
# The pictures of the Emacs README, taken by a test: a terminal `emacs -nw`
# in tmux with agentls.el and the real agentls server; an agent's calls (made
# through agentls.el's API, as an agent front-end does) reach the review,
# which is checked on the captured screen, pictured, and answered with keys.
#   editors/emacs/test/screenshot-review.sh      (run by scripts/screenshots.sh)
# Needs AGENTLS_BIN, Emacs >= 30 on PATH, TUISHOT, TUI_SHOTS, and tmux and
# Chromium (see scripts/tui-shot.sh).
# 1. edit_file by "claude": the review shows in the side window, not selected;
#    M-x agentls-show-approval goes there; once its keys are on, the header
#    (agent, tool, file, reason, risk), the keys and the unified diff are on screen
#    (review-edit.png); y approves it and main.go is saved with the edit.
# 2. a dangerous shell_exec (rm -r build): the command, its folder, the risk
#    and the warning, no "always" (review-command.png); n and a message
#    reject it and build/ is still there.
# Exits 0 on success, 1 on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
: "${AGENTLS_BIN:?}" "${TUISHOT:?}" "${TUI_SHOTS:?}"
# shellcheck source=../../../scripts/tui-shot.sh
. "$repo/scripts/tui-shot.sh"
tui_init emacs "$repo/editors/emacs/media/screenshots"
ws="$TUI_TMP/hello"
tui_workspace "$ws"
mkdir -p "$TUI_TMP/home"
cat >"$TUI_TMP/init.el" <<EOF
(menu-bar-mode -1)
(setq frame-background-mode 'dark)
(mapc #'frame-set-background-mode (frame-list))
(add-to-list 'load-path "$repo/editors/emacs")
(require 'agentls)
(setq agentls-server-program "$AGENTLS_BIN"
      project-find-functions nil)
(find-file "$ws/main.go")
;; The agent's calls report here: status and message.
(defun shot-report (r)
  (with-temp-file "$TUI_TMP/result"
    (insert (format "%s %s" (plist-get r :status) (or (plist-get r :message) "")))))
(defun shot-call (tool args reason)
  (agentls-call-async tool args #'shot-report :reason reason :agent "claude"))
EOF

# keys_on: the review window says its keys act.
keys_on() { tui_screen | grep -qE '· keys on( |-|$)'; }
open_review() {
	tui_keys M-x
	tui_type agentls-show-approval
	tui_keys Enter
	tui_poll "the review's keys to come on" keys_on
}
diff_shows() { tui_screen | grep -qE -- "$1"; }

# (no native compilation in the background: tty.sh says why)
tui_start 100 34 "cd '$ws' && HOME='$TUI_TMP/home' TERM=xterm-256color EMACS_INHIBIT_AUTOMATIC_NATIVE_COMPILATION=1 emacs -nw -Q -l '$TUI_TMP/init.el'"
tui_wait_for "func greet(name string) string {" "main.go in Emacs"

# 1. edit_file, approved with y.
tui_keys M-:
tui_type '(shot-call "edit_file" (list :path "main.go" :old_string "return \"hello \" + name" :new_string "return fmt.Sprintf(\"hello, %s!\", name)") "use Sprintf and punctuation")'
tui_keys Enter
tui_wait_for "claude wants to run edit_file" "the review"
tui_assert_shows "agentls: 1 review" "keys off: not selected"
open_review
tui_settled
tui_assert_shows "claude wants to run edit_file" "Agent:   claude" "Tool:    edit_file" "File:    modify main.go" \
	"reason: use Sprintf and punctuation" "y approve   n reject   e edit args   ? details   l list   q hide" \
	"a always allow edit_file (asks yes)"
tui_poll "the removed line in the review" diff_shows '^-[[:space:]]+return "hello " \+ name'
tui_poll "the added line in the review" diff_shows '^\+[[:space:]]+return fmt\.Sprintf\("hello, %s!", name\)'
[ -s "$TUI_TMP/result" ] && fail "the call ended before it was answered"
tui_shot review-edit "emacs -nw — agentls review: claude wants to run edit_file"
tui_keys y
tui_wait_file "$TUI_TMP/result" '^success'
grep -q 'fmt.Sprintf("hello, %s!", name)' "$ws/main.go" || fail "main.go was not saved with the edit"
tui_wait_gone "agentls: 1 review" "the mode line count to go"
echo "emacs screenshots: edit_file reviewed, pictured and approved: ok"

# 2. a dangerous command, rejected with n and a message.
rm -f "$TUI_TMP/result"
tui_keys M-:
tui_type '(shot-call "shell_exec" (list :command "rm -r build && go run .") "rebuild from scratch")'
tui_keys Enter
tui_wait_for "claude wants to run shell_exec" "the command's review"
open_review
tui_settled
tui_assert_shows "Agent:   claude" "Dir:     $ws" "reason: rebuild from scratch" "risk: dangerous" \
	"WARNING: rm -r deletes folders recursively" "y approve (asks yes)   n reject" '"command": "rm -r build && go run ."'
tui_shows "always" && fail "a dangerous call offers always"
tui_shot review-command "emacs -nw — agentls review: claude wants to run shell_exec (dangerous)"
tui_keys n
tui_wait_for "message for the agent" "the reject message prompt"
tui_type "not the build folder"
tui_keys Enter
tui_wait_file "$TUI_TMP/result" '^rejected not the build folder'
[ -f "$ws/build/hello" ] || fail "build/ was deleted after a reject"
echo "emacs screenshots: dangerous shell_exec reviewed, pictured and rejected: ok"
