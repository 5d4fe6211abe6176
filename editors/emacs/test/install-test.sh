#!/usr/bin/env bash
# Checks scripts/install-emacs.sh without installing anything: fake `emacs`
# and `apt-get` programs first on PATH.
#   - Emacs 30 present: it says so and changes nothing (idempotent);
#   - Emacs 28 present, apt-get failing: a clear FAILED message, exit 1;
#   - --check: 0 for Emacs 30, 1 for Emacs 28.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
script="$here/../../../scripts/install-emacs.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentls-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export INSTALL_EMACS_SOURCES_FILE="$tmp/backports.list"  # never touch /etc/apt
fail() { echo "install-emacs test: FAILED: $*" >&2; exit 1; }

fake() { # fake DIR MAJOR: an emacs of version MAJOR and an apt-get that fails
	mkdir -p "$1"
	cat >"$1/emacs" <<EOF
#!/bin/sh
case "\$*" in
*--version*) echo "GNU Emacs $2.1" ;;
*) printf %s "$2" ;;
esac
EOF
	printf '#!/bin/sh\necho "fake apt-get $*" >>"%s/apt.log"\nexit 100\n' "$1" >"$1/apt-get"
	printf '#!/bin/sh\nexec "$@"\n' >"$1/sudo"
	chmod +x "$1/emacs" "$1/apt-get" "$1/sudo"
}

fake "$tmp/v30" 30
out=$(PATH="$tmp/v30:$PATH" "$script" 2>&1) || fail "Emacs 30 present: exit $?: $out"
echo "$out" | grep -q "GNU Emacs 30.1 is already installed" || fail "Emacs 30 present: $out"
[ ! -e "$tmp/v30/apt.log" ] || fail "Emacs 30 present: apt-get was run"
PATH="$tmp/v30:$PATH" "$script" --check >/dev/null || fail "--check with Emacs 30 is not 0"

fake "$tmp/v28" 28
if PATH="$tmp/v28:$PATH" "$script" --check >/dev/null 2>&1; then fail "--check with Emacs 28 is 0"; fi
rc=0
out=$(PATH="$tmp/v28:$PATH" "$script" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "apt-get failing: exit $rc (want 1): $out"
echo "$out" | grep -q "install-emacs: FAILED: apt-get update failed" || fail "no clear failure message: $out"
grep -q "update" "$tmp/v28/apt.log" || fail "apt-get update was not run"
echo "install-emacs test: ok (idempotent with Emacs 30; clear failure when apt-get fails)"
