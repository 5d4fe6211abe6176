;;; agentls-core.el --- What the parts of agentls.el share  -*- lexical-binding: t; -*-

;; Author: the agentls authors
;; URL: https://github.com/agentls/agentls

;;; Commentary:

;; The customisations and faces of agentls.el, the `agentls-server' class
;; (one connection per project root), the table of live servers, file
;; URIs and LSP positions, JSON helpers and the *agentls log* buffer.
;; The package is loaded with (require 'agentls); see agentls.el.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'project)
(require 'json)
(require 'url-util)
(require 'agentls-rpc)

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
  "Let the server watch the project's files through file-notify watches.
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


;;; The connection's class

(defclass agentls-server (agentls-rpc-connection)
  ((root
    :initarg :root :accessor agentls--root
    :documentation "Workspace root (a directory name, truename).")
   (tracked
    :initform nil :accessor agentls--tracked
    :documentation "File buffers whose text the server has (didOpen).")
   (tools
    :initform nil :accessor agentls--tools-cache
    :documentation "Cached tool/list result (a vector of definitions).")
   (capabilities
    :initform nil :accessor agentls--capabilities
    :documentation "The server's capabilities (from initialize).")
   (server-info
    :initform nil :accessor agentls--server-info
    :documentation "The server's serverInfo (from initialize).")
   (shutdown-requested
    :initform nil :accessor agentls--shutdown-requested
    :documentation "Non-nil once `agentls-shutdown' started.")
   (file-watches
    :initform (make-hash-table :test #'equal) :accessor agentls--file-watches
    :documentation "Map DIR -> (WATCH ID...) for workspace/didChangeWatchedFiles.")
   (watch-registrations
    :initform nil :accessor agentls--watch-registrations
    :documentation "The registrations of workspace/didChangeWatchedFiles: ((ID (BASE REGEXP . KIND)...)...)."))
  :documentation
  "An agentls connection, agentls.el's own (see agentls-rpc.el).
Not an eglot server: it lives next to them, one per project root, and
eglot never gives it a buffer.")

(defvar agentls--pending-approvals nil
  "Approvals (`agentls--approval') waiting for the person, oldest first.")

(defvar agentls--servers (make-hash-table :test #'equal)
  "Live `agentls-server's by root directory.")

(defun agentls--live-p (server)
  "Whether SERVER (an `agentls-server', or an eglot server) is live."
  (and server (jsonrpc-running-p server)
       (not (and (agentls-server-p server) (agentls--shutdown-requested server)))))

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
  (let ((allowed (make-vector 256 nil)))
    (dolist (c (cons ?/ url-unreserved-chars) allowed)
      (aset allowed c t)))
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


;;; Positions (UTF-16, the LSP default)

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

;;; JSON

(defconst agentls--{} (make-hash-table :size 1) "An empty JSON object.")

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


(defun agentls--jsonrpc-error-code (err)
  "The JSON-RPC error code in ERR (a `jsonrpc-error' condition), or nil."
  (cdr (cl-find-if (lambda (x) (and (consp x) (eq (car x) 'jsonrpc-error-code)))
                   (cdr err))))


;;; The log

(defun agentls--mode-buffer (name mode)
  "The buffer NAME, created when missing, in major MODE (a function).
MODE is turned on only when the buffer is not in it already, so that
its buffer-local state survives."
  (let ((buf (get-buffer-create name)))
    (with-current-buffer buf
      (unless (derived-mode-p mode) (funcall mode)))
    buf))

(define-derived-mode agentls-log-mode special-mode "agentls-log"
  "Mode of the *agentls log* buffer: tool events, progress, messages."
  (setq-local truncate-lines nil))

(defun agentls--log (server fmt &rest args)
  "Append a line to the log buffer, prefixed by time and SERVER's project."
  (let ((buf (agentls--mode-buffer agentls-log-buffer-name #'agentls-log-mode))
        (line (concat (format-time-string "%H:%M:%S ")
                      (if server (format "[%s] " (agentls--nickname (agentls--root server))) "")
                      (apply #'format fmt args)
                      "\n")))
    (with-current-buffer buf
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
  (let ((buf (agentls--mode-buffer agentls-log-buffer-name #'agentls-log-mode)))
    (with-current-buffer buf (goto-char (point-max)))
    ;; At the newest entry (a window that showed it before keeps its point
    ;; otherwise); later lines keep it there.
    (let ((win (display-buffer buf)))
      (when win
        (set-window-point win (with-current-buffer buf (point-max)))))
    buf))

(provide 'agentls-core)
;;; agentls-core.el ends here
