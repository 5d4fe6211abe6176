;;; agentls-rules.el --- The remembered "always" answers  -*- lexical-binding: t; -*-

;; Author: the agentls authors
;; URL: https://github.com/agentls/agentls

;;; Commentary:

;; `agentls-approval-rules' and `agentls-list-rules': the "always"
;; answers an agentls server remembers (server method approval/rules),
;; listed and revoked.

;;; Code:

(require 'cl-lib)
(require 'tabulated-list)
(require 'agentls-core)

(declare-function agentls--server "agentls" (&optional dir no-start))

;;; Remembered answers ("always")

(defvar-local agentls--rules-server nil "The server whose rules this buffer lists.")

(defun agentls-approval-rules (&optional server remove)
  "The remembered \"always\" answers of SERVER (default: the current project's).
A list of plists (:id :tool :key :label :persisted).  REMOVE: a rule id to
forget first.  A `user-error' when the server does not know approval/rules."
  (let ((server (or server (agentls--server))))
    (condition-case err
        (let ((res (agentls--rpc-request server :approval/rules
                                         (if remove (list :remove remove) agentls--{})
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
         (buf (agentls--mode-buffer agentls-rules-buffer-name #'agentls-rules-mode)))
    (with-current-buffer buf
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


(provide 'agentls-rules)
;;; agentls-rules.el ends here
