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
;; - `agentls-server' is agentls.el's own connection, built on jsonrpc.el's
;;   public API (agentls-rpc.el); the agentls methods are
;;   `eglot-handle-request' / `eglot-handle-notification' methods, eglot's
;;   public generic functions, specialized on `agentls-server'.
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
;;
;; The files: agentls.el (this one: the connection's life, what the client
;; declares, the notifications, the API and the commands), agentls-rpc.el
;; (the JSON-RPC transport), agentls-core.el (customisations, shared state,
;; the log), agentls-sync.el (buffers and file watches), agentls-review.el
;; (reviews), agentls-rules.el (remembered answers), agentls-edit.el
;; (applying edits).  Only public names of eglot and jsonrpc are used.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'eglot)
(require 'jsonrpc)
(require 'project)
(require 'flymake)
(require 'agentls-rpc)
(require 'agentls-core)
(require 'agentls-sync)
(require 'agentls-review)
(require 'agentls-rules)
(require 'agentls-edit)


;;; The connection

;; The server process is started by agentls-rpc.el (`agentls--rpc-connect').
;; The dispatchers hand the server's requests and notifications to eglot's
;; public generic functions `eglot-handle-request' and
;; `eglot-handle-notification', whose methods for `agentls-server' are in
;; these files; eglot's own methods that take any server (unknown
;; methods, window/showMessageRequest, window/showDocument) apply too.

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
           :request-dispatcher #'agentls--dispatch-request
           :notification-dispatcher #'agentls--dispatch-notification
           :on-shutdown #'agentls--on-shutdown
           (if (boundp 'eglot-events-buffer-config)
               (list :events-buffer-config eglot-events-buffer-config)
             (list :events-buffer-scrollback-size
                   (bound-and-true-p eglot-events-buffer-size))))))
    (agentls--rpc-connect server command)
    (let ((result
           (condition-case err
               (agentls--rpc-request
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
      (setf (agentls--capabilities server) (plist-get result :capabilities)
            (agentls--server-info server) (plist-get result :serverInfo)))
    (jsonrpc-notify server :initialized agentls--{})
    (puthash root server agentls--servers)
    (agentls--install-global-hooks)
    (agentls--log server "connected to %s %s (%s tools)"
                  (or (plist-get (agentls--server-info server) :name) "agentls")
                  (or (plist-get (agentls--server-info server) :version) "")
                  (or (plist-get (plist-get (plist-get (agentls--capabilities server)
                                                       :experimental)
                                            :agentls)
                                 :tools)
                      "?"))
    (dolist (buf (buffer-list))
      (with-current-buffer buf (agentls--maybe-track server)))
    ;; The definitions, for the approval buffer's `?' (no waiting here).
    (agentls--rpc-async-request
     server :tool/list (if agentls-agent (list :agent agentls-agent) agentls--{})
     :success-fn (lambda (res)
                   (setf (agentls--tools-cache server)
                         (append (plist-get res :tools) nil))))
    server))

(defun agentls--server (&optional dir no-start)
  "The live server for DIR's project; started unless NO-START."
  (let* ((root (agentls--project-root dir))
         (s (gethash root agentls--servers)))
    (cond ((agentls--live-p s) s)
          (no-start nil)
          (t (agentls--start root)))))

(defun agentls--on-shutdown (server)
  "Called by the transport when SERVER's process is gone."
  (when (eq (gethash (agentls--root server) agentls--servers) server)
    (remhash (agentls--root server) agentls--servers))
  (dolist (buf (agentls--tracked server))
    (when (buffer-live-p buf)
      (with-current-buffer buf (agentls--untrack))))
  (setf (agentls--tracked server) nil)
  (agentls--unwatch-files server)
  (let ((mine (cl-remove-if-not (lambda (a) (eq (agentls--approval-server a) server))
                                agentls--pending-approvals)))
    (setq agentls--pending-approvals
          (cl-set-difference agentls--pending-approvals mine))
    (when mine (agentls--approval-refresh)))
  (agentls--log server "connection closed%s"
                (if (agentls--shutdown-requested server) ""
                  " unexpectedly (see the stderr buffer)"))
  (force-mode-line-update t))

(defun agentls-shutdown (&optional server)
  "Shut down the agentls connection of the current project (or SERVER)."
  (interactive)
  (let ((server (or server (agentls--server nil t))))
    (if (not server)
        (when (called-interactively-p 'interactive)
          (message "agentls: no connection for this project"))
      (setf (agentls--shutdown-requested server) t)
      (unwind-protect
          (ignore-errors
            (agentls--rpc-request server :shutdown nil :timeout 2)
            (jsonrpc-notify server :exit nil)
            (setf (agentls--exit-sent server) t)
            ;; Let it exit by itself and its sentinel run.
            (let ((deadline (+ (float-time) 2)))
              (while (and (< (float-time) deadline) (jsonrpc-running-p server))
                (accept-process-output nil 0.05))))
        (jsonrpc-shutdown server t)))))

(defun agentls-send-config (&optional config server)
  "Send CONFIG (default `agentls-config') to SERVER (default: every one).
It becomes the highest configuration layer (workspace/didChangeConfiguration
settings.agentls); an invalid configuration is reported by the server and
the last valid one stays."
  (interactive)
  (dolist (s (if server (list server) (agentls--servers)))
    (jsonrpc-notify s :workspace/didChangeConfiguration
                    (list :settings (list :agentls (or config agentls-config agentls--{}))))))

(defun agentls-shutdown-all ()
  "Shut down every agentls connection."
  (interactive)
  (mapc #'agentls-shutdown (agentls--servers)))

;;; What the client declares

(cl-defmethod eglot-client-capabilities ((server agentls-server))
  "What agentls.el implements, for SERVER's initialize.
Not eglot's own list: agentls.el is not eglot's client of this server
\(no completion, hover...); it syncs documents, applies edits with
resource operations, serves file watches, shows progress and messages,
and answers approval/request (experimental.agentls)."
  (list
   :workspace
   (list :applyEdit t
         :workspaceEdit (list :documentChanges t
                              :resourceOperations ["create" "rename" "delete"]
                              :failureHandling "abort")
         ;; file-notify watches, when wanted (and not over TRAMP).
         :didChangeWatchedFiles
         (list :dynamicRegistration
               (if (and (if (eq agentls-watch-files 'interactive)
                            (not noninteractive)
                          agentls-watch-files)
                        (not (file-remote-p (agentls--root server))))
                   t :json-false))
         :configuration :json-false
         :workspaceFolders t)
   :textDocument
   (list :synchronization (list :dynamicRegistration :json-false
                                :willSave :json-false :willSaveWaitUntil :json-false
                                :didSave t))
   :window
   (list :showDocument '(:support t)
         :workDoneProgress t
         :showMessage '(:messageActionItem (:additionalPropertiesSupport :json-false)))
   ;; Buffers are synced in UTF-16 code units, the LSP default.
   :general '(:positionEncodings ["utf-16"])
   :experimental
   (list :agentls
         (list :approvalRequest t
               :saveAfterApply (if agentls-save-after-apply t :json-false)
               :nativePreview :json-false))))

(cl-defmethod eglot-initialization-options ((_server agentls-server))
  (let (opts)
    (when agentls-config (setq opts (plist-put opts :config agentls-config)))
    (when agentls-agent (setq opts (plist-put opts :agent agentls-agent)))
    (when agentls-model-name
      (setq opts (plist-put opts :model (list :name agentls-model-name))))
    (or opts agentls--{})))

(cl-defmethod eglot-workspace-folders ((server agentls-server))
  (vector (list :uri (agentls--path-to-uri (agentls--root server))
                :name (agentls--nickname (agentls--root server)))))


;;; Dispatch: through eglot's generic functions

(defun agentls--dispatch-request (server method params)
  "Answer SERVER's request METHOD with PARAMS (`eglot-handle-request').
A handler that returns an `agentls--deferred' answers later: the reply
is left to it (`agentls--rpc-defer').  Unlike eglot's own dispatcher
this binds no current server: a buffer created by a handler (to apply
an edit) must find its own eglot server, never this one."
  (let ((reply (apply #'eglot-handle-request server method (append params nil))))
    (if (agentls--deferred-p reply)
        (agentls--rpc-defer server reply)
      reply)))

(defun agentls--dispatch-notification (server method params)
  (apply #'eglot-handle-notification server method (append params nil)))

(defun agentls--install-global-hooks ()
  (add-hook 'find-file-hook #'agentls--find-file)
  (add-hook 'after-set-visited-file-name-hook #'agentls--after-set-visited-file-name)
  (unless (member '(:eval (agentls--mode-line)) global-mode-string)
    (setq global-mode-string
          (append (or global-mode-string '("")) '((:eval (agentls--mode-line)))))))

(cl-defmethod eglot-handle-request
  ((server agentls-server) (_method (eql 'client/registerCapability)) &key registrations)
  "Serve the registration of workspace/didChangeWatchedFiles; log others."
  (dolist (r (append registrations nil))
    (if (equal (plist-get r :method) "workspace/didChangeWatchedFiles")
        (agentls--watch-files server (plist-get r :id)
                              (plist-get (plist-get r :registerOptions) :watchers))
      (agentls--log server "not registered: %s" (plist-get r :method))))
  nil)

(cl-defmethod eglot-handle-request
  ((server agentls-server) (_method (eql 'client/unregisterCapability))
   &key unregisterations &allow-other-keys)
  "Drop a registration of workspace/didChangeWatchedFiles."
  (dolist (r (append unregisterations nil))
    (agentls--unwatch-files server (plist-get r :id)))
  nil)

(cl-defmethod eglot-handle-request
  ((server agentls-server) (_method (eql 'workspace/workspaceFolders)))
  (eglot-workspace-folders server))

(cl-defmethod eglot-handle-notification
  ((_server agentls-server) (_method (eql 'textDocument/publishDiagnostics))
   &key uri diagnostics &allow-other-keys)
  "Keep the diagnostics for listing (`flymake-show-project-diagnostics').
agentls manages no buffer, so they are shown in none."
  (let ((path (expand-file-name (agentls--uri-to-path uri))))
    (setq flymake-list-only-diagnostics
          (cons (cons path
                      (mapcar
                       (lambda (d)
                         (let* ((start (plist-get (plist-get d :range) :start))
                                (sev (plist-get d :severity))
                                (code (plist-get d :code)))
                           (flymake-make-diagnostic
                            path
                            (cons (1+ (plist-get start :line)) (1+ (plist-get start :character)))
                            nil
                            (cond ((or (null sev) (<= sev 1)) 'eglot-error)
                                  ((= sev 2) 'eglot-warning)
                                  (t 'eglot-note))
                            (concat (plist-get d :source)
                                    (and code (format " [%s]" code))
                                    ": " (plist-get d :message)))))
                       (append diagnostics nil)))
                (assoc-delete-all path flymake-list-only-diagnostics)))))

;;; Notifications

(cl-defmethod eglot-handle-notification
  ((server agentls-server) (_method (eql 'tool/event))
   &key callId tool kind arguments needsApproval message percent status path
   operation risk warning agent &allow-other-keys)
  "Log a tool/event; forget approvals of calls that ended."
  (agentls--log
   server "%s %s %s%s" (or tool "?") (or callId "")
   kind
   (pcase kind
     ("call" (format "%s %s%s" (if (stringp agent) (format " by %s" agent) "")
                     (agentls--truncate (agentls--json arguments) 200)
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
  "The server gave up a request of its own: drop its approval.
At its deadline (within `agentls--approval-skew' of it), before the
local timer, that is the server's own rejection: the review says it expired."
  (agentls--log server "the server withdrew its request %s" id)
  (let ((gone (cl-remove-if-not
               (lambda (a) (and (eq (agentls--approval-server a) server)
                                (equal (agentls--deferred-id (agentls--approval-deferred a)) id)))
               agentls--pending-approvals)))
    (dolist (a gone)
      (let ((d (agentls--approval-deadline a)))
        (when (and d (>= (float-time) (- d agentls--approval-skew)))
          (agentls--approval-expire a))))
    (when (cl-intersection gone agentls--pending-approvals)
      (setq agentls--pending-approvals (cl-set-difference agentls--pending-approvals gone))
      (agentls--approval-refresh))))



;;; API: listing and calling tools

(defun agentls-list-tools (&optional format server)
  "The tool definitions (a list of plists) of SERVER or the current project.
FORMAT is \"agentls\" (default), \"openai\", \"anthropic\" or \"mcp\"."
  (let* ((server (or server (agentls--server)))
         (res (agentls--rpc-request server :tool/list
                               (or (append (and format (list :format format))
                                           (and agentls-agent (list :agent agentls-agent)))
                                   agentls--{})))
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
    (list :server server
          :id (agentls--async-request
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
          :tool tool)))

(defvar jsonrpc-event-hook)             ; jsonrpc >= 1.0.20

(defun agentls--async-request (server method params &rest args)
  "Send a request to SERVER with `jsonrpc-async-request' ARGS; return its id.
SERVER is agentls.el's own connection (its transport knows the id), or
an eglot server that runs agentls for a major mode (plain eglot): the
id is then read from the request's event (`jsonrpc-event-hook', whose
arguments jsonrpc documents), nil when jsonrpc reports none."
  (if (cl-typep server 'agentls-rpc-connection)
      (apply #'agentls--rpc-async-request server method params args)
    (let* ((id nil)
           (jsonrpc-event-hook
            (cons (lambda (conn origin &rest event)
                    (when (and (null id) (eq conn server) (eq origin 'client)
                               (eq (plist-get event :kind) 'request))
                      (setq id (plist-get (plist-get event :message) :id))))
                  (and (boundp 'jsonrpc-event-hook) jsonrpc-event-hook))))
      (apply #'jsonrpc-async-request server method params args)
      id)))

(defun agentls--flush-before-call (server)
  "Send every change the person typed before a tool/call goes to SERVER.
The tool must see what the person typed, not what an idle timer has sent
so far.  SERVER is agentls.el's own connection (its buffers' pending
changes are sent), or an eglot server that runs agentls for a major mode
\(plain eglot, `eglot-server-programs'): eglot sends didChange lazily, on
idle or before its own requests only, so the pending changes of the
buffers it manages for SERVER are sent here (`agentls--eglot-send-changes')."
  (if (agentls-server-p server)
      (agentls--flush-all server)
    (when (cl-typep server 'eglot-lsp-server)
      (dolist (buf (buffer-list))
        (with-current-buffer buf
          (when (and (eglot-managed-p) (eq (eglot-current-server) server))
            (agentls--eglot-send-changes)))))))

(defvar-local agentls--eglot-synced-tick nil
  "`buffer-chars-modified-tick' when `agentls--eglot-send-changes' last
had eglot send this buffer's changes.")

(defun agentls--eglot-send-changes ()
  "Have eglot send the current buffer's pending changes to its server now.
Emacs 30's eglot (1.17) sends textDocument/didChange after
`eglot-send-changes-idle-time' of idle time, or before a request of its
own, and has no public function that sends them alone; a request made
with jsonrpc's public API waits for nothing.  So this makes such a
request through eglot's public `eglot-execute': the command
\"agentls.sync\", which the server runs as a no-op, goes out after the
changes, and its answer says they have been read.  It is sent only when
the buffer changed since the last time.  Without it a tool/call sent
through a plain-eglot server could read text older than what the person
typed."
  (let ((tick (buffer-chars-modified-tick)))
    (unless (eql tick agentls--eglot-synced-tick)
      (condition-case err
          (progn
            (eglot-execute (eglot-current-server) '(:command "agentls.sync"))
            (setq agentls--eglot-synced-tick tick))
        (error (agentls--log nil "eglot: agentls.sync: %s" (error-message-string err)))))))

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
