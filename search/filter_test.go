package search

import (
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// TestPathGlobLiterals: a path glob with its literal prefilter matches
// exactly the paths doublestar matches (the prefilter only skips paths
// that cannot match), and the prefilter has literals where it may.
func TestPathGlobLiterals(t *testing.T) {
	globs := []string{
		"**/.git/**/config", "**/.git/**/config.worktree", "secrets/**", "a/**/b", "**/x?y/*.key",
		"a*b/c", "**", "*/*", "dir/{a,b}/f", "dir/[ab]/f", `dir/\*/f`, "/.git/config", "**/.git/config/**",
	}
	paths := []string{
		".git/config", "a/.git/config", "a/.git/modules/m/config", "a/.git/config.worktree", ".git/configx",
		"x/.git/hooks/config", "config", "a/config", "secrets", "secrets/k", "a/b", "a/x/y/b", "ab", "a/b/c",
		"xqy/k.key", "d/xqy/z.key", "aab/c", "ab/c", "a/c", "dir/a/f", "dir/c/f", "dir/*/f", ".git/config/x",
		"a.git/config", "é/.git/config", "",
	}
	for _, g := range globs {
		pg := newPathGlob(g)
		for _, p := range paths {
			want, _ := doublestar.Match(g, p)
			if got := pg.match(p); got != want {
				t.Errorf("%q on %q: %v, doublestar %v (literals %q)", g, p, got, want, pg.lits)
			}
		}
	}
	if pg := newPathGlob("**/.git/**/config"); len(pg.lits) != 2 {
		t.Errorf("literals of **/.git/**/config: %q", pg.lits)
	}
}
