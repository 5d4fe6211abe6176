#!/usr/bin/env bash
# Installs what the test suites need, from Debian's packages, the npm
# registry and the Go module proxy only.
#   scripts/install-deps.sh DEP...         install (idempotent)
#   scripts/install-deps.sh --check DEP    exit 0 when DEP is already there
# DEP: ripgrep, nvim, emacs, vscode (node packages of the extension),
#      vscode-e2e (code-server, chromium, playwright-core).
set -euo pipefail
cd "$(dirname "$0")/.."
check=false
if [ "${1:-}" = --check ]; then check=true; shift; fi

apt_updated=false
apt() {
	if ! $apt_updated; then apt-get update -qq; apt_updated=true; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

for dep in "$@"; do
	case $dep in
	ripgrep)
		if command -v rg >/dev/null; then continue; fi
		$check && exit 1
		apt ripgrep ;;
	nvim)
		if [ -x .cache/nvim/bin/nvim ] || [ -x scripts/install-nvim.sh ] && scripts/install-nvim.sh --check >/dev/null 2>&1; then continue; fi
		$check && exit 1
		scripts/install-nvim.sh ;;
	emacs)
		if command -v emacs >/dev/null && emacs --batch --eval '(kill-emacs (if (>= emacs-major-version 30) 0 1))' 2>/dev/null; then continue; fi
		$check && exit 1
		scripts/install-emacs.sh ;;
	vscode)
		if [ -d editors/vscode/node_modules ]; then continue; fi
		$check && exit 1
		(cd editors/vscode && npm ci --no-audit --no-fund) ;;
	vscode-e2e)
		if [ -x scripts/vscode-e2e.sh ] && scripts/vscode-e2e.sh --check >/dev/null 2>&1; then continue; fi
		$check && exit 1
		scripts/vscode-e2e.sh --install ;;
	*)
		echo "install-deps: unknown dependency $dep" >&2; exit 2 ;;
	esac
done
