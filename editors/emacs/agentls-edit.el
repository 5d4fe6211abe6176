;;; agentls-edit.el --- Applying the server's approved edits  -*- lexical-binding: t; -*-

;; Author: the agentls authors
;; URL: https://github.com/agentls/agentls

;;; Commentary:

;; workspace/applyEdit: an approved edit lands in the buffers (one undo
;; step per file; create, rename and delete too), versions checked
;; against the ones agentls.el sent; the buffers that had no unsaved
;; changes are saved afterwards.

;;; Code:

(require 'cl-lib)
(require 'eglot)
(require 'agentls-core)
(require 'agentls-sync)

;;; Applying the server's edits

(defun agentls--apply-text-edits (edits)
  "Apply LSP text EDITS (positions of the current text) to the buffer."
  (let* ((i -1)
         (items (mapcar (lambda (e)
                          (let ((r (plist-get e :range)))
                            (list (agentls--lsp-to-point (plist-get r :start))
                                  (agentls--lsp-to-point (plist-get r :end))
                                  (plist-get e :newText)
                                  (cl-incf i))))
                        edits))
         (sorted (sort items (lambda (x y) (or (< (car x) (car y))
                                               (and (= (car x) (car y))
                                                    (< (nth 3 x) (nth 3 y))))))))
    ;; All or nothing, and one step for `undo'.
    (let ((group (prepare-change-group))
          (done nil))
      (unwind-protect
          (progn
            (activate-change-group group)
            (save-excursion
              (save-restriction
                (widen)
                (dolist (it (reverse sorted))
                  (goto-char (nth 0 it))
                  (delete-region (nth 0 it) (nth 1 it))
                  (insert (nth 2 it)))))
            (setq done t))
        (if (not done)
            (cancel-change-group group)
          (accept-change-group group)
          (undo-amalgamate-change-group group))))))

(defun agentls--edits-for-eol (edits)
  "EDITS with CRLF made LF when the buffer's file uses CRLF.
Emacs keeps such a file's text with LF and writes CR LF back itself; a
CR in the buffer would be saved as CR CR LF."
  (if (eq (coding-system-eol-type buffer-file-coding-system) 1)
      (mapcar (lambda (e)
                (let ((text (plist-get e :newText)))
                  (if (and (stringp text) (string-search "\r\n" text))
                      (plist-put (copy-sequence e) :newText
                                 (string-replace "\r\n" "\n" text))
                    e)))
              edits)
    edits))

(defun agentls--edit-buffer (path opened)
  "A buffer visiting PATH; a new one is pushed on the list in OPENED (a cons)."
  (or (find-buffer-visiting path)
      (let ((buf (find-file-noselect path t)))
        (push buf (car opened))
        buf)))

(defun agentls--apply-workspace-edit (server wedit)
  "Apply WEDIT; return the buffers touched and whether they were clean."
  (let* ((changes (append (plist-get wedit :documentChanges) nil))
         (opened (list nil))
         (touched nil)                  ; ((buf . clean-before) ...)
         (index -1))
    (agentls--flush-all server)
    (unless changes
      ;; A plain `changes' map {uri: [TextEdit]}.
      (cl-loop for (uri edits) on (plist-get wedit :changes) by #'cddr
               do (push (list :textDocument
                              (list :uri (substring (symbol-name uri) 1) :version nil)
                              :edits edits)
                        changes))
      (setq changes (nreverse changes)))
    (condition-case err
        (dolist (ch changes)
          (cl-incf index)
          (pcase (plist-get ch :kind)
            ("create"
             (let* ((path (agentls--uri-to-path (plist-get ch :uri)))
                    (opts (plist-get ch :options)))
               (if (file-exists-p path)
                   (unless (or (eq (plist-get opts :ignoreIfExists) t)
                               (eq (plist-get opts :overwrite) t))
                     (error "%s already exists" path))
                 (make-directory (file-name-directory path) t)
                 (write-region "" nil path nil 'silent))))
            ("rename"
             (let* ((old (agentls--uri-to-path (plist-get ch :oldUri)))
                    (new (agentls--uri-to-path (plist-get ch :newUri)))
                    (opts (plist-get ch :options))
                    (buf (find-buffer-visiting old)))
               (when (and (file-exists-p new) (not (eq (plist-get opts :overwrite) t)))
                 (unless (eq (plist-get opts :ignoreIfExists) t)
                   (error "%s already exists" new)))
               (unless (and (file-exists-p new) (eq (plist-get opts :ignoreIfExists) t)
                            (not (eq (plist-get opts :overwrite) t)))
                 (make-directory (file-name-directory new) t)
                 (rename-file old new t)
                 (when buf
                   (with-current-buffer buf
                     (set-visited-file-name new t t))))))
            ("delete"
             (let* ((path (agentls--uri-to-path (plist-get ch :uri)))
                    (opts (plist-get ch :options)))
               (dolist (buf (buffer-list))
                 (let ((f (buffer-file-name buf)))
                   (when (and f (or (file-equal-p f path)
                                    (file-in-directory-p f path)))
                     (with-current-buffer buf (set-buffer-modified-p nil))
                     (kill-buffer buf))))
               (cond ((file-directory-p path)
                      (delete-directory path (eq (plist-get opts :recursive) t)))
                     ((file-exists-p path) (delete-file path))
                     ((not (eq (plist-get opts :ignoreIfNotExists) t))
                      (error "%s does not exist" path)))))
            (_
             (let* ((doc (plist-get ch :textDocument))
                    (path (agentls--uri-to-path (plist-get doc :uri)))
                    (version (plist-get doc :version))
                    (existed (find-buffer-visiting path))
                    (buf (agentls--edit-buffer path opened)))
               (with-current-buffer buf
                 (unless (assq buf touched)
                   (push (cons buf (and existed (not (buffer-modified-p)))) touched))
                 (when (and version agentls--buffer-server
                            (/= version agentls--buffer-version))
                   (error "%s changed: the edit is for version %s, the buffer is at %s"
                          path version agentls--buffer-version))
                 (when buffer-read-only
                   (error "buffer %s is read-only" (buffer-name)))
                 (agentls--apply-text-edits
                  (agentls--edits-for-eol (append (plist-get ch :edits) nil)))
                 (agentls--flush))))))
      (error
       (agentls--finish-edit server touched (car opened))
       (signal 'agentls--edit-failed (list (error-message-string err) index))))
    (agentls--finish-edit server touched (car opened))))

(define-error 'agentls--edit-failed "agentls: the edit failed")

(defun agentls--finish-edit (server touched opened)
  "Send what landed; save the clean buffers of TOUCHED; kill OPENED ones."
  (agentls--flush-all server)
  (let (unsaved)
    (pcase-dolist (`(,buf . ,clean) touched)
      (when (buffer-live-p buf)
        (with-current-buffer buf
          (when (buffer-modified-p)
            (if (and agentls-save-after-apply (or clean (memq buf opened)))
                (condition-case err
                    (let ((inhibit-message t)) (save-buffer))
                  (error (agentls--log server "could not save %s: %s"
                                       buffer-file-name (error-message-string err))))
              (push buffer-file-name unsaved))))))
    (if agentls-keep-buffers-opened-for-edits
        (dolist (buf opened)
          (when (buffer-live-p buf)
            (agentls--log server "%s was not open: kept its buffer %s (the edit is one undo step there)"
                          (buffer-file-name buf) (buffer-name buf))))
      (dolist (buf opened)
        (when (and (buffer-live-p buf) (not (buffer-modified-p buf))
                   (not (get-buffer-window buf t)))
          (kill-buffer buf))))
    unsaved))

(cl-defmethod eglot-handle-request
  ((server agentls-server) (_method (eql 'workspace/applyEdit)) &key label edit)
  "Apply an approved edit to the buffers, then save the clean ones."
  (condition-case err
      (progn
        (agentls--apply-workspace-edit server edit)
        (agentls--log server "applied %s" (or label "an edit"))
        (list :applied t))
    (agentls--edit-failed
     (agentls--log server "could not apply %s: %s" (or label "an edit") (cadr err))
     (message "agentls: could not apply the edit: %s" (cadr err))
     (list :applied :json-false :failureReason (cadr err) :failedChange (nth 2 err)))))


(provide 'agentls-edit)
;;; agentls-edit.el ends here
