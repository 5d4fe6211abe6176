;;; agentls-sync-test.el --- ERT tests of agentls.el: buffers in sync with the server  -*- lexical-binding: t; -*-

;;; Commentary:

;; Against the real agentls binary, each test on a fresh temporary
;; workspace (editors/emacs/test/run.sh runs every agentls*-test.el):
;; what the server reads of buffers: unsaved text, random edits in
;; UTF-16, reverts and renames, changes sent before a call, and living
;; next to the user's own eglot server.

;;; Code:

(require 'agentls)
(require 'agentls-test-helpers)     ; with ert and cl-lib

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
        (agentls-test--answer seen box))
      (with-current-buffer buf
        (should (equal (buffer-string) "DISK text\nbuffer text\n"))))))

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

(defmacro agentls-test--with-user-eglot (file &rest body)
  "Visit FILE of `ws' in `agentls-test-lang-mode', start the user's eglot
server for it (a second agentls) and run BODY in that buffer with `buf'
and `user-server' bound; shut that server down after."
  (declare (indent 1) (debug t))
  `(cl-letf* (;; The user's eglot server asks for file watches too: no
              ;; real inotify in batch mode (its events are never read).
              ((symbol-function 'file-notify-add-watch) (lambda (&rest _) (list 'fake-watch)))
              ((symbol-function 'file-notify-rm-watch) #'ignore)
              (eglot-sync-connect t)
              (eglot-autoshutdown nil)
              (auto-mode-alist (cons '("\\.lang\\'" . agentls-test-lang-mode) auto-mode-alist))
              (eglot-server-programs (cons `(agentls-test-lang-mode . (,agentls-test-bin "serve"))
                                           eglot-server-programs))
              (buf (find-file-noselect (expand-file-name ,file ws)))
              (user-server nil))
     (unwind-protect
         (with-current-buffer buf
           (should (eq major-mode 'agentls-test-lang-mode))
           (pcase-let ((`(,modes ,project ,class ,contact ,langs) (eglot--guess-contact)))
             (setq user-server (eglot modes project class contact langs)))
           (should user-server)
           (should-not (agentls-server-p user-server))
           ,@body)
       (when (and user-server (jsonrpc-running-p user-server))
         ;; From the managed buffer: eglot 1.17's shutdown request
         ;; flushes that buffer's changes first.
         (with-current-buffer buf (eglot-shutdown user-server))))))

(ert-deftest agentls-test-flush-eglot-before-call ()
  "With agentls run by plain eglot for a major mode, a tool/call sent through
agentls.el on that eglot server first flushes eglot's lazy didChange."
  (agentls-test--with-workspace '(("y.lang" . "fn main\n"))
    (let ((eglot-send-changes-idle-time 60))
      (agentls-test--with-user-eglot "y.lang"
        (switch-to-buffer buf)
        (goto-char (point-max))
        (agentls-test--type "typed SPC by SPC me")
        (eglot--track-changes-fetch eglot--track-changes)
        (should eglot--recent-changes)  ; eglot has not sent them yet
        (let ((r (agentls-call "read_file" '(:path "y.lang") :server user-server)))
          (should (string-match-p "typed by me" (plist-get r :content))))
        ;; The handle of a call on an eglot server has its request's id
        ;; (read from jsonrpc's event), for `agentls-cancel'.
        (let* ((box (list nil))
               (h (agentls-call-async "read_file" '(:path "y.lang")
                                      (lambda (r) (setcar box r)) :server user-server)))
          (should (integerp (plist-get h :id)))
          (agentls-test--should-end box "success" "the second result"))))))

(ert-deftest agentls-test-coexists-with-user-eglot-server ()
  "A buffer managed by the user's eglot server keeps it; agentls edits it too."
  (agentls-test--with-workspace '(("x.lang" . "fn main\n"))
    (agentls-test--with-user-eglot "x.lang"
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
        (agentls-test--answer seen box))
      (should (equal (buffer-string) "fn main2\ntyped\n"))
      (should-not (buffer-modified-p))
      (should (eq (eglot-current-server) user-server))
      (eglot--signal-textDocument/didChange)
      (let ((r (jsonrpc-request user-server :tool/call
                                '(:name "read_file" :arguments (:path "x.lang")))))
        (should (string-match-p "fn main2" (plist-get r :content)))))))

(defun agentls-test--watch-registration (server)
  "What the client capabilities of SERVER say of watched files'
dynamicRegistration: t, or :json-false."
  (plist-get (plist-get (plist-get (eglot-client-capabilities server) :workspace)
                        :didChangeWatchedFiles)
             :dynamicRegistration))

(ert-deftest agentls-test-file-watches-registered ()
  "The server's didChangeWatchedFiles registration is served by eglot's watches, removed at shutdown.
The server registers it only for a folder it cannot watch itself (one
that does not exist, here; on Linux it watches the others).  Only the
folders of files its globs name are watched (sub/ holds a Go file;
assets/ only a picture), not every folder.
\(The events themselves need Emacs' command loop: test/tty.sh checks them.)"
  (agentls-test--with-workspace '(("a.txt" . "a\n") ("sub/b.go" . "package b\n")
                                  ("assets/logo.png" . "png") ("assets/deep/x.bin" . "x"))
    ;; Real inotify watches are not for batch mode (their events pile up
    ;; as input nobody reads): fake the watch primitives here.
    (cl-letf* ((watches nil)
               ((symbol-function 'file-notify-add-watch)
                (lambda (dir &rest _) (push dir watches) (cons 'fake-watch dir)))
               ((symbol-function 'file-notify-rm-watch)
                (lambda (w) (setq watches (delete (cdr w) watches)))))
      (let* ((agentls-watch-files t)    ; off by default in batch mode
             (server (agentls--server)))
        (should (eq (agentls-test--watch-registration server) t))
        (jsonrpc-notify server :workspace/didChangeWorkspaceFolders
                        `(:event (:added [(:uri ,(eglot-path-to-uri (expand-file-name "not-yet" ws)) :name "not-yet")]
                                  :removed [])))
        (agentls-test--wait (lambda () (> (hash-table-count (agentls--file-watches server)) 0))
                            "the file watches")
        (should (member (expand-file-name "sub/" ws) watches))
        (should (member (file-name-as-directory (expand-file-name ws)) watches))
        (should-not (member (expand-file-name "assets/" ws) watches))
        (should-not (member (expand-file-name "assets/deep/" ws) watches))
        ;; The registration names what the server follows, not **/*.
        (let ((globs (cl-loop for (_id . watchers) in (agentls--watch-registrations server)
                              append (mapcar #'cadr watchers))))
          (should globs)
          (should-not (member (agentls--glob-regexp "**/*") globs)))
        (agentls-shutdown server)
        (should (= (hash-table-count (agentls--file-watches server)) 0))
        (should-not watches)))
    (let* ((agentls-watch-files nil)
           (server (agentls--server)))
      (should (eq (agentls-test--watch-registration server) :json-false))
      (accept-process-output nil 0.3)
      (should (= (hash-table-count (agentls--file-watches server)) 0)))
    (let* ((agentls-watch-files 'interactive)
           (server (progn (agentls-shutdown-all) (agentls--server))))
      ;; This is batch mode: no watches.
      (should (eq (agentls-test--watch-registration server) :json-false)))))

(provide 'agentls-sync-test)
;;; agentls-sync-test.el ends here
