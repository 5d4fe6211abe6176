;;; agentls-test.el --- ERT tests of agentls.el against the real server  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run by editors/emacs/test/run.sh:
;;   AGENTLS_BIN=/path/to/agentls emacs --batch -Q -L editors/emacs \
;;     -l editors/emacs/test/agentls-test.el -f ert-run-tests-batch-and-exit
;;
;; Every test starts the real agentls binary on a fresh temporary
;; workspace.  The approval UI is driven the way a person would: the
;; commands bound to y / n / a in the *agentls approval* buffer.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'agentls)

(defvar agentls-test-bin (or (getenv "AGENTLS_BIN") "agentls"))

(defvar agentls-test--approvals-seen 0
  "Approval requests that reached the UI (counted through `agentls-approval-hook').")
(add-hook 'agentls-approval-hook (lambda () (cl-incf agentls-test--approvals-seen)))

;; In batch mode a prompt whose answer was not typed (the keyboard macro
;; ran out, or none runs) reads stdin, and yes-or-no-p asks again forever:
;; make that an error, so that a test that answers too little fails
;; instead of hanging.  (The prompt itself is Emacs' own.)
(define-advice yes-or-no-p (:before (&rest _) agentls-test-no-stdin)
  (when (and noninteractive
             (or (not executing-kbd-macro)
                 (>= executing-kbd-macro-index (length executing-kbd-macro))))
    (error "agentls-test: a yes-or-no prompt nobody typed an answer for")))

(defun agentls-test--wait (pred what &optional timeout)
  "Process events until PRED is non-nil; fail naming WHAT after TIMEOUT s."
  (let ((deadline (+ (float-time) (or timeout 15))))
    (while (not (funcall pred))
      (when (> (float-time) deadline)
        (ert-fail (format "timed out waiting for %s" what)))
      (accept-process-output nil 0.05))))

(defun agentls-test--file (ws name)
  (with-temp-buffer
    (insert-file-contents (expand-file-name name ws))
    (buffer-string)))

(defmacro agentls-test--with-workspace (files &rest body)
  "Run BODY with `ws' bound to a new workspace holding FILES ((NAME . TEXT)...)."
  (declare (indent 1) (debug t))
  `(let* ((ws (file-name-as-directory (file-truename (make-temp-file "agentls-ws-" t))))
          (default-directory ws)
          (agentls-server-program agentls-test-bin)
          (agentls-approval-guard-time 0.2)
          (project-find-functions nil))
     (dolist (f ,files)
       (make-directory (file-name-directory (expand-file-name (car f) ws)) t)
       (with-temp-file (expand-file-name (car f) ws) (insert (cdr f))))
     (unwind-protect
         (progn ,@body)
       (agentls-shutdown-all)
       (dolist (buf (buffer-list))
         (let ((f (buffer-file-name buf)))
           (when (and f (string-prefix-p ws (file-truename f)))
             (with-current-buffer buf (set-buffer-modified-p nil))
             (kill-buffer buf))))
       (setq agentls--pending-approvals nil agentls--approval-chosen nil)
       (dolist (name (list agentls-approval-buffer-name agentls-reviews-buffer-name
                           agentls-rules-buffer-name))
         (when (get-buffer name) (kill-buffer name)))
       (delete-other-windows)
       (delete-directory ws t))))

(defun agentls-test--approval-buffer-text ()
  (with-current-buffer agentls-approval-buffer-name
    (buffer-substring-no-properties (point-min) (point-max))))

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

(defun agentls-test--edit-async (path old new)
  "Start edit_file on PATH as an agent front-end would; return a result box."
  (let ((box (list nil)))
    (agentls-call-async "edit_file" (list :path path :old_string old :new_string new)
                        (lambda (r) (setcar box r))
                        :reason "the test asks for it")
    box))


;;; Tests

(ert-deftest agentls-test-tool-list ()
  "tool/list returns the server's tools, the edit tools among them."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((tools (agentls-list-tools))
           (names (mapcar (lambda (d) (plist-get d :name)) tools)))
      (should (member "read_file" names))
      (should (member "edit_file" names))
      (should (member "write_file" names))
      (let ((rf (cl-find "read_file" tools :key (lambda (d) (plist-get d :name)) :test #'equal)))
        (should (plist-get rf :inputSchema))
        (should (equal (plist-get (plist-get rf :annotations) :approval) "auto")))
      ;; The connection is agentls' own, one per project, and says what
      ;; the client implements.
      (let ((server (agentls--server nil t)))
        (should (agentls-server-p server))
        (should (equal (agentls--root server) ws))
        (should (eq server (agentls--server)))
        (let ((caps (eglot-client-capabilities server)))
          (should (equal (plist-get (plist-get caps :experimental) :agentls)
                         '(:approvalRequest t :saveAfterApply t :nativePreview :json-false))))
        (should (equal (plist-get (agentls--server-info server) :name) "agentls"))))))

(ert-deftest agentls-test-missing-binary ()
  "A missing binary is a clear user-error naming the setting; ~ is expanded."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((agentls-server-program "/nonexistent/agentls")
           (err (should-error (agentls-list-tools) :type 'user-error)))
      (should (string-match-p "agentls-server-program" (cadr err))))
    (let* ((agentls-server-program "no-such-agentls-program")
           (err (should-error (agentls-list-tools) :type 'user-error)))
      (should (string-match-p "not found on `exec-path'" (cadr err))))
    (let* ((process-environment (cons (concat "HOME=" ws) process-environment))
           (agentls-server-program "~/bin/agentls"))
      (make-directory (expand-file-name "bin" ws))
      (copy-file agentls-test-bin (expand-file-name "bin/agentls" ws))
      (should (equal (car (agentls--program)) (expand-file-name "bin/agentls" ws)))
      (should (member "read_file" (mapcar (lambda (d) (plist-get d :name)) (agentls-list-tools)))))))

(ert-deftest agentls-test-read-unsaved-buffer ()
  "read_file returns the unsaved buffer text (didOpen + incremental didChange)."
  (agentls-test--with-workspace '(("a.txt" . "one\ntwo\nthree\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "a.txt" ws))
      ;; Opened before the connection exists: synced when it starts.
      (goto-char (point-min))
      (forward-line 1)
      (insert "inserted é 中 😀 line\n")
      (goto-char (point-max))
      (insert "tail 😀x")
      (search-backward "two")
      (delete-char 3)
      (insert "TWO")
      (should (buffer-modified-p))
      (let ((r (agentls-call "read_file" '(:path "a.txt")))
            (case-fold-search nil))
        (should (equal (plist-get r :status) "success"))
        (should (eq (plist-get (plist-get r :structured) :from_buffer) t))
        (should (string-match-p "inserted é 中 😀 line" (plist-get r :content)))
        (should (string-match-p "TWO" (plist-get r :content)))
        (should (string-match-p "tail 😀x" (plist-get r :content)))
        (should-not (string-match-p "two" (plist-get r :content))))
      ;; The disk still has the old text.
      (should (equal (agentls-test--file ws "a.txt") "one\ntwo\nthree\n"))
      ;; A later change after the first sync, in the middle of a
      ;; non-ASCII line (UTF-16 columns).
      (goto-char (point-min))
      (search-forward "😀")
      (insert "!")
      (let ((r (agentls-call "read_file" '(:path "a.txt"))))
        (should (string-match-p "inserted é 中 😀! line" (plist-get r :content)))))
    ;; A file visited after the connection started is synced too.
    (with-temp-file (expand-file-name "b.txt" ws) (insert "disk\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "b.txt" ws))
      (erase-buffer)
      (insert "buffer\n")
      (let ((r (agentls-call "read_file" '(:path "b.txt"))))
        (should (string-match-p "buffer" (plist-get r :content)))
        (should-not (string-match-p "disk" (plist-get r :content))))
      ;; Closing the buffer returns the server to the disk.
      (set-buffer-modified-p nil)
      (kill-buffer))
    (let ((r (agentls-call "read_file" '(:path "b.txt"))))
      (should (string-match-p "disk" (plist-get r :content))))))

(ert-deftest agentls-test-non-ascii-file-names ()
  "File names with spaces, non-ASCII and URI-special characters map to the right buffer."
  (agentls-test--with-workspace '(("dir with space/é 中#%.txt" . "disk text\n"))
    (let ((buf (find-file-noselect (expand-file-name "dir with space/é 中#%.txt" ws)))
          (seen agentls-test--approvals-seen))
      (with-current-buffer buf (goto-char (point-max)) (insert "buffer text\n"))
      (let ((r (agentls-call "read_file" '(:path "dir with space/é 中#%.txt"))))
        (should (equal (plist-get r :status) "success"))
        (should (string-match-p "buffer text" (plist-get r :content))))
      (let ((box (agentls-test--edit-async "dir with space/é 中#%.txt" "disk" "DISK")))
        (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
        (agentls-test--press "y")
        (agentls-test--wait (lambda () (car box)) "the tool result")
        (should (equal (plist-get (car box) :status) "success")))
      (with-current-buffer buf
        (should (equal (buffer-string) "DISK text\nbuffer text\n"))))))

(defun agentls-test--content-text (content)
  "The file text in read_file's CONTENT (lines prefixed by their number and a tab)."
  (mapconcat (lambda (l) (replace-regexp-in-string "\\`\\s-*[0-9]+\t" "" l))
             (split-string (string-remove-suffix "\n" content) "\n")
             "\n"))

(ert-deftest agentls-test-sync-random-edits ()
  "Hundreds of random edits (non-ASCII, newlines, deletions) stay in sync."
  (agentls-test--with-workspace '(("r.txt" . "start\n"))
    (agentls--server)                   ; connected first: every change is incremental
    (with-current-buffer (find-file-noselect (expand-file-name "r.txt" ws))
      (should agentls--buffer-server)
      (random "agentls")
      (let ((pieces ["a" "é" "中" "😀" "\n" "xy\nz" "😀😀\n" " " "\t"]))
        (dotimes (i 300)
          (let ((pos (1+ (random (1+ (buffer-size))))))
            (goto-char pos)
            (if (and (> (buffer-size) 10) (zerop (random 3)))
                (delete-region pos (min (point-max) (+ pos (random 4))))
              (insert (aref pieces (random (length pieces))))))
          (when (zerop (% i 50))
            ;; Sometimes the changes are sent in between.
            (agentls--flush-all))))
      (let* ((r (agentls-call "read_file" '(:path "r.txt")))
             (text (string-remove-suffix "\n" (buffer-string))))
        (should (equal (plist-get r :status) "success"))
        (should (equal (agentls-test--content-text (plist-get r :content)) text))
        (should-not agentls--full-sync)
        (should (> agentls--buffer-version 5))))))

(ert-deftest agentls-test-random-edits-land-exactly ()
  "Random edit_file calls on text with é 中 😀 and CR-less newlines land exactly
\(the server's minimal UTF-16 TextEdits applied by the client)."
  (agentls-test--with-workspace '(("r.txt" . "seed\n"))
    (random "agentls-edits")
    (let* ((pieces ["a" "b" "é" "中" "😀" "\n" " " "xy" "😀😀"])
           (gen (lambda (n) (apply #'concat (cl-loop repeat n collect
                                                      (aref pieces (random (length pieces)))))))
           (text (concat (funcall gen 200) "\n"))
           (buf (find-file-noselect (expand-file-name "r.txt" ws)))
           (seen agentls-test--approvals-seen)
           (first t)
           (edits 0))
      (with-current-buffer buf (erase-buffer) (insert text) (save-buffer))
      (dotimes (_ 15)
        ;; A unique old_string: grow a random slice until it occurs once.
        (let* ((start (random (- (length text) 10)))
               (end (+ start 1 (random 6)))
               old)
          (while (and (< end (length text))
                      (let ((o (substring text start end)) (c 0) (p 0))
                        (while (setq p (string-search o text p)) (cl-incf c) (cl-incf p))
                        (> c 1)))
            (setq end (1+ end)))
          (setq old (substring text start end))
          (let ((count 0) (pos 0))
            (while (setq pos (string-search old text pos)) (cl-incf count) (cl-incf pos))
            (when (= count 1)
              (let* ((new (funcall gen (random 8)))
                     (box (list nil)))
                (agentls-call-async "edit_file" (list :path "r.txt" :old_string old :new_string new)
                                    (lambda (r) (setcar box r)))
                (when first
                  (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval")
                  (agentls-test--press "a yes RET")
                  (setq first nil))
                (agentls-test--wait (lambda () (car box)) "the result")
                (should (equal (plist-get (car box) :status) "success"))
                (setq text (concat (substring text 0 start) new (substring text end)))
                (cl-incf edits)
                (should (equal (with-current-buffer buf (buffer-string)) text)))))))
      (should (> edits 10))
      (should (equal (agentls-test--file ws "r.txt") text)))))

(ert-deftest agentls-test-edit-approve ()
  "The agent edits a file: the approval buffer shows the diff; y applies and saves."
  (agentls-test--with-workspace '(("src/hello.txt" . "hello world\nsecond line\n"))
    (let* ((file (expand-file-name "src/hello.txt" ws))
           (buf (find-file-noselect file))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "src/hello.txt" "hello world" "goodbye world")))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      ;; The approval UI.
      (should (= (agentls-pending-approvals) 1))
      (should (string-match-p "agentls: 1 review\\'" (format "%s" (agentls--mode-line))))
      (let ((text (agentls-test--approval-buffer-text)))
        (should (string-match-p "^Tool: +edit_file" text))
        (should (string-match-p "^File: +modify src/hello.txt" text))
        (should (string-match-p "^Context: +reason: the test asks for it" text))
        (should (string-match-p "risk: write" text))
        (should (string-match-p "^-hello world$" text))
        (should (string-match-p "^\\+goodbye world$" text))
        (should (string-match-p "y approve +n reject" text)))
      (with-current-buffer agentls-approval-buffer-name
        (should (derived-mode-p 'diff-mode))
        (should (eq (key-binding "y") #'agentls-approval-approve))
        (should (eq (key-binding "n") #'agentls-approval-reject))
        (should (eq (key-binding "a") #'agentls-approval-always))
        (should (eq (key-binding "?") #'agentls-approval-help))
        ;; ? shows more information without answering.
        (agentls-test--press "?")
        (should (= (agentls-pending-approvals) 1))
        (with-current-buffer "*agentls approval info*"
          (should (string-match-p "\"old_string\": \"hello world\"" (buffer-string)))))
      ;; Not answered yet: Emacs was free all along, nothing changed.
      (should-not (car box))
      (should (equal (with-current-buffer buf (buffer-string)) "hello world\nsecond line\n"))
      (agentls-test--press "y")
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (let ((r (car box)))
        (should (equal (plist-get r :status) "success"))
        (should (equal (plist-get r :approvedBy) "user"))
        (let ((st (plist-get r :structured)))
          (should (equal (plist-get st :applied_by) "editor"))
          (should (equal (plist-get st :landed) "all"))
          (should (equal (plist-get st :unsaved) []))))
      (should (= (agentls-pending-approvals) 0))
      (with-current-buffer buf
        (should (equal (buffer-string) "goodbye world\nsecond line\n"))
        (should-not (buffer-modified-p)))
      (should (equal (agentls-test--file ws "src/hello.txt") "goodbye world\nsecond line\n"))
      ;; The log shows the tool events.
      (with-current-buffer (agentls-show-log)
        (should (string-match-p "edit_file tc_[0-9a-f]+ awaitingApproval" (buffer-string)))
        (should (string-match-p "edit_file tc_[0-9a-f]+ result success" (buffer-string)))
        (should (string-match-p "fileChanged modify src/hello.txt" (buffer-string)))))))

(ert-deftest agentls-test-edit-approve-synchronous ()
  "agentls-call (synchronous) waits while a timer plays the person pressing y.
Also: a file not open in Emacs is edited through a buffer, saved, closed."
  (agentls-test--with-workspace '(("notes.md" . "# Title\n\nbody\n"))
    (let* ((timer (run-with-timer
                   0.1 0.1
                   (lambda ()
                     (when (and agentls--pending-approvals
                                (get-buffer agentls-approval-buffer-name))
                       (agentls-test--press "y")))))
           (r (unwind-protect
                  (agentls-call "edit_file" '(:path "notes.md" :old_string "body" :new_string "new body")
                                :timeout 20)
                (cancel-timer timer))))
      (should (equal (plist-get r :status) "success"))
      (should (equal (plist-get (plist-get r :structured) :landed) "all"))
      (should (equal (plist-get (plist-get r :structured) :unsaved) []))
      (should (equal (agentls-test--file ws "notes.md") "# Title\n\nnew body\n"))
      ;; The buffer opened only for the edit stays, saved, so that the
      ;; person can look at the change and undo it.
      (let ((buf (find-buffer-visiting (expand-file-name "notes.md" ws))))
        (should buf)
        (with-current-buffer buf
          (should-not (buffer-modified-p))
          (should (equal (buffer-string) "# Title\n\nnew body\n"))
          (undo-boundary)
          (let ((last-command nil)) (undo))
          (should (equal (buffer-string) "# Title\n\nbody\n"))))
      (with-current-buffer agentls-log-buffer-name
        (should (string-match-p "notes.md was not open: kept its buffer" (buffer-string)))))))

(ert-deftest agentls-test-edit-arguments ()
  "e approves with edited arguments (modifiedArguments), which the server checks again."
  (agentls-test--with-workspace '(("a.txt" . "alpha\n"))
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" ws)))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "alpha" "beta")))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (should (string-match-p "e edit args" (agentls-test--approval-buffer-text)))
      (with-current-buffer agentls-approval-buffer-name
        (should (eq (key-binding "e") #'agentls-approval-edit-arguments))
        ;; Invalid JSON is refused before anything is answered.
        (should-error (agentls-approval-edit-arguments "{oops") :type 'user-error)
        (should (= (agentls-pending-approvals) 1))
        (setq seen agentls-test--approvals-seen)
        (agentls-approval-edit-arguments
         "{\"path\": \"a.txt\", \"old_string\": \"alpha\", \"new_string\": \"gamma\"}"))
      ;; The server judges the edited call again and asks again, with its
      ;; own diff, for the same call (an older server runs it at once).
      (agentls-test--wait (lambda () (or (car box) (> agentls-test--approvals-seen seen)))
                          "the result or the edited call's review")
      (when (> agentls-test--approvals-seen seen)
        (should-not (car box))
        (let ((text (agentls-test--approval-buffer-text)))
          (should (string-match-p "^\\+gamma$" text))
          (should-not (string-match-p "^\\+beta$" text)))
        (agentls-test--press "y"))
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (should (equal (plist-get (car box) :status) "success"))
      (with-current-buffer buf
        (should (equal (buffer-string) "gamma\n"))
        (should-not (buffer-modified-p)))
      (should (equal (agentls-test--file ws "a.txt") "gamma\n"))
      ;; Edited arguments that break the schema: the call fails, nothing changes.
      (setq seen agentls-test--approvals-seen)
      (let ((box2 (agentls-test--edit-async "a.txt" "gamma" "delta")))
        (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the second approval")
        (with-current-buffer agentls-approval-buffer-name
          (agentls-approval-edit-arguments "{\"path\": \"a.txt\", \"old_string\": 1}"))
        (agentls-test--wait (lambda () (car box2)) "the second result")
        (should (equal (plist-get (car box2) :status) "error"))
        (should (equal (plist-get (plist-get (car box2) :error) :code) "INVALID_PARAMS")))
      (should (equal (agentls-test--file ws "a.txt") "gamma\n")))))

(ert-deftest agentls-test-edit-reject ()
  "n rejects: buffer and disk unchanged, result status rejected with the message."
  (agentls-test--with-workspace '(("a.txt" . "keep me\n"))
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" ws)))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "keep me" "changed")))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (should (string-match-p "^\\+changed$" (agentls-test--approval-buffer-text)))
      ;; n reads an optional message; the test gives it as the argument.
      (with-current-buffer agentls-approval-buffer-name
        (should (eq (key-binding "n") #'agentls-approval-reject))
        (agentls-approval-reject "not this one"))
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (let ((r (car box)))
        (should (equal (plist-get r :status) "rejected"))
        (should (string-match-p "not this one" (format "%s %s" (plist-get r :message)
                                                       (plist-get r :content)))))
      (with-current-buffer buf
        (should (equal (buffer-string) "keep me\n"))
        (should-not (buffer-modified-p)))
      (should (equal (agentls-test--file ws "a.txt") "keep me\n"))
      (should (= (agentls-pending-approvals) 0)))))

(ert-deftest agentls-test-edit-always ()
  "a approves and remembers: the next call of the tool does not ask."
  (agentls-test--with-workspace '(("a.txt" . "one\ntwo\n"))
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" ws)))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "one" "ONE")))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (agentls-test--press "a yes RET")
      (agentls-test--wait (lambda () (car box)) "the first result")

      (should (equal (plist-get (car box) :status) "success"))
      (should (equal (with-current-buffer buf (buffer-string)) "ONE\ntwo\n"))
      (setq seen agentls-test--approvals-seen)
      (let ((r (agentls-call "edit_file" '(:path "a.txt" :old_string "two" :new_string "TWO")
                             :timeout 20)))
        (should (equal (plist-get r :status) "success")))
      ;; No second approval/request reached the UI.
      (should (= agentls-test--approvals-seen seen))
      (with-current-buffer buf
        (should (equal (buffer-string) "ONE\nTWO\n"))
        (should-not (buffer-modified-p)))
      (should (equal (agentls-test--file ws "a.txt") "ONE\nTWO\n")))))

(ert-deftest agentls-test-edit-unsaved-buffer-stays-unsaved ()
  "An edit to a buffer with unsaved changes lands in it, is not saved, and says so."
  (agentls-test--with-workspace '(("a.txt" . "alpha\nbeta\n"))
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" ws)))
           (seen agentls-test--approvals-seen))
      (with-current-buffer buf (goto-char (point-max)) (insert "gamma (mine)\n"))
      (let ((box (agentls-test--edit-async "a.txt" "beta" "BETA")))
        (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
        (agentls-test--press "y")
        (agentls-test--wait (lambda () (car box)) "the tool result")
        (should (equal (plist-get (car box) :status) "success"))
        (should (equal (plist-get (plist-get (car box) :structured) :unsaved) ["a.txt"])))
      (with-current-buffer buf
        (should (equal (buffer-string) "alpha\nBETA\ngamma (mine)\n"))
        (should (buffer-modified-p)))
      (should (equal (agentls-test--file ws "a.txt") "alpha\nbeta\n")))))

(ert-deftest agentls-test-two-waiting-approvals ()
  "Two calls wait at once: the mode line counts them, each is answered in turn."
  (agentls-test--with-workspace '(("a.txt" . "a\n") ("b.txt" . "b\n"))
    (let* ((seen agentls-test--approvals-seen)
           (box1 (agentls-test--edit-async "a.txt" "a" "A"))
           (box2 (agentls-test--edit-async "b.txt" "b" "B")))
      (agentls-test--wait (lambda () (>= agentls-test--approvals-seen (+ seen 2))) "two approvals")
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

(ert-deftest agentls-test-edit-stale-after-typing ()
  "Typing while the approval waits: the server sees it and refuses a stale edit."
  (agentls-test--with-workspace '(("a.txt" . "line one\n"))
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" ws)))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "line one" "line 1")))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (with-current-buffer buf (goto-char (point-max)) (insert "typed meanwhile\n"))
      (agentls-test--press "y")
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (should (equal (plist-get (car box) :status) "error"))
      (should (equal (plist-get (plist-get (car box) :error) :code) "STALE_FILE"))
      (with-current-buffer buf
        (should (equal (buffer-string) "line one\ntyped meanwhile\n")))
      (should (equal (agentls-test--file ws "a.txt") "line one\n")))))

(defun agentls-test--review-window ()
  (get-buffer-window agentls-approval-buffer-name t))

(defun agentls-test--type-slowly (text &optional gap)
  "Type TEXT key by key (each its own command), reading the server between keys."
  (dolist (k (listify-key-sequence text))
    (save-current-buffer (execute-kbd-macro (vector k)))
    (agentls-test--sleep (or gap 0.03))))

(ert-deftest agentls-test-review-never-takes-typing ()
  "Reviews that arrive while the person types never take the keys: typed prose
\(\"maybe yes always\") stays in the person's buffer, the review stays open,
rm -r does not run, no always is remembered; a review window selected by a
program, or a burst of y after reopening, does not answer either; going there
on purpose, waiting, y and the typed yes does."
  (agentls-test--with-workspace '(("somedir/keep.txt" . "precious\n") ("a.txt" . "a\n"))
    (skip-unless (member "shell_exec" (mapcar (lambda (d) (plist-get d :name)) (agentls-list-tools))))
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
      (agentls-test--wait (lambda () (>= agentls-test--approvals-seen (+ seen 1))) "the edit's review")
      (agentls-call-async "shell_exec" '(:command "rm -r somedir") (lambda (r) (setcar rm r)))
      (agentls-test--type-slowly prose)
      (agentls-test--wait (lambda () (>= agentls-test--approvals-seen (+ seen 2))) "both reviews")
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
      (should (equal (with-current-buffer agentls-approval-buffer-name
                       (plist-get (agentls--approval-params agentls--approval) :tool))
                     "edit_file"))
      (agentls-test--sleep 0.5)
      (agentls-test--type "n RET")
      (agentls-test--wait (lambda () (car edit)) "the edit's result")
      (should (equal (plist-get (car edit) :status) "rejected"))
      ;; The next review (rm -r) is shown in the selected window: its guard
      ;; starts again.
      (agentls-test--type "y")
      (should (= (agentls-pending-approvals) 1))
      (should (equal (with-current-buffer agentls-approval-buffer-name
                       (plist-get (agentls--approval-params agentls--approval) :tool))
                     "shell_exec"))
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
        (agentls-test--wait (lambda () (or (car box) (> agentls-test--approvals-seen seen2)))
                            "edit_file to ask again")
        (should (> agentls-test--approvals-seen seen2)))
      (should (equal (agentls-test--file ws "a.txt") "a\n"))
      (kill-buffer notes))))

(ert-deftest agentls-test-always-needs-yes ()
  "a asks for the full word yes (never a single key); no keeps the call waiting."
  (agentls-test--with-workspace '(("a.txt" . "one\n"))
    (let* ((seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "one" "ONE")))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (should (string-match-p "^a always a\\(pprove\\|llow\\) edit_file (asks yes)$"
                              (agentls-test--approval-buffer-text)))
      (agentls-test--open-review)
      (let ((use-short-answers t))      ; even so: the full word
        (agentls-test--type "a y RET no RET"))
      (should (= (agentls-pending-approvals) 1))
      (agentls-test--sleep 0.3)
      (agentls-test--type "a yes RET")
      (agentls-test--wait (lambda () (car box)) "the result")
      (should (equal (plist-get (car box) :status) "success")))))

(defun agentls-test--rfc3339 (secs-from-now)
  (format-time-string "%Y-%m-%dT%H:%M:%SZ" (time-add nil secs-from-now) t))

(defun agentls-test--request (server &rest params)
  "Feed SERVER's approval/request handler PARAMS, as the server would send them."
  (apply #'eglot-handle-request server 'approval/request params))

(ert-deftest agentls-test-review-shows-request-fields ()
  "agent, cwd, deadline (a countdown), options and alwaysLabel from the request
are shown; the legend and the review window's mode line fit 80 columns.
\(The request is fed to the handler as the server sends it: docs/protocol.md,
"Approval".)"
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((server (agentls--server))
           (a-cmd (agentls-test--request
                   server :callId "tc_spec1" :tool "shell_exec" :reason "list files"
                   :arguments '(:command "echo hi") :risk "execute" :agent "coder"
                   :cwd "/tmp/wd" :deadline (agentls-test--rfc3339 95) :timeoutSeconds 95
                   :options ["approve" "reject" "always"] :alwaysLabel "always allow `echo …`")))
      (should (agentls--deferred-p a-cmd))
      (let ((text (agentls-test--approval-buffer-text)))
        (should (string-match-p "^coder wants to run shell_exec$" text))
        (should (string-match-p "^Agent: +coder$" text))
        (should (string-match-p "^Dir: +/tmp/wd$" text))
        (should (string-match-p "^a always allow `echo …` (asks yes)$" text))
        (should (string-match-p "rejected by itself at [0-9:]+" text))
        (dolist (line (split-string text "\n"))
          (should (<= (string-width line) 80))))
      ;; (format-mode-line gives "" for :eval in batch mode: the functions
      ;; the header and mode line evaluate are called here; test/tty.sh
      ;; looks at the real ones on an 80-column screen.)
      (with-current-buffer agentls-approval-buffer-name
        (should (equal header-line-format '(:eval (agentls--approval-header-line))))
        (should (member '(:eval (agentls--approval-mode-line-text)) mode-line-format))
        (let ((h1 (agentls--approval-header-line)))
          (should (string-match-p "rejected by itself in 1:3[0-5]" h1))
          (should (string-match-p "coder wants to run shell_exec" h1))
          (should (<= (string-width (concat " " (buffer-name) "  "
                                            (agentls--approval-mode-line-text)))
                      80))
          ;; The countdown counts down.
          (agentls-test--sleep 1.1)
          (should-not (equal (agentls--approval-header-line) h1))))
      ;; The log has the agent.
      (with-current-buffer agentls-log-buffer-name
        (should (string-match-p "shell_exec tc_spec1 asks for approval (agent coder)" (buffer-string))))
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
always with what it covers, and a dangerous call offers no always.  Skipped with an older
server (one without approval/rules, which came with those fields)."
  (agentls-test--with-workspace '(("victim/f" . "x\n") ("a.txt" . "a\n"))
    (skip-unless (member "shell_exec" (mapcar (lambda (d) (plist-get d :name)) (agentls-list-tools))))
    (skip-unless (condition-case nil
                     (progn (jsonrpc-request (agentls--server) :approval/rules agentls--{}) t)
                   (jsonrpc-error nil)))
    (let ((seen agentls-test--approvals-seen)
          (box (list nil)))
      (agentls-call-async "shell_exec" '(:command "echo hi") (lambda (r) (setcar box r))
                          :agent "coder")
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the echo review")
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
      (setcar box nil)
      (setq seen agentls-test--approvals-seen)
      (agentls-call-async "shell_exec" '(:command "rm -r victim") (lambda (r) (setcar box r)))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the rm review")
      (should-not (member "always" (append (plist-get (agentls--approval-params
                                                       (car agentls--pending-approvals))
                                                      :options)
                                           nil)))
      (should-not (string-match-p "^a " (agentls-test--approval-buffer-text)))
      (agentls-test--open-review)
      (agentls-test--type "a")
      (should (= (agentls-pending-approvals) 1))
      (agentls-test--type "n RET")
      (agentls-test--wait (lambda () (car box)) "the rm result")
      (should (equal (plist-get (car box) :status) "rejected"))
      (should (file-exists-p (expand-file-name "victim/f" ws))))))

(ert-deftest agentls-test-warning-red-after-font-lock ()
  "The warning and the dangerous risk stay red after diff-mode's font-lock ran."
  (agentls-test--with-workspace '(("victim/f" . "x\n"))
    (skip-unless (member "shell_exec" (mapcar (lambda (d) (plist-get d :name)) (agentls-list-tools))))
    (let ((seen agentls-test--approvals-seen)
          (box (list nil)))
      (agentls-call-async "shell_exec" '(:command "rm -r victim") (lambda (r) (setcar box r)))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
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

(ert-deftest agentls-test-list-reviews ()
  "agentls-list-reviews lists the waiting calls; RET on one opens it (on purpose)."
  (agentls-test--with-workspace '(("a.txt" . "a\n") ("b.txt" . "b\n"))
    (let* ((seen agentls-test--approvals-seen)
           (box1 (agentls-test--edit-async "a.txt" "a" "A"))
           (box2 (agentls-test--edit-async "b.txt" "b" "B")))
      (agentls-test--wait (lambda () (>= agentls-test--approvals-seen (+ seen 2))) "two approvals")
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
  "A server without approval/rules (method not found) is reported clearly."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let ((server (agentls--server)))
      (skip-unless (condition-case err
                       (progn (jsonrpc-request server :approval/rules agentls--{}) nil)
                     (jsonrpc-error (eql (agentls--jsonrpc-error-code err) -32601))))
      (let ((err (should-error (agentls-list-rules) :type 'user-error)))
        (should (string-match-p "does not know approval/rules" (cadr err))))
      (should (jsonrpc-running-p server)))))

(ert-deftest agentls-test-rules-list-revoke ()
  "always is listed by approval/rules with its label; revoking it makes the tool ask again.
Needs a server with approval/rules; skipped with an older one."
  (agentls-test--with-workspace '(("a.txt" . "one\ntwo\n"))
    (let ((server (agentls--server)))
      (skip-unless (condition-case nil
                       (progn (jsonrpc-request server :approval/rules agentls--{}) t)
                     (jsonrpc-error nil)))
      (let* ((seen agentls-test--approvals-seen)
             (box (agentls-test--edit-async "a.txt" "one" "ONE")))
        (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval")
        (agentls-test--press "a yes RET")
        (agentls-test--wait (lambda () (car box)) "the result"))
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
        (agentls-test--wait (lambda () (or (car box) (> agentls-test--approvals-seen seen)))
                            "edit_file to ask again")
        (should (> agentls-test--approvals-seen seen))))))

(ert-deftest agentls-test-typed-text-reaches-tools-at-once ()
  "Text typed a moment ago reaches a tool/call sent right away: agentls.el's own
sync sends pending changes first (no idle time passed)."
  (agentls-test--with-workspace '(("t.txt" . "start\n"))
    (agentls--server)
    (let ((buf (find-file-noselect (expand-file-name "t.txt" ws)))
          (agentls-change-idle-time 60))
      (switch-to-buffer buf)
      (goto-char (point-max))
      (agentls-test--type "typed SPC just SPC now")
      (should (buffer-local-value 'agentls--pending-changes buf)) ; not sent yet
      (let ((r (agentls-call "read_file" '(:path "t.txt"))))
        (should (string-match-p "typed just now" (plist-get r :content)))))))

(ert-deftest agentls-test-flush-eglot-before-call ()
  "With agentls run by plain eglot for a major mode, a tool/call sent through
agentls.el on that eglot server first flushes eglot's lazy didChange."
  (agentls-test--with-workspace '(("y.lang" . "fn main\n"))
    (cl-letf* (((symbol-function 'file-notify-add-watch) (lambda (&rest _) (list 'fake-watch)))
               ((symbol-function 'file-notify-rm-watch) #'ignore)
               (eglot-sync-connect t)
               (eglot-autoshutdown nil)
               (eglot-send-changes-idle-time 60)
               (auto-mode-alist (cons '("\\.lang\\'" . agentls-test-lang-mode) auto-mode-alist))
               (eglot-server-programs (cons `(agentls-test-lang-mode . (,agentls-test-bin "serve"))
                                            eglot-server-programs))
               (buf (find-file-noselect (expand-file-name "y.lang" ws)))
               (user-server nil))
      (unwind-protect
          (with-current-buffer buf
            (pcase-let ((`(,modes ,project ,class ,contact ,langs) (eglot--guess-contact)))
              (setq user-server (eglot modes project class contact langs)))
            (should-not (agentls-server-p user-server))
            (switch-to-buffer buf)
            (goto-char (point-max))
            (agentls-test--type "typed SPC by SPC me")
            (eglot--track-changes-fetch eglot--track-changes)
            (should eglot--recent-changes) ; eglot has not sent them yet
            (let ((r (agentls-call "read_file" '(:path "y.lang") :server user-server)))
              (should (string-match-p "typed by me" (plist-get r :content))))
            ;; The handle of a call on an eglot server has its request's id
            ;; (read from jsonrpc's event), for `agentls-cancel'.
            (let* ((box (list nil))
                   (h (agentls-call-async "read_file" '(:path "y.lang")
                                          (lambda (r) (setcar box r)) :server user-server)))
              (should (integerp (plist-get h :id)))
              (agentls-test--wait (lambda () (car box)) "the second result")
              (should (equal (plist-get (car box) :status) "success"))))
        (when (and user-server (jsonrpc-running-p user-server))
          (with-current-buffer buf (eglot-shutdown user-server)))))))

(ert-deftest agentls-test-cancel-while-waiting ()
  "agentls-cancel on a call waiting for approval: status cancelled, the approval goes away."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((seen agentls-test--approvals-seen)
           (box (list nil))
           (handle (agentls-call-async "edit_file" '(:path "a.txt" :old_string "a" :new_string "b")
                                       (lambda (r) (setcar box r)))))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (should (= (agentls-pending-approvals) 1))
      (agentls-cancel handle)
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (should (equal (plist-get (car box) :status) "cancelled"))
      (agentls-test--wait (lambda () (= (agentls-pending-approvals) 0)) "the approval to go")
      (should (string-match-p "No tool call waits" (agentls-test--approval-buffer-text)))
      (should (equal (agentls-test--file ws "a.txt") "a\n")))))

(ert-deftest agentls-test-approval-timeout-clears-ui ()
  "An approval the server stops waiting for (approval.timeoutSeconds) leaves the UI."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((agentls-config '(:approval (:timeoutSeconds 1)))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "a" "b")))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (should (= (agentls-pending-approvals) 1))
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (should (equal (plist-get (car box) :status) "rejected"))
      (should (= (agentls-pending-approvals) 0))
      (should (string-match-p "No tool call waits" (agentls-test--approval-buffer-text)))
      ;; The server withdraws its approval/request ($/cancelRequest).
      (agentls-test--wait (lambda () (with-current-buffer agentls-log-buffer-name
                                       (string-match-p "the server withdrew its request"
                                                       (buffer-string))))
                          "the $/cancelRequest of the approval")
      ;; A late answer is harmless.
      (should-error (agentls-approval-approve) :type 'user-error)
      (should (equal (agentls-test--file ws "a.txt") "a\n")))))

(ert-deftest agentls-test-dangerous-command-warning ()
  "A dangerous command's warning is shown under Context."
  (agentls-test--with-workspace '(("victim/f" . "x\n"))
    (skip-unless (member "shell_exec" (mapcar (lambda (d) (plist-get d :name)) (agentls-list-tools))))
    (let* ((seen agentls-test--approvals-seen)
           (box (list nil)))
      (agentls-call-async "shell_exec" '(:command "rm -r victim") (lambda (r) (setcar box r)))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (let ((text (agentls-test--approval-buffer-text)))
        (should (string-match-p "risk: dangerous" text))
        (should (string-match-p "^ +WARNING: .*rm -r" text))
        (should (string-match-p (concat "^Dir: +" (regexp-quote (directory-file-name ws)) "$") text)))
      (with-current-buffer agentls-approval-buffer-name (agentls-approval-reject "keep it"))
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (should (equal (plist-get (car box) :status) "rejected"))
      (should (file-exists-p (expand-file-name "victim/f" ws))))))

(ert-deftest agentls-test-apply-resource-operations ()
  "workspace/applyEdit with create, rename, delete and text edits (synthetic edit)."
  (agentls-test--with-workspace '(("old.txt" . "moving\n") ("gone.txt" . "bye\n")
                                  ("dir/x.txt" . "x\n") ("edit.txt" . "a😀b\n"))
    (let* ((server (agentls--server))
           (uri (lambda (f) (agentls--path-to-uri (expand-file-name f ws))))
           (old-buf (find-file-noselect (expand-file-name "old.txt" ws)))
           (gone-buf (find-file-noselect (expand-file-name "gone.txt" ws)))
           (reply
            (eglot-handle-request
             server 'workspace/applyEdit
             :label "test"
             :edit
             (list :documentChanges
                   (vector
                    (list :kind "create" :uri (agentls--path-to-uri (expand-file-name "new/n.txt" ws))
                          :options '(:overwrite :json-false :ignoreIfExists :json-false))
                    (list :textDocument (list :uri (agentls--path-to-uri (expand-file-name "new/n.txt" ws))
                                              :version nil)
                          :edits (vector '(:range (:start (:line 0 :character 0) :end (:line 0 :character 0))
                                                  :newText "created\n")))
                    (list :kind "rename" :oldUri (funcall uri "old.txt")
                          :newUri (agentls--path-to-uri (expand-file-name "moved.txt" ws)))
                    (list :kind "delete" :uri (funcall uri "gone.txt"))
                    (list :kind "delete" :uri (funcall uri "dir") :options '(:recursive t))
                    ;; After the emoji (2 UTF-16 code units): column 3.
                    (list :textDocument (list :uri (funcall uri "edit.txt") :version nil)
                          :edits (vector '(:range (:start (:line 0 :character 3) :end (:line 0 :character 4))
                                                  :newText "B"))))))))
      (should (eq (plist-get reply :applied) t))
      (should (equal (agentls-test--file ws "new/n.txt") "created\n"))
      (should-not (file-exists-p (expand-file-name "old.txt" ws)))
      (should (equal (agentls-test--file ws "moved.txt") "moving\n"))
      (should (equal (buffer-file-name old-buf) (expand-file-name "moved.txt" ws)))
      (should-not (file-exists-p (expand-file-name "gone.txt" ws)))
      (should-not (buffer-live-p gone-buf))
      (should-not (file-exists-p (expand-file-name "dir" ws)))
      (should (equal (agentls-test--file ws "edit.txt") "a😀B\n"))
      ;; The renamed buffer is known to the server under its new name.
      (with-current-buffer old-buf (insert "+"))
      (should (string-match-p "\\+moving"
                              (plist-get (agentls-call "read_file" '(:path "moved.txt")) :content)))
      ;; A failing change stops there and says which one.
      (let ((reply (eglot-handle-request
                    server 'workspace/applyEdit
                    :edit (list :documentChanges
                                (vector (list :kind "create" :uri (funcall uri "moved.txt")))))))
        (should (eq (plist-get reply :applied) :json-false))
        (should (equal (plist-get reply :failedChange) 0))
        (should (string-match-p "already exists" (plist-get reply :failureReason))))
      ;; A version mismatch is refused.
      (let ((reply (eglot-handle-request
                    server 'workspace/applyEdit
                    :edit (list :documentChanges
                                (vector (list :textDocument (list :uri (funcall uri "moved.txt") :version 999)
                                              :edits (vector '(:range (:start (:line 0 :character 0)
                                                                              :end (:line 0 :character 0))
                                                                      :newText "no"))))))))
        (should (eq (plist-get reply :applied) :json-false))
        (should (string-match-p "version" (plist-get reply :failureReason)))
        (should (string-match-p "\\`\\+moving" (with-current-buffer old-buf (buffer-string))))))))

(ert-deftest agentls-test-edit-crlf-file ()
  "A CRLF file keeps its line ends: the buffer has LF, the saved file CR LF."
  (agentls-test--with-workspace '(("w.txt" . "one\r\ntwo\r\n"))
    (let* ((buf (find-file-noselect (expand-file-name "w.txt" ws)))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "w.txt" "two" "TWO\nTHREE")))
      (should (eq (coding-system-eol-type (buffer-local-value 'buffer-file-coding-system buf)) 1))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (agentls-test--press "y")
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (should (equal (plist-get (car box) :status) "success"))
      (with-current-buffer buf
        (should (equal (buffer-string) "one\nTWO\nTHREE\n"))
        (should-not (buffer-modified-p)))
      (let ((coding-system-for-read 'no-conversion))
        (should (equal (agentls-test--file ws "w.txt") "one\r\nTWO\r\nTHREE\r\n")))
      ;; Server issue: it compares the buffer text (LF) with the disk
      ;; (CR LF) byte for byte, so it reports w.txt as unsaved here.
      )))

(defun agentls-test--call-approving (tool args)
  "Call TOOL with ARGS; approve with y when asked.  Return (RESULT . ASKED)."
  (let ((box (list nil)) (seen agentls-test--approvals-seen))
    (agentls-call-async tool args (lambda (r) (setcar box r)))
    (agentls-test--wait (lambda () (or (car box) (> agentls-test--approvals-seen seen)))
                        (format "%s to ask or finish" tool))
    (let ((asked (> agentls-test--approvals-seen seen)))
      (when asked (agentls-test--press "y"))
      (agentls-test--wait (lambda () (car box)) (format "the result of %s" tool))
      (cons (car box) asked))))

(ert-deftest agentls-test-file-operations-through-the-editor ()
  "move_file, delete_file, copy_file and apply_patch land as the editor's resource operations."
  (agentls-test--with-workspace '(("a.txt" . "one\n") ("b.txt" . "two\n") ("c.txt" . "gone\n"))
    (let ((names (mapcar (lambda (d) (plist-get d :name)) (agentls-list-tools))))
      (skip-unless (cl-every (lambda (n) (member n names))
                             '("move_file" "delete_file" "copy_file" "apply_patch"))))
    (let ((ba (find-file-noselect (expand-file-name "a.txt" ws)))
          (bc (find-file-noselect (expand-file-name "c.txt" ws))))
      (with-current-buffer ba (goto-char (point-max)) (insert "unsaved\n"))
      ;; move: the buffer follows the file, unsaved text included.
      (let ((r (car (agentls-test--call-approving "move_file" '(:from "a.txt" :to "sub/moved.txt")))))
        (should (equal (plist-get r :status) "success"))
        (should (equal (plist-get (plist-get r :structured) :applied_by) "editor")))
      (should (equal (buffer-file-name ba) (expand-file-name "sub/moved.txt" ws)))
      (should (equal (with-current-buffer ba (buffer-string)) "one\nunsaved\n"))
      (should-not (file-exists-p (expand-file-name "a.txt" ws)))
      (should (string-match-p "unsaved"
                              (plist-get (agentls-call "read_file" '(:path "sub/moved.txt")) :content)))
      ;; delete (asks: dangerous): the file and its buffer go.
      (let ((r (agentls-test--call-approving "delete_file" '(:path "c.txt"))))
        (should (cdr r))
        (should (equal (plist-get (car r) :status) "success")))
      (should-not (file-exists-p (expand-file-name "c.txt" ws)))
      (should-not (buffer-live-p bc))
      ;; copy to a new file.
      (should (equal (plist-get (car (agentls-test--call-approving
                                      "copy_file" '(:source "b.txt" :dest "b2.txt")))
                                :status)
                     "success"))
      (should (equal (agentls-test--file ws "b2.txt") "two\n"))
      ;; a patch that modifies one file and creates another.
      (let ((r (agentls-test--call-approving
                "apply_patch"
                (list :patch (concat "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-two\n+TWO\n"
                                     "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n")))))
        (should (cdr r))
        (should (equal (plist-get (car r) :status) "success")))
      (should (equal (agentls-test--file ws "b.txt") "TWO\n"))
      (should (equal (agentls-test--file ws "n.txt") "new\n")))))

(ert-deftest agentls-test-undo-is-one-step ()
  "An approved edit of several hunks is one undo step in the buffer."
  (agentls-test--with-workspace '(("a.txt" . "x\nkeep\nx\nkeep\nx\n"))
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" ws)))
           (seen agentls-test--approvals-seen)
           (box (list nil)))
      (with-current-buffer buf (buffer-enable-undo))
      (agentls-call-async "edit_file" '(:path "a.txt" :old_string "x" :new_string "zz" :replace_all t)
                          (lambda (r) (setcar box r)))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (agentls-test--press "y")
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (should (equal (plist-get (car box) :status) "success"))
      (with-current-buffer buf
        (should (equal (buffer-string) "zz\nkeep\nzz\nkeep\nzz\n"))
        (undo-boundary)
        (let ((last-command nil)) (undo))
        (should (equal (buffer-string) "x\nkeep\nx\nkeep\nx\n"))))))

(ert-deftest agentls-test-revert-and-rename-stay-in-sync ()
  "revert-buffer and set-visited-file-name keep the server's view right."
  (agentls-test--with-workspace '(("a.txt" . "first\n"))
    (with-current-buffer (find-file-noselect (expand-file-name "a.txt" ws))
      (insert "unsaved ")
      (should (string-match-p "unsaved first"
                              (plist-get (agentls-call "read_file" '(:path "a.txt")) :content)))
      (with-temp-file (expand-file-name "a.txt" ws) (insert "changed on disk\n"))
      (revert-buffer t t)
      (should (equal (buffer-string) "changed on disk\n"))
      (let ((r (agentls-call "read_file" '(:path "a.txt"))))
        (should (string-match-p "changed on disk" (plist-get r :content)))
        (should-not (string-match-p "unsaved" (plist-get r :content))))
      (goto-char (point-min))
      (insert "renamed ")
      (set-visited-file-name (expand-file-name "b.txt" ws) t)
      (let ((r (agentls-call "read_file" '(:path "b.txt"))))
        (should (equal (plist-get r :status) "success"))
        (should (eq (plist-get (plist-get r :structured) :from_buffer) t))
        (should (string-match-p "renamed changed on disk" (plist-get r :content))))
      (let ((r (agentls-call "read_file" '(:path "a.txt"))))
        (should (eq (plist-get (plist-get r :structured) :from_buffer) :json-false))))))

(ert-deftest agentls-test-progress-and-events-in-log ()
  "A shell command's output streams to the log ($/progress and tool/event)."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (skip-unless (member "shell_exec" (mapcar (lambda (d) (plist-get d :name)) (agentls-list-tools))))
    (let* ((seen agentls-test--approvals-seen)
           (box (list nil)))
      (agentls-call-async "shell_exec" '(:command "echo out-marker; echo err-marker >&2")
                          (lambda (r) (setcar box r)) :work-done-token "tok-test")
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (let ((text (agentls-test--approval-buffer-text)))
        (should (string-match-p "^Tool: +shell_exec" text))
        (should (string-match-p "risk: execute" text))
        (should (string-match-p "echo out-marker" text)))
      (agentls-test--press "y")
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (should (equal (plist-get (car box) :status) "success"))
      (with-current-buffer agentls-log-buffer-name
        (should (string-match-p "progress tok-test begin" (buffer-string)))
        (should (string-match-p "progress tok-test report.*out-marker" (buffer-string)))
        (should (string-match-p "progress tok-test end" (buffer-string)))
        (should (string-match-p "shell_exec tc_[0-9a-f]+ result success" (buffer-string)))))))

(ert-deftest agentls-test-config-reaches-server ()
  "agentls-config is sent as initializationOptions.config (mode ask: read_file asks)."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((agentls-config '(:approval (:mode "ask")))
           (seen agentls-test--approvals-seen)
           (box (list nil)))
      (agentls-call-async "read_file" '(:path "a.txt") (lambda (r) (setcar box r)))
      (agentls-test--wait (lambda () (or (car box) (> agentls-test--approvals-seen seen)))
                          "an approval or a result")
      (should (= (agentls-pending-approvals) 1))
      (should (string-match-p "^Tool: +read_file" (agentls-test--approval-buffer-text)))
      (should (string-match-p "^File: +a.txt" (agentls-test--approval-buffer-text)))
      (agentls-test--press "y")
      (agentls-test--wait (lambda () (car box)) "the tool result")
      (should (equal (plist-get (car box) :status) "success")))))

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
      (with-current-buffer buf
        (should (equal (buffer-string) "new\n"))
        (should-not (buffer-modified-p))))))

(ert-deftest agentls-test-write-file-new ()
  "write_file creating a file (it asks in safe mode with a current server) lands on disk."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let ((r (car (agentls-test--call-approving
                   "write_file" '(:path "dir/new.txt" :content "fresh é\n" :create_dirs t)))))
      (should (equal (plist-get r :status) "success"))
      (should (equal (plist-get (plist-get r :structured) :applied_by) "editor"))
      (should (equal (agentls-test--file ws "dir/new.txt") "fresh é\n"))
      ;; Kept open (saved) for the person to look at.
      (let ((buf (find-buffer-visiting (expand-file-name "dir/new.txt" ws))))
        (should buf)
        (should-not (buffer-modified-p buf))))))

(ert-deftest agentls-test-run-tool-schema-errors ()
  "agentls-run-tool shows each schema violation by JSON pointer; bad JSON is a user-error."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (should-error (agentls-run-tool "read_file" "{\"path\": ") :type 'user-error)
    (should-error (agentls-run-tool "read_file" "[1]") :type 'user-error)
    (when (get-buffer agentls-result-buffer-name) (kill-buffer agentls-result-buffer-name))
    (agentls-run-tool "read_file" "{\"path\": 3, \"bogus\": true}")
    (agentls-test--wait (lambda () (get-buffer agentls-result-buffer-name)) "the result buffer")
    (with-current-buffer agentls-result-buffer-name
      (should (string-match-p "Status: +error" (buffer-string)))
      (should (string-match-p "INVALID_PARAMS" (buffer-string)))
      (should (string-match-p "^  /path +got number, want string" (buffer-string)))
      (should (string-match-p "^  /bogus +unknown field" (buffer-string))))
    (kill-buffer agentls-result-buffer-name)
    (agentls-run-tool "read_file" "{\"path\": \"a.txt\"}")
    (agentls-test--wait (lambda () (get-buffer agentls-result-buffer-name)) "the result buffer")
    (with-current-buffer agentls-result-buffer-name
      (should (string-match-p "Status: +success" (buffer-string))))
    (should (string-match-p "\"path\": \"\""
                            (agentls--arguments-template
                             (cl-find "edit_file" (agentls-list-tools)
                                      :key (lambda (d) (plist-get d :name)) :test #'equal))))))

(ert-deftest agentls-test-does-not-take-buffers-from-eglot ()
  "agentls never becomes a buffer's eglot server, with or without another one."
  (agentls-test--with-workspace '(("plain.txt" . "plain\n"))
    (let ((buf (find-file-noselect (expand-file-name "plain.txt" ws))))
      (with-current-buffer buf
        (should-not (eglot-current-server))
        (agentls-call "read_file" '(:path "plain.txt"))
        (should (agentls-server-p agentls--buffer-server))
        (should-not (eglot-current-server))
        (should-not (bound-and-true-p eglot--managed-mode))
        ;; agentls is in no project's list of eglot servers.
        (maphash (lambda (_p servers)
                   (should-not (cl-some #'agentls-server-p servers)))
                 eglot--servers-by-project)))))

(define-derived-mode agentls-test-lang-mode text-mode "AgentlsTestLang"
  "A major mode whose eglot server is a second agentls (standing in for gopls).")

(ert-deftest agentls-test-coexists-with-user-eglot-server ()
  "A buffer managed by the user's eglot server keeps it; agentls edits it too."
  (agentls-test--with-workspace '(("x.lang" . "fn main\n"))
    (cl-letf* (;; The user's eglot server asks for file watches too: no
               ;; real inotify in batch mode (its events are never read).
               ((symbol-function 'file-notify-add-watch) (lambda (&rest _) (list 'fake-watch)))
               ((symbol-function 'file-notify-rm-watch) #'ignore)
               (eglot-sync-connect t)
               (eglot-autoshutdown nil)
               (auto-mode-alist (cons '("\\.lang\\'" . agentls-test-lang-mode) auto-mode-alist))
               (eglot-server-programs (cons `(agentls-test-lang-mode . (,agentls-test-bin "serve"))
                                            eglot-server-programs))
               (buf (find-file-noselect (expand-file-name "x.lang" ws)))
               (user-server nil))
      (unwind-protect
          (with-current-buffer buf
            (should (eq major-mode 'agentls-test-lang-mode))
            (pcase-let ((`(,modes ,project ,class ,contact ,langs) (eglot--guess-contact)))
              (setq user-server (eglot modes project class contact langs)))
            (should user-server)
            (should-not (agentls-server-p user-server))
            (should (eq (eglot-current-server) user-server))
            (should eglot--managed-mode)
            ;; agentls starts for the project: the buffer keeps its server.
            (let ((r (agentls-call "read_file" '(:path "x.lang"))))
              (should (equal (plist-get r :status) "success")))
            (should (agentls-server-p agentls--buffer-server))
            (should-not (eq agentls--buffer-server user-server))
            (should (eq (eglot-current-server) user-server))
            (should (memq buf (eglot--managed-buffers user-server)))
            ;; Typing reaches both servers.
            (goto-char (point-max))
            (insert "typed\n")
            (let ((r (agentls-call "read_file" '(:path "x.lang"))))
              (should (string-match-p "typed" (plist-get r :content))))
            ;; The agent's approved edit lands in the buffer and is seen by
            ;; the user's server too (eglot's own didChange).
            (save-buffer)
            (let* ((seen agentls-test--approvals-seen)
                   (box (agentls-test--edit-async "x.lang" "fn main" "fn main2")))
              (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval")
              (agentls-test--press "y")
              (agentls-test--wait (lambda () (car box)) "the result")
              (should (equal (plist-get (car box) :status) "success")))
            (should (equal (buffer-string) "fn main2\ntyped\n"))
            (should-not (buffer-modified-p))
            (should (eq (eglot-current-server) user-server))
            (eglot--signal-textDocument/didChange)
            (let ((r (jsonrpc-request user-server :tool/call
                                      '(:name "read_file" :arguments (:path "x.lang")))))
              (should (string-match-p "fn main2" (plist-get r :content)))))
        (when (and user-server (jsonrpc-running-p user-server))
          ;; From the managed buffer: eglot 1.17's shutdown request
          ;; flushes that buffer's changes first.
          (with-current-buffer buf (eglot-shutdown user-server)))))))

(ert-deftest agentls-test-file-watches-registered ()
  "The server's didChangeWatchedFiles registration is served by eglot's watches, removed at shutdown.
\(The events themselves need Emacs' command loop: test/tty.sh checks them.)"
  (agentls-test--with-workspace '(("a.txt" . "a\n") ("sub/b.txt" . "b\n"))
    ;; Real inotify watches are not for batch mode (their events pile up
    ;; as input nobody reads): fake the watch primitives here.
    (cl-letf* ((watches nil)
               ((symbol-function 'file-notify-add-watch)
                (lambda (dir &rest _) (push dir watches) (cons 'fake-watch dir)))
               ((symbol-function 'file-notify-rm-watch)
                (lambda (w) (setq watches (delete (cdr w) watches)))))
      (let* ((agentls-watch-files t)    ; off by default in batch mode
             (server (agentls--server)))
        (should (eq (plist-get (plist-get (plist-get (eglot-client-capabilities server) :workspace)
                                          :didChangeWatchedFiles)
                               :dynamicRegistration)
                    t))
        (agentls-test--wait (lambda () (> (hash-table-count (agentls--file-watches server)) 0))
                            "the file watches")
        (should (member (expand-file-name "sub/" ws) watches))
        (agentls-shutdown server)
        (should (= (hash-table-count (agentls--file-watches server)) 0))
        (should-not watches)))
    (let* ((agentls-watch-files nil)
           (server (agentls--server)))
      (should (eq (plist-get (plist-get (plist-get (eglot-client-capabilities server) :workspace)
                                        :didChangeWatchedFiles)
                             :dynamicRegistration)
                  :json-false))
      (accept-process-output nil 0.3)
      (should (= (hash-table-count (agentls--file-watches server)) 0)))
    (let* ((agentls-watch-files 'interactive)
           (server (progn (agentls-shutdown-all) (agentls--server))))
      ;; This is batch mode: no watches.
      (should (eq (plist-get (plist-get (plist-get (eglot-client-capabilities server) :workspace)
                                        :didChangeWatchedFiles)
                             :dynamicRegistration)
                  :json-false)))))

(ert-deftest agentls-test-server-stderr-survives ()
  "The server's stderr goes to a buffer and the events log; writing it does not kill it.
\(An invalid .agentls.json makes the server log a warning on stderr.)"
  (agentls-test--with-workspace '(("a.txt" . "a\n") (".agentls.json" . "{ not json"))
    (let ((server (agentls--server)))
      (agentls-test--wait
       (lambda () (string-match-p "\\S-" (with-current-buffer (agentls--stderr-buffer server)
                                           (buffer-string))))
       "the server's stderr")
      (accept-process-output nil 0.2)
      (should (jsonrpc-running-p server))
      (should (equal (plist-get (agentls-call "read_file" '(:path "a.txt")) :status) "success"))
      (should (jsonrpc-running-p server))
      (with-current-buffer (jsonrpc-events-buffer server)
        (should (string-match-p "\\[stderr\\]" (buffer-string)))))))

(ert-deftest agentls-test-restart-after-exit ()
  "When the server dies, the next call starts a new connection with the open buffers."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let ((s1 (agentls--server))
          (buf (find-file-noselect (expand-file-name "a.txt" ws))))
      (with-current-buffer buf (insert "unsaved "))
      (delete-process (agentls--process s1))
      (agentls-test--wait (lambda () (not (jsonrpc-running-p s1))) "the server to die")
      (should-not (buffer-local-value 'agentls--buffer-server buf))
      (with-current-buffer agentls-log-buffer-name
        (should (string-match-p "connection closed unexpectedly" (buffer-string))))
      (let ((r (agentls-call "read_file" '(:path "a.txt"))))
        (should (equal (plist-get r :status) "success"))
        (should (string-match-p "unsaved a" (plist-get r :content))))
      (should-not (eq s1 (agentls--server nil t)))
      (should (eq (buffer-local-value 'agentls--buffer-server buf) (agentls--server nil t))))))

(ert-deftest agentls-test-two-projects ()
  "Each project root gets its own connection; buffers go to their root's server."
  (agentls-test--with-workspace '(("p1/.git/HEAD" . "ref: refs/heads/main\n") ("p1/a.txt" . "one\n")
                                  ("p2/.git/HEAD" . "ref: refs/heads/main\n") ("p2/a.txt" . "two\n"))
    (let* ((project-find-functions (list #'project-try-vc))
           (b1 (find-file-noselect (expand-file-name "p1/a.txt" ws)))
           (b2 (find-file-noselect (expand-file-name "p2/a.txt" ws)))
           (r1 (with-current-buffer b1 (insert "1 ") (agentls-call "read_file" '(:path "a.txt"))))
           (r2 (with-current-buffer b2 (insert "2 ") (agentls-call "read_file" '(:path "a.txt")))))
      (should (string-match-p "1 one" (plist-get r1 :content)))
      (should (string-match-p "2 two" (plist-get r2 :content)))
      (let ((s1 (buffer-local-value 'agentls--buffer-server b1))
            (s2 (buffer-local-value 'agentls--buffer-server b2)))
        (should (agentls-server-p s1))
        (should (agentls-server-p s2))
        (should-not (eq s1 s2))
        (should (equal (agentls--root s1) (expand-file-name "p1/" ws)))
        (should (equal (agentls--root s2) (expand-file-name "p2/" ws)))))))

(ert-deftest agentls-test-server-dies-mid-call ()
  "A call in flight when the server dies ends at once: status error, code JSONRPC
\(Server died, -1), and its review goes away; a sync request fails at once too."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((server (agentls--server))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "a" "b")))
      (agentls-test--wait (lambda () (> agentls-test--approvals-seen seen)) "the approval request")
      (should (= (agentls-pending-approvals) 1))
      (delete-process (agentls--process server))
      (agentls-test--wait (lambda () (car box)) "the callback" 5)
      (should (equal (plist-get (car box) :status) "error"))
      (should (equal (plist-get (plist-get (car box) :error) :code) "JSONRPC"))
      (should (string-match-p "Server died (-1)" (plist-get (plist-get (car box) :error) :message)))
      (should (= (agentls-pending-approvals) 0))
      (should-not (jsonrpc-running-p server))
      (should (equal (agentls-test--file ws "a.txt") "a\n")))))

(ert-deftest agentls-test-glob-patterns ()
  "LSP glob patterns of a file-watch registration, as regexps over relative names."
  (pcase-dolist (`(,glob ,yes ,no)
                 '(("**/*" ("a.txt" "sub/b.txt" ".agentls.json") ())
                   ("*.go" ("x.go") ("d/x.go" "x.gox"))
                   ("**/*.{go,mod}" ("a/b.mod" "c.go") ("a/b.sum"))
                   ("src/?.txt" ("src/a.txt") ("src/ab.txt" "a.txt"))
                   ("[!.]*" ("a") (".git"))
                   ("a.b" ("a.b") ("axb"))))
    (let ((re (agentls--glob-regexp glob)))
      (dolist (f yes) (should (equal (list glob f (and (string-match-p re f) t)) (list glob f t))))
      (dolist (f no) (should (equal (list glob f (string-match-p re f)) (list glob f nil)))))))

;;; Public names only

(defconst agentls-test--private-exception
  '("eglot--signal-textDocument/didChange" . agentls--eglot-send-changes)
  "The one private name agentls.el uses, and the only function it may be in.
Emacs 30's eglot has no public way to send a buffer's pending changes
now (see `agentls--eglot-send-changes').")

(defun agentls-test--private-uses (text)
  "Problems of TEXT (Emacs Lisp) for the public-API rule of agentls.el:
a list of strings.  It reports every `eglot--' or `jsonrpc--' name
(in code, strings or comments) except the allowed exception inside its
function, advice of any kind, and `cl-defmethod's on eglot's or
jsonrpc's generic functions that have qualifiers (:around...) or are
not specialized on agentls.el's own classes."
  (let (problems)
    (with-temp-buffer
      (insert text)
      (with-syntax-table emacs-lisp-mode-syntax-table
        (goto-char (point-min))
        (while (re-search-forward "\\_<\\(?:eglot\\|jsonrpc\\)--[^][ \t\n()'\"`,;]*" nil t)
          (let* ((name (match-string 0))
                 (top (car (nth 9 (save-excursion (syntax-ppss (match-beginning 0))))))
                 (form (and top (save-excursion (goto-char top)
                                                (ignore-errors (read (current-buffer)))))))
            (unless (and (equal name (car agentls-test--private-exception))
                         (eq (car-safe form) 'defun)
                         (eq (nth 1 form) (cdr agentls-test--private-exception)))
              (push (format "private name %s (line %d)" name (line-number-at-pos (match-beginning 0)))
                    problems))))
        (goto-char (point-min))
        (while (re-search-forward
                "(\\(advice-add\\|advice-remove\\|define-advice\\|defadvice\\|add-function\\|remove-function\\)\\_>"
                nil t)
          (unless (nth 8 (save-excursion (syntax-ppss (match-beginning 0)))) ; not in a comment or string
            (push (format "advice: %s (line %d)" (match-string 1)
                          (line-number-at-pos (match-beginning 0)))
                  problems)))
        (goto-char (point-min))
        (let (form)
          (while (setq form (condition-case nil (read (current-buffer)) (end-of-file nil)))
            (when (and (eq (car-safe form) 'cl-defmethod)
                       (string-match-p "\\`\\(?:eglot\\|jsonrpc\\)-" (symbol-name (nth 1 form))))
              (let* ((rest (nthcdr 2 form))
                     (qualifiers (cl-loop for x in rest until (listp x) collect x))
                     (args (cl-find-if #'listp rest))
                     (first (car args))
                     (class (car-safe (cdr-safe first))))
                (when qualifiers
                  (push (format "qualified method %S %S" (nth 1 form) qualifiers) problems))
                (unless (memq class '(agentls-server agentls-rpc-connection))
                  (push (format "method %S specialized on %S" (nth 1 form) class)
                        problems))))))))
    (nreverse problems)))

(ert-deftest agentls-test-public-names-only ()
  "agentls*.el use only eglot's and jsonrpc's public names and advise nothing.
The checker is run on known-bad samples first (each must be reported),
then on every agentls*.el file of the package (none may be)."
  (dolist (bad '("(defun f (s) (eglot--project s))"
                 ";; see `jsonrpc--process'\n(defun g () 1)"
                 "(defun agentls--other () (eglot--signal-textDocument/didChange))"
                 "(cl-defmethod jsonrpc-connection-send :around ((s agentls-server) &rest _) (cl-call-next-method))"
                 "(cl-defmethod jsonrpc-connection-send ((s jsonrpc-process-connection) &rest _) nil)"
                 "(cl-defmethod eglot-handle-request (s (_m (eql foo))) nil)"
                 "(advice-add 'jsonrpc-connection-send :around #'ignore)"
                 "(define-advice jsonrpc-notify (:before (&rest _) x) nil)"))
    (should (agentls-test--private-uses bad)))
  (should-not (agentls-test--private-uses
               "(defun agentls--eglot-send-changes ()\n  \"Uses `eglot--signal-textDocument/didChange'.\"\n  (eglot--signal-textDocument/didChange))\n;; no advice here\n(cl-defmethod jsonrpc-running-p ((c agentls-rpc-connection)) t)"))
  (let* ((dir (file-name-directory (locate-library "agentls.el")))
         (files (directory-files dir t "\\`agentls.*\\.el\\'")))
    (should (member (expand-file-name "agentls-rpc.el" dir) files))
    (should (>= (length files) 7))
    (dolist (file files)
      (let ((problems (agentls-test--private-uses
                       (with-temp-buffer (insert-file-contents file) (buffer-string)))))
        (should (equal (list (file-name-nondirectory file) problems)
                       (list (file-name-nondirectory file) nil)))))))

(ert-deftest agentls-test-files-are-small ()
  "No file of the package is over 800 lines."
  (let ((dir (file-name-directory (locate-library "agentls.el"))))
    (dolist (file (directory-files dir t "\\`agentls.*\\.el\\'"))
      (with-temp-buffer
        (insert-file-contents file)
        (should (equal (list (file-name-nondirectory file) (<= (count-lines (point-min) (point-max)) 800))
                       (list (file-name-nondirectory file) t)))))))

(provide 'agentls-test)
;;; agentls-test.el ends here
