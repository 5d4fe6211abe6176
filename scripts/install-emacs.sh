#!/usr/bin/env bash
# Installs Emacs 30 (emacs-nox, with its built-in eglot) from Debian
# bookworm-backports, unless an `emacs` of version 30 or newer is already on
# PATH. Idempotent: running it again changes nothing.
#
#   scripts/install-emacs.sh           install when needed
#   scripts/install-emacs.sh --check   exit 0 when Emacs >= 30 is there, 1 otherwise
#
# Needs root (or sudo) and Debian bookworm's package archive.
set -euo pipefail

want=30
# (INSTALL_EMACS_SOURCES_FILE: where to add the backports source; for tests.)
sources=${INSTALL_EMACS_SOURCES_FILE:-/etc/apt/sources.list.d/bookworm-backports.list}
line="deb http://deb.debian.org/debian bookworm-backports main"

have_emacs() {
	command -v emacs >/dev/null 2>&1 || return 1
	local major
	major=$(emacs -Q --batch --eval '(princ emacs-major-version)' 2>/dev/null) || return 1
	[ -n "$major" ] && [ "$major" -ge "$want" ]
}

die() {
	echo "install-emacs: FAILED: $*" >&2
	echo "install-emacs: install Emacs >= $want yourself (e.g. 'apt-get install -t bookworm-backports emacs-nox')" >&2
	echo "install-emacs: and make sure 'emacs' is on PATH." >&2
	exit 1
}

if [ "${1:-}" = --check ]; then
	if have_emacs; then
		emacs --version | head -n1
		exit 0
	fi
	exit 1
fi

if have_emacs; then
	echo "install-emacs: $(emacs --version | head -n1) is already installed"
	exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 || die "not root and no sudo: cannot run apt-get"
	sudo=sudo
fi
command -v apt-get >/dev/null 2>&1 || die "apt-get not found (this script supports Debian bookworm)"

if [ -r /etc/os-release ]; then
	# shellcheck disable=SC1091
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	if [ -n "$codename" ] && [ "$codename" != bookworm ]; then
		echo "install-emacs: warning: this is Debian '$codename', not bookworm; trying bookworm-backports anyway" >&2
	fi
fi

# The backports source, once (an existing backports line anywhere counts).
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/ "$sources"; then
	echo "install-emacs: adding $sources"
	echo "$line" | $sudo tee "$sources" >/dev/null || die "cannot write $sources"
fi

echo "install-emacs: apt-get update"
$sudo apt-get -o DPkg::Lock::Timeout=600 update -qq || die "apt-get update failed (network or sources problem)"
echo "install-emacs: apt-get install -t bookworm-backports emacs-nox"
$sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq -t bookworm-backports emacs-nox \
	|| die "apt-get install -t bookworm-backports emacs-nox failed"

hash -r
have_emacs || die "emacs-nox was installed but 'emacs --version' is not >= $want: $(emacs --version 2>&1 | head -n1)"
echo "install-emacs: installed $(emacs --version | head -n1)"
