#!/usr/bin/env bash
# Installs Neovim 0.10 for agentls's tests and for people on Debian bookworm,
# whose own neovim is 0.7. Debian trixie's
# packages are downloaded (apt-get download, with a trixie sources list of
# their own, nothing added to the system's apt), unpacked with dpkg -x into one
# folder, and started through trixie's own dynamic loader, because trixie's
# nvim needs glibc 2.38. Nothing is installed system-wide.
#
#   scripts/install-nvim.sh           install when needed (idempotent)
#   scripts/install-nvim.sh --check   exit 0 when a Neovim >= 0.10 is available
#   scripts/install-nvim.sh --path    print the nvim command to run (installing first)
#   scripts/install-nvim.sh --force   unpack again even when installed
#
# Where: $AGENTLS_CACHE/nvim, default <repo>/.cache/nvim:
#   bin/nvim    the wrapper to run (sets VIMRUNTIME, runs trixie's loader)
#   root/       the unpacked packages
#   debs/ apt/  downloaded packages, apt's lists and sources for trixie
#
# Needs apt-get and dpkg, and access to deb.debian.org (or $AGENTLS_DEBIAN_MIRROR).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${AGENTLS_CACHE:-$repo/.cache}
dir=$cache/nvim
wrapper=$dir/bin/nvim
mirror=${AGENTLS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=trixie
arch=x86_64-linux-gnu
packages="neovim neovim-runtime libluajit-5.1-2 libluajit-5.1-common libmsgpack-c2 libtree-sitter0.22
libunibilium4 libuv1t64 libvterm0 lua-lpeg lua-luv libc6 libgcc-s1"

say() { echo "install-nvim: $*" >&2; }
die() {
	echo "install-nvim: FAILED: $*" >&2
	echo "install-nvim: install Neovim >= 0.10 yourself and put it on PATH, or set AGENTLS_NVIM=/path/to/nvim for the tests." >&2
	exit 1
}

# version_ok CMD...: CMD --version says NVIM v0.10 or newer.
version_ok() {
	local v
	v=$("$@" --version 2>/dev/null | head -n1) || return 1
	case $v in
	"NVIM v0."[0-9]*)
		local minor=${v#NVIM v0.}
		minor=${minor%%.*}
		[ "$minor" -ge 10 ] ;;
	"NVIM v"[1-9]*) return 0 ;;
	*) return 1 ;;
	esac
}

mode=install
case "${1:-}" in
--check) mode=check ;;
--path) mode=path ;;
--force) mode=force ;;
"") ;;
-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
*) echo "usage: $0 [--check|--path|--force]" >&2; exit 2 ;;
esac

if [ "$mode" = check ]; then
	if [ -x "$wrapper" ] && version_ok "$wrapper"; then
		"$wrapper" --version | head -n1
		exit 0
	fi
	if command -v nvim >/dev/null 2>&1 && version_ok nvim; then
		nvim --version | head -n1
		exit 0
	fi
	exit 1
fi

if [ "$mode" != force ] && [ -x "$wrapper" ] && version_ok "$wrapper"; then
	if [ "$mode" = path ]; then echo "$wrapper"; exit 0; fi
	say "$("$wrapper" --version | head -n1) is already installed at $wrapper"
	exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "apt-get not found (this script needs Debian's apt)"
command -v dpkg >/dev/null 2>&1 || die "dpkg not found"
[ "$(uname -m)" = x86_64 ] || die "only x86_64 is supported (this machine is $(uname -m))"

keyring=""
for k in /usr/share/keyrings/debian-archive-keyring.gpg /usr/share/keyrings/debian-archive-trixie-stable.gpg; do
	if [ -r "$k" ]; then keyring=$k; break; fi
done
[ -n "$keyring" ] || die "no Debian archive keyring (apt-get install debian-archive-keyring)"

mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/apt/etc/sources.list.d" \
	"$dir/apt/etc/preferences.d" "$dir/debs" "$dir/bin" || die "cannot create $dir"
echo "deb [signed-by=$keyring] $mirror $suite main" >"$dir/apt/etc/sources.list"
: >"$dir/apt/status"

# apt with trixie's lists only, kept in the cache folder.
aptopts=(
	-o "Dir::Etc::sourcelist=$dir/apt/etc/sources.list"
	-o "Dir::Etc::sourceparts=$dir/apt/etc/sources.list.d"
	-o "Dir::Etc::preferencesparts=$dir/apt/etc/preferences.d"
	-o "Dir::State::Lists=$dir/apt/lists"
	-o "Dir::State::status=$dir/apt/status"
	-o "Dir::Cache=$dir/apt/cache"
	-o "APT::Architecture=amd64"
	-o "APT::Architectures::=amd64"
	-o "Debug::NoLocking=1"
	-o "APT::Sandbox::User=root"
)
if [ "$(id -u)" != 0 ]; then aptopts+=(-o "APT::Sandbox::User=$(id -un)"); fi

say "apt-get update (Debian $suite lists only, into $dir/apt)"
apt-get "${aptopts[@]}" --error-on=any update -qq >&2 || die "apt-get update of $suite from $mirror failed (network? mirror?)"
ls "$dir/apt/lists/"*"_dists_${suite}_"*Packages* >/dev/null 2>&1 || die "apt-get update got no package list of $suite from $mirror"

say "apt-get download $(echo $packages)"
(cd "$dir/debs" && rm -f ./*.deb && apt-get "${aptopts[@]}" download $packages >&2) \
	|| die "apt-get download from $suite failed"

root=$dir/root
rm -rf "$root.new"
mkdir -p "$root.new"
for deb in "$dir"/debs/*.deb; do
	say "dpkg -x $(basename "$deb")"
	dpkg -x "$deb" "$root.new" || die "dpkg -x $deb failed"
done
rm -rf "$root"
mv "$root.new" "$root"

loader=$root/usr/lib/$arch/ld-linux-x86-64.so.2
[ -e "$loader" ] || loader=$root/lib64/ld-linux-x86-64.so.2
[ -e "$loader" ] || die "trixie's loader is missing from $root"
[ -x "$root/usr/bin/nvim" ] || die "nvim is missing from $root (neovim package layout changed?)"

# Neovim's TUI runs its core as a child, `v:progpath --embed`, and plugins
# start v:progpath too; through the loader v:progpath is the loader itself,
# which then fails ("unrecognized option '--embed'"). So, when patchelf is
# there (or can be unpacked from this system's own archive), a copy of nvim is
# given trixie's loader as its interpreter and trixie's libraries as its
# DT_RPATH: it runs directly, and its children (shells, agentls) are untouched.
# Without patchelf the wrapper runs the loader: fine for --headless, not for the TUI.
lib=$root/usr/lib/$arch
patched=""
pe=$(command -v patchelf 2>/dev/null || true)
if [ -z "$pe" ]; then
	mkdir -p "$dir/tools"
	if [ ! -x "$dir/tools/usr/bin/patchelf" ]; then
		say "apt-get download patchelf (this system's archive, unpacked into $dir/tools)"
		if (cd "$dir/tools" && rm -f ./patchelf_*.deb && apt-get -o APT::Sandbox::User=root download patchelf >&2 && dpkg -x ./patchelf_*.deb "$dir/tools"); then
			:
		else
			say "warning: patchelf is not available; the wrapper will use the loader (headless only, no TUI)"
		fi
	fi
	[ -x "$dir/tools/usr/bin/patchelf" ] && pe=$dir/tools/usr/bin/patchelf
fi
if [ -n "$pe" ]; then
	say "patchelf: interpreter and rpath of a copy of nvim -> $root"
	cp "$root/usr/bin/nvim" "$root/usr/bin/nvim.trixie"
	if "$pe" --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$lib:$root/lib/$arch" "$root/usr/bin/nvim.trixie" \
		&& VIMRUNTIME="$root/usr/share/nvim/runtime" "$root/usr/bin/nvim.trixie" --version >/dev/null 2>&1; then
		patched=$root/usr/bin/nvim.trixie
	else
		say "warning: the patched nvim does not run; the wrapper will use the loader (headless only, no TUI)"
		rm -f "$root/usr/bin/nvim.trixie"
	fi
fi

say "writing $wrapper"
{
	echo '#!/bin/sh'
	echo "# Neovim from Debian $suite (made by scripts/install-nvim.sh)."
	echo "R='$root'"
	echo 'VIMRUNTIME="$R/usr/share/nvim/runtime"'
	echo 'export VIMRUNTIME'
	if [ -n "$patched" ]; then
		echo '# nvim.trixie: trixie'"'"'s loader as interpreter, trixie'"'"'s libraries as rpath (patchelf).'
		echo '# AGENTLS_NVIM_LOADER=1 runs the loader instead (headless only).'
		echo 'if [ -z "${AGENTLS_NVIM_LOADER:-}" ]; then exec "$R/usr/bin/nvim.trixie" "$@"; fi'
	fi
	echo "exec \"\$R/usr/lib/$arch/ld-linux-x86-64.so.2\" --library-path \"\$R/usr/lib/$arch:\$R/lib/$arch\" \"\$R/usr/bin/nvim\" \"\$@\""
} >"$wrapper"
chmod +x "$wrapper"

if ! version_ok "$wrapper"; then
	"$wrapper" --version >&2 || true
	die "the unpacked nvim does not run (a missing library? see above)"
fi
# lpeg and luv are loaded at start-up by the runtime; a quick headless start proves them.
out=$("$wrapper" --headless -u NONE -i NONE -c 'lua io.stdout:write(vim.version().minor >= 10 and "ok" or "old")' -c 'qa!' 2>&1) || true
case $out in *ok*) ;; *) die "headless start failed: $out" ;; esac
say "installed $("$wrapper" --version | head -n1) at $wrapper"
if [ "$mode" = path ]; then echo "$wrapper"; fi
