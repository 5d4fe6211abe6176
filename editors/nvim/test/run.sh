#!/usr/bin/env bash
# Runs the Neovim suite of agentls against the real server:
#   editors/nvim/test/run.sh            (from anywhere)
# Builds agentls into a temporary folder, finds Neovim >= 0.10 ($AGENTLS_NVIM,
# else `nvim` on PATH when new enough, else installs it with
# scripts/install-nvim.sh), runs every editors/nvim/test/*_spec.lua in headless
# Neovim and prints "N passed, M failed". Exits non-zero on any failure.
# AGENTLS_TEST_FILTER=text runs only the tests whose name contains text;
# AGENTLS_BIN=/path/to/agentls tests that binary instead of building one.
# attached_spec.lua's MCP client is the TypeScript SDK's (mcp/test/client.mjs,
# needs node and npm: scripts/install-deps.sh mcp).
set -uo pipefail
set -e
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cd "$repo"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-nvim-test.XXXXXX")
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
# Every program below keeps its temporary files in $tmp: Neovim's tempname()
# folder (TMPDIR/nvim.USER, which each nvim, even `nvim --version`, makes and
# leaves) too.
export TMPDIR="$tmp"

if [ -n "${AGENTLS_BIN:-}" ]; then
	# A binary given by the caller (already built), used as is.
	[ -x "$AGENTLS_BIN" ] || { echo "nvim suite: FAILED: AGENTLS_BIN=$AGENTLS_BIN is not executable"; echo "0 passed, 1 failed"; exit 1; }
	cp "$AGENTLS_BIN" "$tmp/agentls"
	echo "nvim suite: using AGENTLS_BIN=$AGENTLS_BIN"
else
	echo "nvim suite: building agentls into $tmp"
	if ! go build -o "$tmp/agentls" ./cmd/agentls; then
		echo "nvim suite: FAILED: go build ./cmd/agentls failed"
		echo "0 passed, 1 failed"
		exit 1
	fi
fi

# The MCP client of attached_spec.lua: the official TypeScript SDK's
# (mcp/test/client.mjs; its node_modules installed by `npm ci` when the
# lockfile changed, as scripts/mcp-test.sh does). Needs node and npm
# (scripts/install-deps.sh mcp).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "nvim suite: FAILED: node and npm are missing (scripts/install-deps.sh mcp)"
	echo "0 passed, 1 failed"
	exit 1
fi
stamp=mcp/test/node_modules/.agentls-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s mcp/test/package-lock.json "$stamp"; then
	if ! (cd mcp/test && npm ci --no-audit --no-fund >"$tmp/npm.log" 2>&1); then
		tail -30 "$tmp/npm.log"
		echo "nvim suite: FAILED: npm ci in mcp/test failed"
		echo "0 passed, 1 failed"
		exit 1
	fi
	cp mcp/test/package-lock.json "$stamp"
fi
export AGENTLS_MCP_CLIENT="$PWD/mcp/test/client.mjs"

nvim_ok() { # nvim_ok CMD: CMD is Neovim >= 0.10
	"$1" --headless -u NONE -i NONE -n -c 'lua io.stdout:write(vim.fn.has("nvim-0.10") == 1 and "yes" or "no")' -c 'qa!' 2>/dev/null | grep -q yes
}
nvim=${AGENTLS_NVIM:-}
if [ -n "$nvim" ]; then
	nvim_ok "$nvim" || { echo "nvim suite: FAILED: AGENTLS_NVIM=$nvim is not Neovim >= 0.10"; exit 1; }
elif command -v nvim >/dev/null 2>&1 && nvim_ok nvim; then
	nvim=$(command -v nvim)
else
	nvim=$("$repo/scripts/install-nvim.sh" --path) || { echo "nvim suite: FAILED: no Neovim >= 0.10 and scripts/install-nvim.sh could not install one"; exit 1; }
fi
echo "nvim suite: $("$nvim" --version | head -n1) ($nvim)"

# A clean home for the editor and the server: no user config, history or state.
mkdir -p "$tmp/config" "$tmp/state" "$tmp/data" "$tmp/cache" "$tmp/run"
export XDG_CONFIG_HOME="$tmp/config" XDG_STATE_HOME="$tmp/state" XDG_DATA_HOME="$tmp/data" XDG_CACHE_HOME="$tmp/cache"
export XDG_RUNTIME_DIR="$tmp/run"
export AGENTLS_BIN="$tmp/agentls"

status=0
timeout "${AGENTLS_TEST_TIMEOUT:-600}" "$nvim" --headless -u NONE -i NONE -n \
	-c "luafile $repo/editors/nvim/test/run.lua" </dev/null 2>&1 | tee "$tmp/out.txt" || status=$?
if [ "$status" = 124 ]; then
	echo "nvim suite: FAILED: timed out"
fi
if ! grep -Eq '^[0-9]+ passed, [0-9]+ failed' "$tmp/out.txt"; then
	echo "nvim suite: the runner did not finish (exit $status)"
	echo "0 passed, 1 failed"
	[ "$status" != 0 ] || status=1
fi

# The built-in client with no plugin and its default capabilities
# (plain_*_spec.lua), in a Neovim of its own started with --clean.
echo "nvim suite: plain client (nvim --clean, no agentls plugin)"
pstatus=0
AGENTLS_TEST_PLAIN=1 timeout "${AGENTLS_TEST_TIMEOUT:-600}" "$nvim" --clean --headless -i NONE -n \
	-c "luafile $repo/editors/nvim/test/run.lua" </dev/null 2>&1 | tee "$tmp/plain.txt" || pstatus=$?
if ! grep -Eq '^[0-9]+ passed, [0-9]+ failed' "$tmp/plain.txt"; then
	echo "nvim suite: the plain runner did not finish (exit $pstatus)"
	echo "0 passed, 1 failed"
	[ "$pstatus" != 0 ] || pstatus=1
fi
[ "$status" != 0 ] || status=$pstatus
exit "$status"
