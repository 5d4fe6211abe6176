;;; agentls.el --- An AI agent's tools in Emacs, every edit approved by you  -*- lexical-binding: t; -*-

;; Author: the agentls authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "29.1") (eglot "1.12") (jsonrpc "1.0.16"))
;; Keywords: tools, languages, convenience
;; URL: https://github.com/agentls/agentls

;;; Commentary:

;; agentls is a language server that exposes an AI agent's tools (read,
;; edit and write files, grep, run commands...) to the editor, so that the
;; person in the editor approves every change.  This package is its Emacs
;; client, built on eglot:
;;
;; - `agentls-server' is a subclass of `eglot-lsp-server': eglot's and
;;   jsonrpc's machinery carry the connection, and the agentls methods are
;;   `eglot-handle-request' / `eglot-handle-notification' methods.
;; - agentls runs as its *own* connection per project, next to whatever
;;   eglot server (gopls, pyright...) manages your buffers: it is never
;;   registered as a major mode's server, and it keeps the open file buffers
;;   of the project in sync itself (didOpen/didChange/didSave/didClose), so
;;   the agent's tools read your unsaved text.
;; - `approval/request' shows a review in the *agentls approval* buffer (the
;;   diff in `diff-mode'), in a side window that is never selected for you:
;;   its keys (y approve, n reject, a always, e edit) act only once you went
;;   there yourself and `agentls-approval-guard-time' passed; always and a
;;   dangerous approve ask for "yes" too.  The answer is sent
;;   asynchronously: Emacs never waits for it.
;; - After an approval the server sends a plain `workspace/applyEdit', which
;;   is applied to the buffers; buffers that had no unsaved changes before
;;   are saved afterwards (a file that was not open stays open, to undo).
;; - `tool/event' and `$/progress' go to the *agentls log* buffer
;;   (`agentls-show-log'); the mode line shows how many reviews wait.
;;
;; Public API for agent front-ends: `agentls-call', `agentls-call-async',
;; `agentls-cancel', `agentls-list-tools', `agentls-approval-rules'.
;; Commands: `agentls-run-tool', `agentls-show-log', `agentls-show-approval',
;; `agentls-list-reviews', `agentls-list-rules', `agentls-shutdown'.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'eglot)
(require 'jsonrpc)
(require 'project)
(require 'diff-mode)
(require 'json)
(require 'url-util)
(require 'parse-time)
(require 'tabulated-list)

(defgroup agentls nil
  "An AI agent's tools through the agentls language server."
  :group 'tools
  :prefix "agentls-")

(defcustom agentls-server-program "agentls"
  "The agentls binary: a program name looked up in `exec-path', or a file."
  :type 'string)

(defcustom agentls-server-args '("serve")
  "Arguments given to `agentls-server-program'."
  :type '(repeat string))

(defcustom agentls-config nil
  "Configuration sent as initializationOptions.config, or nil.
A plist with keyword keys in the shape of .agentls.json, for example
\\='(:approval (:mode \"ask\")).  It is merged over the user's and the
project's configuration files by the server."
  :type '(choice (const :tag "None" nil) plist))

(defcustom agentls-agent nil
  "Agent name sent as initializationOptions.agent (selects its tool set)."
  :type '(choice (const :tag "None" nil) string))

(defcustom agentls-model-name nil
  "Model name sent as initializationOptions.model.name."
  :type '(choice (const :tag "None" nil) string))

(defcustom agentls-save-after-apply t
  "Save the buffers an approved edit touched that had no unsaved changes.
Declared to the server as experimental.agentls.saveAfterApply."
  :type 'boolean)

(defcustom agentls-keep-buffers-opened-for-edits t
  "Keep buffers that were opened only to apply an approved edit.
When t (the default) such a buffer stays, saved, with the edit as one
step of its undo list, so you can look at it and undo it.  When nil it is
saved and killed again (the change can then only be undone on disk)."
  :type 'boolean)

(defcustom agentls-watch-files 'interactive
  "Let the server watch the project's files through eglot's file watches.
When on, the client allows dynamic registration of
workspace/didChangeWatchedFiles; the server then learns of changes made
outside Emacs (a git checkout, a formatter, an edited .agentls.json).
It costs a file watch per directory of the project.  t: on; nil: off;
`interactive': on unless Emacs runs in batch mode, where file
notifications are never delivered (they would only pile up as input
events and hold back process sentinels)."
  :type '(choice (const :tag "Unless in batch mode" interactive)
                 (const :tag "Always" t) (const :tag "Never" nil)))

(defcustom agentls-connect-timeout 30
  "Seconds to wait for the server to answer initialize."
  :type 'number)

(defcustom agentls-call-timeout nil
  "Seconds after which a tool call stops waiting, or nil for no limit.
Calls that wait for approval are rejected by the server itself after
its approval.timeoutSeconds (default 300)."
  :type '(choice (const :tag "No limit" nil) number))

(defcustom agentls-change-idle-time 0.2
  "Idle seconds after which buffer changes are sent to the server.
Changes are also sent before every request, before saving and before
answering an approval."
  :type 'number)

(defcustom agentls-call-recursive-edit 'interactive
  "How the synchronous `agentls-call' lets you answer an approval.
While `agentls-call' waits it holds the caller, so an approval it needs
is answered in a recursive edit in the approval buffer: t always, nil
never (only timers and process output run while it waits), `interactive'
when Emacs is not in batch mode."
  :type '(choice (const :tag "When not in batch mode" interactive)
                 (const :tag "Always" t) (const :tag "Never" nil)))

(define-obsolete-variable-alias 'agentls-approval-input-delay
  'agentls-approval-guard-time "0.2.0")

(defcustom agentls-approval-guard-time 1.0
  "Seconds during which the answer keys of a review do nothing.
A review is shown in a side window that is never selected for you:
keys you type stay in your buffer.  Its keys (y, n, a, e) act only in
the review window, once you moved there yourself (\[other-window],
a mouse click, `agentls-show-approval', RET in `agentls-list-reviews'),
and only after this many seconds without a key press there: every
opening starts the guard (the first and every later one, a new review
shown in the window too), and every key pressed too early starts it
again, so a burst of keys never answers."
  :type 'number)

(defvar agentls-approval-select-window nil
  "Ignored: the review window is never selected for you.")
(make-obsolete-variable 'agentls-approval-select-window
                        "the review window is never selected for you" "0.2.0")

(defun agentls--fit-approval-window (window)
  "Fit WINDOW to its review, between 8 lines and 60% of the frame."
  (fit-window-to-buffer window (max 8 (floor (* 0.6 (frame-height (window-frame window)))))
                        8))

(defcustom agentls-approval-display-action
  '((display-buffer-reuse-window display-buffer-in-side-window)
    (side . bottom) (slot . 0)
    (window-height . agentls--fit-approval-window)
    (inhibit-switch-frame . t))
  "`display-buffer' action used to show the review (approval) buffer.
Whatever it is, the review window is never selected for you."
  :type 'sexp)

(defcustom agentls-log-max-lines 5000
  "Lines kept in the *agentls log* buffer (nil: unlimited)."
  :type '(choice (const :tag "Unlimited" nil) integer))

(defface agentls-approval-label '((t :inherit bold))
  "Face of the labels (Tool, File, Context) of the approval buffer.")

(defface agentls-approval-warning
  '((t :foreground "red" :weight bold))
  "Face of a warning, and of a dangerous risk, in the review buffer.
Put on with overlays, so diff-mode's font-lock does not wipe it.")

(defface agentls-approval-risk '((t :inherit warning))
  "Face of a risk that is not dangerous in the review buffer.")

(defface agentls-mode-line-waiting '((t :inherit warning))
  "Face of the mode-line indicator when calls wait for approval.")

(defconst agentls-approval-buffer-name "*agentls approval*")
(defconst agentls-log-buffer-name "*agentls log*")
(defconst agentls-result-buffer-name "*agentls result*")
(defconst agentls-reviews-buffer-name "*agentls reviews*")
(defconst agentls-rules-buffer-name "*agentls rules*")


;;; The connection

(defclass agentls-server (eglot-lsp-server)
  ((root
    :initarg :root :accessor agentls--root
    :documentation "Workspace root (a directory name, truename).")
   (tracked
    :initform nil :accessor agentls--tracked
    :documentation "File buffers whose text the server has (didOpen).")
   (tools
    :initform nil :accessor agentls--tools-cache
    :documentation "Cached tool/list result (a vector of definitions).")
   (exit-sent
    :initform nil :accessor agentls--exit-sent
    :documentation "Non-nil once `exit' went out: nothing more may be sent."))
  :documentation
  "An agentls connection.  Not registered as any major mode's eglot
server: it lives next to them, one per project root.")

(defvar agentls--pending-approvals nil
  "Approvals (`agentls--approval') waiting for the person, oldest first.")

(defvar agentls--servers (make-hash-table :test #'equal)
  "Live `agentls-server's by root directory.")

(defun agentls--live-p (server)
  (and server (jsonrpc-running-p server)
       (not (eglot--shutdown-requested server))))

(defun agentls--servers ()
  "The live servers."
  (let (all)
    (maphash (lambda (_ s) (when (agentls--live-p s) (push s all))) agentls--servers)
    all))

(defun agentls--project-root (&optional dir)
  "The root agentls uses for DIR (default: `default-directory')."
  (let* ((dir (or dir default-directory))
         (pr (project-current nil dir))
         (root (if pr (project-root pr) dir)))
    (file-name-as-directory (file-truename (expand-file-name root)))))

(defun agentls--program ()
  "The server command line, or a `user-error' when the binary is missing."
  (let ((exe (if (file-name-absolute-p agentls-server-program) ; also "~/..."
                 (let ((file (expand-file-name agentls-server-program)))
                   (and (file-executable-p file) (not (file-directory-p file)) file))
               (executable-find agentls-server-program))))
    (unless exe
      (user-error "agentls: the server program %S was not found%s; \
install agentls or set `agentls-server-program'"
                  agentls-server-program
                  (if (file-name-absolute-p agentls-server-program) ""
                    " on `exec-path'")))
    (cons exe agentls-server-args)))

(defconst agentls--uri-allowed-chars
  (url--allowed-chars (append url-unreserved-chars '(?/)))
  "Characters left as they are in a file URI's path: unreserved and /.
\(eglot's set leaves % and others unescaped.)")

(defun agentls--path-to-uri (path)
  "The file:// URI of PATH (made a truename)."
  (concat "file://"
          (url-hexify-string (directory-file-name (file-truename path))
                             agentls--uri-allowed-chars)))

(defun agentls--uri-to-path (uri)
  "The file name of a file:// URI."
  (if (string-prefix-p "file://" uri)
      (decode-coding-string (url-unhex-string (substring uri 7)) 'utf-8)
    uri))

(defun agentls--nickname (root)
  (file-name-nondirectory (directory-file-name root)))

(defun agentls--start (root)
  "Start agentls for ROOT and return the initialized server."
  (let* ((default-directory root)
         (command (agentls--program))
         (name (format "agentls (%s)" (agentls--nickname root)))
         (server
          (apply
           #'make-instance 'agentls-server
           :name name
           :root root
           :process
           (lambda ()
             (make-process
              :name name
              :command command
              :connection-type 'pipe
              :coding 'utf-8-emacs-unix
              :noquery t
              ;; Exactly this name: jsonrpc looks the buffer up by it,
              ;; then hides it (renames it " *NAME stderr*").  Another
              ;; buffer would be killed by jsonrpc, closing the pipe: the
              ;; server would die of SIGPIPE on its first log line.
              :stderr (get-buffer-create (format "*%s stderr*" name))))
           :request-dispatcher #'agentls--dispatch-request
           :notification-dispatcher #'agentls--dispatch-notification
           :on-shutdown #'agentls--on-shutdown
           (if (boundp 'eglot-events-buffer-config)
               (list :events-buffer-config eglot-events-buffer-config)
             (list :events-buffer-scrollback-size
                   (bound-and-true-p eglot-events-buffer-size))))))
    ;; eglot's slots, so that its generic functions work on SERVER.  The
    ;; server is deliberately NOT put in `eglot--servers-by-project' and
    ;; manages no major mode (languages is nil): eglot never gives it a
    ;; buffer, and `eglot-current-server' never returns it.
    (setf (eglot--project server) (or (project-current nil root)
                                      (cons 'transient root))
          (eglot--project-nickname server) (agentls--nickname root)
          (eglot--inhibit-autoreconnect server) t
          (eglot--saved-initargs server) nil)
    ;; eglot >= 1.15 (Emacs 30): `languages'; before: `major-modes'.
    (dolist (slot '(languages major-modes language-id))
      (when (slot-exists-p server slot) (setf (slot-value server slot) nil)))
    (let ((result
           (condition-case err
               (jsonrpc-request
                server :initialize
                (list :processId (emacs-pid)
                      :clientInfo (list :name "Emacs agentls.el"
                                        :version emacs-version)
                      :rootPath (directory-file-name root)
                      :rootUri (agentls--path-to-uri root)
                      :workspaceFolders (eglot-workspace-folders server)
                      :capabilities (eglot-client-capabilities server)
                      :initializationOptions (eglot-initialization-options server))
                :timeout agentls-connect-timeout)
             (error
              (ignore-errors (jsonrpc-shutdown server))
              (user-error "agentls: %s did not start: %s (see buffer %s)"
                          (car command) (error-message-string err)
                          (format " *%s stderr*" name))))))
      (setf (eglot--capabilities server) (plist-get result :capabilities)
            (eglot--server-info server) (plist-get result :serverInfo)))
    (jsonrpc-notify server :initialized eglot--{})
    (puthash root server agentls--servers)
    (agentls--install-global-hooks)
    (agentls--log server "connected to %s %s (%s tools)"
                  (or (plist-get (eglot--server-info server) :name) "agentls")
                  (or (plist-get (eglot--server-info server) :version) "")
                  (or (plist-get (plist-get (plist-get (eglot--capabilities server)
                                                       :experimental)
                                            :agentls)
                                 :tools)
                      "?"))
    (dolist (buf (buffer-list))
      (with-current-buffer buf (agentls--maybe-track server)))
    ;; The definitions, for the approval buffer's `?' (no waiting here).
    (jsonrpc-async-request server :tool/list (if agentls-agent (list :agent agentls-agent) eglot--{})
                           :success-fn (lambda (res)
                                         (setf (agentls--tools-cache server)
                                               (append (plist-get res :tools) nil)))
                           :error-fn #'ignore :timeout-fn #'ignore)
    server))

(defun agentls--server (&optional dir no-start)
  "The live server for DIR's project; started unless NO-START."
  (let* ((root (agentls--project-root dir))
         (s (gethash root agentls--servers)))
    (cond ((agentls--live-p s) s)
          (no-start nil)
          (t (agentls--start root)))))

(defun agentls--on-shutdown (server)
  "Called by jsonrpc when SERVER's process is gone."
  (when (eq (gethash (agentls--root server) agentls--servers) server)
    (remhash (agentls--root server) agentls--servers))
  (dolist (buf (agentls--tracked server))
    (when (buffer-live-p buf)
      (with-current-buffer buf (agentls--untrack))))
  (setf (agentls--tracked server) nil)
  ;; eglot's file watches (didChangeWatchedFiles), as `eglot--on-shutdown'.
  (maphash (lambda (_dir watch-and-ids)
             (ignore-errors (file-notify-rm-watch (car watch-and-ids))))
           (eglot--file-watches server))
  (clrhash (eglot--file-watches server))
  (let ((mine (cl-remove-if-not (lambda (a) (eq (agentls--approval-server a) server))
                                agentls--pending-approvals)))
    (setq agentls--pending-approvals
          (cl-set-difference agentls--pending-approvals mine))
    (when mine (agentls--approval-refresh)))
  (agentls--log server "connection closed%s"
                (if (eglot--shutdown-requested server) ""
                  " unexpectedly (see the stderr buffer)"))
  (force-mode-line-update t))

(defun agentls-shutdown (&optional server)
  "Shut down the agentls connection of the current project (or SERVER)."
  (interactive)
  (let ((server (or server (agentls--server nil t))))
    (if (not server)
        (when (called-interactively-p 'interactive)
          (message "agentls: no connection for this project"))
      (setf (eglot--shutdown-requested server) t)
      (unwind-protect
          (ignore-errors
            (jsonrpc-request server :shutdown nil :timeout 2)
            (jsonrpc-notify server :exit nil)
            (setf (agentls--exit-sent server) t)
            ;; Let it exit by itself and its sentinel run.
            (let ((proc (jsonrpc--process server))
                  (deadline (+ (float-time) 2)))
              (while (and (< (float-time) deadline)
                          (not (process-get proc 'jsonrpc-sentinel-cleanup-started)))
                (accept-process-output nil 0.05))))
        (unless (process-get (jsonrpc--process server) 'jsonrpc-sentinel-cleanup-started)
          (jsonrpc-shutdown server t))))))

(defun agentls-send-config (&optional config server)
  "Send CONFIG (default `agentls-config') to SERVER (default: every one).
It becomes the highest configuration layer (workspace/didChangeConfiguration
settings.agentls); an invalid configuration is reported by the server and
the last valid one stays."
  (interactive)
  (dolist (s (if server (list server) (agentls--servers)))
    (jsonrpc-notify s :workspace/didChangeConfiguration
                    (list :settings (list :agentls (or config agentls-config eglot--{}))))))

(defun agentls-shutdown-all ()
  "Shut down every agentls connection."
  (interactive)
  (mapc #'agentls-shutdown (agentls--servers)))

;;; What the client declares

(cl-defmethod eglot-client-capabilities ((server agentls-server))
  "eglot's capabilities, adjusted to what agentls.el implements."
  (let* ((caps (copy-tree (cl-call-next-method)))
         (ws (plist-get caps :workspace))
         (win (plist-get caps :window)))
    (setq ws (plist-put ws :applyEdit t))
    (setq ws (plist-put ws :workspaceEdit
                        (list :documentChanges t
                              :resourceOperations ["create" "rename" "delete"]
                              :failureHandling "abort")))
    ;; eglot's file watches, when wanted (and not over TRAMP).
    (setq ws (plist-put ws :didChangeWatchedFiles
                        (list :dynamicRegistration
                              (if (and (if (eq agentls-watch-files 'interactive)
                                           (not noninteractive)
                                         agentls-watch-files)
                                       (not (file-remote-p (agentls--root server))))
                                  t :json-false))))
    (setq win (plist-put win :workDoneProgress t))
    (setq win (plist-put win :showMessage '(:messageActionItem (:additionalPropertiesSupport :json-false))))
    (setq caps (plist-put caps :workspace ws))
    (setq caps (plist-put caps :window win))
    ;; Buffers are synced in UTF-16 code units, the LSP default.
    (setq caps (plist-put caps :general '(:positionEncodings ["utf-16"])))
    (plist-put caps :experimental
               (list :agentls
                     (list :approvalRequest t
                           :saveAfterApply (if agentls-save-after-apply t :json-false)
                           :nativePreview :json-false)))))

(cl-defmethod eglot-initialization-options ((_server agentls-server))
  (let (opts)
    (when agentls-config (setq opts (plist-put opts :config agentls-config)))
    (when agentls-agent (setq opts (plist-put opts :agent agentls-agent)))
    (when agentls-model-name
      (setq opts (plist-put opts :model (list :name agentls-model-name))))
    (or opts eglot--{})))

(cl-defmethod eglot-workspace-folders ((server agentls-server))
  (vector (list :uri (agentls--path-to-uri (agentls--root server))
                :name (agentls--nickname (agentls--root server)))))

;;; Dispatch: through eglot's generic functions

(defun agentls--dispatch-request (server method params)
  ;; Unlike eglot's own dispatcher this does not bind
  ;; `eglot--cached-server': a buffer created by a handler (to apply an
  ;; edit) must find its own eglot server, never this one.
  (apply #'eglot-handle-request server method (append params nil)))

(defun agentls--dispatch-notification (server method params)
  (apply #'eglot-handle-notification server method (append params nil)))

;;; Deferred replies
;;
;; jsonrpc replies to a request with whatever its dispatcher returns, at
;; once.  An approval must be answered later, without blocking Emacs.  So
;; the handler returns an `agentls--deferred' object; the :around method
;; below sees it go out as the reply, records the request's id and sends
;; nothing.  `agentls--deferred-send' sends the real reply when the person
;; has answered.

(cl-defstruct (agentls--deferred (:constructor agentls--make-deferred)
                                 (:copier nil))
  id method (result nil) (answered nil) (sent nil))

(cl-defmethod jsonrpc-connection-send :around
  ((server agentls-server) &rest args &key id (result nil result-p) &allow-other-keys)
  (cond
   ((agentls--exit-sent server)
    ;; After `exit' the server closes its stdin: a late reply (to a request
    ;; it sent just before) would hit a closed pipe, which kills a batch
    ;; Emacs outright (SIGPIPE).  LSP wants nothing after exit anyway.
    (ignore args))
   ((and id result-p (agentls--deferred-p result))
    (setf (agentls--deferred-id result) id)
    (when (fboundp 'jsonrpc--event)     ; jsonrpc >= 1.0.24
      (jsonrpc--event server 'internal
                      :log-text (format "reply to %s (id %s) deferred"
                                        (agentls--deferred-method result) id)))
    (when (agentls--deferred-answered result)
      (agentls--deferred-send server result)))
   (t (cl-call-next-method))))

(defun agentls--deferred-reply (server deferred result)
  "Answer DEFERRED on SERVER with RESULT (once)."
  (unless (agentls--deferred-answered deferred)
    (setf (agentls--deferred-answered deferred) t
          (agentls--deferred-result deferred) result)
    (when (agentls--deferred-id deferred)
      (agentls--deferred-send server deferred))))

(defun agentls--deferred-send (server deferred)
  (unless (agentls--deferred-sent deferred)
    (setf (agentls--deferred-sent deferred) t)
    (when (jsonrpc-running-p server)
      (jsonrpc-connection-send server :id (agentls--deferred-id deferred)
                               :result (agentls--deferred-result deferred)))))


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

(defun agentls--utf16-length (s)
  (let ((n (length s)))
    (dotimes (i (length s))
      (when (> (aref s i) #xFFFF) (cl-incf n)))
    n))

(defun agentls--point-to-lsp (pos)
  "LSP position (UTF-16) of buffer position POS."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char pos)
      (list :line (1- (line-number-at-pos pos t))
            :character (agentls--utf16-length
                        (buffer-substring-no-properties (pos-bol) pos))))))

(defun agentls--lsp-to-point (pos)
  "Buffer position of LSP position POS (a plist :line :character)."
  (save-excursion
    (save-restriction
      (widen)
      (goto-char (point-min))
      (if (> (forward-line (plist-get pos :line)) 0)
          (point-max)
        (let ((n (plist-get pos :character)))
          (while (and (> n 0) (not (eolp)))
            (setq n (- n (if (> (char-after) #xFFFF) 2 1)))
            (forward-char)))
        (point)))))

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

(defun agentls--install-global-hooks ()
  (add-hook 'find-file-hook #'agentls--find-file)
  (add-hook 'after-set-visited-file-name-hook #'agentls--after-set-visited-file-name)
  (unless (member '(:eval (agentls--mode-line)) global-mode-string)
    (setq global-mode-string
          (append (or global-mode-string '("")) '((:eval (agentls--mode-line)))))))


;;; The log

(define-derived-mode agentls-log-mode special-mode "agentls-log"
  "Mode of the *agentls log* buffer: tool events, progress, messages."
  (setq-local truncate-lines nil))

(defun agentls--log (server fmt &rest args)
  "Append a line to the log buffer, prefixed by time and SERVER's project."
  (let ((buf (get-buffer-create agentls-log-buffer-name))
        (line (concat (format-time-string "%H:%M:%S ")
                      (if server (format "[%s] " (eglot--project-nickname server)) "")
                      (apply #'format fmt args)
                      "\n")))
    (with-current-buffer buf
      (unless (derived-mode-p 'agentls-log-mode) (agentls-log-mode))
      (let* ((inhibit-read-only t)
             (wins (get-buffer-window-list buf nil t))
             (follow (cl-remove-if-not (lambda (w) (= (window-point w) (point-max))) wins)))
        (save-excursion
          (goto-char (point-max))
          (insert line))
        (when (and agentls-log-max-lines
                   (> (count-lines (point-min) (point-max)) agentls-log-max-lines))
          (save-excursion
            (goto-char (point-min))
            (forward-line (- (count-lines (point-min) (point-max)) agentls-log-max-lines))
            (delete-region (point-min) (point))))
        (dolist (w follow) (set-window-point w (point-max)))))))

(defun agentls-show-log ()
  "Show the *agentls log* buffer: tool events, progress and messages."
  (interactive)
  (let ((buf (get-buffer-create agentls-log-buffer-name)))
    (with-current-buffer buf
      (unless (derived-mode-p 'agentls-log-mode) (agentls-log-mode))
      (goto-char (point-max)))
    ;; At the newest entry (a window that showed it before keeps its point
    ;; otherwise); later lines keep it there.
    (let ((win (display-buffer buf)))
      (when win
        (set-window-point win (with-current-buffer buf (point-max)))))
    buf))

(defun agentls--json (obj)
  "OBJ (as jsonrpc parsed it) as compact JSON text."
  (condition-case nil
      (json-serialize obj :false-object :json-false :null-object nil)
    (error (format "%S" obj))))

(defun agentls--json-pretty (obj)
  (with-temp-buffer
    (insert (agentls--json obj))
    (ignore-errors
      (let ((json-encoding-pretty-print t))
        (json-pretty-print-buffer)))
    (buffer-string)))

(defun agentls--truncate (s n)
  (if (> (length s) n) (concat (substring s 0 n) "…") s))

(cl-defmethod eglot-handle-notification
  ((server agentls-server) (_method (eql 'tool/event))
   &key callId tool kind arguments needsApproval message percent status path
   operation risk warning &allow-other-keys)
  "Log a tool/event; forget approvals of calls that ended."
  (agentls--log
   server "%s %s %s%s" (or tool "?") (or callId "")
   kind
   (pcase kind
     ("call" (format " %s%s" (agentls--truncate (agentls--json arguments) 200)
                     (if (eq needsApproval t) " (needs approval)" "")))
     ("awaitingApproval" (format "%s%s" (if risk (format " (risk: %s)" risk) "")
                                 (if (and (stringp warning) (not (string-empty-p warning)))
                                     (format " WARNING: %s" warning) "")))
     ("progress" (format "%s%s" (if percent (format " %s%%" percent) "")
                         (if message (concat " " (string-trim-right message)) "")))
     ("result" (format " %s" status))
     ("fileChanged" (format " %s %s" operation path))
     (_ (if message (concat " " message) ""))))
  (when (equal kind "result")
    (let ((gone (cl-remove-if-not
                 (lambda (a) (and (eq (agentls--approval-server a) server)
                                  (equal (plist-get (agentls--approval-params a) :callId)
                                         callId)))
                 agentls--pending-approvals)))
      (when gone
        (setq agentls--pending-approvals
              (cl-set-difference agentls--pending-approvals gone))
        (agentls--approval-refresh)
        (agentls--maybe-leave-recursive-edit t)))))

(cl-defmethod eglot-handle-notification
  ((server agentls-server) (_method (eql '$/progress)) &key token value)
  "Log the $/progress of agentls' running tools (shell output, grep)."
  (let ((kind (plist-get value :kind)))
    (agentls--log server "progress %s %s%s%s" token (or kind "partial")
                  (if (plist-get value :title) (concat " " (plist-get value :title)) "")
                  (cond ((plist-get value :message)
                         (concat " " (string-trim-right (plist-get value :message))))
                        (kind "")
                        (t (concat " " (agentls--truncate (agentls--json value) 300)))))))

(cl-defmethod eglot-handle-notification
  ((server agentls-server) (_method (eql 'window/logMessage)) &key type message)
  (agentls--log server "log(%s) %s" type message))

(cl-defmethod eglot-handle-notification
  ((server agentls-server) (_method (eql 'window/showMessage)) &key type message)
  (agentls--log server "message(%s) %s" type message)
  (message "[agentls] %s" message))

(cl-defmethod eglot-handle-notification
  ((server agentls-server) (_method (eql '$/cancelRequest)) &key id)
  "The server gave up a request of its own: drop its approval."
  (agentls--log server "the server withdrew its request %s" id)
  (let ((gone (cl-remove-if-not
               (lambda (a) (and (eq (agentls--approval-server a) server)
                                (equal (agentls--deferred-id (agentls--approval-deferred a)) id)))
               agentls--pending-approvals)))
    (when gone
      (setq agentls--pending-approvals (cl-set-difference agentls--pending-approvals gone))
      (agentls--approval-refresh))))


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

(defun agentls--approval-deadline-from (params)
  "When the server rejects the request of PARAMS by itself (`float-time'), or nil.
From its `deadline' (RFC 3339), else its `timeoutSeconds' from now."
  (let ((d (plist-get params :deadline))
        (s (plist-get params :timeoutSeconds)))
    (or (and (stringp d)
             (ignore-errors (float-time (parse-iso8601-time-string d))))
        (and (numberp s) (+ (float-time) s)))))

(defun agentls--duration (secs)
  "SECS as M:SS (never negative)."
  (let ((s (max 0 (round secs))))
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
      (setq buf (get-buffer-create agentls-approval-buffer-name))
      (with-current-buffer buf
        (unless (derived-mode-p 'agentls-approval-mode) (agentls-approval-mode))
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
  (let ((buf (get-buffer-create agentls-reviews-buffer-name)))
    (with-current-buffer buf
      (unless (derived-mode-p 'agentls-reviews-mode) (agentls-reviews-mode))
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


;;; Remembered answers ("always")

(defvar-local agentls--rules-server nil "The server whose rules this buffer lists.")

(defun agentls--jsonrpc-error-code (err)
  "The JSON-RPC error code in ERR (a `jsonrpc-error' condition), or nil."
  (cdr (cl-find-if (lambda (x) (and (consp x) (eq (car x) 'jsonrpc-error-code)))
                   (cdr err))))

(defun agentls-approval-rules (&optional server remove)
  "The remembered \"always\" answers of SERVER (default: the current project's).
A list of plists (:id :tool :key :label :persisted).  REMOVE: a rule id to
forget first.  A `user-error' when the server does not know approval/rules."
  (let ((server (or server (agentls--server))))
    (condition-case err
        (let ((res (jsonrpc-request server :approval/rules
                                    (if remove (list :remove remove) eglot--{})
                                    :timeout 10)))
          (when (and remove (not (eq (plist-get res :removed) t)))
            (message "agentls: there was no rule %s" remove))
          (append (plist-get res :rules) nil))
      (jsonrpc-error
       (if (eql (agentls--jsonrpc-error-code err) -32601)
           (user-error "agentls: this agentls server does not know approval/rules \
\(it is older than agentls.el): remembered \"always\" answers cannot be listed \
or revoked; they last until the server stops (M-x agentls-shutdown), persisted \
ones longer")
         (signal (car err) (cdr err)))))))

(defvar-keymap agentls-rules-mode-map
  :doc "Keys of the list of remembered answers."
  "d" #'agentls-rules-revoke
  "k" #'agentls-rules-revoke
  "DEL" #'agentls-rules-revoke)

(define-derived-mode agentls-rules-mode tabulated-list-mode "agentls-rules"
  "The remembered \"always\" answers of an agentls server.
\\<agentls-rules-mode-map>\\[agentls-rules-revoke] revokes the one at point; \
\\<tabulated-list-mode-map>\\[revert-buffer] updates the list."
  (setq tabulated-list-format
        [("Tool" 14 t) ("Covers" 44 t) ("Kept" 9 t) ("Id" 0 t)])
  (setq tabulated-list-padding 1)
  (add-hook 'tabulated-list-revert-hook
            (lambda () (agentls--rules-entries (agentls-approval-rules agentls--rules-server)))
            nil t)
  (tabulated-list-init-header))

(defun agentls--rules-entries (rules)
  "Show RULES (from approval/rules) in the current buffer's list."
  (setq tabulated-list-entries
        (mapcar (lambda (r)
                  (list (plist-get r :id)
                        (vector (format "%s" (plist-get r :tool))
                                (format "%s" (or (plist-get r :label) (plist-get r :key) ""))
                                (if (eq (plist-get r :persisted) t) "on disk" "session")
                                (format "%s" (plist-get r :id)))))
                rules)))

(defun agentls--pick-server ()
  "A live server when the current project has none: the only one, or the
one whose root the person picks."
  (let ((all (agentls--servers)))
    (cond ((null all) (user-error "agentls: no connection"))
          ((null (cdr all)) (car all))
          (t (let ((root (completing-read "agentls project: "
                                          (mapcar #'agentls--root all) nil t)))
               (cl-find root all :key #'agentls--root :test #'equal))))))

(defun agentls-list-rules (&optional server)
  "List the remembered \"always\" answers of SERVER (the current project's).
\\<agentls-rules-mode-map>\\[agentls-rules-revoke] revokes the one at point."
  (interactive)
  (let* ((server (or server (agentls--server nil t)
                     (agentls--pick-server)))
         (rules (agentls-approval-rules server))
         (buf (get-buffer-create agentls-rules-buffer-name)))
    (with-current-buffer buf
      (unless (derived-mode-p 'agentls-rules-mode) (agentls-rules-mode))
      (setq agentls--rules-server server)
      (agentls--rules-entries rules)
      (tabulated-list-print t))
    (pop-to-buffer buf)
    (unless rules (message "agentls: no remembered answers"))
    buf))

(defun agentls-rules-revoke ()
  "Forget the remembered answer at point (the server asks again next time)."
  (interactive)
  (let ((id (tabulated-list-get-id)))
    (unless id (user-error "agentls: no rule on this line"))
    (let ((rules (agentls-approval-rules agentls--rules-server id)))
      (agentls--rules-entries rules)
      (tabulated-list-print t)
      (message "agentls: revoked %s" id))))


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


;;; API: listing and calling tools

(defun agentls-list-tools (&optional format server)
  "The tool definitions (a list of plists) of SERVER or the current project.
FORMAT is \"agentls\" (default), \"openai\", \"anthropic\" or \"mcp\"."
  (let* ((server (or server (agentls--server)))
         (res (jsonrpc-request server :tool/list
                               (or (append (and format (list :format format))
                                           (and agentls-agent (list :agent agentls-agent)))
                                   eglot--{})))
         (tools (append (plist-get res :tools) nil)))
    (when (or (null format) (equal format "agentls"))
      (setf (agentls--tools-cache server) tools))
    tools))

(defun agentls--args (args)
  "ARGS (plist, alist, hash table or nil) ready to be sent as a JSON object."
  (cond ((null args) (make-hash-table))
        (t args)))

(defun agentls--error-result (tool code message &optional status)
  (list :tool tool :status (or status "error")
        :content (format "%s: %s" code message)
        :error (list :code code :message message)))

(cl-defun agentls-call-async (tool args callback &key server reason call-id agent
                                   work-done-token partial-result-token)
  "Call TOOL with ARGS (a plist such as (:path \"a.txt\")) without waiting.
CALLBACK gets the ToolResult as a plist (:callId :tool :status :content
:structured :error ...).  A JSON-RPC failure is given to CALLBACK as a
result of status \"error\" (code JSONRPC), a cancellation as status
\"cancelled\".  A call that needs approval shows the approval buffer.
Keys: SERVER (default: the current project's, started when needed),
REASON shown to the person, CALL-ID, AGENT, WORK-DONE-TOKEN and
PARTIAL-RESULT-TOKEN (progress goes to the log buffer).  Use JSON false
as :json-false.  Returns a handle for `agentls-cancel'."
  (let* ((server (or server (agentls--server)))
         (params (append (list :name tool :arguments (agentls--args args))
                         (and call-id (list :callId call-id))
                         (and reason (list :reason reason))
                         (and (or agent agentls-agent) (list :agent (or agent agentls-agent)))
                         (and work-done-token (list :workDoneToken work-done-token))
                         (and partial-result-token
                              (list :partialResultToken partial-result-token)))))
    (agentls--flush-before-call server)
    (jsonrpc-async-request
     server :tool/call params
     :success-fn (lambda (result) (funcall callback result))
     :error-fn (jsonrpc-lambda (&key code message &allow-other-keys)
                 (funcall callback
                          (if (eql code -32800)
                              (agentls--error-result tool "CANCELLED" (or message "cancelled") "cancelled")
                            (agentls--error-result tool "JSONRPC" (format "%s (%s)" message code)))))
     :timeout agentls-call-timeout
     :timeout-fn (lambda ()
                   (funcall callback (agentls--error-result
                                      tool "TIMEOUT" "agentls-call-timeout elapsed"))))
    (list :server server :id (agentls--last-request-id server) :tool tool)))

(defun agentls--flush-before-call (server)
  "Send every change the person typed before a tool/call goes to SERVER.
The tool must see what the person typed, not what an idle timer has sent
so far.  SERVER is agentls.el's own connection (its buffers' pending
changes are sent), or an eglot server that runs agentls for a major mode
\(plain eglot, `eglot-server-programs'): eglot sends didChange lazily, on
idle or before its own requests only, so its managed buffers' pending
changes are sent here (eglot's `eglot--signal-textDocument/didChange',
which Emacs 30's eglot offers no public name for)."
  (if (agentls-server-p server)
      (agentls--flush-all server)
    (when (and (cl-typep server 'eglot-lsp-server)
               (fboundp 'eglot--signal-textDocument/didChange))
      (dolist (buf (eglot--managed-buffers server))
        (when (buffer-live-p buf)
          (with-current-buffer buf
            (when (bound-and-true-p eglot--managed-mode)
              (eglot--signal-textDocument/didChange))))))))

(defun agentls--last-request-id (server)
  "The id of the request SERVER sent last."
  (cond ((slot-exists-p server '-next-request-id) (slot-value server '-next-request-id))
        ((boundp 'jsonrpc--next-request-id) (symbol-value 'jsonrpc--next-request-id))))

(defun agentls-cancel (handle)
  "Cancel the call of HANDLE (from `agentls-call-async').
A running process is killed; the result has status \"cancelled\"."
  (let ((server (plist-get handle :server)))
    (when (and (agentls--live-p server) (plist-get handle :id))
      (jsonrpc-notify server :$/cancelRequest (list :id (plist-get handle :id))))))

(cl-defun agentls-call (tool args &rest keys &key timeout &allow-other-keys)
  "Call TOOL with ARGS (a plist) and return its ToolResult (a plist).
Starts the connection for the current project when there is none.
While the call waits for approval, Emacs stays usable: interactively a
recursive edit is entered in the approval buffer (answer with y, n or a);
C-g while it waits (or C-] / C-M-c in that recursive edit) cancels the
call.  TIMEOUT (seconds) gives up waiting.  Other KEYS as
in `agentls-call-async'."
  (let* ((done nil) (result nil)
         (deadline (and timeout (+ (float-time) timeout)))
         (handle (apply #'agentls-call-async tool args
                        (lambda (r) (setq result r done t))
                        (cl-loop for (k v) on keys by #'cddr
                                 unless (eq k :timeout) collect k and collect v))))
    (condition-case quit
        (while (not done)
          (when (and deadline (> (float-time) deadline))
            (agentls-cancel handle)
            (error "agentls: %s did not finish within %s seconds" tool timeout))
          (if (and agentls--pending-approvals
                   (not agentls--approval-edit-depth)
                   (if (eq agentls-call-recursive-edit 'interactive)
                       (not noninteractive)
                     agentls-call-recursive-edit))
              (let ((agentls--approval-edit-depth (1+ (recursion-depth)))
                    (waiting (car agentls--pending-approvals)))
                (save-window-excursion
                  ;; Shown, never selected: the person goes there.
                  (agentls--approval-refresh t)
                  (message "%s" (substitute-command-keys
                                 (format "agentls: %s waits for your review below \
\(\\[agentls-show-approval]; C-] cancels the call)" tool)))
                  (recursive-edit))
                ;; Left with C-M-c without answering: give up the call
                ;; rather than enter the recursive edit again.
                (when (memq waiting agentls--pending-approvals)
                  (agentls-cancel handle)
                  (message "agentls: %s cancelled (the approval was left unanswered)" tool)
                  (setq deadline (min (or deadline most-positive-fixnum) (+ (float-time) 10)))))
            (accept-process-output nil 0.05)))
      (quit (agentls-cancel handle)
            (signal (car quit) (cdr quit))))
    result))


;;; The command

(defun agentls--arguments-template (def)
  "A JSON object with DEF's required arguments, to edit in the minibuffer."
  (let* ((schema (plist-get def :inputSchema))
         (props (plist-get schema :properties))
         (req (append (plist-get schema :required) nil)))
    (if (null req) "{}"
      (concat "{"
              (mapconcat
               (lambda (name)
                 (let ((type (plist-get (plist-get props (intern (concat ":" name))) :type)))
                   (format "\"%s\": %s" name
                           (pcase type
                             ("string" "\"\"") ("boolean" "false") ((or "integer" "number") "0")
                             ("array" "[]") ("object" "{}") (_ "null")))))
               req ", ")
              "}"))))

(defun agentls--parse-arguments (text)
  "TEXT, a JSON object, as a hash table; a `user-error' when it is not one."
  (let ((v (condition-case err
               (json-parse-string text :object-type 'hash-table :array-type 'array
                                  :null-object nil :false-object :json-false)
             (error
              (user-error "agentls: the arguments are not valid JSON: %s"
                          (error-message-string err))))))
    (unless (hash-table-p v)
      (user-error "agentls: the arguments must be a JSON object, like {\"path\": \"a.txt\"}"))
    v))

(defun agentls-format-result (result)
  "RESULT (a ToolResult) as text for a person; schema errors one per line."
  (let* ((err (plist-get result :error))
         (violations (append (plist-get (plist-get err :details) :violations) nil)))
    (concat
     (format "Tool:    %s\nStatus:  %s\nCall:    %s\n" (plist-get result :tool)
             (plist-get result :status) (or (plist-get result :callId) "-"))
     (if err (format "Error:   %s: %s\n" (plist-get err :code) (plist-get err :message)) "")
     (if violations
         (concat "Invalid arguments:\n"
                 (mapconcat (lambda (v) (format "  %s  %s" (let ((p (plist-get v :pointer)))
                                                           (if (string-empty-p p) "/" p))
                                                (plist-get v :reason)))
                            violations "\n")
                 "\n")
       "")
     (if (plist-get result :message) (format "Message: %s\n" (plist-get result :message)) "")
     "\n"
     (or (plist-get result :display) (plist-get result :content) "")
     (if (plist-get result :structured)
         (concat "\n\nStructured:\n" (agentls--json-pretty (plist-get result :structured)))
       "")
     "\n")))

(defvar agentls--run-tool-history nil)
(defvar agentls--arguments-history nil)
(defvar agentls--progress-counter 0)

(defun agentls-run-tool (tool arguments)
  "Run TOOL with ARGUMENTS (JSON text), asynchronously; show the result.
Interactively, pick the tool from tool/list and type the arguments as a
JSON object.  Invalid arguments are reported per JSON pointer."
  (interactive
   (let* ((server (agentls--server))
          (defs (agentls-list-tools nil server))
          (names (mapcar (lambda (d) (plist-get d :name)) defs))
          (completion-extra-properties
           (list :annotation-function
                 (lambda (name)
                   (let ((d (cl-find name defs :key (lambda (d) (plist-get d :name))
                                     :test #'equal)))
                     (format "  %s%s" (or (plist-get d :title) "")
                             (let ((ap (plist-get (plist-get d :annotations) :approval)))
                               (if (member ap '("ask" "conditional"))
                                   (format " [approval: %s]" ap) "")))))))
          (tool (completing-read "agentls tool: " names nil t nil 'agentls--run-tool-history))
          (def (cl-find tool defs :key (lambda (d) (plist-get d :name)) :test #'equal)))
     (list tool (let* ((template (agentls--arguments-template def))
                       ;; Point inside the first "" (or at the end).
                       (pos (let ((i (string-search "\"\"" template)))
                              (if i (+ i 2) (1+ (length template))))))
                  (read-from-minibuffer (format "Arguments for %s (JSON): " tool)
                                        (cons template pos)
                                        nil nil 'agentls--arguments-history)))))
  (let* ((args (agentls--parse-arguments arguments))
         (token (format "agentls-el-%d" (cl-incf agentls--progress-counter))))
    (agentls-call-async
     tool args
     (lambda (result)
       (let ((buf (get-buffer-create agentls-result-buffer-name)))
         (with-current-buffer buf
           (let ((inhibit-read-only t))
             (erase-buffer)
             (insert (agentls-format-result result))
             (goto-char (point-min)))
           (special-mode))
         (display-buffer buf)
         (let ((err (plist-get result :error)))
           (message "agentls: %s %s%s" tool (plist-get result :status)
                    (if err (format ": %s" (plist-get err :message)) "")))))
     :work-done-token token)
    (message "agentls: %s running (progress in %s)" tool agentls-log-buffer-name)))

(provide 'agentls)
;;; agentls.el ends here
