;;; agentls-test-helpers.el --- What the Emacs tests of agentls share  -*- lexical-binding: t; -*-

;;; Commentary:

;; Loaded by every test file of editors/emacs/test (run.sh puts this
;; folder on `load-path').  The first part needs only Emacs and is shared
;; with plain-eglot-test.el, which runs without agentls.el: waiting,
;; temporary workspaces, reading files.  The rest drives agentls.el the
;; way a person would (the commands bound to y / n / a in the *agentls
;; approval* buffer, typed) and needs it loaded first.

;;; Code:

(require 'ert)
(require 'cl-lib)

(defvar agentls-test-bin (or (getenv "AGENTLS_BIN") "agentls")
  "The agentls binary the tests start.")

;; In batch mode a prompt whose answer was not typed (the keyboard macro
;; ran out, or none runs) reads stdin, and yes-or-no-p asks again forever:
;; make that an error, so that a test that answers too little fails
;; instead of hanging.  (The prompt itself is Emacs' own.)
(define-advice yes-or-no-p (:before (&rest _) agentls-test-no-stdin)
  (when (and noninteractive
             (or (not executing-kbd-macro)
                 (>= executing-kbd-macro-index (length executing-kbd-macro))))
    (error "agentls-test: a yes-or-no prompt nobody typed an answer for")))

(defun agentls-test--wait (pred what &optional timeout tick)
  "Process events until PRED is non-nil; fail naming WHAT after TIMEOUT s.
TICK, when non-nil, is called after each round of events."
  (let ((deadline (+ (float-time) (or timeout 15))))
    (while (not (funcall pred))
      (when (> (float-time) deadline)
        (ert-fail (format "timed out waiting for %s" what)))
      (accept-process-output nil 0.05)
      (when tick (funcall tick)))))

(defun agentls-test--file (ws name)
  "The text of the file NAME of the folder WS."
  (with-temp-buffer
    (insert-file-contents (expand-file-name name ws))
    (buffer-string)))

(defun agentls-test--make-workspace (prefix files)
  "A new temporary folder (its true name, PREFIX in its name) holding FILES.
FILES is ((NAME . TEXT)...); NAME may be in sub-folders."
  (let ((ws (file-name-as-directory (file-truename (make-temp-file prefix t)))))
    (dolist (f files)
      (make-directory (file-name-directory (expand-file-name (car f) ws)) t)
      (with-temp-file (expand-file-name (car f) ws) (insert (cdr f))))
    ws))

(defun agentls-test--delete-workspace (ws)
  "Kill the buffers visiting files of WS (unsaved changes dropped), delete WS."
  (dolist (buf (buffer-list))
    (let ((f (buffer-file-name buf)))
      (when (and f (string-prefix-p ws (file-truename f)))
        (with-current-buffer buf (set-buffer-modified-p nil))
        (kill-buffer buf))))
  (delete-directory ws t))

;;; agentls.el

(defvar agentls-test--approvals-seen 0
  "Approval requests that reached the UI (counted through `agentls-approval-hook').")
(with-eval-after-load 'agentls
  (add-hook 'agentls-approval-hook (lambda () (cl-incf agentls-test--approvals-seen))))

(defmacro agentls-test--with-workspace (files &rest body)
  "Run BODY with `ws' bound to a new workspace holding FILES ((NAME . TEXT)...)."
  (declare (indent 1) (debug t))
  `(let* ((ws (agentls-test--make-workspace "agentls-ws-" ,files))
          (default-directory ws)
          (agentls-server-program agentls-test-bin)
          (agentls-approval-guard-time 0.2)
          (project-find-functions nil))
     (unwind-protect
         (progn ,@body)
       (agentls-shutdown-all)
       (setq agentls--pending-approvals nil agentls--approval-chosen nil)
       (dolist (name (list agentls-approval-buffer-name agentls-reviews-buffer-name
                           agentls-rules-buffer-name))
         (when (get-buffer name) (kill-buffer name)))
       (delete-other-windows)
       (agentls-test--delete-workspace ws))))

(defun agentls-test--tool-names ()
  "The names of the server's tools."
  (mapcar (lambda (d) (plist-get d :name)) (agentls-list-tools)))

(defun agentls-test--require-tools (&rest names)
  "Fail the test unless the server has every tool of NAMES (the suite's
server is built from this repository: a missing tool is a regression)."
  (let* ((have (agentls-test--tool-names))
         (missing (cl-remove-if (lambda (n) (member n have)) names)))
    (when missing
      (ert-fail (format "the server has no %s" (mapconcat #'identity missing ", "))))))

(defun agentls-test--should-match (text &rest regexps)
  "Every one of REGEXPS matches TEXT."
  (dolist (re regexps)
    (should (string-match-p re text))))

(defun agentls-test--edit-a-and-b ()
  "Ask to edit a.txt (a to A) and b.txt (b to B) at once, wait until both
reviews reached the UI; return their result boxes (A-BOX . B-BOX)."
  (let* ((seen agentls-test--approvals-seen)
         (boxes (cons (agentls-test--edit-async "a.txt" "a" "A")
                      (agentls-test--edit-async "b.txt" "b" "B"))))
    (agentls-test--wait-review seen "two approvals" 2)
    boxes))

(defun agentls-test--approval-buffer-text ()
  (with-current-buffer agentls-approval-buffer-name
    (buffer-substring-no-properties (point-min) (point-max))))

(defun agentls-test--log-text ()
  "The text of the *agentls log* buffer."
  (with-current-buffer agentls-log-buffer-name (buffer-string)))

(defun agentls-test--sleep (secs)
  "Wait SECS seconds, reading the server's messages meanwhile."
  (let ((end (+ (float-time) secs)))
    (while (< (float-time) end) (accept-process-output nil 0.02))))

(defun agentls-test--type (keys)
  "Type KEYS (a string for `kbd'), as a person would: Emacs' command loop
runs each key's command, in the selected window, with the command hooks.
The current buffer is kept (the command loop makes the selected window's
buffer current)."
  (save-current-buffer (execute-kbd-macro (kbd keys))))

(defun agentls-test--type-slowly (text &optional gap)
  "Type TEXT key by key (each its own command), reading the server between keys."
  (dolist (k (listify-key-sequence text))
    (save-current-buffer (execute-kbd-macro (vector k)))
    (agentls-test--sleep (or gap 0.03))))

(defun agentls-test--open-review ()
  "Go to the review window on purpose (M-x agentls-show-approval, typed) and
read it for longer than the guard."
  (agentls-test--type "M-x agentls-show-approval RET")
  (should (eq (window-buffer (selected-window)) (get-buffer agentls-approval-buffer-name)))
  (agentls-test--sleep (+ agentls-approval-guard-time 0.05)))

(defun agentls-test--press (keys)
  "Answer the review shown as a person would: go there on purpose, wait,
type KEYS.  A y on a dangerous call is followed by the yes it asks for."
  (agentls-test--open-review)
  (let ((danger (with-current-buffer agentls-approval-buffer-name
                  (agentls--approval-dangerous-p agentls--approval))))
    (agentls-test--type (if (and danger (equal keys "y")) "y yes RET" keys))))

(defun agentls-test--call-box (tool args &rest keys)
  "Start TOOL with ARGS (and KEYS of `agentls-call-async'); return a result box:
a cons whose car becomes the ToolResult."
  (let ((box (list nil)))
    (apply #'agentls-call-async tool args (lambda (r) (setcar box r)) keys)
    box))

(defun agentls-test--edit-async (path old new)
  "Start edit_file on PATH as an agent front-end would; return a result box."
  (agentls-test--call-box "edit_file" (list :path path :old_string old :new_string new)
                          :reason "the test asks for it"))

(defun agentls-test--wait-review (seen &optional what count)
  "Wait until COUNT (default 1) approval requests more than SEEN reached the
UI; WHAT names them."
  (agentls-test--wait (lambda () (>= agentls-test--approvals-seen (+ seen (or count 1))))
                      (or what "the approval request")))

(defun agentls-test--asks-p (seen box what)
  "Wait until BOX has its result or a review newer than SEEN arrived (WHAT
names that); non-nil when a review did."
  (agentls-test--wait (lambda () (or (car box) (> agentls-test--approvals-seen seen))) what)
  (> agentls-test--approvals-seen seen))

(defun agentls-test--should-end (box status &optional what)
  "Wait for BOX's result (WHAT names it), check its STATUS, return it."
  (agentls-test--wait (lambda () (car box)) (or what "the tool result"))
  (should (equal (plist-get (car box) :status) status))
  (car box))

(defmacro agentls-test--with-edit-review (spec &rest body)
  "In a workspace holding one file, ask the server to edit it and run BODY
once the review reached the UI.  SPEC is (FILE TEXT OLD NEW): FILE holds
TEXT, visited in `buf'; the call replaces OLD by NEW, its result box is
`box'; `seen' counts the reviews before it."
  (declare (indent 1) (debug t))
  (pcase-let ((`(,file ,text ,old ,new) spec))
    `(agentls-test--with-workspace (list (cons ,file ,text))
       (let* ((buf (find-file-noselect (expand-file-name ,file ws)))
              (seen agentls-test--approvals-seen)
              (box (agentls-test--edit-async ,file ,old ,new)))
         (agentls-test--wait-review seen)
         ,@body))))

(defun agentls-test--answer (seen box &optional keys status)
  "Answer the review newer than SEEN with KEYS (default y), as a person
would; wait for BOX's result, check its STATUS (default success), return it."
  (agentls-test--wait-review seen)
  (agentls-test--press (or keys "y"))
  (agentls-test--should-end box (or status "success")))

(defun agentls-test--call-approving (tool args)
  "Call TOOL with ARGS; approve with y when asked.  Return (RESULT . ASKED)."
  (let* ((seen agentls-test--approvals-seen)
         (box (agentls-test--call-box tool args))
         (asked (agentls-test--asks-p seen box (format "%s to ask or finish" tool))))
    (when asked (agentls-test--press "y"))
    (agentls-test--wait (lambda () (car box)) (format "the result of %s" tool))
    (cons (car box) asked)))

(defun agentls-test--should-hold (buf ws name text &optional disk)
  "BUF holds TEXT and the file NAME of WS too, saved; with DISK (the text
before), BUF is modified and the file still holds DISK."
  (with-current-buffer buf
    (should (equal (buffer-string) text))
    (should (eq (and (buffer-modified-p) t) (and disk t))))
  (should (equal (agentls-test--file ws name) (or disk text))))

(defun agentls-test--shown-tool ()
  "The tool of the review the approval buffer shows."
  (with-current-buffer agentls-approval-buffer-name
    (plist-get (agentls--approval-params agentls--approval) :tool)))

(defun agentls-test--content-text (content)
  "The file text in read_file's CONTENT (lines prefixed by their number and a tab)."
  (mapconcat (lambda (l) (replace-regexp-in-string "\\`\\s-*[0-9]+\t" "" l))
             (split-string (string-remove-suffix "\n" content) "\n")
             "\n"))

(provide 'agentls-test-helpers)
;;; agentls-test-helpers.el ends here
