;;; agentls-review-test.el --- ERT tests of agentls.el: the review UI  -*- lexical-binding: t; -*-

;;; Commentary:

;; Against the real agentls binary, each test on a fresh temporary
;; workspace (editors/emacs/test/run.sh runs every agentls*-test.el):
;; the approval buffer never takes keys meant elsewhere, shows what the
;; request says, lists reviews and remembered answers, and goes away when
;; the call is cancelled, times out or needs no more answer.

;;; Code:

(require 'agentls)
(require 'agentls-test-helpers)     ; with ert and cl-lib

(ert-deftest agentls-test-two-waiting-approvals ()
  "Two calls wait at once: the mode line counts them, each is answered in turn."
  (agentls-test--with-workspace '(("a.txt" . "a\n") ("b.txt" . "b\n"))
    (pcase-let ((`(,box1 . ,box2) (agentls-test--edit-a-and-b)))
      (should (= (agentls-pending-approvals) 2))
      (should (string-match-p "agentls: 2 reviews" (format "%s" (agentls--mode-line))))
      (should (string-match-p "review 1 of 2" (with-current-buffer agentls-approval-buffer-name
                                                (agentls--approval-mode-line-text))))
      ;; The server may ask in either order: approve the first shown,
      ;; reject the second.
      (let* ((first (if (string-match-p "modify a.txt" (agentls-test--approval-buffer-text))
                        "a.txt" "b.txt"))
             (second (if (equal first "a.txt") "b.txt" "a.txt")))
        (agentls-test--press "y")
        (should (string-match-p (concat "modify " (regexp-quote second))
                                (agentls-test--approval-buffer-text)))
        ;; The next review in the same (selected) window: its guard starts
        ;; again, a y right away does nothing.
        (agentls-test--type "y")
        (should (= (agentls-pending-approvals) 1))
        (should (string-match-p "review 1 of 1" (with-current-buffer agentls-approval-buffer-name
                                                  (agentls--approval-mode-line-text))))
        (with-current-buffer agentls-approval-buffer-name (agentls-approval-reject ""))
        (agentls-test--wait (lambda () (and (car box1) (car box2))) "both results")
        (should (equal (plist-get (if (equal first "a.txt") (car box1) (car box2)) :status)
                       "success"))
        (should (equal (plist-get (if (equal first "a.txt") (car box2) (car box1)) :status)
                       "rejected"))
        (should (equal (agentls-test--file ws first) (upcase (agentls-test--file ws first))))
        (should (equal (agentls-test--file ws second) (downcase (agentls-test--file ws second)))))
      (should (= (agentls-pending-approvals) 0)))))

(defun agentls-test--review-window ()
  (get-buffer-window agentls-approval-buffer-name t))

(ert-deftest agentls-test-review-never-takes-typing ()
  "Reviews that arrive while the person types never take the keys: typed prose
\(\"maybe yes always\") stays in the person's buffer, the review stays open,
rm -r does not run, no always is remembered; a review window selected by a
program, or a burst of y after reopening, does not answer either; going there
on purpose, waiting, y and the typed yes does."
  (agentls-test--with-workspace '(("somedir/keep.txt" . "precious\n") ("a.txt" . "a\n"))
    (agentls-test--require-tools "shell_exec")
    (let* ((agentls-approval-guard-time 0.4)
           (notes (get-buffer-create "*agentls-test prose*"))
           (seen agentls-test--approvals-seen)
           (rm (list nil))
           (edit (list nil))
           (prose "maybe yes always, then y and a and n again. "))
      (switch-to-buffer notes)
      (delete-other-windows)
      (text-mode)
      (erase-buffer)
      ;; The person is typing; two reviews arrive in the middle.
      (agentls-test--type-slowly "I think ")
      (agentls-call-async "edit_file" '(:path "a.txt" :old_string "a" :new_string "b")
                          (lambda (r) (setcar edit r)))
      (agentls-test--type-slowly prose)
      (agentls-test--wait-review seen "the edit's review")
      (agentls-call-async "shell_exec" '(:command "rm -r somedir") (lambda (r) (setcar rm r)))
      (agentls-test--type-slowly prose)
      (agentls-test--wait-review seen "both reviews" 2)
      (agentls-test--type-slowly prose)
      (should (equal (with-current-buffer notes (buffer-string))
                     (concat "I think " prose prose prose)))
      (should (eq (window-buffer (selected-window)) notes))
      (should (agentls-test--review-window))
      (should (window-parameter (agentls-test--review-window) 'window-side))
      (should (string-match-p "agentls: 2 reviews" (format "%s" (agentls--mode-line))))
      (should (string-match-p "shell_exec waits for your review below"
                              (with-current-buffer (messages-buffer) (buffer-string))))
      (should (= (agentls-pending-approvals) 2))
      (should-not (car rm))
      (should-not (car edit))
      (should (file-exists-p (expand-file-name "somedir/keep.txt" ws)))
      ;; A program selects the review window: the person did not go there.
      (select-window (agentls-test--review-window))
      (agentls-test--sleep 0.5)
      (agentls-test--type "y")
      (agentls-test--type "a")
      (should (= (agentls-pending-approvals) 2))
      (should-not (buffer-local-value 'agentls--approval-armed-at
                                      (get-buffer agentls-approval-buffer-name)))
      (should (string-match-p "this review window was not opened by you"
                              (with-current-buffer (messages-buffer) (buffer-string))))
      (select-window (get-buffer-window notes))
      ;; Reopened on purpose, then a burst of y (and a's) longer than the guard.
      (agentls-test--type "M-x agentls-show-approval RET")
      (should (eq (window-buffer (selected-window)) (get-buffer agentls-approval-buffer-name)))
      (agentls-test--type-slowly "yyyyyyyyyyyyyyyyyyyyyyyyyyaaaaaaaa" 0.05)
      (should (= (agentls-pending-approvals) 2))
      (should-not (car rm))
      (should (file-exists-p (expand-file-name "somedir/keep.txt" ws)))
      ;; Answered on purpose: the edit (the oldest) rejected, then the
      ;; dangerous one.
      (should (equal (agentls-test--shown-tool) "edit_file"))
      (agentls-test--sleep 0.5)
      (agentls-test--type "n RET")
      (agentls-test--wait (lambda () (car edit)) "the edit's result")
      (should (equal (plist-get (car edit) :status) "rejected"))
      ;; The next review (rm -r) is shown in the selected window: its guard
      ;; starts again.
      (agentls-test--type "y")
      (should (= (agentls-pending-approvals) 1))
      (should (equal (agentls-test--shown-tool) "shell_exec"))
      ;; y on a dangerous call asks for the full word: no stops it.
      (agentls-test--sleep 0.5)
      (agentls-test--type "y no RET")
      (should (= (agentls-pending-approvals) 1))
      (should (file-exists-p (expand-file-name "somedir/keep.txt" ws)))
      (agentls-test--sleep 0.5)
      (agentls-test--type "y yes RET")
      (agentls-test--wait (lambda () (car rm)) "the rm result")
      (should (equal (plist-get (car rm) :status) "success"))
      (should-not (file-exists-p (expand-file-name "somedir" ws)))
      ;; No always was remembered: edit_file still asks.
      (let ((seen2 agentls-test--approvals-seen)
            (box (agentls-test--edit-async "a.txt" "a" "c")))
        (should (agentls-test--asks-p seen2 box "edit_file to ask again")))
      (should (equal (agentls-test--file ws "a.txt") "a\n"))
      (kill-buffer notes))))

(ert-deftest agentls-test-always-needs-yes ()
  "a asks for the full word yes (never a single key); no keeps the call waiting."
  (agentls-test--with-workspace '(("a.txt" . "one\n"))
    (let* ((seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "one" "ONE")))
      (agentls-test--wait-review seen)
      (should (string-match-p "^a always a\\(pprove\\|llow\\) edit_file (asks yes)$"
                              (agentls-test--approval-buffer-text)))
      (agentls-test--open-review)
      (let ((use-short-answers t))      ; even so: the full word
        (agentls-test--type "a y RET no RET"))
      (should (= (agentls-pending-approvals) 1))
      (agentls-test--sleep 0.3)
      (agentls-test--type "a yes RET")
      (agentls-test--should-end box "success" "the result"))))

(defun agentls-test--rfc3339 (secs-from-now)
  (format-time-string "%Y-%m-%dT%H:%M:%SZ" (time-add nil secs-from-now) t))

(defun agentls-test--request (server &rest params)
  "Feed SERVER's approval/request handler PARAMS, as the server would send them."
  (apply #'eglot-handle-request server 'approval/request params))

(ert-deftest agentls-test-review-shows-request-fields ()
  "agent, cwd, deadline (a countdown), options and alwaysLabel from the request
are shown; the legend and the review window's mode line fit 80 columns.
\(The request is fed to the handler as the server sends it: docs/protocol.md,
\"Approval\".)"
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((server (agentls--server))
           (a-cmd (agentls-test--request
                   server :callId "tc_spec1" :tool "shell_exec" :reason "list files"
                   :arguments '(:command "echo hi") :risk "execute" :agent "coder"
                   :cwd "/tmp/wd" :deadline (agentls-test--rfc3339 95) :timeoutSeconds 95
                   :options ["approve" "reject" "always"] :alwaysLabel "always allow `echo …`")))
      (should (agentls--deferred-p a-cmd))
      (let ((text (agentls-test--approval-buffer-text)))
        (agentls-test--should-match text "^coder wants to run shell_exec$"
                                    "^Agent: +coder$"
                                    "^Dir: +/tmp/wd$"
                                    "^a always allow `echo …` (asks yes)$"
                                    "rejected by itself at [0-9:]+")
        (dolist (line (split-string text "\n"))
          (should (<= (string-width line) 80))))
      ;; (format-mode-line gives "" for :eval in batch mode: the functions
      ;; the header and mode line evaluate are called here; test/tty.sh
      ;; looks at the real ones on an 80-column screen.)
      (with-current-buffer agentls-approval-buffer-name
        (should (equal header-line-format '(:eval (agentls--approval-header-line))))
        (should (member '(:eval (agentls--approval-mode-line-text)) mode-line-format))
        (let ((h1 (agentls--approval-header-line)))
          ;; 1:35 less the time since the request: minutes and seconds.
          (should (string-match-p "rejected by itself in 1:[0-3][0-9]" h1))
          (should (string-match-p "coder wants to run shell_exec" h1))
          (should (<= (string-width (concat " " (buffer-name) "  "
                                            (agentls--approval-mode-line-text)))
                      80))
          ;; The countdown counts down.
          (agentls-test--sleep 1.1)
          (should-not (equal (agentls--approval-header-line) h1))))
      ;; The log has the agent.
      (should (string-match-p "shell_exec tc_spec1 asks for approval (agent coder)" (agentls-test--log-text)))
      ;; A dangerous call without "always" in its options: a is not offered.
      (agentls--approval-answer "reject" nil (car agentls--pending-approvals))
      (agentls-test--request
       server :callId "tc_spec2" :tool "shell_exec" :arguments '(:command "rm -r x")
       :risk "dangerous" :warning "deletes x recursively" :options ["approve" "reject"])
      (let ((text (agentls-test--approval-buffer-text)))
        (should (string-match-p "^y approve (asks yes)   n reject" text))
        (should-not (string-match-p "^a " text)))
      (agentls-test--open-review)
      (agentls-test--type "a")
      (should (= (agentls-pending-approvals) 1))
      (should-error (agentls-approval-always) :type 'user-error)
      ;; A second request for a callId already answered (the server judges
      ;; edited arguments again) is a review like any other.
      (agentls--approval-answer "approve" nil (car agentls--pending-approvals)
                                '(:command "rm -r y"))
      (agentls-test--request
       server :callId "tc_spec2" :tool "shell_exec" :arguments '(:command "rm -r y")
       :risk "dangerous" :warning "deletes y recursively" :options ["approve" "reject"])
      (should (= (agentls-pending-approvals) 1))
      (should (string-match-p "WARNING: deletes y" (agentls-test--approval-buffer-text)))
      ;; Without options (an old server): approve and reject only.
      (agentls--approval-answer "reject" nil (car agentls--pending-approvals))
      (agentls-test--request server :callId "tc_spec3" :tool "edit_file"
                             :arguments '(:path "a.txt") :risk "write")
      (should-not (string-match-p "^a " (agentls-test--approval-buffer-text)))
      (should (string-match-p "waiting 0:0" (with-current-buffer agentls-approval-buffer-name
                                              (agentls--approval-header-line))))
      (agentls--approval-answer "reject" nil (car agentls--pending-approvals)))))

(ert-deftest agentls-test-review-fields-from-server ()
  "End to end with the server (docs/protocol.md, \"Approval\"): the review
names the agent, a command's folder, counts down to its deadline, labels
always with what it covers, and a dangerous call offers no always."
  (agentls-test--with-workspace '(("victim/f" . "x\n") ("a.txt" . "a\n"))
    (agentls-test--require-tools "shell_exec")
    (let ((seen agentls-test--approvals-seen)
          (box (agentls-test--call-box "shell_exec" '(:command "echo hi") :agent "coder")))
      (agentls-test--wait-review seen "the echo review")
      (let ((text (agentls-test--approval-buffer-text)))
        (should (string-match-p "^coder wants to run shell_exec$" text))
        (should (string-match-p (concat "^Dir: +" (regexp-quote (directory-file-name ws)) "$") text))
        (should (string-match-p "^a always allow `echo" text))
        (should (string-match-p "rejected by itself at " text)))
      (with-current-buffer agentls-approval-buffer-name
        (should (string-match-p "rejected by itself in [45]:[0-9][0-9]"
                                (agentls--approval-header-line))))
      (agentls-test--press "n RET")
      (agentls-test--wait (lambda () (car box)) "the echo result")
      (setq seen agentls-test--approvals-seen
            box (agentls-test--call-box "shell_exec" '(:command "rm -r victim")))
      (agentls-test--wait-review seen "the rm review")
      (should-not (member "always" (append (plist-get (agentls--approval-params
                                                       (car agentls--pending-approvals))
                                                      :options)
                                           nil)))
      (should-not (string-match-p "^a " (agentls-test--approval-buffer-text)))
      (agentls-test--open-review)
      (agentls-test--type "a")
      (should (= (agentls-pending-approvals) 1))
      (agentls-test--type "n RET")
      (agentls-test--should-end box "rejected" "the rm result")
      (should (file-exists-p (expand-file-name "victim/f" ws))))))

(ert-deftest agentls-test-warning-red-after-font-lock ()
  "The warning and the dangerous risk stay red after diff-mode's font-lock ran."
  (agentls-test--with-workspace '(("victim/f" . "x\n"))
    (agentls-test--require-tools "shell_exec")
    (let ((seen agentls-test--approvals-seen)
          (box (agentls-test--call-box "shell_exec" '(:command "rm -r victim"))))
      (agentls-test--wait-review seen)
      (with-current-buffer agentls-approval-buffer-name
        (font-lock-mode 1)
        (font-lock-ensure)
        (goto-char (point-min))
        (should (search-forward "WARNING: " nil t))
        (should (eq (get-char-property (point) 'face) 'agentls-approval-warning))
        (goto-char (point-min))
        (should (search-forward "dangerous: may destroy" nil t))
        (should (eq (get-char-property (1- (point)) 'face) 'agentls-approval-warning))
        (should (equal (face-attribute 'agentls-approval-warning :foreground nil t) "red"))
        (agentls-approval-reject "no"))
      (agentls-test--wait (lambda () (car box)) "the result")
      ;; The log has the warning text.
      (with-current-buffer (agentls-show-log)
        (should (string-match-p "asks for approval, risk dangerous: WARNING: .*rm -r" (buffer-string)))
        (let ((win (get-buffer-window (current-buffer) t)))
          (should win)
          (should (= (window-point win) (point-max))))))))

(ert-deftest agentls-test-dangerous-command-warning ()
  "A dangerous command's warning is shown under Context."
  (agentls-test--with-workspace '(("victim/f" . "x\n"))
    (agentls-test--require-tools "shell_exec")
    (let* ((seen agentls-test--approvals-seen)
           (box (agentls-test--call-box "shell_exec" '(:command "rm -r victim"))))
      (agentls-test--wait-review seen)
      (let ((text (agentls-test--approval-buffer-text)))
        (should (string-match-p "risk: dangerous" text))
        (should (string-match-p "^ +WARNING: .*rm -r" text))
        (should (string-match-p (concat "^Dir: +" (regexp-quote (directory-file-name ws)) "$") text)))
      (with-current-buffer agentls-approval-buffer-name (agentls-approval-reject "keep it"))
      (agentls-test--should-end box "rejected")
      (should (file-exists-p (expand-file-name "victim/f" ws))))))

(ert-deftest agentls-test-list-reviews ()
  "agentls-list-reviews lists the waiting calls; RET on one opens it (on purpose)."
  (agentls-test--with-workspace '(("a.txt" . "a\n") ("b.txt" . "b\n"))
    (pcase-let ((`(,box1 . ,box2) (agentls-test--edit-a-and-b)))
      (agentls-test--type "M-x agentls-list-reviews RET")
      (should (eq (window-buffer (selected-window)) (get-buffer agentls-reviews-buffer-name)))
      (set-buffer agentls-reviews-buffer-name)
      (should (= (length tabulated-list-entries) 2))
      (let ((text (buffer-string)))
        (should (string-match-p "edit_file.*write.*modify a.txt" text))
        (should (string-match-p "edit_file.*write.*modify b.txt" text)))
      ;; The second (not the oldest) one.
      (goto-char (point-min))
      (forward-line 1)
      (let ((target (tabulated-list-get-id)))
        (should (eq target (nth 1 agentls--pending-approvals)))
        (agentls-test--type "RET")
        (should (eq (window-buffer (selected-window)) (get-buffer agentls-approval-buffer-name)))
        (should (eq (buffer-local-value 'agentls--approval (get-buffer agentls-approval-buffer-name))
                    target))
        (agentls-test--type "y")            ; too early: the guard
        (should (= (agentls-pending-approvals) 2))
        (agentls-test--sleep 0.3)
        (agentls-test--type "y")
        (let ((file (plist-get (plist-get (agentls--approval-params target) :arguments) :path)))
          (agentls-test--wait (lambda () (or (car box1) (car box2))) "a result")
          (should (equal (agentls-test--file ws file) (upcase (agentls-test--file ws file))))))
      (should (= (agentls-pending-approvals) 1))
      (with-current-buffer agentls-reviews-buffer-name
        (should (= (length tabulated-list-entries) 1))))))

(ert-deftest agentls-test-rules-unsupported ()
  "A server without approval/rules (method not found) is reported clearly.
An older server cannot run here: the client's approval/rules goes to this
server under a name it does not know, so that its real MethodNotFound
answer comes back through the real connection."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((server (agentls--server))
           (real (symbol-function 'agentls--rpc-request))
           (asked nil))
      (cl-letf (((symbol-function 'agentls--rpc-request)
                 (lambda (conn method &rest args)
                   (when (eq method :approval/rules)
                     (setq asked t method :approval/rulesUnknownToThisServer))
                   (apply real conn method args))))
        (let ((err (should-error (agentls-list-rules) :type 'user-error)))
          (should (string-match-p "does not know approval/rules" (cadr err)))))
      (should asked)
      (should (jsonrpc-running-p server))
      ;; The same request under its own name is answered.
      (should (listp (agentls-approval-rules server))))))

(ert-deftest agentls-test-rules-list-revoke ()
  "always is listed by approval/rules with its label; revoking it makes the tool ask again."
  (agentls-test--with-workspace '(("a.txt" . "one\ntwo\n"))
    (let ((server (agentls--server)))
      (let ((seen agentls-test--approvals-seen))
        (agentls-test--answer seen (agentls-test--edit-async "a.txt" "one" "ONE") "a yes RET"))
      (agentls-test--type "M-x agentls-list-rules RET")
      (should (eq (window-buffer (selected-window)) (get-buffer agentls-rules-buffer-name)))
      (with-current-buffer agentls-rules-buffer-name
        (should (= (length tabulated-list-entries) 1))
        (should (string-match-p "edit_file +always allow edit_file +session" (buffer-string)))
        (goto-char (point-min))
        (agentls-test--type "d")
        (should (= (length tabulated-list-entries) 0)))
      (should-not (agentls-approval-rules server))
      (let* ((seen agentls-test--approvals-seen)
             (box (agentls-test--edit-async "a.txt" "two" "TWO")))
        (should (agentls-test--asks-p seen box "edit_file to ask again"))))))

(ert-deftest agentls-test-cancel-while-waiting ()
  "agentls-cancel on a call waiting for approval: status cancelled, the approval goes away."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((seen agentls-test--approvals-seen)
           (box (list nil))
           (handle (agentls-call-async "edit_file" '(:path "a.txt" :old_string "a" :new_string "b")
                                       (lambda (r) (setcar box r)))))
      (agentls-test--wait-review seen)
      (should (= (agentls-pending-approvals) 1))
      (agentls-cancel handle)
      (agentls-test--should-end box "cancelled")
      (agentls-test--wait (lambda () (= (agentls-pending-approvals) 0)) "the approval to go")
      (should (string-match-p "No tool call waits" (agentls-test--approval-buffer-text)))
      (should (equal (agentls-test--file ws "a.txt") "a\n")))))

(defun agentls-test--rfc3339-ms (secs-from-now)
  "An RFC 3339 UTC time SECS-FROM-NOW on the local clock, with milliseconds."
  (let ((tm (time-add nil secs-from-now)))
    (concat (format-time-string "%Y-%m-%dT%H:%M:%S" tm t)
            (format ".%03dZ" (% (truncate (* 1000 (float-time tm))) 1000)))))

(ert-deftest agentls-test-approval-deadline-from ()
  "The deadline of a request (docs/protocol.md, \"Approval\"): expiresAt when
the clocks agree with timeoutMs, timeoutMs from arrival when they do not,
the older fields without them."
  (let ((now 1795453500.0))
    (dolist (c `(("clocks agree" (:expiresAt "2026-11-23T17:10:00.250Z" :timeoutMs 299000) ,(+ now 300.25))
                 ("local clock an hour behind" (:expiresAt "2026-11-23T18:07:00Z" :timeoutMs 120000) ,(+ now 120))
                 ("local clock an hour ahead" (:expiresAt "2026-11-23T16:07:00Z" :timeoutMs 120000) ,(+ now 120))
                 ("timeoutMs alone" (:timeoutMs 90500) ,(+ now 90.5))
                 ("expiresAt alone, with a zone" (:expiresAt "2026-11-23T18:06:00+01:00") ,(+ now 60))
                 ("older fields" (:deadline "2026-11-23T17:06:00Z" :timeoutSeconds 60) ,(+ now 60))
                 ("timeoutSeconds alone" (:timeoutSeconds 60) ,(+ now 60))
                 ("nothing" (:tool "x") nil)))
      (let ((got (agentls--approval-deadline-from (nth 1 c) now)))
        (should (equal (list (car c) (and got (/ (round (* got 1000)) 1000.0)))
                       (list (car c) (nth 2 c))))))))

(ert-deftest agentls-test-approval-expires ()
  "A review counts down in its header and closes at its deadline, saying it
expired, without an answer (the server rejects it by itself then)."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((server (agentls--server))
           (d (agentls-test--request
               server :callId "tc_exp1" :tool "shell_exec" :arguments '(:command "echo hi")
               :risk "execute" :options ["approve" "reject" "always"]
               :expiresAt (agentls-test--rfc3339-ms 2.5) :timeoutMs 2500)))
      (with-current-buffer agentls-approval-buffer-name
        (let ((h1 (agentls--approval-header-line)))
          (should (string-match-p "rejected by itself in 0:0[1-3]" h1))
          (agentls-test--sleep 1.1)
          (should-not (equal (agentls--approval-header-line) h1))))
      (agentls-test--wait (lambda () (= (agentls-pending-approvals) 0)) "the review to expire" 10)
      ;; No answer: the server rejects the call by itself.
      (should-not (agentls--deferred-answered d))
      (should (string-match-p "No tool call waits" (agentls-test--approval-buffer-text)))
      (should (string-match-p "shell_exec tc_exp1: expired" (agentls-test--log-text)))
      (should (string-match-p "the review of shell_exec expired"
                              (with-current-buffer "*Messages*" (buffer-string)))))))

(ert-deftest agentls-test-approval-withdrawn-at-deadline-expires ()
  "The server's withdrawal ($/cancelRequest) of a review at its deadline,
before the local timer, still says it expired; one long before it does not."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let ((server (agentls--server)))
      (dolist (c '(("tc_due" 1.0 t) ("tc_early" 60.0 nil)))
        (with-current-buffer "*Messages*" (let ((inhibit-read-only t)) (erase-buffer)))
        (let ((d (agentls-test--request
                  server :callId (nth 0 c) :tool "shell_exec" :arguments '(:command "echo hi")
                  :risk "execute" :options ["approve" "reject" "always"]
                  :expiresAt (agentls-test--rfc3339-ms (nth 1 c)) :timeoutMs (round (* 1000 (nth 1 c))))))
          (eglot-handle-notification server '$/cancelRequest :id (agentls--deferred-id d))
          (should (= (agentls-pending-approvals) 0))
          (should (equal (list (nth 0 c) (nth 2 c))
                         (list (nth 0 c)
                               (and (string-match-p "the review of shell_exec expired"
                                                    (with-current-buffer "*Messages*" (buffer-string)))
                                    t)))))))))

(ert-deftest agentls-test-approval-timeout-clears-ui ()
  "An approval the server stops waiting for (approval.timeoutSeconds) shows
its time left (expiresAt and timeoutMs from the server) and leaves the UI."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((agentls-config '(:approval (:timeoutSeconds 2)))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "a" "b")))
      (agentls-test--wait-review seen)
      (should (= (agentls-pending-approvals) 1))
      (let ((p (agentls--approval-params (car agentls--pending-approvals))))
        (should (stringp (plist-get p :expiresAt)))
        (should (numberp (plist-get p :timeoutMs))))
      (with-current-buffer agentls-approval-buffer-name
        (should (string-match-p "rejected by itself in 0:0[0-2]" (agentls--approval-header-line))))
      (agentls-test--should-end box "rejected")
      (should (= (agentls-pending-approvals) 0))
      (should (string-match-p "No tool call waits" (agentls-test--approval-buffer-text)))
      ;; The server withdraws its approval/request ($/cancelRequest).
      (agentls-test--wait (lambda () (string-match-p "the server withdrew its request"
                                                     (agentls-test--log-text)))
                          "the $/cancelRequest of the approval")
      ;; A late answer is harmless.
      (should-error (agentls-approval-approve) :type 'user-error)
      (should (equal (agentls-test--file ws "a.txt") "a\n")))))

(ert-deftest agentls-test-synchronous-call-recursive-edit ()
  "Interactively, agentls-call waits in a recursive edit; the review is shown, not
selected: a y typed in the person's buffer stays there; after going to the
review on purpose (F9 here: agentls-show-approval), y answers."
  (agentls-test--with-workspace '(("a.txt" . "old\n"))
    (let ((agentls-call-recursive-edit t)
          (agentls-approval-guard-time 0)
          (buf (find-file-noselect (expand-file-name "a.txt" ws)))
          (notes (get-buffer-create "*agentls-test notes*"))
          (depth nil)
          (hook (lambda ()
                  ;; What the person types once the approval is on screen.
                  (setq unread-command-events (listify-key-sequence (kbd "y <f9> y"))))))
      (switch-to-buffer notes)
      (erase-buffer)
      (global-set-key (kbd "<f9>") #'agentls-show-approval)
      (add-hook 'agentls-approval-hook hook)
      (unwind-protect
          (let ((r (agentls-call "edit_file" '(:path "a.txt" :old_string "old" :new_string "new")
                                 :timeout 20)))
            (setq depth (recursion-depth))
            (should (equal (plist-get r :status) "success"))
            (should (equal (plist-get r :approvedBy) "user")))
        (remove-hook 'agentls-approval-hook hook)
        (global-unset-key (kbd "<f9>")))
      (should (= depth 0))
      ;; The first y went to the buffer the person was in.
      (should (equal (with-current-buffer notes (buffer-string)) "y"))
      (kill-buffer notes)
      (agentls-test--should-hold buf ws "a.txt" "new\n"))))

(ert-deftest agentls-test-read-risk-and-always ()
  "In mode ask, read_file asks with risk read (shown as such in the review);
after an \"always\" the next read_file runs unasked and says approvedBy always."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((agentls-config '(:approval (:mode "ask")))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--call-box "read_file" '(:path "a.txt"))))
      (agentls-test--wait-review seen)
      (should (equal (plist-get (with-current-buffer agentls-approval-buffer-name
                                  (agentls--approval-params agentls--approval))
                                :risk)
                     "read"))
      (should (string-match-p "risk: read: shows the agent what it reads"
                              (agentls-test--approval-buffer-text)))
      (agentls-test--press "a yes RET")
      (should (equal (plist-get (agentls-test--should-end box "success") :approvedBy) "user"))
      (let* ((seen agentls-test--approvals-seen)
             (box (agentls-test--call-box "read_file" '(:path "a.txt")))
             (r (agentls-test--should-end box "success")))
        (should (= agentls-test--approvals-seen seen))
        (should (equal (plist-get r :approvedBy) "always"))))))

(provide 'agentls-review-test)
;;; agentls-review-test.el ends here
