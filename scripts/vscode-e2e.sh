#!/usr/bin/env bash
# End-to-end suite of the VS Code extension in real VS Code: code-server
# (VS Code for the web, from npm) with the packaged extension installed,
# driven in headless Debian Chromium by playwright-core.
#
# Installs what is missing (cached; nothing is reinstalled when present):
#   apt: libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config ripgrep chromium
#   code-server into $AGENTLS_CACHE/code-server (default .cache/ of the repo), by
#   scripts/install-code-server.sh
#   editors/vscode's npm packages (npm ci), which include playwright-core
# Builds agentls and the .vsix, starts code-server on a free loopback port with a
# fresh user-data and extensions folder and --auth none, runs the suite, and
# stops every process it started.
#
# Screenshots: $AGENTLS_E2E_SHOTS (default test-results/vscode/ of the repo).
# Prints "N passed, M failed" last; exits non-zero on failure (also when the
# dependencies cannot be installed).
set -uo pipefail
name=vscode-e2e
. "$(dirname "$0")/lib.sh"
ext="$repo/editors/vscode"
cache="${AGENTLS_CACHE:-$repo/.cache}"
shots="${AGENTLS_E2E_SHOTS:-$repo/test-results/vscode}"
cs_pgid=""
test_pid=""
cleanup() {
  # The suite runs in its own process group too: it holds the browser.
  [ -n "$test_pid" ] && kill -TERM -- "-$test_pid" 2>/dev/null
  if [ -n "$cs_pgid" ]; then
    # code-server runs in its own session: its process group holds the
    # extension host and the agentls server it spawned.
    kill -TERM -- "-$cs_pgid" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- "-$cs_pgid" 2>/dev/null || break; sleep 0.3; done
    kill -KILL -- "-$cs_pgid" 2>/dev/null
  fi
  if [ -z "${AGENTLS_E2E_KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT # (instead of lib.sh's: it removes $work too)
trap 'echo "vscode-e2e: interrupted" >&2; echo "0 passed, 1 failed"; exit 130' INT TERM

step() { echo "== $* ($(date +%T))"; }

# ---- dependencies ----
step "system packages"
missing=()
for p in libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config ripgrep chromium; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"; } >"$work/apt.log" 2>&1 \
    || { tail -20 "$work/apt.log"; fail "cannot install ${missing[*]} with apt-get: the end-to-end suite needs them"; }
fi
[ -x /usr/bin/chromium ] || fail "/usr/bin/chromium is missing"

cs_dir="$cache/code-server"
cs_bin="$cs_dir/node_modules/.bin/code-server"
# code-server writes its config and logs under the XDG folders, even for --version:
# keep them in $work.
cs() { XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" "$cs_bin" "$@"; }
step "code-server"
"$repo/scripts/install-code-server.sh" || fail "cannot install code-server (scripts/install-code-server.sh)"

step "extension npm packages"
cd "$ext" || fail "no $ext"
lock_vscode_build
npm_ci_when_changed

# ---- build ----
step "build agentls, the extension and the test driver"
mkdir -p "$work/bin"
build_agentls "$work/bin/agentls"
npm run --silent compile || fail "compile failed"
npx --no-install vsce package --no-dependencies --skip-license -o "$work/agentls.vsix" >"$work/vsce.log" 2>&1 \
  || { cat "$work/vsce.log"; fail "vsce package failed"; }
(cd e2e/test-extension && ../../node_modules/.bin/vsce package --no-dependencies --skip-license --allow-missing-repository \
   -o "$work/e2e-driver.vsix") >>"$work/vsce.log" 2>&1 || { cat "$work/vsce.log"; fail "packaging the e2e driver failed"; }

flock -u 9
# ---- code-server ----
step "code-server with the packaged extension"
# Everything code-server, the extension host, agentls and Chromium write
# outside the folders given to them (config, state such as the agentls
# history, sockets, crash reports) stays in $work.
export XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" XDG_STATE_HOME="$work/xdg/state" \
  XDG_CACHE_HOME="$work/xdg/cache" TMPDIR="$work/tmp"
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$XDG_CACHE_HOME" "$TMPDIR"
ud="$work/user-data" exts="$work/extensions" ws="$work/workspace" io="$work/io"
mkdir -p "$ud/User" "$exts" "$ws" "$io" "$shots"
rm -f "$shots"/*.png
cat >"$ud/User/settings.json" <<EOF
{
  "agentls.server.path": "$work/bin/agentls",
  "agentls.server.args": ["--log", "$work/agentls.log", "--log-level", "debug"],
  "workbench.startupEditor": "none",
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "update.mode": "none",
  "window.restoreWindows": "none",
  "files.hotExit": "off",
  "files.autoSave": "off",
  "git.enabled": false,
  "editor.minimap.enabled": false,
  "workbench.colorTheme": "Default Light Modern"
}
EOF
cs --config "$work/code-server.yaml" --user-data-dir "$ud" --extensions-dir "$exts" \
  --install-extension "$work/agentls.vsix" --install-extension "$work/e2e-driver.vsix" >"$work/install-ext.log" 2>&1 \
  || { cat "$work/install-ext.log"; fail "installing the extension into code-server failed"; }
grep -q "agentls.agentls-0" <(ls "$exts") || { cat "$work/install-ext.log"; fail "the extension is not in $exts"; }

port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
# setsid: code-server and everything it starts form one process group we can stop.
AGENTLS_E2E_DIR="$io" setsid "$cs_bin" --config "$work/code-server.yaml" --auth none --bind-addr "127.0.0.1:$port" \
  --disable-telemetry --disable-update-check --disable-workspace-trust \
  --user-data-dir "$ud" --extensions-dir "$exts" "$ws" >"$work/code-server.log" 2>&1 &
cs_pgid=$!
for _ in $(seq 1 100); do
  curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break
  kill -0 "$cs_pgid" 2>/dev/null || { cat "$work/code-server.log"; fail "code-server exited"; }
  sleep 0.2
done
curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" || { cat "$work/code-server.log"; fail "code-server did not start on port $port"; }
echo "code-server on http://127.0.0.1:$port (pid $cs_pgid)"

# ---- the suite ----
step "playwright suite"
export CODE_SERVER_URL="http://127.0.0.1:$port" E2E_WORKSPACE="$ws" E2E_IO="$io" E2E_SHOTS="$shots" \
  E2E_USER_SETTINGS="$ud/User/settings.json" E2E_USER_DATA="$ud" AGENTLS_E2E_BIN="$work/bin/agentls"
setsid node --test --test-concurrency=1 --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination="$work/tap.txt" e2e/ &
test_pid=$!
wait "$test_pid"
rc=$?
test_pid=""
tap_counts "$work/tap.txt" "$rc"
if [ "$failn" -ne 0 ]; then
  echo "---- code-server log (tail)"; tail -20 "$work/code-server.log"
  echo "---- agentls log (tail)"; tail -30 "$work/agentls.log" 2>/dev/null
  find "$ud/logs" -name '*Agent Tools*.log' -exec sh -c 'echo "---- $1"; tail -40 "$1"' _ {} \;
fi
echo "screenshots: $shots"
ls "$shots"
tap_summary
