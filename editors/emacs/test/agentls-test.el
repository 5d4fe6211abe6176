;;; agentls-test.el --- ERT tests of agentls.el: the connection, tools, the package's rules  -*- lexical-binding: t; -*-

;;; Commentary:

;; Against the real agentls binary, each test on a fresh temporary
;; workspace (editors/emacs/test/run.sh runs every agentls*-test.el):
;; the connection to the real server (start, stderr, restart, death, one per
;; project), the tool list and results, the log, and the package's own
;; rules (public names of eglot and jsonrpc only, small files).

;;; Code:

(require 'agentls)
(require 'agentls-test-helpers)     ; with ert and cl-lib

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
      (should (member "read_file" (agentls-test--tool-names))))))

(ert-deftest agentls-test-config-reaches-server ()
  "agentls-config is sent as initializationOptions.config (mode ask: read_file asks)."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let* ((agentls-config '(:approval (:mode "ask")))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--call-box "read_file" '(:path "a.txt"))))
      (should (agentls-test--asks-p seen box "an approval or a result"))
      (should (= (agentls-pending-approvals) 1))
      (should (string-match-p "^Tool: +read_file" (agentls-test--approval-buffer-text)))
      (should (string-match-p "^File: +a.txt" (agentls-test--approval-buffer-text)))
      (agentls-test--press "y")
      (agentls-test--should-end box "success"))))

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

(ert-deftest agentls-test-progress-and-events-in-log ()
  "A shell command's output streams to the log ($/progress and tool/event)."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (agentls-test--require-tools "shell_exec")
    (let* ((seen agentls-test--approvals-seen)
           (box (agentls-test--call-box "shell_exec" '(:command "echo out-marker; echo err-marker >&2")
                                        :work-done-token "tok-test")))
      (agentls-test--wait-review seen)
      (let ((text (agentls-test--approval-buffer-text)))
        (agentls-test--should-match text "^Tool: +shell_exec"
                                    "risk: execute"
                                    "echo out-marker"))
      (agentls-test--press "y")
      (agentls-test--should-end box "success")
      (with-current-buffer agentls-log-buffer-name
        (should (string-match-p "progress tok-test begin" (buffer-string)))
        (should (string-match-p "progress tok-test report.*out-marker" (buffer-string)))
        (should (string-match-p "progress tok-test end" (buffer-string)))
        (should (string-match-p "shell_exec tc_[0-9a-f]+ result success" (buffer-string)))))))

(ert-deftest agentls-test-log-names-the-agent ()
  "The log's line of a call names the agent that made it."
  (agentls-test--with-workspace '(("a.txt" . "a\n"))
    (let (done)
      (agentls-call-async "read_file" '(:path "a.txt") (lambda (r) (setq done r)) :agent "Test Agent")
      (agentls-test--wait (lambda () done) "the read_file result")
      (should (equal (plist-get done :status) "success"))
      (with-current-buffer agentls-log-buffer-name
        (should (string-match-p "read_file tc_[0-9a-f]+ call by Test Agent " (buffer-string)))))))

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
      (should (string-match-p "connection closed unexpectedly" (agentls-test--log-text)))
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
      (agentls-test--wait-review seen)
      (should (= (agentls-pending-approvals) 1))
      (delete-process (agentls--process server))
      (agentls-test--wait (lambda () (car box)) "the callback" 5)
      (should (equal (plist-get (car box) :status) "error"))
      (should (equal (plist-get (plist-get (car box) :error) :code) "JSONRPC"))
      (should (string-match-p "Server died (-1)" (plist-get (plist-get (car box) :error) :message)))
      (should (= (agentls-pending-approvals) 0))
      (should-not (jsonrpc-running-p server))
      (should (equal (agentls-test--file ws "a.txt") "a\n")))))

;; A test of the transport alone (no server): it fills the queue the
;; process filter fills, as when one read brings several messages.
(ert-deftest agentls-test-rpc-hands-over-every-queued-message ()
  "Messages read together reach jsonrpc in one timer run, in order.  Emacs
runs a timer that a timer added only when the wait it runs in ends, so with
one message a run a reply queued behind a notification waited as long as the
`jsonrpc-request' that wanted it (up to its 10 s timeout, which woke it)."
  (let* ((seen nil)
         (conn (make-instance 'agentls-rpc-connection
                              :name "agentls-test-rpc"
                              :notification-dispatcher
                              (lambda (_conn method _params) (push method seen)))))
    (unwind-protect
        (progn
          (setf (agentls--rpc-queue conn)
                (mapcar (lambda (m) (list :jsonrpc "2.0" :method m :params nil))
                        '("first" "second" "third")))
          (agentls--rpc-schedule conn)
          ;; One wait with no process output to end it early: the timers
          ;; due when it begins run, those they add do not.
          (accept-process-output nil 0.3)
          (should (equal (reverse seen) '(first second third)))
          (should-not (agentls--rpc-queue conn)))
      (kill-buffer (jsonrpc-events-buffer conn)))))

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

(defun agentls-test--private-uses (text)
  "Problems of TEXT (Emacs Lisp) for the public-API rule of agentls.el:
a list of strings.  It reports every `eglot--' or `jsonrpc--' name
(in code, strings or comments), advice of any kind, and `cl-defmethod's on eglot's or
jsonrpc's generic functions that have qualifiers (:around...) or are
not specialized on agentls.el's own classes."
  (let (problems)
    (with-temp-buffer
      (insert text)
      (with-syntax-table emacs-lisp-mode-syntax-table
        (goto-char (point-min))
        (while (re-search-forward "\\_<\\(?:eglot\\|jsonrpc\\)--[^][ \t\n()'\"`,;]*" nil t)
          (push (format "private name %s (line %d)" (match-string 0) (line-number-at-pos (match-beginning 0)))
                problems))
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
                 "(defun agentls--eglot-send-changes () (eglot--signal-textDocument/didChange))"
                 "(cl-defmethod jsonrpc-connection-send :around ((s agentls-server) &rest _) (cl-call-next-method))"
                 "(cl-defmethod jsonrpc-connection-send ((s jsonrpc-process-connection) &rest _) nil)"
                 "(cl-defmethod eglot-handle-request (s (_m (eql foo))) nil)"
                 "(advice-add 'jsonrpc-connection-send :around #'ignore)"
                 "(define-advice jsonrpc-notify (:before (&rest _) x) nil)"))
    (should (agentls-test--private-uses bad)))
  (should-not (agentls-test--private-uses
               "(defun agentls--eglot-send-changes ()\n  (eglot-execute (eglot-current-server) '(:command \"agentls.sync\")))\n;; no advice here\n(cl-defmethod jsonrpc-running-p ((c agentls-rpc-connection)) t)"))
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
