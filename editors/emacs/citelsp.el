;;; citelsp.el --- citelsp with eglot -*- lexical-binding: t -*-

;; Load it from your init file, (load "/path/to/citelsp/editors/emacs/citelsp.el"), or copy
;; the forms. Eglot is built into Emacs 29 and later; on Emacs 28 install it first (Debian:
;; apt install elpa-eglot; elsewhere M-x package-install RET eglot).

;; The server for manuscripts (Markdown, Quarto and R Markdown in markdown-mode, LaTeX) and
;; bibliographies. It tells them apart by the file's extension, so .qmd and .Rmd files opened
;; in markdown-mode are read as Quarto and R Markdown.
(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               '((markdown-mode gfm-mode latex-mode LaTeX-mode bibtex-mode) . ("citelsp"))))

;; Start it when such a file is opened.
(dolist (hook '(markdown-mode-hook gfm-mode-hook latex-mode-hook LaTeX-mode-hook
                bibtex-mode-hook))
  (add-hook hook #'eglot-ensure))

;; Optional: the `citelsp' settings section, e.g.
;; (setq-default eglot-workspace-configuration
;;               '(:citelsp (:mailto "you@example.org" :minPriority "P1")))

;;; citelsp.el ends here
