#!/usr/bin/env bash
# The pictures of the Neovim README, taken by a test: Neovim's TUI in tmux
# with the plugin and the real agentls server; an agent's calls (made through
# the plugin's Lua API, as an agent front-end does) reach the review UI, which
# is checked on the captured screen, pictured, and answered with its keys.
#   editors/nvim/test/screenshot_review.sh      (run by scripts/screenshots.sh)
# Needs AGENTLS_BIN, AGENTLS_NVIM (Neovim >= 0.10 with a working TUI), TUISHOT,
# TUI_SHOTS, and tmux and Chromium (see scripts/tui-shot.sh).
# 1. edit_file by "claude": the review waits in tab 2 while the cursor stays
#    in main.go; :AgentlsPending shows its header (agent, tool, file, reason,
#    risk), the keys offered and the current and proposed text side by side
#    (review-edit.png); \y approves it and main.go is saved with the edit.
# 2. a dangerous shell_exec (rm -r build): a float with the command, the risk,
#    the warning and no "always" (review-command.png); \n and a message
#    reject it and build/ is still there.
# Exits 0 on success, 1 on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
: "${AGENTLS_BIN:?}" "${AGENTLS_NVIM:?}" "${TUISHOT:?}" "${TUI_SHOTS:?}"
# shellcheck source=../../../scripts/tui-shot.sh
. "$repo/scripts/tui-shot.sh"
tui_init nvim "$repo/editors/nvim/media/screenshots"
ws="$TUI_TMP/hello"
tui_workspace "$ws"
mkdir -p "$TUI_TMP/home"
cat >"$TUI_TMP/init.lua" <<EOF
vim.opt.rtp:prepend("$repo/editors/nvim")
vim.o.termguicolors = true
vim.o.shortmess = vim.o.shortmess .. "I"
vim.o.statusline = "%f %m%=%{v:lua.require'agentls'.statusline()} "
vim.o.swapfile = false
require("agentls").setup({ cmd = { "$AGENTLS_BIN" } })
-- The agent's calls report here: the ToolResult as JSON.
function _G.Report(result, err)
  local f = assert(io.open("$TUI_TMP/result", "w"))
  f:write(vim.json.encode(result or { status = "error", err = err }))
  f:close()
end
function _G.AgentCall(tool, args, reason)
  require("agentls").call(tool, args, Report, { reason = reason, agent = "claude" })
end
EOF

tui_start 100 30 "cd '$ws' && HOME='$TUI_TMP/home' TERM=xterm-256color COLORTERM=truecolor '$AGENTLS_NVIM' -i NONE -n -u '$TUI_TMP/init.lua' main.go"
tui_wait_for "func greet(name string) string {" "main.go in Neovim"

# 1. edit_file, approved with \y.
tui_keys Escape
tui_type ':lua AgentCall("edit_file", {path = "main.go", old_string = [[return "hello " + name]], new_string = [[return fmt.Sprintf("hello, %s!", name)]]}, "use Sprintf and punctuation")'
tui_keys Enter
tui_wait_for "agentls: 1 awaiting approval" "the statusline to count the waiting call"
tui_assert_shows "func main() {" # the review took neither the window nor the cursor
tui_keys ':AgentlsPending' Enter
tui_wait_for 'return fmt.Sprintf("hello, %s!", name)' "the proposed text in the review"
tui_settled
tui_assert_shows "agentls: claude wants to run edit_file" "Agent:   claude" "Tool:    edit_file" \
	"File:    main.go (modify)" "Reason:  use Sprintf and punctuation" "Risk:    write" \
	'\y approve · \n reject · \A always allow edit_file · \e edit arguments · g? help · q later' \
	'return "hello " + name' "current  main.go" "proposed  main.go (modify)"
[ -s "$TUI_TMP/result" ] && fail "the call ended before it was answered"
tui_shot review-edit "nvim — agentls review: claude wants to run edit_file"
# Past the key guard (400 ms from entering the review), then approve.
sleep 1
tui_keys '\' y
tui_wait_file "$TUI_TMP/result" '"status":"success"'
grep -q 'fmt.Sprintf("hello, %s!", name)' "$ws/main.go" || fail "main.go was not saved with the edit"
tui_wait_gone "awaiting approval" "the statusline count to go"
echo "nvim screenshots: edit_file reviewed, pictured and approved: ok"

# 2. a dangerous command, rejected with \n and a message.
rm -f "$TUI_TMP/result"
tui_type ':lua AgentCall("shell_exec", {command = "rm -r build && go run ."}, "rebuild from scratch")'
tui_keys Enter
tui_wait_for "agentls: 1 awaiting approval" "the statusline to count the waiting command"
tui_keys ':AgentlsPending' Enter
tui_wait_for "Command: rm -r build && go run ." "the command's review"
tui_settled
tui_assert_shows "agentls: claude wants to run shell_exec" "Agent:   claude" "Risk:    dangerous" \
	"Warning: rm -r deletes folders recursively" "Reason:  rebuild from scratch" "In:      $ws" \
	'\y approve · \n reject · \e edit arguments · g? help · q later'
tui_shows "always allow" && fail "a dangerous call offers always"
tui_shot review-command "nvim — agentls review: claude wants to run shell_exec (dangerous)"
sleep 1
tui_keys '\' n
tui_wait_for "message for the agent" "the reject message prompt"
tui_type "not the build folder"
tui_keys Enter
tui_wait_file "$TUI_TMP/result" '"status":"rejected"'
grep -q 'not the build folder' "$TUI_TMP/result" || fail "the message did not reach the agent: $(cat "$TUI_TMP/result")"
[ -f "$ws/build/hello" ] || fail "build/ was deleted after a reject"
echo "nvim screenshots: dangerous shell_exec reviewed, pictured and rejected: ok"
