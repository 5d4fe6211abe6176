;;; plain-eglot-test.el --- Emacs 30's eglot with no package against the real agentls  -*- lexical-binding: t; -*-

;;; Commentary:

;; agentls with a client nobody here wrote: eglot as Emacs 30 ships it,
;; with its default settings and capabilities (documentChanges, no
;; resource operations, no change annotations), and without agentls.el.
;; Run by editors/emacs/test/run.sh:
;;   AGENTLS_BIN=/path/to/agentls emacs --batch -Q -L editors/emacs/test \
;;     -l editors/emacs/test/plain-eglot-test.el -f ert-run-tests-batch-and-exit
;; (agentls-test-helpers.el, from that folder, without agentls.el: only its
;; first part is used here).
;;
;; What a person does is done the way they would: typing is an insert in
;; the buffer, answering eglot's own confirmation is `y-or-n-p' returning,
;; approving the server's question is choosing "Approve" in
;; `completing-read' (eglot's window/showMessageRequest).  Batch Emacs is
;; never idle, so the tests run eglot's didChange idle timer themselves
;; while they wait, as an idle interactive Emacs would.

;;; Code:

(require 'ert)
(require 'cl-lib)
(require 'eglot)
(require 'flymake)
(require 'agentls-test-helpers)

(defvar plain-eglot--answer-y t
  "What the person answers to eglot's own confirmation.")

(defvar plain-eglot--asked nil
  "The prompts eglot showed the person.")

(defvar plain-eglot--partials nil
  "The partial results (values of $/progress on a test's token) seen.")

(defun plain-eglot--idle ()
  "Run eglot's pending didChange idle timers, as an idle Emacs would."
  (dolist (buf (buffer-list))
    (with-current-buffer buf
      (when (and (bound-and-true-p eglot--managed-mode) eglot--change-idle-timer)
        (let ((tm eglot--change-idle-timer))
          (cancel-timer tm)
          (apply (timer--function tm) (timer--args tm)))))))

(defun plain-eglot--wait (pred what &optional timeout)
  "Process events (idle included) until PRED; fail naming WHAT after TIMEOUT s."
  (agentls-test--wait pred what (or timeout 20) #'plain-eglot--idle))

(defun plain-eglot--call (name args &optional extra)
  "Call tool NAME with ARGS (a plist) from the current buffer, as eglot
requests go: pending changes first, then an asynchronous request while
Emacs stays responsive.  Returns the ToolResult as a plist."
  (eglot--signal-textDocument/didChange)
  (let (result done)
    (jsonrpc-async-request (eglot-current-server) :tool/call
                           (append (list :name name :arguments args) extra)
                           :success-fn (lambda (r) (setq result r done t))
                           :error-fn (lambda (e) (setq result (list :status "jsonrpc-error" :error e) done t))
                           :timeout 30)
    (plain-eglot--wait (lambda () done) (format "the result of %s" name) 30)
    result))

(defmacro plain-eglot--with-workspace (files init-options &rest body)
  "Run BODY with `ws' a new project holding FILES and eglot started on it.
FILES is ((NAME . TEXT)...); INIT-OPTIONS is agentls's initializationOptions."
  (declare (indent 2) (debug t))
  `(let* ((ws (agentls-test--make-workspace "plain-eglot-" ,files))
          (default-directory ws)
          (plain-eglot--asked nil)
          (plain-eglot--partials nil)
          (plain-eglot--answer-y t)
          ;; A project of its own (a .git folder), as project.el finds it.
          (_ (make-directory (expand-file-name ".git" ws) t))
          (plain-eglot--init ,init-options)
          (eglot-server-programs
           (list (cons 'text-mode (list agentls-test-bin "serve" :initializationOptions plain-eglot--init)))))
     (cl-letf (((symbol-function 'y-or-n-p)
                (lambda (prompt)
                  (push prompt plain-eglot--asked)
                  plain-eglot--answer-y))
               ;; eglot's window/showMessageRequest: the person approves.
               ((symbol-function 'completing-read)
                (lambda (prompt collection &rest _)
                  (push prompt plain-eglot--asked)
                  (or (seq-find (lambda (c) (string= (if (consp c) (car c) c) "Approve"))
                                (if (hash-table-p collection) (hash-table-keys collection) collection))
                      ""))))
       (unwind-protect
           (progn ,@body)
         (ignore-errors (eglot-shutdown-all))
         (agentls-test--delete-workspace ws)))))

(defun plain-eglot--open (ws name)
  "Visit NAME of WS in `text-mode' with eglot managing it; return the buffer."
  (let ((buf (find-file-noselect (expand-file-name name ws))))
    (with-current-buffer buf
      (unless (derived-mode-p 'text-mode)
        (text-mode))
      (unless (eglot-current-server)
        (let ((eglot-sync-connect t))
          (call-interactively #'eglot)))
      (plain-eglot--wait (lambda () (and (eglot-current-server) eglot--managed-mode)) "eglot to manage the buffer"))
    buf))

(defun plain-eglot--get (plist &rest keys)
  (while keys
    (setq plist (plist-get plist (pop keys))))
  plist)

(ert-deftest plain-eglot-capabilities-are-the-defaults ()
  "The capabilities eglot sends: documentChanges, no resource operations,
no change annotations."
  (plain-eglot--with-workspace '(("a.txt" . "a\n")) nil
    (with-current-buffer (plain-eglot--open ws "a.txt")
      (let ((edit (plain-eglot--get (eglot-client-capabilities (eglot-current-server)) :workspace :workspaceEdit)))
        (should (eq t (plist-get edit :documentChanges)))
        (should-not (plist-get edit :resourceOperations))
        (should-not (plist-get edit :changeAnnotationSupport))))))

(ert-deftest plain-eglot-edits-keep-unsaved-work ()
  "Edits land in the unsaved buffer; the disk keeps the saved text; a second edit keeps the first."
  (plain-eglot--with-workspace '(("a.txt" . "one\ntwo\nthree\n")) nil
    (let ((buf (plain-eglot--open ws "a.txt")))
      (with-current-buffer buf
        (goto-char (point-min))
        (end-of-line)
        (insert " (unsaved é中😀)")
        (let ((r (plain-eglot--call "edit_file" '(:path "a.txt" :old_string "two" :new_string "TWO 😀"))))
          (should (equal "success" (plist-get r :status)))
          (should (equal "editor" (plain-eglot--get r :structured :applied_by))))
        (let ((r (plain-eglot--call "edit_file" '(:path "a.txt" :old_string "three" :new_string "THREE"))))
          (should (equal "success" (plist-get r :status)))
          (should (equal ["a.txt"] (plain-eglot--get r :structured :unsaved))))
        (should (equal "one (unsaved é中😀)\nTWO 😀\nTHREE\n" (buffer-string)))
        (should (buffer-modified-p))
        (should (equal "one\ntwo\nthree\n" (agentls-test--file ws "a.txt")))))))

(ert-deftest plain-eglot-declined-confirmation-is-not-success ()
  "eglot asks before editing a file no buffer visits; declined, it still
answers applied: the result must not be success, and nothing changes."
  (plain-eglot--with-workspace '(("a.txt" . "a\n") ("other.txt" . "x\n")) nil
    (with-current-buffer (plain-eglot--open ws "a.txt")
      (setq plain-eglot--answer-y nil)
      (let ((r (plain-eglot--call "edit_file" '(:path "other.txt" :old_string "x" :new_string "y"))))
        (should (equal "error" (plist-get r :status)))
        (should (equal "NOT_APPLIED" (plain-eglot--get r :error :code)))
        (should (equal "none" (plain-eglot--get r :structured :landed)))
        (should (equal ["other.txt"] (plain-eglot--get r :structured :not_landed)))
        (should (cl-some (lambda (p) (string-match-p "Server wants to edit" p)) plain-eglot--asked)))
      (should (equal "x\n" (agentls-test--file ws "other.txt")))
      ;; Accepted, the same edit lands (in a buffer eglot opens, unsaved).
      (setq plain-eglot--answer-y t)
      (let ((r (plain-eglot--call "edit_file" '(:path "other.txt" :old_string "x" :new_string "y"))))
        (should (equal "success" (plist-get r :status)))
        (should (equal "y\n" (with-current-buffer (find-buffer-visiting (expand-file-name "other.txt" ws)) (buffer-string))))))))

(ert-deftest plain-eglot-new-file-lands-with-content ()
  "write_file of a new file: on disk with its content, no unsaved buffer."
  (plain-eglot--with-workspace '(("a.txt" . "a\n")) nil
    (with-current-buffer (plain-eglot--open ws "a.txt")
      (let ((r (plain-eglot--call "write_file" '(:path "new/made.txt" :content "made é\n"))))
        (should (equal "success" (plist-get r :status)))
        (should (equal "made é\n" (agentls-test--file ws "new/made.txt")))
        (should-not (find-buffer-visiting (expand-file-name "new/made.txt" ws)))))))

(ert-deftest plain-eglot-grep-partial-results-not-repeated ()
  "With a partialResultToken the final result repeats nothing streamed."
  (plain-eglot--with-workspace
      (cons '("a.txt" . "x\n")
            (cl-loop for i below 10 collect (cons (format "d/f%d.txt" i) "needle\nhay\nneedle\n")))
      nil
    (with-current-buffer (plain-eglot--open ws "a.txt")
      (let ((seen (make-hash-table :test 'equal)))
        (cl-letf* ((orig (symbol-function 'eglot-handle-notification))
                   ((symbol-function 'eglot-handle-notification)
                    (lambda (server method &rest params)
                      (if (and (eq method '$/progress) (equal (plist-get params :token) "grep-tok"))
                          (seq-doseq (m (plist-get (plist-get params :value) :matches))
                            (let ((k (format "%s:%s" (plist-get m :path) (plist-get m :line))))
                              (puthash k (1+ (gethash k seen 0)) seen)))
                        (apply orig server method params)))))
          (let ((r (plain-eglot--call "grep" '(:pattern "needle") '(:partialResultToken "grep-tok"))))
            (should (equal "success" (plist-get r :status)))
            (should (equal [] (plain-eglot--get r :structured :matches)))
            (should (equal 20 (plain-eglot--get r :structured :streamed)))
            (plain-eglot--wait (lambda () (= 20 (hash-table-count seen))) "20 streamed matches")
            (maphash (lambda (k n) (should (equal (cons k 1) (cons k n)))) seen)))))))

(ert-deftest plain-eglot-second-root-paths-round-trip ()
  "A folder added with didChangeWorkspaceFolders: its result paths read back."
  (plain-eglot--with-workspace '(("a.txt" . "first root\n")) nil
    (let ((second (file-name-as-directory (file-truename (make-temp-file "plain-eglot-second-" t)))))
      (unwind-protect
          (with-current-buffer (plain-eglot--open ws "a.txt")
            (make-directory (expand-file-name "pkg" second) t)
            (with-temp-file (expand-file-name "pkg/two.txt" second) (insert "second root\n"))
            (jsonrpc-notify (eglot-current-server) :workspace/didChangeWorkspaceFolders
                            `(:event (:added [(:uri ,(eglot-path-to-uri (directory-file-name second)) :name "backend")]
                                      :removed [])))
            (let* ((g (plain-eglot--call "grep" '(:pattern "second root" :path "backend")))
                   (path (plist-get (aref (plain-eglot--get g :structured :matches) 0) :path)))
              (should (equal "backend/pkg/two.txt" path))
              (let ((r (plain-eglot--call "read_file" `(:path ,path))))
                (should (equal "success" (plist-get r :status)))
                (should (string-match-p "second root" (plist-get r :content)))))
            (should (equal "success" (plist-get (plain-eglot--call "read_file" '(:path "a.txt")) :status))))
        (delete-directory second t)))))

(ert-deftest plain-eglot-diagnostics-have-ranges ()
  "Flymake marks the offending code itself: the literal, the name."
  (plain-eglot--with-workspace
      '(("go.mod" . "module m\n\ngo 1.22\n")
        ("main.go" . "package main\n\nfunc main() {\n\tvar s string = 1\n\t_ = s\n\tundefinedName()\n}\n"))
      '(:config (:lsp (:features ["diagnostics"])))
    (with-current-buffer (plain-eglot--open ws "main.go")
      (flymake-start)
      (plain-eglot--wait (lambda () (>= (length (flymake-diagnostics)) 2)) "two flymake diagnostics" 30)
      (let ((texts (mapcar (lambda (d) (buffer-substring-no-properties (flymake-diagnostic-beg d) (flymake-diagnostic-end d)))
                           (flymake-diagnostics))))
        (should (member "1" texts))
        (should (member "undefinedName" texts))))))

(defun plain-eglot--registrations (server)
  "The client/registerCapability requests in SERVER's events buffer (the
one `eglot-events-buffer' shows): the text of each logged message."
  (with-current-buffer (jsonrpc-events-buffer server)
    (save-excursion
      (goto-char (point-min))
      (let (found)
        (while (re-search-forward "client/registerCapability" nil t)
          (push (buffer-substring-no-properties (line-beginning-position)
                                                (save-excursion (forward-paragraph) (point)))
                found))
        (nreverse found)))))

(defun plain-eglot--tools (server)
  "The names of the tools SERVER lists now."
  (mapcar (lambda (tool) (plist-get tool :name))
          (plist-get (jsonrpc-request server :tool/list nil) :tools)))

(ert-deftest plain-eglot-no-file-watches ()
  "agentls watches its roots itself, so it never asks eglot to watch files
(no client/registerCapability of workspace/didChangeWatchedFiles, which
eglot would answer with a watch of the folder of every project file), and
eglot watches none; a change made outside Emacs is seen all the same (a
rewritten .agentls.json is read again).  A folder agentls cannot watch (it
does not exist) makes it ask eglot after all."
  (plain-eglot--with-workspace '(("a.txt" . "a\n") ("sub/b.txt" . "b\n") ("sub/deeper/c.txt" . "c\n")) nil
    ;; A real repository, so that `project-files' (which eglot's watches
    ;; follow) lists the files.
    (should (= 0 (call-process "git" nil nil nil "init" "-q" ws)))
    (with-current-buffer (plain-eglot--open ws "a.txt")
      (let ((server (eglot-current-server))
            (missing (expand-file-name "missing" (make-temp-file "plain-eglot-missing-" t))))
        (unwind-protect
            (progn
              (should (< 1 (length (plain-eglot--tools server))))
              ;; Written by another program: no buffer, no notification.
              (with-temp-file (expand-file-name ".agentls.json" ws)
                (insert "{\"tools\":{\"enabled\":[\"get_current_datetime\"]}}"))
              (plain-eglot--wait (lambda () (equal '("get_current_datetime") (plain-eglot--tools server)))
                                 "agentls to read the rewritten .agentls.json")
              (should-not (cl-some (lambda (r) (string-match-p "didChangeWatchedFiles" r))
                                   (plain-eglot--registrations server)))
              ;; eglot keeps its watches per server (no public accessor).
              (should (= 0 (hash-table-count (eglot--file-watches server))))
              ;; The other way: a folder agentls cannot watch.
              (jsonrpc-notify server :workspace/didChangeWorkspaceFolders
                              `(:event (:added [(:uri ,(eglot-path-to-uri missing) :name "missing")] :removed [])))
              (plain-eglot--wait (lambda () (cl-some (lambda (r) (string-match-p "didChangeWatchedFiles" r))
                                                     (plain-eglot--registrations server)))
                                 "agentls to ask eglot to watch files")
              (plain-eglot--wait (lambda () (< 0 (hash-table-count (eglot--file-watches server))))
                                 "eglot to watch the project's folders"))
          (delete-directory (file-name-directory missing) t))))))

(provide 'plain-eglot-test)
;;; plain-eglot-test.el ends here
