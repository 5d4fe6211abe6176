;;; agentls-sync.el --- The server's view of the buffers and files  -*- lexical-binding: t; -*-

;; Author: the agentls authors
;; URL: https://github.com/agentls/agentls

;;; Commentary:

;; agentls.el keeps the server's view of the project's file buffers
;; current itself (didOpen/didChange/didSave/didClose, incremental, UTF-16
;; positions), so that the agent's tools read the person's unsaved text;
;; and it serves the server's workspace/didChangeWatchedFiles registration
;; with `file-notify' watches, so that changes made outside Emacs reach it.

;;; Code:

(require 'cl-lib)
(require 'filenotify)
(require 'agentls-core)

;;; Keeping the server's view of the buffers current

(defvar-local agentls--buffer-server nil
  "The `agentls-server' that has this buffer open.")
(defvar-local agentls--buffer-uri nil "The URI the server knows this buffer by.")
(defvar-local agentls--buffer-version 0 "The version of the last didOpen/didChange.")
(defvar-local agentls--pending-changes nil "Changes not sent yet, newest first.")
(defvar-local agentls--full-sync nil "Non-nil: send the whole text next time.")
(defvar-local agentls--before-change nil "Region and LSP positions of the change under way.")
(dolist (v '(agentls--buffer-server agentls--buffer-uri agentls--buffer-version
             agentls--pending-changes agentls--full-sync agentls--before-change))
  (put v 'permanent-local t))

(defvar agentls--change-timer nil)

(defun agentls--language-id ()
  (let ((m (symbol-name major-mode)))
    (replace-regexp-in-string "\\(-ts\\)?-mode\\'" "" m)))

(defun agentls--in-root-p (server file)
  (string-prefix-p (agentls--root server) (file-truename file)))

(defun agentls--maybe-track (&optional server)
  "Start syncing the current buffer with SERVER, or the server of its root."
  (when (and buffer-file-name (not agentls--buffer-server)
             (not (buffer-base-buffer))
             (not (file-remote-p buffer-file-name)))
    (let ((server (or server
                      (cl-find-if (lambda (s) (agentls--in-root-p s buffer-file-name))
                                  (agentls--servers)))))
      (when (and server (agentls--live-p server)
                 (agentls--in-root-p server buffer-file-name))
        (agentls--track server)))))

(defun agentls--track (server)
  (setq agentls--buffer-server server
        agentls--buffer-uri (agentls--path-to-uri buffer-file-name)
        agentls--buffer-version 0
        agentls--pending-changes nil
        agentls--full-sync nil
        agentls--before-change nil)
  (push (current-buffer) (agentls--tracked server))
  (add-hook 'before-change-functions #'agentls--before-change-fn nil t)
  (add-hook 'after-change-functions #'agentls--after-change-fn nil t)
  (add-hook 'after-save-hook #'agentls--after-save nil t)
  (add-hook 'kill-buffer-hook #'agentls--kill-buffer nil t)
  (add-hook 'after-revert-hook #'agentls--after-revert nil t)
  (condition-case err
      (jsonrpc-notify server :textDocument/didOpen
                      (list :textDocument
                            (list :uri agentls--buffer-uri
                                  :languageId (agentls--language-id)
                                  :version agentls--buffer-version
                                  :text (save-restriction
                                          (widen)
                                          (buffer-substring-no-properties
                                           (point-min) (point-max))))))
    ;; E.g. a binary file whose bytes are not valid text for JSON: the
    ;; server keeps reading it from the disk.
    (error
     (agentls--log server "not syncing %s: %s" buffer-file-name (error-message-string err))
     (agentls--untrack))))

(defun agentls--untrack (&optional notify)
  "Stop syncing the current buffer; send didClose when NOTIFY."
  (when agentls--buffer-server
    (let ((server agentls--buffer-server))
      (when (and notify (agentls--live-p server))
        (agentls--flush)
        (jsonrpc-notify server :textDocument/didClose
                        (list :textDocument (list :uri agentls--buffer-uri))))
      (setf (agentls--tracked server) (delq (current-buffer) (agentls--tracked server)))))
  (setq agentls--buffer-server nil agentls--buffer-uri nil
        agentls--pending-changes nil agentls--before-change nil)
  (remove-hook 'before-change-functions #'agentls--before-change-fn t)
  (remove-hook 'after-change-functions #'agentls--after-change-fn t)
  (remove-hook 'after-save-hook #'agentls--after-save t)
  (remove-hook 'kill-buffer-hook #'agentls--kill-buffer t)
  (remove-hook 'after-revert-hook #'agentls--after-revert t))

(dolist (f '(agentls--before-change-fn agentls--after-change-fn agentls--after-save
             agentls--kill-buffer agentls--after-revert))
  (put f 'permanent-local-hook t))

(defun agentls--before-change-fn (beg end)
  (when agentls--buffer-server
    (setq agentls--before-change
          (list beg end (agentls--point-to-lsp beg) (agentls--point-to-lsp end)))))

(defun agentls--after-change-fn (beg end pre-len)
  (when agentls--buffer-server
    (pcase agentls--before-change
      (`(,b ,e ,start ,stop)
       (if (and (= b beg) (= (- e b) pre-len))
           (push (list :range (list :start start :end stop)
                       :text (buffer-substring-no-properties beg end))
                 agentls--pending-changes)
         (setq agentls--full-sync t)))
      (_ (setq agentls--full-sync t)))
    (setq agentls--before-change nil)
    (agentls--schedule-flush)))

(defun agentls--schedule-flush ()
  (unless agentls--change-timer
    (setq agentls--change-timer
          (run-with-idle-timer agentls-change-idle-time nil #'agentls--flush-all))))

(defun agentls--flush ()
  "Send the current buffer's pending changes."
  (when (and agentls--buffer-server
             (or agentls--pending-changes agentls--full-sync)
             (agentls--live-p agentls--buffer-server))
    (cl-incf agentls--buffer-version)
    (condition-case err
        (jsonrpc-notify
         agentls--buffer-server :textDocument/didChange
         (list :textDocument (list :uri agentls--buffer-uri
                                   :version agentls--buffer-version)
               :contentChanges
               (if agentls--full-sync
                   (vector (list :text (save-restriction
                                         (widen)
                                         (buffer-substring-no-properties
                                          (point-min) (point-max)))))
                 (vconcat (reverse agentls--pending-changes)))))
      ;; Text JSON cannot carry (raw bytes): close the document, so that
      ;; the server reads the disk instead of a stale copy.
      (error
       (let ((server agentls--buffer-server))
         (agentls--log server "not syncing %s any more: %s" buffer-file-name
                       (error-message-string err))
         (ignore-errors
           (jsonrpc-notify server :textDocument/didClose
                           (list :textDocument (list :uri agentls--buffer-uri))))
         (agentls--untrack)))))
  (setq agentls--pending-changes nil agentls--full-sync nil))

(defun agentls--flush-all (&optional server)
  "Send the pending changes of every tracked buffer (of SERVER)."
  (when (timerp agentls--change-timer) (cancel-timer agentls--change-timer))
  (setq agentls--change-timer nil)
  (dolist (s (if server (list server) (agentls--servers)))
    (dolist (buf (agentls--tracked s))
      (when (buffer-live-p buf)
        (with-current-buffer buf (agentls--flush))))))

(defun agentls--after-save ()
  (when agentls--buffer-server
    (agentls--flush)
    (when (agentls--live-p agentls--buffer-server)
      (jsonrpc-notify agentls--buffer-server :textDocument/didSave
                      (list :textDocument (list :uri agentls--buffer-uri))))))

(defun agentls--kill-buffer () (agentls--untrack t))

(defun agentls--after-revert ()
  (when agentls--buffer-server
    (setq agentls--full-sync t agentls--pending-changes nil)
    (agentls--flush)))

(defun agentls--find-file ()
  "`find-file-hook': sync a newly visited file with its root's server."
  (agentls--maybe-track))

(defun agentls--after-set-visited-file-name ()
  "The buffer visits another file now: close the old one, open the new."
  (when agentls--buffer-server (agentls--untrack t))
  (agentls--maybe-track))


;;; Files changed outside Emacs (workspace/didChangeWatchedFiles)

(defun agentls--glob-regexp (glob)
  "A regexp for the file names GLOB, an LSP glob pattern, matches.
`**/' matches any number of directories, `*' and `?' characters within
one, {a,b} either alternative, [...] (or [!...]) a character class."
  (let ((i 0) (n (length glob)) (depth 0) (out nil))
    (while (< i n)
      (let ((c (aref glob i)))
        (cond
         ((and (eq c ?*) (< (1+ i) n) (eq (aref glob (1+ i)) ?*))
          (if (and (< (+ i 2) n) (eq (aref glob (+ i 2)) ?/))
              (setq out (cons "\\(?:.*/\\)?" out) i (+ i 3))
            (setq out (cons ".*" out) i (+ i 2))))
         ((eq c ?*) (setq out (cons "[^/]*" out) i (1+ i)))
         ((eq c ??) (setq out (cons "[^/]" out) i (1+ i)))
         ((eq c ?{) (setq out (cons "\\(?:" out) depth (1+ depth) i (1+ i)))
         ((and (eq c ?}) (> depth 0)) (setq out (cons "\\)" out) depth (1- depth) i (1+ i)))
         ((and (eq c ?,) (> depth 0)) (setq out (cons "\\|" out) i (1+ i)))
         ((and (eq c ?\[) (string-search "]" glob (+ i 2)))
          (let* ((end (string-search "]" glob (+ i 2)))
                 (class (substring glob (1+ i) end)))
            (setq out (cons (concat "[" (if (string-prefix-p "!" class)
                                            (concat "^" (substring class 1))
                                          class)
                                    "]")
                            out)
                  i (1+ end))))
         (t (setq out (cons (regexp-quote (string c)) out) i (1+ i))))))
    (concat "\\`" (apply #'concat (nreverse out)) "\\'")))

(defun agentls--watcher (server watcher)
  "WATCHER (an LSP FileSystemWatcher) as (BASE REGEXP . KIND) for SERVER."
  (let* ((glob (plist-get watcher :globPattern))
         (base-uri (and (consp glob) (plist-get glob :baseUri)))
         (base (cond ((stringp base-uri) (agentls--uri-to-path base-uri))
                     ((consp base-uri) (agentls--uri-to-path (plist-get base-uri :uri)))
                     (t (agentls--root server)))))
    (cons (file-name-as-directory base)
          (cons (agentls--glob-regexp (if (consp glob) (plist-get glob :pattern) glob))
                (or (plist-get watcher :kind) 7)))))

(defun agentls--watch-event (server event)
  "Tell SERVER of the file-notify EVENT when a registration wants it."
  (pcase-let ((`(,_desc ,action ,file ,file1) event))
    (pcase action
      ('renamed
       (agentls--watch-event server (list nil 'deleted file))
       (agentls--watch-event server (list nil 'created file1)))
      ((or 'created 'changed 'deleted)
       (let* ((type (pcase action ('created 1) ('changed 2) ('deleted 3)))
              (bit (ash 1 (1- type))))
         (when (and (agentls--live-p server)
                    (cl-loop for (_id . watchers) in (agentls--watch-registrations server)
                             thereis (agentls--watchers-match-p watchers file bit)))
           (jsonrpc-notify server :workspace/didChangeWatchedFiles
                           (list :changes (vector (list :uri (agentls--path-to-uri file)
                                                        :type type)))))
         (when (and (eq action 'created) (file-directory-p file))
           (agentls--watch-dir server file nil)))))))

(defun agentls--watchers-match-p (watchers file &optional bit)
  "Whether one of WATCHERS (see `agentls--watcher') wants FILE's events of
kind BIT (default: any)."
  (cl-loop for (base regexp . kind) in watchers
           thereis (and (> (logand kind (or bit 7)) 0)
                        (string-prefix-p base file)
                        (string-match-p regexp (file-relative-name file base)))))

(defun agentls--watch-dir (server dir id)
  "Watch DIR for SERVER (for registration ID, or for every one when nil)."
  (let* ((dir (file-name-as-directory dir))
         (watches (agentls--file-watches server))
         (probe (and (file-readable-p dir)
                     (or (gethash dir watches)
                         (puthash dir (list (file-notify-add-watch
                                             dir '(change)
                                             (lambda (event) (agentls--watch-event server event))))
                                  watches)))))
    (when probe
      (if id
          (cl-pushnew id (cdr probe) :test #'equal)
        (dolist (r (agentls--watch-registrations server))
          (cl-pushnew (car r) (cdr probe) :test #'equal))))))

(defun agentls--watch-files (server id watchers)
  "Serve SERVER's registration ID of workspace/didChangeWatchedFiles for WATCHERS."
  (agentls--unwatch-files server id)
  (let* ((compiled (mapcar (lambda (w) (agentls--watcher server w)) (append watchers nil)))
         (root (agentls--root server))
         (project (or (project-current nil root) (cons 'transient root)))
         ;; The folders of the files the globs want, not every folder.
         (dirs (delete-dups
                (cons (file-name-as-directory root)
                      (cl-loop for f in (project-files project)
                               when (agentls--watchers-match-p compiled f)
                               collect (file-name-directory f))))))
    (push (cons id compiled) (agentls--watch-registrations server))
    (dolist (dir dirs) (agentls--watch-dir server dir id))
    (agentls--log server "watching %d directories for changes made outside Emacs" (length dirs))))

(defun agentls--unwatch-files (server &optional id)
  "Drop SERVER's registration ID (default: all) and the watches only it needs."
  (setf (agentls--watch-registrations server)
        (and id (cl-remove id (agentls--watch-registrations server) :key #'car :test #'equal)))
  (let ((watches (agentls--file-watches server)))
    (maphash (lambda (dir watch-and-ids)
               (setcdr watch-and-ids (and id (delete id (cdr watch-and-ids))))
               (unless (cdr watch-and-ids)
                 (ignore-errors (file-notify-rm-watch (car watch-and-ids)))
                 (remhash dir watches)))
             watches)))

(provide 'agentls-sync)
;;; agentls-sync.el ends here
