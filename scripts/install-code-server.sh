#!/usr/bin/env bash
# install-code-server.sh: code-server (VS Code for the web, from npm), the
# version the end-to-end suite drives (scripts/vscode-e2e.sh), into
# $AGENTLS_CACHE/code-server (default .cache/ of the checkout), unless it is
# there already. Needs node and npm, Debian's ripgrep (the @vscode/ripgrep
# package downloads ripgrep from GitHub, which may be unreachable: its cache
# is seeded from Debian's) and the packages VS Code's native modules build
# against (scripts/install-deps.sh vscode-e2e installs them all, then this).
# One install at a time: a second waits for the first, then finds it done.
#
#   scripts/install-code-server.sh          install when missing
#   scripts/install-code-server.sh --check  exit 0 when installed
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache="${AGENTLS_CACHE:-$repo/.cache}"
cs_version=4.100.3
rg_version=1.15.11
cs_dir="$cache/code-server"
cs_bin="$cs_dir/node_modules/.bin/code-server"
work=$(mktemp -d "${TMPDIR:-/tmp}/agentls-code-server.XXXXXX") || { echo "install-code-server: cannot make a temporary folder" >&2; exit 1; }
trap 'rm -rf "$work"' EXIT
fail() { echo "install-code-server: $*" >&2; exit 1; }
# code-server writes its config and logs under the XDG folders, even for
# --version: they go to $work.
cs() { XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" "$cs_bin" "$@"; }
installed() {
	[ -x "$cs_bin" ] && cs --version 2>/dev/null | grep -q "^$cs_version " &&
		[ -d "$cs_dir/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin" ]
}
if [ "${1:-}" = --check ]; then
	installed
	exit
fi

mkdir -p "$cs_dir" || fail "cannot make $cs_dir"
exec 7<"$cs_dir"
flock 7 || fail "cannot lock $cs_dir"
installed && exit 0
command -v npm >/dev/null || fail "npm is not installed (scripts/install-deps.sh vscode-e2e)"
command -v rg >/dev/null || fail "ripgrep is not installed (scripts/install-deps.sh vscode-e2e)"
echo "install-code-server: code-server $cs_version into $cs_dir (a few minutes) ($(date +%T))"
# @vscode/ripgrep's post-install looks for its download in os.tmpdir(): a
# TMPDIR of the install's own.
install_tmp="$work/install-tmp"
mkdir -p "$install_tmp"
rg_cache="$(TMPDIR="$install_tmp" node -p "require('os').tmpdir()")/vscode-ripgrep-cache-$rg_version"
rg_tar="$rg_cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"
mkdir -p "$rg_cache" "$work/rg" && cp "$(command -v rg)" "$work/rg/rg" && tar -C "$work/rg" -czf "$rg_tar" rg ||
	fail "cannot seed the ripgrep cache"
[ -f "$cs_dir/package.json" ] || echo '{"name":"agentls-code-server-cache","private":true}' >"$cs_dir/package.json"
# npm >= 11 blocks dependency install scripts unless allowed; code-server's
# post-install builds VS Code's native modules, and refuses to run as root
# without unsafe-perm.
(cd "$cs_dir" && TMPDIR="$install_tmp" npm_config_unsafe_perm=true npm_config_dangerously_allow_all_scripts=true \
	npm_config_yes=true npm_config_loglevel=error npm_config_fund=false npm_config_audit=false \
	npm install "code-server@$cs_version") >"$work/install.log" 2>&1 ||
	{ tail -30 "$work/install.log" >&2; fail "cannot install code-server $cs_version"; }
installed || fail "code-server $cs_version does not run after its install"
echo "install-code-server: installed ($(date +%T))"
