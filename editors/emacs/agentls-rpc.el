;;; agentls-rpc.el --- The JSON-RPC transport of agentls.el  -*- lexical-binding: t; -*-

;; Author: the agentls authors
;; URL: https://github.com/agentls/agentls

;;; Commentary:

;; agentls.el's own connection, built on jsonrpc.el's public API only.
;;
;; `agentls-rpc-connection' is a `jsonrpc-connection', the class jsonrpc.el
;; documents as the base of a transport: it implements the transport's
;; methods (`jsonrpc-connection-send', `jsonrpc-running-p',
;; `jsonrpc-shutdown'), runs the server process itself, reads the LSP base
;; protocol (Content-Length headers) from it and hands every message to
;; `jsonrpc-connection-receive' from a timer, in order.
;; Requests are made with `jsonrpc-async-request', whose continuations and
;; timeouts stay jsonrpc.el's.
;;
;; Owning the transport gives what jsonrpc.el's process connection has no
;; public way to do:
;; - A reply sent later.  jsonrpc.el answers a request with whatever its
;;   dispatcher returns, at once; an approval is answered when the person
;;   has decided, without blocking Emacs.  A dispatcher that wants that
;;   calls `agentls--rpc-defer': the transport binds the id of the request
;;   it hands over (`agentls--rpc-request-id') and catches the throw, so
;;   no reply goes out; `agentls--deferred-reply' sends it later with
;;   `jsonrpc-connection-send'.
;; - The id of a request just sent (for $/cancelRequest): the transport
;;   sees every message it sends (`agentls--last-request-id').
;; - Requests in flight when the process dies end at once: their error
;;   function gets (:code -1 :message "Server died"), as with jsonrpc.el's
;;   own process connection (`agentls--rpc-async-request').
;;
;; Events go to jsonrpc.el's events buffer (`jsonrpc-events-buffer')
;; through `jsonrpc-event-hook', in the format of every jsonrpc
;; connection; the server's stderr lines too, marked [stderr].

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)

(defvar jsonrpc-event-hook)             ; jsonrpc >= 1.0.20

(defclass agentls-rpc-connection (jsonrpc-connection)
  ((process
    :initform nil :accessor agentls--process
    :documentation "The server process (a pipe).")
   (stderr-buffer
    :initform nil :accessor agentls--stderr-buffer
    :documentation "The buffer of the server's stderr.")
   (input
    :initform nil :accessor agentls--rpc-input
    :documentation "Unibyte buffer of the bytes read and not parsed yet.")
   (queue
    :initform nil :accessor agentls--rpc-queue
    :documentation "Messages read and not handed to jsonrpc yet, oldest first.")
   (scheduled
    :initform nil :accessor agentls--rpc-scheduled
    :documentation "Non-nil while a timer will hand over the next message.")
   (closed
    :initform nil :accessor agentls--rpc-closed
    :documentation "Non-nil once the process is gone and cleaned up.")
   (exit-sent
    :initform nil :accessor agentls--exit-sent
    :documentation "Non-nil once `exit' went out: nothing more may be sent.")
   (last-request-id
    :initform nil :accessor agentls--last-request-id
    :documentation "The id of the request sent last.")
   (pending
    :initform (make-hash-table) :accessor agentls--rpc-pending
    :documentation "Error functions of the requests in flight, by id.")
   (on-shutdown
    :initarg :on-shutdown :initform #'ignore :accessor agentls--rpc-on-shutdown
    :documentation "Function of the connection, called when the process is gone."))
  :documentation
  "A JSON-RPC connection to a process speaking the LSP base protocol.
Initargs: those of `jsonrpc-connection' (:name, :request-dispatcher,
:notification-dispatcher, :events-buffer-config) and :on-shutdown.
`agentls--rpc-connect' starts its process.")

(defun agentls--rpc-event (conn origin &rest plist)
  "Report an event of CONN to `jsonrpc-event-hook' (the events buffer).
ORIGIN and PLIST as that hook describes them."
  (when (boundp 'jsonrpc-event-hook)
    (with-current-buffer (jsonrpc-events-buffer conn)
      (run-hook-wrapped 'jsonrpc-event-hook
                        (lambda (fn)
                          (condition-case nil (apply fn conn origin plist) (error nil))
                          nil)))))

(defun agentls--rpc-stderr-forward (conn beg _end _len)
  "Copy the complete stderr lines from BEG on to CONN's events buffer."
  (save-excursion
    (goto-char beg)
    (forward-line 0)
    (while (search-forward "\n" nil t)
      (let ((line (buffer-substring-no-properties (line-beginning-position 0)
                                                  (line-end-position 0))))
        (with-current-buffer (jsonrpc-events-buffer conn)
          (let ((inhibit-read-only t))
            (save-excursion
              (goto-char (point-max))
              (insert (propertize (format "[stderr] %s\n" line) 'face 'shadow)))))))))

(defun agentls--rpc-connect (conn command)
  "Start COMMAND (a list) as CONN's server process.
Its stderr goes to the buffer \" *NAME stderr*\", whose lines are
copied to the events buffer."
  (let* ((name (jsonrpc-name conn))
         (stderr (get-buffer-create (format " *%s stderr*" name)))
         (input (generate-new-buffer (format " *%s input*" name) t)))
    (with-current-buffer stderr
      (let ((inhibit-read-only t)) (erase-buffer))
      (buffer-disable-undo)
      (setq buffer-read-only t)
      (add-hook 'after-change-functions
                (lambda (beg end len) (agentls--rpc-stderr-forward conn beg end len))
                nil t))
    (with-current-buffer input
      (set-buffer-multibyte nil)
      (buffer-disable-undo))
    (setf (agentls--stderr-buffer conn) stderr
          (agentls--rpc-input conn) input
          (agentls--process conn)
          (make-process
           :name name
           :command command
           :connection-type 'pipe
           ;; Bytes both ways: messages are UTF-8, framed by byte counts.
           :coding 'binary
           :noquery t
           :stderr stderr
           :filter (lambda (_proc bytes) (agentls--rpc-filter conn bytes))
           :sentinel (lambda (proc _change) (agentls--rpc-sentinel conn proc))))
    conn))

(defun agentls--rpc-filter (conn bytes)
  "Read BYTES from CONN's process: queue every complete message."
  (let ((input (agentls--rpc-input conn))
        messages)
    (when (buffer-live-p input)
      (with-current-buffer input
        (goto-char (point-max))
        (insert (if (multibyte-string-p bytes)
                    (encode-coding-string bytes 'utf-8-emacs-unix t)
                  bytes))
        (goto-char (point-min))
        (let (done)
          (while (not done)
            (let ((head-end (search-forward "\r\n\r\n" nil t)))
              (if (not head-end)
                  (setq done t)
                (let* ((head (buffer-substring (point-min) head-end))
                       (len (and (let ((case-fold-search t))
                                   (string-match "^Content-Length: *\\([0-9]+\\)\r$" head))
                                 (string-to-number (match-string 1 head)))))
                  (cond
                   ((null len)          ; not a header: drop it
                    (delete-region (point-min) head-end))
                   ((< (- (point-max) head-end) len)
                    (goto-char (point-min))
                    (setq done t))
                   (t
                    (let ((body (decode-coding-string
                                 (buffer-substring head-end (+ head-end len)) 'utf-8-unix)))
                      (delete-region (point-min) (+ head-end len))
                      (goto-char (point-min))
                      (push body messages)))))))))))
    (dolist (body (nreverse messages))
      (let ((msg (condition-case err
                     (json-parse-string body :object-type 'plist
                                        :null-object nil :false-object :json-false)
                   (error
                    (agentls--rpc-event conn 'internal :type 'error
                                        :log-text (format "invalid JSON (%s): %s"
                                                          (error-message-string err) body))
                    nil))))
        (when msg
          ;; jsonrpc >= 1.0.24 logs the raw text from :jsonrpc-json.
          (when (fboundp 'jsonrpc-convert-from-endpoint)
            (setq msg (plist-put msg :jsonrpc-json body)))
          (setf (agentls--rpc-queue conn) (nconc (agentls--rpc-queue conn) (list msg))))))
    (agentls--rpc-schedule conn)))

(defun agentls--rpc-schedule (conn)
  "Hand CONN's next queued message over from a timer, unless one will."
  (when (and (agentls--rpc-queue conn) (not (agentls--rpc-scheduled conn)))
    (setf (agentls--rpc-scheduled conn) t)
    (run-at-time 0 nil #'agentls--rpc-drain conn)))

(defvar agentls--rpc-request-id nil
  "While the transport hands over a request: its id (see `agentls--rpc-defer').")

(defun agentls--rpc-drain (conn)
  "Hand CONN's queued messages to `jsonrpc-connection-receive', oldest first.
Before each one the next run is scheduled: a handler may exit non-locally
\(the reply to a `jsonrpc-request' throws to it) or wait, and the messages
after it must still be handed over.  Otherwise this run goes on with the
next message itself: Emacs runs a timer that a timer added only once the
wait it runs in ends (it checks a copy of the timer list), and a
`jsonrpc-request', which waits 30 s at a time, held a reply queued behind
a notification until its own timeout woke it."
  (setf (agentls--rpc-scheduled conn) nil)
  (let (msg)
    (while (setq msg (pop (agentls--rpc-queue conn)))
      (agentls--rpc-schedule conn)
      (let ((agentls--rpc-request-id (and (plist-get msg :method) (plist-get msg :id))))
        (with-temp-buffer
          (catch 'agentls--rpc-deferred
            (jsonrpc-connection-receive conn msg)))))))

(defun agentls--rpc-sentinel (conn proc)
  "PROC, CONN's process, changed: when it is gone, end what waits for it."
  (unless (or (process-live-p proc) (agentls--rpc-closed conn))
    (setf (agentls--rpc-closed conn) t)
    (agentls--rpc-event conn 'internal
                        :log-text (format "server exited with status %s" (process-exit-status proc)))
    (let ((pending (agentls--rpc-pending conn)))
      (setf (agentls--rpc-pending conn) (make-hash-table))
      (jsonrpc-forget-pending-continuations conn)
      (unwind-protect
          (maphash (lambda (_id error-fn)
                     (funcall error-fn '(:code -1 :message "Server died")))
                   pending)
        (delete-process proc)
        (when (buffer-live-p (agentls--rpc-input conn))
          (kill-buffer (agentls--rpc-input conn)))
        (funcall (agentls--rpc-on-shutdown conn) conn)))))

(cl-defmethod jsonrpc-connection-send ((conn agentls-rpc-connection)
                                       &rest args
                                       &key id method _params (_result nil result-p) error
                                       &allow-other-keys)
  "Send the message of ARGS (ID, METHOD, PARAMS, RESULT, ERROR) to CONN.
Nothing is sent once `exit' went out: the server has closed its stdin,
and a write would kill a batch Emacs (SIGPIPE)."
  (unless (agentls--exit-sent conn)
    (when method
      (setq args (plist-put args :method
                            (cond ((keywordp method) (substring (symbol-name method) 1))
                                  ((symbolp method) (symbol-name method))
                                  (t method)))))
    (let* ((kind (cond ((or result-p error) 'reply) (id 'request) (t 'notification)))
           (message (if (fboundp 'jsonrpc-convert-to-endpoint)
                        (jsonrpc-convert-to-endpoint conn args kind)
                      (append '(:jsonrpc "2.0")
                              (if (eq kind 'reply)
                                  (cl-loop for (k v) on args by #'cddr
                                           unless (eq k :method) collect k and collect v)
                                args))))
           (json (json-serialize message :false-object :json-false :null-object nil))
           (bytes (if (multibyte-string-p json) (encode-coding-string json 'utf-8-unix t) json)))
      (process-send-string (agentls--process conn)
                           (concat (format "Content-Length: %d\r\n\r\n" (length bytes)) bytes))
      (when (eq kind 'request)
        (setf (agentls--last-request-id conn) id))
      (agentls--rpc-event conn 'client
                          :json (decode-coding-string bytes 'utf-8-unix)
                          :kind kind :message args :foreign-message message))))

(cl-defmethod jsonrpc-running-p ((conn agentls-rpc-connection))
  "Whether CONN's process runs."
  (and (process-live-p (agentls--process conn)) (not (agentls--rpc-closed conn))))

(cl-defmethod jsonrpc-shutdown ((conn agentls-rpc-connection) &optional cleanup)
  "Wait for CONN's process to end, killing it after a moment.
CLEANUP: kill its stderr buffer too."
  (let ((proc (agentls--process conn)))
    (cl-loop for i from 0
             until (agentls--rpc-closed conn)
             do (cond ((= i 1) (delete-process proc))
                      ;; The sentinel did not run: clean up here.
                      ((> i 20) (agentls--rpc-sentinel conn proc)))
             (accept-process-output nil 0.05))
    (when (and cleanup (buffer-live-p (agentls--stderr-buffer conn)))
      (kill-buffer (agentls--stderr-buffer conn)))))

(cl-defun agentls--rpc-async-request (conn method params
                                           &key success-fn error-fn timeout-fn
                                           (timeout nil timeout-p))
  "Send a request to CONN with `jsonrpc-async-request'; return its id.
SUCCESS-FN, ERROR-FN, TIMEOUT-FN and TIMEOUT as there (without
TIMEOUT: `jsonrpc-default-request-timeout'); exactly one of the
functions is called, ERROR-FN also when the process dies before the
reply, with (:code -1 :message \"Server died\")."
  (let* ((done nil) (id nil)
         (once (lambda (fn &rest args)
                 (unless done
                   (setq done t)
                   (when id (remhash id (agentls--rpc-pending conn)))
                   (when fn (apply fn args))))))
    (apply #'jsonrpc-async-request conn method params
           :success-fn (lambda (result) (funcall once success-fn result))
           :error-fn (lambda (err) (funcall once error-fn err))
           :timeout-fn (lambda () (funcall once timeout-fn))
           (and timeout-p (list :timeout timeout)))
    (setq id (agentls--last-request-id conn))
    (unless done
      (puthash id (lambda (err) (funcall once error-fn err)) (agentls--rpc-pending conn)))
    id))

(cl-defun agentls--rpc-request (conn method params &key timeout)
  "Send a request to CONN and wait for its result.
Like `jsonrpc-request': a failure signals `jsonrpc-error' (with
`jsonrpc-error-code' and `jsonrpc-error-message'); TIMEOUT seconds,
default `jsonrpc-default-request-timeout'.  It also ends as soon as the
process dies."
  (let* ((box nil)
         (id (agentls--rpc-async-request
              conn method params
              :success-fn (lambda (result) (setq box (list 'done result)))
              :error-fn (lambda (err) (setq box (list 'error err)))
              :timeout-fn (lambda () (setq box (list 'error '(:code -32603 :message "Timed out"))))
              :timeout (or timeout jsonrpc-default-request-timeout))))
    (while (not box)
      (accept-process-output nil 0.05))
    (pcase box
      (`(done ,result) result)
      (`(error ,err)
       (signal 'jsonrpc-error
               (list (format "request id=%s failed:" id)
                     (cons 'jsonrpc-error-code (plist-get err :code))
                     (cons 'jsonrpc-error-message (plist-get err :message))
                     (cons 'jsonrpc-error-data (plist-get err :data))))))))

;;; Replies sent later

(cl-defstruct (agentls--deferred (:constructor agentls--make-deferred)
                                 (:copier nil))
  "The reply to a request, sent when it is known (see `agentls--rpc-defer')."
  id method (result nil) (answered nil) (sent nil))

(defun agentls--rpc-defer (conn deferred)
  "Leave the request CONN's transport is handing over unanswered for now.
DEFERRED (an `agentls--deferred') learns its id; `agentls--deferred-reply'
answers it.  Called by a request dispatcher: it does not return when the
transport hands over a request (it throws to the transport, so jsonrpc
sends no reply); else it returns DEFERRED."
  (if (not agentls--rpc-request-id)
      deferred
    (let ((id agentls--rpc-request-id))
      (setf (agentls--deferred-id deferred) id)
      (agentls--rpc-event conn 'internal :id id
                          :log-text (format "reply to %s (id %s) deferred"
                                            (agentls--deferred-method deferred) id))
      (when (agentls--deferred-answered deferred)
        (agentls--deferred-send conn deferred))
      (throw 'agentls--rpc-deferred nil))))

(defun agentls--deferred-reply (conn deferred result)
  "Answer DEFERRED on CONN with RESULT (once)."
  (unless (agentls--deferred-answered deferred)
    (setf (agentls--deferred-answered deferred) t
          (agentls--deferred-result deferred) result)
    (when (agentls--deferred-id deferred)
      (agentls--deferred-send conn deferred))))

(defun agentls--deferred-send (conn deferred)
  (unless (agentls--deferred-sent deferred)
    (setf (agentls--deferred-sent deferred) t)
    (when (jsonrpc-running-p conn)
      (jsonrpc-connection-send conn :id (agentls--deferred-id deferred)
                               :result (agentls--deferred-result deferred)))))

(provide 'agentls-rpc)
;;; agentls-rpc.el ends here
