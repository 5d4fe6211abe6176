;;; agentls-review.el --- Reviews: the agent's calls wait for your approval  -*- lexical-binding: t; -*-

;; Author: the agentls authors
;; URL: https://github.com/agentls/agentls

;;; Commentary:

;; approval/request from the server becomes a review in the *agentls
;; approval* buffer (a diff in `diff-mode'), shown in a side window that
;; is never selected for the person; its keys act only once they went
;; there themselves and `agentls-approval-guard-time' passed.  The reply
;; is sent when they answer (agentls-rpc.el's replies sent later), so
;; Emacs never waits.  Also the list of waiting reviews.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'eglot)
(require 'diff-mode)
(require 'parse-time)
(require 'tabulated-list)
(require 'agentls-core)
(require 'agentls-sync)

(declare-function agentls-list-rules "agentls-rules" (&optional server))

;;; Reviews (approvals)
;;
;; A review must never take the keyboard from the buffer the person types
;; in.  So the review buffer is shown in a side window that is never
;; selected for the person; the echo area and the mode line say that a
;; review waits.  Its answer keys act only when the person moved to that
;; window by a command of theirs (`agentls--approval-track-selection'
;; notices it after the command), and only after
;; `agentls-approval-guard-time' without an answer key there: every opening
;; (first, again, a new review shown in the window) starts the guard, and
;; every key pressed too early starts it again.  Answers that cannot be
;; taken back (always; approving a dangerous call) ask for "yes" in the
;; minibuffer as well.

(cl-defstruct (agentls--approval (:copier nil))
  server deferred params (time (current-time))
  (deadline nil :documentation "`float-time' the server rejects it by itself, or nil."))

(defvar agentls-approval-hook nil
  "Functions called with no argument when an approval request arrives.
The approval buffer is current.")

(defvar-local agentls--approval nil "The approval this buffer shows.")

(defvar-local agentls--approval-armed-at nil
  "`float-time' the person opened this review window (or its guard
started again), or nil when they did not open it themselves.")

(defvar agentls--approval-chosen nil
  "The review the person chose in `agentls-list-reviews' (shown first).")

(defvar agentls--pre-command-buffer nil
  "The buffer of the selected window after the last command (or when the
current one started), minibuffers aside.")

(defvar agentls--approval-timer nil
  "Timer updating the countdowns while reviews wait.")

(defvar agentls--approval-edit-depth nil
  "Recursion depth of the recursive edit `agentls-call' entered to let
the person answer an approval, or nil.")

(defun agentls-pending-approvals ()
  "The number of tool calls waiting for the person's approval."
  (length agentls--pending-approvals))

(defconst agentls--approval-skew 2.0
  "Seconds expiresAt and timeoutMs may disagree before the local clock is
taken to be off (docs/protocol.md, \"Approval\").")

(defun agentls--rfc3339-seconds (text)
  "TEXT, an RFC 3339 time, as `float-time' (fractions of a second too), or nil."
  (when (stringp text)
    (when-let ((secs (ignore-errors (float-time (parse-iso8601-time-string text)))))
      ;; `parse-iso8601-time-string' drops the fraction of a second.
      (if (string-match "T[0-9:]+\\(\\.[0-9]+\\)" text)
          (+ secs (string-to-number (concat "0" (match-string 1 text))))
        secs))))

(defun agentls--approval-deadline-from (params &optional now)
  "When the server rejects the request of PARAMS by itself (`float-time'), or nil.
NOW is when it arrived (default: now).  From its expiresAt when that
agrees with its timeoutMs within `agentls--approval-skew' (the clocks
agree), else timeoutMs from NOW (the local clock is off); without
timeoutMs from expiresAt, deadline, or timeoutSeconds from NOW."
  (let* ((now (or now (float-time)))
         (at (agentls--rfc3339-seconds (plist-get params :expiresAt)))
         (ms (plist-get params :timeoutMs))
         (left (and (numberp ms) (/ ms 1000.0)))
         (s (plist-get params :timeoutSeconds)))
    (cond ((and at left)
           (if (<= (abs (- (- at now) left)) agentls--approval-skew) at (+ now left)))
          (at at)
          (left (+ now left))
          ((agentls--rfc3339-seconds (plist-get params :deadline)))
          ((and (numberp s) (> s 0)) (+ now s)))))

(defun agentls--duration (secs)
  "SECS as M:SS (never negative; a started second counts)."
  (let ((s (max 0 (ceiling secs))))
    (format "%d:%02d" (/ s 60) (% s 60))))

(defun agentls--approval-time-text (a &optional short)
  "The time left before A is rejected by itself (or how long it waited).
SHORT: for a column."
  (let ((d (agentls--approval-deadline a)))
    (cond ((and d short) (agentls--duration (- d (float-time))))
          (d (format "rejected by itself in %s" (agentls--duration (- d (float-time)))))
          (short "-")
          (t (format "waiting %s" (agentls--duration
                                   (float-time (time-since (agentls--approval-time a)))))))))

(defun agentls--mode-line ()
  "The global mode-line indicator: connected, or how many reviews wait."
  (when (agentls--servers)
    (let ((n (length agentls--pending-approvals)))
      (if (> n 0)
          (propertize (format " agentls: %d review%s" n (if (= n 1) "" "s"))
                      'face 'agentls-mode-line-waiting
                      'help-echo "Tool calls wait for your review: mouse-1 lists them"
                      'mouse-face 'mode-line-highlight
                      'local-map (make-mode-line-mouse-map 'mouse-1 #'agentls-list-reviews))
        (propertize " agentls" 'help-echo "agentls connected: mouse-1 shows the log"
                    'mouse-face 'mode-line-highlight
                    'local-map (make-mode-line-mouse-map 'mouse-1 #'agentls-show-log))))))

(defun agentls--approval-tick ()
  "Once a second while reviews wait: update the countdowns."
  (if (null agentls--pending-approvals)
      (progn (when (timerp agentls--approval-timer) (cancel-timer agentls--approval-timer))
             (setq agentls--approval-timer nil))
    (let ((list (get-buffer agentls-reviews-buffer-name)))
      (when (and list (get-buffer-window list t))
        (agentls--reviews-refresh)))
    (force-mode-line-update t)))

(defun agentls--install-approval-hooks ()
  (add-hook 'pre-command-hook #'agentls--approval-note-command)
  (add-hook 'post-command-hook #'agentls--approval-track-selection)
  (unless agentls--approval-timer
    (setq agentls--approval-timer (run-at-time 1 1 #'agentls--approval-tick))))

(defun agentls--approval-note-command ()
  "`pre-command-hook': remember which buffer the person is in."
  (let ((buf (window-buffer (selected-window))))
    (unless (minibufferp buf)
      (setq agentls--pre-command-buffer buf))))

(defun agentls--approval-track-selection ()
  "`post-command-hook': arm the review window when the person moved there.
A command of the person's that selected the review window (from another
buffer), or `agentls-show-approval' / RET in the list of reviews, arms it
and starts the guard.  Anything else leaves it as it was; leaving the
window disarms it."
  (let ((buf (get-buffer agentls-approval-buffer-name))
        (sel (window-buffer (selected-window))))
    (when (and buf (not (minibufferp sel)))
      (with-current-buffer buf
        (cond ((not (eq sel buf)) (setq agentls--approval-armed-at nil))
              ((and this-command        ; nil: no command ran
                    (or (not (eq agentls--pre-command-buffer buf))
                        (memq this-command '(agentls-show-approval agentls-reviews-open))))
               (setq agentls--approval-armed-at (float-time))))))
    ;; What the next command starts from (also when the command loop runs
    ;; this hook without a command, as at the start of a keyboard macro).
    (unless (minibufferp sel)
      (setq agentls--pre-command-buffer sel))))

(defun agentls--approval-deliberate-p ()
  "Whether an answer key may act now; when not, say why and return nil.
It may when the review window is selected, the person opened it
themselves, and no answer key was pressed there for
`agentls-approval-guard-time' seconds since it opened (a refused key
starts the guard again)."
  (let ((buf (get-buffer agentls-approval-buffer-name)))
    (if (not (and buf (eq (window-buffer (selected-window)) buf)))
        (progn (message "%s" (substitute-command-keys
                              "agentls: answer a review in its window: \
\\[agentls-show-approval] takes you there"))
               nil)
      (with-current-buffer buf
        (let ((armed agentls--approval-armed-at)
              (now (float-time)))
          (cond
           ((null armed)
            (message "%s" (substitute-command-keys
                           "agentls: this review window was not opened by you: \
\\[agentls-show-approval] (or leave it and come back), then answer"))
            nil)
           ((< (- now armed) agentls-approval-guard-time)
            (setq agentls--approval-armed-at now)
            (message "agentls: the review just opened; keys answer after %s s without a key"
                     agentls-approval-guard-time)
            nil)
           (t t)))))))

(defun agentls--approval-confirm (prompt)
  "Ask PROMPT, to be answered with the full word yes (never a single key)."
  (let ((use-short-answers nil))
    (yes-or-no-p (substitute-command-keys prompt))))

(cl-defmethod eglot-handle-request
  ((server agentls-server) (_method (eql 'approval/request))
   &rest params &key callId tool risk warning agent &allow-other-keys)
  "Queue the review, show it without selecting it, and answer later."
  (let* ((deferred (agentls--make-deferred :method "approval/request"))
         (a (make-agentls--approval :server server :deferred deferred :params params
                                    :deadline (agentls--approval-deadline-from params))))
    (setq agentls--pending-approvals (append agentls--pending-approvals (list a)))
    (when-let ((d (agentls--approval-deadline a)))
      (run-at-time (max 0 (- d (float-time))) nil #'agentls--approval-expire a))
    (agentls--log server "%s %s asks for approval%s%s%s" tool callId
                  (if (stringp agent) (format " (agent %s)" agent) "")
                  (if risk (format ", risk %s" risk) "")
                  (if (and (stringp warning) (not (string-empty-p warning)))
                      (format ": WARNING: %s" warning) ""))
    (agentls--install-approval-hooks)
    (condition-case err
        (agentls--approval-refresh 'arrived)
      (error
       ;; Not shown: answer with an error now (the server rejects the call)
       ;; rather than leave a request nobody can see.
       (setq agentls--pending-approvals (delq a agentls--pending-approvals))
       (agentls--log server "could not show the approval of %s: %s" callId
                     (error-message-string err))
       (jsonrpc-error "agentls.el could not show the approval: %s"
                      (error-message-string err))))
    (let ((message-log-max message-log-max))
      (message "%s" (substitute-command-keys
                     (format "agentls: %s%s waits for your review below \
\(\\[agentls-show-approval])"
                             (if (stringp agent) (concat agent ": ") "") tool))))
    deferred))

(defvar-keymap agentls-approval-mode-map
  :doc "Keys of the review buffer."
  "y" #'agentls-approval-approve
  "n" #'agentls-approval-reject
  "a" #'agentls-approval-always
  "e" #'agentls-approval-edit-arguments
  "?" #'agentls-approval-help
  "q" #'agentls-approval-hide
  "l" #'agentls-list-reviews
  "C-c C-c" #'agentls-approval-approve
  "C-c C-k" #'agentls-approval-reject
  "TAB" #'diff-hunk-next
  "<backtab>" #'diff-hunk-prev
  "RET" #'diff-goto-source)

(define-derived-mode agentls-approval-mode diff-mode "agentls-review"
  "Review a tool call of the agent before it runs.
The window is never selected for you; its keys act once you moved there
yourself and `agentls-approval-guard-time' passed.
\\<agentls-approval-mode-map>
\\[agentls-approval-approve] approve (a dangerous call asks for yes),
\\[agentls-approval-reject] reject (with an optional message),
\\[agentls-approval-always] always (asks for yes; only when offered),
\\[agentls-approval-edit-arguments] approve with edited arguments,
\\[agentls-approval-help] more information,
\\[agentls-list-reviews] all waiting reviews,
\\[agentls-approval-hide] hide (the call keeps waiting)."
  (setq buffer-read-only t)
  ;; diff-mode's single-letter read-only keys (n = next hunk...) would hide
  ;; y/n/a: turn them off here (Emacs 30: `diff-mode-read-only'; 29:
  ;; `minor-mode-overriding-map-alist').
  (setq-local diff-mode-read-only nil)
  (setq-local minor-mode-overriding-map-alist
              (assq-delete-all 'buffer-read-only
                               (copy-sequence minor-mode-overriding-map-alist)))
  (setq-local header-line-format '(:eval (agentls--approval-header-line)))
  (setq-local mode-line-format
              '(" " mode-line-buffer-identification "  "
                (:eval (agentls--approval-mode-line-text)))))

(defun agentls--approval-header-line ()
  "Header line of the review window: who asks, the risk, the time left."
  (when-let ((a agentls--approval))
    (let* ((p (agentls--approval-params a))
           (risk (plist-get p :risk)))
      (concat " "
              (propertize (agentls--approval-time-text a) 'face 'bold)
              "  "
              (if (equal risk "dangerous")
                  (propertize "DANGEROUS" 'face 'agentls-approval-warning)
                (format "risk: %s" risk))
              "  "
              (format "%s wants to run %s"
                      (or (plist-get p :agent) "the agent") (plist-get p :tool))))))

(defun agentls--approval-mode-line-text ()
  "The review window's own mode line: place in the queue, whether keys act."
  (let* ((a agentls--approval)
         (n (length agentls--pending-approvals))
         (i (and a (cl-position a agentls--pending-approvals))))
    (concat
     (if i (format "review %d of %d" (1+ i) n) "no review")
     (cond ((not i) "")
           ((not (if (fboundp 'mode-line-window-selected-p)
                     (mode-line-window-selected-p) ; Emacs >= 29.1
                   (eq (window-buffer (selected-window)) (current-buffer))))
            "  · keys off: not selected")
           ((null agentls--approval-armed-at) "  · keys off: not opened by you")
           ((< (- (float-time) agentls--approval-armed-at) agentls-approval-guard-time)
            "  · keys on in a moment")
           (t "  · keys on")))))

(defun agentls--risk-text (risk)
  (pcase risk
    ("read" "read: shows the agent what it reads, changes nothing")
    ("write" "write: changes files in the workspace")
    ("execute" "execute: runs a program")
    ("network" "network: contacts the network")
    ("dangerous" "dangerous: may destroy data or cannot be undone")
    (_ (format "%s" risk))))

(defun agentls--approval-command-p (params)
  "Whether PARAMS ask to run a command (which has a working directory)."
  (or (plist-get params :cwd)
      (member (plist-get params :tool) '("shell_exec" "shell_background" "run_code"))))

(defun agentls--approval-cwd (a)
  "The directory A's command runs in, as text."
  (let* ((p (agentls--approval-params a))
         (cwd (plist-get p :cwd))
         (arg (plist-get (plist-get p :arguments) :cwd))
         (root (agentls--root (agentls--approval-server a))))
    (cond ((stringp cwd) cwd)
          ((stringp arg) (expand-file-name arg root))
          (t (directory-file-name root)))))

(defun agentls--approval-files (params)
  "Lines naming the files of an approval's PARAMS."
  (let* ((preview (plist-get params :preview))
         (files (append (plist-get preview :files) nil))
         (args (plist-get params :arguments)))
    (cond
     (files
      (mapcar (lambda (f)
                (concat (plist-get f :operation) " " (plist-get f :path)
                        (if (plist-get f :newPath) (concat " → " (plist-get f :newPath)) "")))
              files))
     ((cl-loop for k in '(:path :from :source)
               when (stringp (plist-get args k))
               collect (plist-get args k))))))

(defun agentls--approval-summary (a)
  "One line saying what A would do (for the list of reviews)."
  (let* ((p (agentls--approval-params a))
         (args (plist-get p :arguments)))
    (cond ((stringp (plist-get args :command)) (plist-get args :command))
          ((stringp (plist-get args :code)) (car (split-string (plist-get args :code) "\n")))
          ((agentls--approval-files p) (string-join (agentls--approval-files p) ", "))
          (t (agentls--truncate (agentls--json args) 60)))))

(defun agentls--approval-offers-p (a decision)
  "Whether approval A offers DECISION: exactly the request's options.
A request without options offers approve and reject."
  (let ((options (append (plist-get (agentls--approval-params a) :options) nil)))
    (if options (member decision options)
      (member decision '("approve" "reject")))))

(defun agentls--approval-always-label (a)
  "What \"always\" covers for A, in words (the server's alwaysLabel)."
  (let* ((p (agentls--approval-params a))
         (label (plist-get p :alwaysLabel)))
    (if (and (stringp label) (not (string-empty-p label))) label
      (format "always approve %s" (plist-get p :tool)))))

(defun agentls--approval-dangerous-p (a)
  (equal (plist-get (agentls--approval-params a) :risk) "dangerous"))

(defun agentls--key (command)
  "The key of COMMAND in the review buffer, as text."
  (substitute-command-keys (format "\\<agentls-approval-mode-map>\\[%s]" command)))

(defun agentls--approval-legend (a)
  "The key legend of A: lines that fit an 80-column window."
  (let* ((approve (agentls--approval-offers-p a "approve"))
         (danger (agentls--approval-dangerous-p a))
         (line1 (string-join
                 (delq nil
                       (list (and approve
                                  (concat (agentls--key 'agentls-approval-approve)
                                          (if danger " approve (asks yes)" " approve")))
                             (and (agentls--approval-offers-p a "reject")
                                  (concat (agentls--key 'agentls-approval-reject) " reject"))
                             (and approve
                                  (concat (agentls--key 'agentls-approval-edit-arguments)
                                          " edit args"))
                             (concat (agentls--key 'agentls-approval-help) " details")
                             (concat (agentls--key 'agentls-list-reviews) " list")
                             (concat (agentls--key 'agentls-approval-hide) " hide")))
                 "   ")))
    (concat line1 "\n"
            (if (agentls--approval-offers-p a "always")
                (concat (agentls--truncate
                         (concat (agentls--key 'agentls-approval-always) " "
                                 (agentls--approval-always-label a))
                         64)
                        " (asks yes)\n")
              ""))))

(defun agentls--face-overlay (beg end face)
  "Show BEG..END with FACE through an overlay (font-lock leaves overlays alone)."
  (let ((ov (make-overlay beg end nil t nil)))
    (overlay-put ov 'face face)
    (overlay-put ov 'priority 1000)
    (overlay-put ov 'agentls t)
    ov))

(defun agentls--insert-face (text face)
  (let ((beg (point)))
    (insert text)
    (agentls--face-overlay beg (point) face)))

(defun agentls--approval-render (a)
  "Fill the current buffer with approval A."
  (let* ((inhibit-read-only t)
         (p (agentls--approval-params a))
         (tool (plist-get p :tool))
         (agent (plist-get p :agent))
         (risk (plist-get p :risk))
         (preview (plist-get p :preview))
         (diff (plist-get preview :unifiedDiff))
         (label (lambda (s) (agentls--insert-face (format "%-9s" s) 'agentls-approval-label)))
         (indent (make-string 9 ?\s)))
    (remove-overlays (point-min) (point-max) 'agentls t)
    (erase-buffer)
    (setq agentls--approval a
          default-directory (agentls--root (agentls--approval-server a)))
    (agentls--insert-face (format "%s wants to run %s"
                                  (if (stringp agent) agent "The agent") tool)
                          'bold)
    (insert "\n\n")
    (funcall label "Tool:")
    (insert tool (format "   (call %s)" (plist-get p :callId)) "\n")
    (when (stringp agent)
      (funcall label "Agent:")
      (insert agent "\n"))
    (let ((files (agentls--approval-files p)))
      (when files
        (funcall label "File:")
        (insert (car files) "\n")
        (dolist (f (cdr files)) (insert indent f "\n"))))
    (when (agentls--approval-command-p p)
      (funcall label "Dir:")
      (insert (agentls--approval-cwd a) "\n"))
    (funcall label "Context:")
    (insert "reason: " (let ((r (plist-get p :reason)))
                         (if (and (stringp r) (not (string-empty-p r))) r "(none given)"))
            "\n")
    (insert indent "risk: ")
    (agentls--insert-face (agentls--risk-text risk)
                          (if (equal risk "dangerous") 'agentls-approval-warning
                            'agentls-approval-risk))
    (insert "\n")
    (let ((w (plist-get p :warning)))
      (when (and (stringp w) (not (string-empty-p w)))
        (insert indent)
        (agentls--insert-face (concat "WARNING: " w) 'agentls-approval-warning)
        (insert "\n")))
    (insert indent
            (let ((d (agentls--approval-deadline a)))
              (if d (format-time-string "rejected by itself at %H:%M:%S (header line: time left)"
                                        (seconds-to-time d))
                "the server rejects it after its approval.timeoutSeconds"))
            "\n\n")
    (insert (agentls--approval-legend a) "\n")
    (if (and (stringp diff) (not (string-empty-p diff)))
        (insert diff (if (string-suffix-p "\n" diff) "" "\n"))
      (agentls--insert-face "Arguments:" 'agentls-approval-label)
      (insert "\n" (agentls--json-pretty (plist-get p :arguments)) "\n"))
    (goto-char (point-min))
    (when (and (stringp diff) (re-search-forward "^@@" nil t))
      (goto-char (match-beginning 0)))
    (set-buffer-modified-p nil)))

(defun agentls--approval-to-show ()
  "The review the review buffer shows: the one chosen in the list, else the oldest."
  (if (memq agentls--approval-chosen agentls--pending-approvals)
      agentls--approval-chosen
    (car agentls--pending-approvals)))

(defun agentls--approval-refresh (&optional display)
  "Show the right review in the review buffer; hide it when none waits.
DISPLAY non-nil: also show the buffer in a window (never selected here):
`arrived' when a request just came in."
  (let ((buf (get-buffer agentls-approval-buffer-name))
        (a (agentls--approval-to-show)))
    (cond
     (a
      (setq buf (agentls--mode-buffer agentls-approval-buffer-name #'agentls-approval-mode))
      (with-current-buffer buf
        (unless (eq agentls--approval a)
          (agentls--approval-render a)
          ;; A new review in an open window: its guard starts again.
          (when agentls--approval-armed-at
            (setq agentls--approval-armed-at (float-time))))
        (when (eq display 'arrived) (run-hooks 'agentls-approval-hook)))
      (when (and display (not (get-buffer-window buf t)))
        (let ((win (display-buffer buf agentls-approval-display-action)))
          (when win
            (set-window-dedicated-p win t)
            (set-window-parameter win 'no-delete-other-windows t)))))
     ((buffer-live-p buf)
      (with-current-buffer buf
        (let ((inhibit-read-only t))
          (setq agentls--approval nil agentls--approval-armed-at nil)
          (remove-overlays (point-min) (point-max) 'agentls t)
          (erase-buffer)
          (insert "No tool call waits for approval.\n")))
      (dolist (w (get-buffer-window-list buf nil t))
        (quit-window nil w))))
    (agentls--reviews-refresh)
    (force-mode-line-update t)))

(defun agentls-show-approval ()
  "Show the review window and go there to answer it.
Its keys act after `agentls-approval-guard-time' seconds without a key."
  (interactive)
  (if (not agentls--pending-approvals)
      (message "agentls: no tool call waits for approval")
    (agentls--approval-refresh t)
    (let ((win (get-buffer-window agentls-approval-buffer-name t)))
      (when win
        (select-frame-set-input-focus (window-frame win))
        (select-window win)))))

(defun agentls--approval-current ()
  (or (and (derived-mode-p 'agentls-approval-mode) agentls--approval
           (memq agentls--approval agentls--pending-approvals)
           agentls--approval)
      (agentls--approval-to-show)
      (user-error "agentls: no tool call waits for approval")))

(defun agentls--approval-answer (decision &optional message approval modified)
  "Answer APPROVAL (default: the one shown) with DECISION and MESSAGE.
MODIFIED: arguments the person edited (sent as modifiedArguments)."
  (let* ((a (or approval (agentls--approval-current)))
         (server (agentls--approval-server a))
         (p (agentls--approval-params a)))
    (unless (memq a agentls--pending-approvals)
      (user-error "agentls: this call does not wait any more"))
    (unless (agentls--approval-offers-p a decision)
      (user-error "agentls: the server does not offer \"%s\" for this call" decision))
    (setq agentls--pending-approvals (delq a agentls--pending-approvals))
    ;; The person may have typed while the call waited: the server must
    ;; see it before it applies anything (it checks for staleness).
    (agentls--flush-all server)
    (agentls--deferred-reply
     server (agentls--approval-deferred a)
     (append (list :decision decision)
             (and message (not (string-empty-p message)) (list :message message))
             (and modified (list :modifiedArguments modified))))
    (agentls--log server "%s %s: %s%s%s" (plist-get p :tool) (plist-get p :callId) decision
                  (if modified (format " with arguments %s" (agentls--json modified)) "")
                  (if (and message (not (string-empty-p message))) (format " (%s)" message) ""))
    (message "agentls: %s %s" (plist-get p :tool)
             (pcase decision ("approve" "approved") ("reject" "rejected")
                    ("always" (format "approved (%s)" (agentls--approval-always-label a)))))
    (when-let ((info (get-buffer "*agentls approval info*")))
      (dolist (w (get-buffer-window-list info nil t)) (quit-window nil w)))
    (agentls--approval-refresh)
    (agentls--maybe-leave-recursive-edit)))

(defun agentls--approval-expire (a)
  "The deadline of A passed without an answer: close its review, say it expired.
No answer is sent: the server rejects the call by itself then and
withdraws its request (docs/protocol.md, \"Approval\")."
  (when (memq a agentls--pending-approvals)
    (let ((server (agentls--approval-server a))
          (p (agentls--approval-params a)))
      (setq agentls--pending-approvals (delq a agentls--pending-approvals))
      (agentls--log server "%s %s: expired, no answer before the deadline: rejected by itself"
                    (plist-get p :tool) (plist-get p :callId))
      (message "agentls: the review of %s%s expired: no answer in time, the call is rejected"
               (plist-get p :tool)
               (let ((agent (plist-get p :agent))) (if (stringp agent) (concat " by " agent) "")))
      (agentls--approval-refresh)
      (agentls--maybe-leave-recursive-edit t))))

(defun agentls--maybe-leave-recursive-edit (&optional later)
  "Leave the recursive edit of `agentls-call' when no approval is left.
LATER: from a timer (for callers that are not commands)."
  (when (and agentls--approval-edit-depth (null agentls--pending-approvals))
    (if later
        (run-at-time 0 nil #'agentls--maybe-leave-recursive-edit)
      (when (= (recursion-depth) agentls--approval-edit-depth)
        (exit-recursive-edit)))))

(defun agentls--approval-confirm-approve (a)
  "For a dangerous A, ask for yes; else t."
  (or (not (agentls--approval-dangerous-p a))
      (agentls--approval-confirm
       (format "agentls: approve a DANGEROUS call (%s)? "
               (agentls--truncate (agentls--approval-summary a) 50)))))

(defun agentls-approval-approve ()
  "Approve the tool call shown.
Typed: only in the review window you opened (see
`agentls-approval-guard-time'); a dangerous call asks for yes too."
  (interactive)
  (let ((a (agentls--approval-current)))
    (when (or (not (called-interactively-p 'any))
              (and (agentls--approval-deliberate-p)
                   (agentls--approval-offers-p a "approve")
                   (agentls--approval-confirm-approve a)))
      (agentls--approval-answer "approve" nil a))))

(defun agentls-approval-reject (&optional message)
  "Reject the tool call shown, with an optional MESSAGE for the agent.
Typed: only in the review window you opened; the message is read then."
  (interactive (list 'ask))
  (if (not (eq message 'ask))
      (agentls--approval-answer "reject" message)
    (let ((a (agentls--approval-current)))
      (when (agentls--approval-deliberate-p)
        (agentls--approval-answer
         "reject" (read-string "Reject; message for the agent (optional): ") a)))))

(defun agentls-approval-always ()
  "Approve the tool call shown and remember it (what the server's label says).
Typed: only in the review window you opened, and after you confirm with
yes: it cannot be taken back here (`agentls-list-rules' revokes it)."
  (interactive)
  (let ((a (agentls--approval-current)))
    (if (not (called-interactively-p 'any))
        (agentls--approval-answer "always" nil a)
      (cond
       ((not (agentls--approval-offers-p a "always"))
        (message "agentls: \"always\" is not offered for this call"))
       ((agentls--approval-deliberate-p)
        (when (agentls--approval-confirm
               (format "agentls: %s, from now on, without asking? "
                       (agentls--approval-always-label a)))
          (agentls--approval-answer "always" nil a)))))))

(defun agentls-approval-edit-arguments (arguments)
  "Approve the call shown with edited ARGUMENTS (JSON text).
The server validates them again before the call runs.  Typed: only in
the review window you opened; a dangerous call asks for yes too."
  (interactive (list 'ask))
  (let ((a (agentls--approval-current)))
    (if (not (eq arguments 'ask))
        (agentls--approval-answer "approve" nil a (agentls--parse-arguments arguments))
      (when (agentls--approval-deliberate-p)
        (let* ((args (plist-get (agentls--approval-params a) :arguments))
               (text (read-from-minibuffer "Approve with these arguments (JSON): "
                                           (agentls--json (or args (make-hash-table)))))
               (parsed (agentls--parse-arguments text)))
          (when (agentls--approval-confirm-approve a)
            (agentls--approval-answer "approve" nil a parsed)))))))

(defun agentls-approval-hide ()
  "Hide the review window; the calls keep waiting (see the mode line)."
  (interactive)
  (quit-window))

(defun agentls-approval-help ()
  "Show everything about the tool call shown, and the keys."
  (interactive)
  (let* ((a (agentls--approval-current))
         (p (agentls--approval-params a))
         (server (agentls--approval-server a))
         (tool (plist-get p :tool))
         (def (cl-find tool (agentls--tools-cache server)
                       :key (lambda (d) (plist-get d :name)) :test #'equal)))
    (with-help-window (get-buffer-create "*agentls approval info*")
      (princ (format "Call:      %s\nTool:      %s%s\n" (plist-get p :callId) tool
                     (if def (format " — %s" (plist-get def :title)) "")))
      (when def (princ (format "           %s\n" (plist-get def :description))))
      (when (plist-get p :agent) (princ (format "Agent:     %s\n" (plist-get p :agent))))
      (when (agentls--approval-command-p p)
        (princ (format "Directory: %s\n" (agentls--approval-cwd a))))
      (princ (format "Risk:      %s\n" (agentls--risk-text (plist-get p :risk))))
      (when (plist-get p :warning) (princ (format "Warning:   %s\n" (plist-get p :warning))))
      (princ (format "Reason:    %s\n" (or (plist-get p :reason) "(none given)")))
      (princ (format "Time:      %s\n" (agentls--approval-time-text a)))
      (princ (format "Options:   %s\n"
                     (mapconcat (lambda (o) (if (equal o "always")
                                                (agentls--approval-always-label a) o))
                                (cl-remove-if-not (lambda (o) (agentls--approval-offers-p a o))
                                                  '("approve" "reject" "always"))
                                ", ")))
      (princ (format "Project:   %s\n\nArguments:\n%s\n" (agentls--root server)
                     (agentls--json-pretty (plist-get p :arguments))))
      (dolist (f (append (plist-get (plist-get p :preview) :files) nil))
        (princ (format "File:      %s %s%s\n" (plist-get f :operation) (plist-get f :path)
                       (if (plist-get f :uri) (format " (%s)" (plist-get f :uri)) ""))))
      (princ (substitute-command-keys
              (format "\nThe review window is never selected for you: keys typed elsewhere
stay in your buffer.  Its keys act once you moved there yourself
\(\\[other-window], a click, \\[agentls-show-approval]) and %s s passed
without a key there; a key pressed earlier starts that wait again.

Keys in the review buffer:
  \\<agentls-approval-mode-map>\\[agentls-approval-approve]  approve: the call runs (an edit lands in your buffers and is saved
     when the buffer had no unsaved changes); a dangerous call asks for yes
  \\[agentls-approval-reject]  reject: the agent gets status \"rejected\" and your message
  \\[agentls-approval-always]  always (when offered): approve and remember what the label says;
     asks for yes; \\[agentls-list-rules] lists and revokes remembered answers
  \\[agentls-approval-edit-arguments]  approve with edited arguments (JSON; the server checks them again)
  \\[agentls-list-reviews]  every waiting review; RET opens one
  \\[agentls-approval-hide]  hide: the call keeps waiting; \\[agentls-show-approval] shows it again
A call nobody answers is rejected by the server by itself (the time
left is in the header line).\n" agentls-approval-guard-time))))))


;;; The list of waiting reviews

(defvar-keymap agentls-reviews-mode-map
  :doc "Keys of the list of waiting reviews."
  "RET" #'agentls-reviews-open)

(define-derived-mode agentls-reviews-mode tabulated-list-mode "agentls-reviews"
  "The tool calls that wait for your review.
\\<agentls-reviews-mode-map>\\[agentls-reviews-open] opens one in the review window (and goes there)."
  (setq tabulated-list-format
        [("#" 3 nil :right-align t) ("Tool" 12 t) ("Agent" 9 t) ("Risk" 9 t)
         ("Left" 5 nil :right-align t) ("What" 0 nil)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook #'agentls--reviews-entries nil t)
  (tabulated-list-init-header))

(defun agentls--reviews-entries ()
  (setq tabulated-list-entries
        (cl-loop for a in agentls--pending-approvals
                 for i from 1
                 collect (let ((p (agentls--approval-params a)))
                           (list a (vector (number-to-string i)
                                           (or (plist-get p :tool) "?")
                                           (let ((ag (plist-get p :agent)))
                                             (if (stringp ag) ag "-"))
                                           (let ((r (format "%s" (plist-get p :risk))))
                                             (if (equal r "dangerous")
                                                 (propertize r 'face 'agentls-approval-warning)
                                               r))
                                           (agentls--approval-time-text a t)
                                           (agentls--approval-summary a)))))))

(defun agentls--reviews-refresh ()
  "Update the list of reviews, when it exists."
  (when-let ((buf (get-buffer agentls-reviews-buffer-name)))
    (with-current-buffer buf
      (agentls--reviews-entries)
      (tabulated-list-print t))))

(defun agentls-list-reviews ()
  "List the tool calls that wait for your review; RET opens one."
  (interactive)
  (let ((buf (agentls--mode-buffer agentls-reviews-buffer-name #'agentls-reviews-mode)))
    (with-current-buffer buf
      (agentls--reviews-entries)
      (tabulated-list-print t))
    (pop-to-buffer buf)
    (unless agentls--pending-approvals
      (message "agentls: no tool call waits for review"))
    buf))

(defun agentls-reviews-open ()
  "Open the review at point in the review window and go there."
  (interactive)
  (let ((a (tabulated-list-get-id)))
    (unless (and a (memq a agentls--pending-approvals))
      (user-error "agentls: no waiting review on this line"))
    (setq agentls--approval-chosen a)
    (agentls--approval-refresh t)
    (let ((win (get-buffer-window agentls-approval-buffer-name t)))
      (when win (select-window win)))))


(provide 'agentls-review)
;;; agentls-review.el ends here
