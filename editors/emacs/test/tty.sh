#!/usr/bin/env bash
# An interactive check of agentls.el in a real terminal Emacs (emacs -nw in
# tmux): keys go through Emacs' own command loop, as when a person types.
#   editors/emacs/test/tty.sh AGENTLS_BIN
# 1. an agent front-end calls edit_file with agentls-call-async; the review
#    shows up in a side window, not selected, while Emacs stays responsive (a
#    key typed elsewhere works); the person goes there (M-x
#    agentls-show-approval), waits, types y; the file is edited and saved.
# 2. a synchronous agentls-call from M-: waits in a recursive edit; the person
#    goes to the review, types n and a message; the file is unchanged, the
#    result is "rejected".
# 3. .agentls.json written outside Emacs reaches the server (its own watcher
#    on Linux; elsewhere agentls.el's file watches of its didChangeWatchedFiles
#    registration): read_file now asks.
# 4. C-] in the recursive edit of a synchronous call cancels it.
# 5. typing prose ("maybe yes always") in a buffer while `rm -r somedir`
#    asks: the keys stay in that buffer, nothing is answered, somedir stays;
#    the review, its legend and mode line fit the 80-column screen; reopening
#    it and a burst of y does not answer; waiting, y and a typed "yes" does.
# Exits 0 on success, 1 on failure, 77 when tmux is missing.
set -euo pipefail

bin=${1:?usage: tty.sh AGENTLS_BIN}
here=$(cd "$(dirname "$0")" && pwd)
lisp=$(cd "$here/.." && pwd)
command -v tmux >/dev/null || { echo "tty test: tmux is not installed" >&2; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-tty.XXXXXX")
session="agentls-tty-$$"
cleanup() { tmux kill-session -t "$session" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

ws="$tmp/ws"
mkdir -p "$ws"
printf 'package main\n\nfunc main() {\n\tprintln("hello")\n}\n' >"$ws/main.go"
mkdir -p "$ws/somedir"
echo precious >"$ws/somedir/keep.txt"
cat >"$tmp/init.el" <<EOF
(add-to-list 'load-path "$lisp")
(require 'agentls)
(setq agentls-server-program "$bin"
      agentls-approval-guard-time 2.0
      project-find-functions nil)
(find-file "$ws/main.go")
(defvar tty-status nil)
(defvar tty-typed nil)
(global-set-key (kbd "<f5>") (lambda () (interactive) (setq tty-typed t) (message "TYPED")))
(defun tty-report (r)
  (setq tty-status (plist-get r :status))
  (with-temp-file "$tmp/result" (insert (format "%s %s" (plist-get r :status) (or (plist-get r :message) "")))))
(run-at-time 0.5 nil
  (lambda ()
    (agentls-call-async "edit_file" '(:path "main.go" :old_string "hello" :new_string "hello, tty")
                        #'tty-report :reason "tty test")))
EOF

fail() {
	echo "tty test: FAILED: $*" >&2
	echo "--- screen:" >&2
	tmux capture-pane -p -t "$session" >&2 || true
	exit 1
}
screen() { tmux capture-pane -p -t "$session"; }
on_screen() { screen | grep -q "$1"; } # on_screen PATTERN
off_screen() { ! on_screen "$1"; }
wait_for() { # wait_for WHAT COMMAND...: poll for up to 15 s
	local what=$1; shift
	for _ in $(seq 150); do
		if "$@"; then return 0; fi
		sleep 0.1
	done
	fail "timed out waiting for $what"
}
# want_result PATTERN: waits for the call's result; fails unless it matches
want_result() {
	wait_for "the result" test -s "$tmp/result"
	grep -q "$1" "$tmp/result" || fail "result: $(cat "$tmp/result")"
}
# type_slowly TEXT: types TEXT a key at a time, as a person does
type_slowly() {
	local i
	for ((i = 0; i < ${#1}; i++)); do
		tmux send-keys -t "$session" -l "${1:i:1}"
		sleep 0.03
	done
}

# No native compilation in the background (EMACS_INHIBIT_AUTOMATIC_NATIVE_COMPILATION,
# read at startup: the files loaded before init.el, gv.el and compile.el,
# are queued for it already): it would outlive this Emacs and write into
# $tmp (its eln-cache below HOME) as it is removed, failing the test.
tmux new-session -d -s "$session" -x 80 -y 40 \
	"cd '$ws' && HOME='$tmp' TERM=xterm-256color EMACS_INHIBIT_AUTOMATIC_NATIVE_COMPILATION=1 emacs -nw -Q -l '$tmp/init.el'"

# open_review [now]: go to the review window on purpose; read it past the
# guard unless "now"
open_review() {
	tmux send-keys -t "$session" M-x
	tmux send-keys -t "$session" -l agentls-show-approval
	tmux send-keys -t "$session" Enter
	[ "${1:-}" = now ] || sleep 2.5
}

# 1. async call, approve with y
wait_for "the approval buffer" on_screen 'The agent wants to run edit_file'
screen | grep -q 'agentls: 1 review' || fail "the mode line does not count the waiting call"
screen | grep -q '^+.*println("hello, tty")' || fail "the approval buffer does not show the diff"
screen | grep -q 'keys off: not selected' || fail "the review window says nothing of its keys"
tmux send-keys -t "$session" F5
wait_for "Emacs to answer a key while the call waits" on_screen TYPED
open_review
tmux send-keys -t "$session" y
want_result '^success'
grep -q 'hello, tty' "$ws/main.go" || fail "main.go was not saved with the edit"
echo "tty test: async edit approved with y: ok"

# 2. synchronous call from M-:, reject with n and a message
rm -f "$tmp/result"
tmux send-keys -t "$session" M-: '(tty-report (agentls-call "edit_file" (list :path "main.go" :old_string "tty" :new_string "nope")))' Enter
wait_for "the recursive edit" on_screen 'waits for your review'
open_review
tmux send-keys -t "$session" n
wait_for "the reject prompt" on_screen 'message for the agent'
tmux send-keys -t "$session" 'not like this' Enter
want_result '^rejected not like this'
grep -q 'hello, tty' "$ws/main.go" || fail "main.go changed after a reject"
screen | grep -q '\[(' && fail "still in a recursive edit"
echo "tty test: synchronous call rejected with n: ok"

# 3. a config file written outside Emacs: the server's watcher (or agentls.el's
#    file watches) tells the server
rm -f "$tmp/result"
printf '{"approval": {"tools": {"read_file": "ask"}}}\n' >"$ws/.agentls.json"
asked=false
for _ in $(seq 20); do
	sleep 0.5
	rm -f "$tmp/result"
	tmux send-keys -t "$session" M-: '(agentls-call-async "read_file" (list :path "main.go") (quote tty-report))' Enter
	for _ in $(seq 20); do
		if screen | grep -q 'The agent wants to run read_file'; then asked=true; break; fi
		[ -s "$tmp/result" ] && break
		sleep 0.1
	done
	$asked && break
done
$asked || fail "read_file never asked after .agentls.json changed on disk"
open_review
tmux send-keys -t "$session" y
want_result '^success'
echo "tty test: .agentls.json changed on disk reached the server: ok"

# 4. C-] in the recursive edit of a synchronous call cancels the call
tmux send-keys -t "$session" M-: '(agentls-call "edit_file" (list :path "main.go" :old_string "tty" :new_string "never"))' Enter
wait_for "the recursive edit" on_screen 'waits for your review'
tmux send-keys -t "$session" C-]
wait_for "the approval to go" off_screen 'agentls: 1 review'
screen | grep -q '\[(' && fail "still in a recursive edit after C-]"
grep -q 'hello, tty' "$ws/main.go" || fail "main.go changed after C-]"
echo "tty test: C-] cancelled a waiting synchronous call: ok"

# 5. prose typed while rm -r asks never answers it
rm -f "$tmp/result"
tmux send-keys -t "$session" C-x b
tmux send-keys -t "$session" -l notes
tmux send-keys -t "$session" Enter
tmux send-keys -t "$session" M-: '(run-at-time 1 nil (lambda () (agentls-call-async "shell_exec" (list :command "rm -r somedir") (quote tty-report))))' Enter
prose="maybe yes always, y a n. "
type_slowly "$prose$prose$prose$prose"
wait_for "the review of rm -r" on_screen 'wants to run shell_exec'
type_slowly "$prose"
sleep 0.5
screen | grep -qF "$prose$prose" || fail "the prose did not all land in the buffer typed in"
[ -e "$ws/somedir/keep.txt" ] || fail "somedir was deleted by typing"
[ -s "$tmp/result" ] && fail "the review was answered by typing: $(cat "$tmp/result")"
screen | grep -q 'DANGEROUS' || fail "the header line does not say DANGEROUS"
screen | grep -qF 'y approve (asks yes)   n reject   e edit args   ? details   l list   q hide' ||
	fail "the key legend does not fit 80 columns"
screen | grep -q 'review 1 of 1  · keys off: not selected' || fail "the review's mode line does not fit 80 columns"
# reopened on purpose, then at once a burst of y (keys 0.1 s apart, for
# longer than the guard; the guard is 2 s here so that a loaded machine's
# late key is still within it)
open_review now
for _ in $(seq 30); do
	tmux send-keys -t "$session" y
	sleep 0.1
done
sleep 0.2
[ -s "$tmp/result" ] && fail "a burst of y answered the review: $(cat "$tmp/result")"
[ -e "$ws/somedir/keep.txt" ] || fail "somedir was deleted by a burst of y"
screen | grep -q 'agentls: approve a DANGEROUS call' && fail "a burst of y reached the confirmation"
# deliberate: wait longer than the guard, y, then the word yes
sleep 2.5
tmux send-keys -t "$session" y
wait_for "the confirmation" on_screen 'approve a DANGEROUS call'
tmux send-keys -t "$session" -l yes
tmux send-keys -t "$session" Enter
want_result '^success'
[ -e "$ws/somedir" ] && fail "somedir survived an approved rm -r"
echo "tty test: prose typed while a review arrived answered nothing; deliberate y + yes did: ok"
