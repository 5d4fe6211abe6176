#!/usr/bin/env bash
# What the test suites need from outside the Go module, from Debian's
# packages and the npm registry only.
#   scripts/install-deps.sh DEP...         install what is missing (idempotent)
#   scripts/install-deps.sh --check DEP    exit 0 when DEP is already there
# DEP: ripgrep        the grep/glob comparisons with ripgrep
#      bwrap          bubblewrap, the sandbox of run_code and of automatic commands
#      python3        the Python cases of run_code's tests (the Go tests skip them without it)
#      nvim           Neovim >= 0.10 (scripts/install-nvim.sh, from Debian trixie)
#      emacs          Emacs >= 30 (scripts/install-emacs.sh, from bookworm-backports), and tmux
#                     for its terminal check
#      vscode         node and npm for the extension's build and node:test suite
#      mcp            node and npm for the MCP suites (scripts/mcp-test.sh runs npm ci in mcp/test;
#                     scripts/claude-e2e.sh installs Claude Code into .cache/claude-code)
#      vscode-e2e     Debian chromium and the packages code-server builds against, then
#                     code-server into .cache/ (scripts/install-code-server.sh)
#      tmux           tmux, the terminal the editors' screenshot tests run in
#      screenshots    tmux, Debian chromium and fonts-dejavu-core, Neovim and Emacs
#                     (scripts/screenshots.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
check=false
if [ "${1:-}" = --check ]; then check=true; shift; fi

present() {
	case $1 in
	ripgrep) command -v rg >/dev/null ;;
	bwrap) command -v bwrap >/dev/null ;;
	python3) command -v python3 >/dev/null ;;
	nvim) scripts/install-nvim.sh --check >/dev/null 2>&1 ;;
	emacs) scripts/install-emacs.sh --check >/dev/null 2>&1 && command -v tmux >/dev/null ;;
	vscode | mcp) command -v node >/dev/null && command -v npm >/dev/null ;;
	vscode-e2e)
		command -v node >/dev/null && [ -x /usr/bin/chromium ] && command -v rg >/dev/null &&
			scripts/install-code-server.sh --check ;;
	tmux) command -v tmux >/dev/null ;;
	screenshots)
		command -v tmux >/dev/null && [ -x /usr/bin/chromium ] && [ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] &&
			scripts/install-nvim.sh --check >/dev/null 2>&1 && scripts/install-emacs.sh --check >/dev/null 2>&1 ;;
	*) echo "install-deps: unknown dependency $1" >&2; exit 2 ;;
	esac
}

# apt waits for another apt (a second suite installing, unattended
# upgrades) instead of failing on its lock: our own installs queue on a
# lock of their own, and apt-get waits up to 10 minutes for dpkg's.
apt_updated=false
apt() {
	# One lock for the machine, as apt's own: /tmp, whatever TMPDIR a suite
	# has (scripts/test.sh gives each its own).
	exec 8>/tmp/agentls-apt.lock
	flock 8
	if ! $apt_updated; then apt-get -o DPkg::Lock::Timeout=600 update -qq; apt_updated=true; fi
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@"
	local rc=$?
	flock -u 8
	return $rc
}

for dep in "$@"; do
	if present "$dep"; then continue; fi
	$check && exit 1
	echo "install-deps: installing $dep"
	case $dep in
	ripgrep) apt ripgrep ;;
	bwrap) apt bubblewrap ;;
	python3) apt python3 ;;
	nvim) scripts/install-nvim.sh ;;
	emacs) scripts/install-emacs.sh && apt tmux ;;
	vscode | mcp) apt nodejs npm ;;
	vscode-e2e)
		command -v npm >/dev/null || apt nodejs npm
		apt ripgrep chromium libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config
		scripts/install-code-server.sh ;;
	tmux) apt tmux ;;
	screenshots)
		apt tmux chromium fonts-dejavu-core
		scripts/install-nvim.sh
		scripts/install-emacs.sh ;;
	esac
done
