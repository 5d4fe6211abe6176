#!/usr/bin/env bash
# monorepo-tree.sh DIR: builds the monorepo-scale test tree at DIR, eight
# copies of $(go env GOROOT)/src (about 92,000 files, 1.3 GB), as
# DIR/src1 ... DIR/src8, for the benchmarks (scripts/bench.sh) and the
# scale tests. Made once: a DIR that holds a finished tree (DIR/.complete,
# naming the Go version it was copied from) is left as it is. The tree is
# made read-only, so that checkouts may share it (scripts/bench.sh: TREES).
set -euo pipefail
dir=${1:?usage: monorepo-tree.sh DIR}
copies=${COPIES:-8}
src=$(go env GOROOT)/src
want="$(go env GOVERSION) x$copies"
if [[ -f $dir/.complete && $(cat "$dir/.complete") == "$want" ]]; then
	echo "$dir: already built ($want)" >&2
	exit 0
fi
if [[ -e $dir ]]; then
	chmod -R u+w "$dir"
	rm -rf "$dir"
fi
mkdir -p "$dir"
for i in $(seq 1 "$copies"); do
	cp -R "$src" "$dir/src$i"
done
chmod -R a-w "$dir"/src*
chmod u+w "$dir"
echo "$want" >"$dir/.complete"
chmod a-w "$dir"
echo "$dir: $(find "$dir" -type f | wc -l) files, $(du -sh "$dir" | cut -f1)" >&2
