;;; agentls-edit-test.el --- ERT tests of agentls.el: edits through the editor  -*- lexical-binding: t; -*-

;;; Commentary:

;; Against the real agentls binary, each test on a fresh temporary
;; workspace (editors/emacs/test/run.sh runs every agentls*-test.el):
;; the agent's edits approved in the approval buffer and landing in
;; buffers (saved, or unsaved when the person had unsaved work), rejected,
;; stale, CRLF, one undo step, and resource operations.

;;; Code:

(require 'agentls)
(require 'agentls-test-helpers)     ; with ert and cl-lib

(ert-deftest agentls-test-edit-approve ()
  "The agent edits a file: the approval buffer shows the diff; y applies and saves."
  (agentls-test--with-edit-review
      ("src/hello.txt" "hello world\nsecond line\n" "hello world" "goodbye world")
    ;; The approval UI.
    (should (= (agentls-pending-approvals) 1))
    (should (string-match-p "agentls: 1 review\\'" (format "%s" (agentls--mode-line))))
    (let ((text (agentls-test--approval-buffer-text)))
      (agentls-test--should-match text "^Tool: +edit_file"
                                  "^File: +modify src/hello.txt"
                                  "^Context: +reason: the test asks for it"
                                  "risk: write"
                                  "^-hello world$"
                                  "^\\+goodbye world$"
                                  "y approve +n reject"))
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
    (agentls-test--should-hold buf ws "src/hello.txt" "goodbye world\nsecond line\n")
    ;; The log shows the tool events.
    (with-current-buffer (agentls-show-log)
      (should (string-match-p "edit_file tc_[0-9a-f]+ awaitingApproval" (buffer-string)))
      (should (string-match-p "edit_file tc_[0-9a-f]+ result success" (buffer-string)))
      (should (string-match-p "fileChanged modify src/hello.txt" (buffer-string))))))

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
      (should (string-match-p "notes.md was not open: kept its buffer" (agentls-test--log-text))))))

(ert-deftest agentls-test-edit-arguments ()
  "e approves with edited arguments (modifiedArguments), which the server checks again."
  (agentls-test--with-edit-review ("a.txt" "alpha\n" "alpha" "beta")
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
    ;; own diff, for the same call.
    (should (agentls-test--asks-p seen box "the edited call's review"))
    (should-not (car box))
    (let ((text (agentls-test--approval-buffer-text)))
      (should (string-match-p "^\\+gamma$" text))
      (should-not (string-match-p "^\\+beta$" text)))
    (agentls-test--press "y")
    (agentls-test--should-end box "success")
    (agentls-test--should-hold buf ws "a.txt" "gamma\n")
    ;; Edited arguments that break the schema: the call fails, nothing changes.
    (setq seen agentls-test--approvals-seen)
    (let ((box2 (agentls-test--edit-async "a.txt" "gamma" "delta")))
      (agentls-test--wait-review seen "the second approval")
      (with-current-buffer agentls-approval-buffer-name
        (agentls-approval-edit-arguments "{\"path\": \"a.txt\", \"old_string\": 1}"))
      (agentls-test--should-end box2 "error" "the second result")
      (should (equal (plist-get (plist-get (car box2) :error) :code) "INVALID_PARAMS")))
    (should (equal (agentls-test--file ws "a.txt") "gamma\n"))))

(ert-deftest agentls-test-edit-reject ()
  "n rejects: buffer and disk unchanged, result status rejected with the message."
  (agentls-test--with-edit-review ("a.txt" "keep me\n" "keep me" "changed")
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
    (agentls-test--should-hold buf ws "a.txt" "keep me\n")
    (should (= (agentls-pending-approvals) 0))))

(ert-deftest agentls-test-edit-always ()
  "a approves and remembers: the next call of the tool does not ask."
  (agentls-test--with-workspace '(("a.txt" . "one\ntwo\n"))
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" ws)))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "a.txt" "one" "ONE")))
      (agentls-test--answer seen box "a yes RET")
      (should (equal (with-current-buffer buf (buffer-string)) "ONE\ntwo\n"))
      (setq seen agentls-test--approvals-seen)
      (let ((r (agentls-call "edit_file" '(:path "a.txt" :old_string "two" :new_string "TWO")
                             :timeout 20)))
        (should (equal (plist-get r :status) "success")))
      ;; No second approval/request reached the UI.
      (should (= agentls-test--approvals-seen seen))
      (agentls-test--should-hold buf ws "a.txt" "ONE\nTWO\n"))))

(ert-deftest agentls-test-edit-unsaved-buffer-stays-unsaved ()
  "An edit to a buffer with unsaved changes lands in it, is not saved, and says so."
  (agentls-test--with-workspace '(("a.txt" . "alpha\nbeta\n"))
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" ws)))
           (seen agentls-test--approvals-seen))
      (with-current-buffer buf (goto-char (point-max)) (insert "gamma (mine)\n"))
      (let ((box (agentls-test--edit-async "a.txt" "beta" "BETA")))
        (agentls-test--answer seen box)
        (should (equal (plist-get (plist-get (car box) :structured) :unsaved) ["a.txt"])))
      (agentls-test--should-hold buf ws "a.txt" "alpha\nBETA\ngamma (mine)\n" "alpha\nbeta\n"))))

(ert-deftest agentls-test-edit-stale-after-typing ()
  "Typing while the approval waits: the server sees it and refuses a stale edit."
  (agentls-test--with-edit-review ("a.txt" "line one\n" "line one" "line 1")
    (with-current-buffer buf (goto-char (point-max)) (insert "typed meanwhile\n"))
    (agentls-test--press "y")
    (agentls-test--should-end box "error")
    (should (equal (plist-get (plist-get (car box) :error) :code) "STALE_FILE"))
    (with-current-buffer buf
      (should (equal (buffer-string) "line one\ntyped meanwhile\n")))
    (should (equal (agentls-test--file ws "a.txt") "line one\n"))))

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
                     (box (agentls-test--call-box
                           "edit_file" (list :path "r.txt" :old_string old :new_string new))))
                (when first
                  (agentls-test--wait-review seen "the approval")
                  (agentls-test--press "a yes RET")
                  (setq first nil))
                (agentls-test--should-end box "success" "the result")
                (setq text (concat (substring text 0 start) new (substring text end)))
                (cl-incf edits)
                (should (equal (with-current-buffer buf (buffer-string)) text)))))))
      (should (> edits 10))
      (should (equal (agentls-test--file ws "r.txt") text)))))

(ert-deftest agentls-test-edit-crlf-file ()
  "A CRLF file keeps its line ends: the buffer has LF, the saved file CR LF."
  (agentls-test--with-workspace '(("w.txt" . "one\r\ntwo\r\n"))
    (let* ((buf (find-file-noselect (expand-file-name "w.txt" ws)))
           (seen agentls-test--approvals-seen)
           (box (agentls-test--edit-async "w.txt" "two" "TWO\nTHREE")))
      (should (eq (coding-system-eol-type (buffer-local-value 'buffer-file-coding-system buf)) 1))
      (agentls-test--answer seen box)
      (agentls-test--should-hold buf ws "w.txt" "one\nTWO\nTHREE\n")
      (let ((coding-system-for-read 'no-conversion))
        (should (equal (agentls-test--file ws "w.txt") "one\r\nTWO\r\nTHREE\r\n")))
      ;; (:unsaved is not checked: the server compares the buffer text (LF)
      ;; with the disk (CR LF) byte for byte, so it reports w.txt there.)
      )))

(ert-deftest agentls-test-undo-is-one-step ()
  "An approved edit of several hunks is one undo step in the buffer."
  (agentls-test--with-workspace '(("a.txt" . "x\nkeep\nx\nkeep\nx\n"))
    (let* ((buf (find-file-noselect (expand-file-name "a.txt" ws)))
           (seen agentls-test--approvals-seen))
      (with-current-buffer buf (buffer-enable-undo))
      (agentls-test--answer
       seen (agentls-test--call-box "edit_file" '(:path "a.txt" :old_string "x" :new_string "zz"
                                                        :replace_all t)))
      (with-current-buffer buf
        (should (equal (buffer-string) "zz\nkeep\nzz\nkeep\nzz\n"))
        (undo-boundary)
        (let ((last-command nil)) (undo))
        (should (equal (buffer-string) "x\nkeep\nx\nkeep\nx\n"))))))

(ert-deftest agentls-test-apply-resource-operations ()
  "workspace/applyEdit with create, rename, delete and text edits (synthetic edit)."
  (agentls-test--with-workspace '(("old.txt" . "moving\n") ("gone.txt" . "bye\n")
                                  ("dir/x.txt" . "x\n") ("edit.txt" . "a😀b\n"))
    (let* ((server (agentls--server))
           (uri (lambda (f) (agentls--path-to-uri (expand-file-name f ws))))
           ;; The server's workspace/applyEdit of CHANGES (documentChanges).
           (apply-edit (lambda (&rest changes)
                         (eglot-handle-request server 'workspace/applyEdit :label "test"
                                               :edit (list :documentChanges (vconcat changes)))))
           ;; A TextDocumentEdit of file F at VERSION: NEW-TEXT replaces the
           ;; UTF-16 columns FROM to TO of the first line.
           (text-edit (lambda (f version from to new-text)
                        (list :textDocument (list :uri (funcall uri f) :version version)
                              :edits (vector (list :range (list :start (list :line 0 :character from)
                                                                :end (list :line 0 :character to))
                                                   :newText new-text)))))
           (old-buf (find-file-noselect (expand-file-name "old.txt" ws)))
           (gone-buf (find-file-noselect (expand-file-name "gone.txt" ws)))
           (reply
            (funcall apply-edit
                     (list :kind "create" :uri (funcall uri "new/n.txt")
                           :options '(:overwrite :json-false :ignoreIfExists :json-false))
                     (funcall text-edit "new/n.txt" nil 0 0 "created\n")
                     (list :kind "rename" :oldUri (funcall uri "old.txt") :newUri (funcall uri "moved.txt"))
                     (list :kind "delete" :uri (funcall uri "gone.txt"))
                     (list :kind "delete" :uri (funcall uri "dir") :options '(:recursive t))
                     ;; After the emoji (2 UTF-16 code units): column 3.
                     (funcall text-edit "edit.txt" nil 3 4 "B"))))
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
      (let ((reply (funcall apply-edit (list :kind "create" :uri (funcall uri "moved.txt")))))
        (should (eq (plist-get reply :applied) :json-false))
        (should (equal (plist-get reply :failedChange) 0))
        (should (string-match-p "already exists" (plist-get reply :failureReason))))
      ;; A version mismatch is refused.
      (let ((reply (funcall apply-edit (funcall text-edit "moved.txt" 999 0 0 "no"))))
        (should (eq (plist-get reply :applied) :json-false))
        (should (string-match-p "version" (plist-get reply :failureReason)))
        (should (string-match-p "\\`\\+moving" (with-current-buffer old-buf (buffer-string))))))))

(ert-deftest agentls-test-file-operations-through-the-editor ()
  "move_file, delete_file, copy_file and apply_patch land as the editor's resource operations."
  (agentls-test--with-workspace '(("a.txt" . "one\n") ("b.txt" . "two\n") ("c.txt" . "gone\n"))
    (agentls-test--require-tools "move_file" "delete_file" "copy_file" "apply_patch")
    (let ((ba (find-file-noselect (expand-file-name "a.txt" ws)))
          (bc (find-file-noselect (expand-file-name "c.txt" ws))))
      (with-current-buffer ba (goto-char (point-max)) (insert "unsaved\n"))
      ;; move: the buffer follows the file, unsaved text included.
      (let ((r (car (agentls-test--call-approving "move_file" '(:from "a.txt" :to "sub/moved.txt")))))
        (should (equal (plist-get r :status) "success"))
        (should (equal (plist-get (plist-get r :structured) :applied_by) "editor")))
      (should (equal (buffer-file-name ba) (expand-file-name "sub/moved.txt" ws)))
      (should (equal (with-current-buffer ba (buffer-string)) "one\nunsaved\n"))
      ;; Still unsaved: the disk at the new path has the saved text.
      (should (buffer-modified-p ba))
      (should (equal (agentls-test--file ws "sub/moved.txt") "one\n"))
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

(provide 'agentls-edit-test)
;;; agentls-edit-test.el ends here
