package workspace

import (
	"context"
	"maps"
	"math/rand"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

func TestIgnoreWildmatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, text string
		pathname      bool
		want          bool
	}{
		{"*.go", "a.go", true, true},
		{"*.go", "a/b.go", true, false},
		{"*.go", "a/b.go", false, true},
		{"a/**/z", "a/z", true, true},
		{"a/**/z", "a/b/c/z", true, true},
		{"a/**", "a/b/c", true, true},
		{"a/**", "a", true, false},
		{"**/c", "a/b/c", true, true},
		{"**/c", "c", true, true},
		{"a**b", "a/b", true, false},
		{"a**b", "axxb", true, true},
		{"?.q", "x.q", true, true},
		{"?.q", "/.q", true, false},
		{"[!0-9]x", "ax", true, true},
		{"[!0-9]x", "1x", true, false},
		{"[^0-9]x", "1x", true, false},
		{"[a-c]", "b", true, true},
		{"[a-c]", "d", true, false},
		{"[]]", "]", true, true},
		{"[!]]", "a", true, true},
		{"[a-]", "-", true, true},
		{"[[:digit:]]x", "7x", true, true},
		{"[[:digit:]]x", "ax", true, false},
		{"[[:bogus:]]", "a", true, false},
		{"[[:alpha:]-z]", "-", true, true},
		{"[\\]]", "]", true, true},
		{"\\*", "*", true, true},
		{"\\*", "a", true, false},
		{"a\\", "a", true, false},
		{"[abc", "a", true, false},
		{"*/b", "a/b", true, true},
		{"*/b", "a/x/b", true, false},
		{"**", "a/b", true, true},
		{"a/*", "a/b/c", true, false},
	}
	for _, tt := range tests {
		if got := wildmatch(tt.pattern, tt.text, tt.pathname); got != tt.want {
			t.Errorf("wildmatch(%q, %q, pathname=%v) = %v, want %v", tt.pattern, tt.text, tt.pathname, got, tt.want)
		}
	}
}

func TestIgnoreParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line    string
		want    ignoreRule
		skipped bool
	}{
		{line: "*.log", want: ignoreRule{pattern: "*.log", noDir: true}},
		{line: "!keep.log", want: ignoreRule{pattern: "keep.log", negate: true, noDir: true, prefix: 8}},
		{line: "build/", want: ignoreRule{pattern: "build", dirOnly: true, noDir: true, prefix: 5}},
		{line: "/root.txt", want: ignoreRule{pattern: "root.txt", prefix: 8}},
		{line: "a/b/", want: ignoreRule{pattern: "a/b", dirOnly: true, prefix: 3}},
		{line: "spaces   ", want: ignoreRule{pattern: "spaces", noDir: true, prefix: 6}},
		{line: `trailing\ `, want: ignoreRule{pattern: `trailing\ `, noDir: true, prefix: 8}},
		{line: `\#hash`, want: ignoreRule{pattern: `\#hash`, noDir: true}},
		{line: "# comment", skipped: true},
		{line: "   ", skipped: true},
		{line: "/", skipped: true},
	}
	for _, tt := range tests {
		r := ParseIgnore([]byte(tt.line + "\n"))
		if tt.skipped {
			if r.Len() != 0 {
				t.Errorf("%q: got %d rules, want none", tt.line, r.Len())
			}
			continue
		}
		if r.Len() != 1 || r.rules[0] != tt.want {
			t.Errorf("%q: got %+v, want %+v", tt.line, r.rules, tt.want)
		}
	}
}

// gitTree is a repository whose files are compared with what git ignores.
// Each case names files and what git is expected to do with them; the test
// checks the expectations and, more importantly, that the walker agrees
// with git itself.
var gitTree = []struct {
	name    string
	files   map[string]string // path → content ("" for an empty file)
	ignored []string
	kept    []string
}{
	{"extension", map[string]string{".gitignore": "*.log\n!important.log\n"}, []string{"x.log", "a/b/y.log"}, []string{"important.log", "a/important.log"}},
	{"dir only", map[string]string{".gitignore": "build/\n"}, []string{"build/out", "src/build/out"}, []string{"src/tool/build"}},
	{"anchored leading slash", map[string]string{".gitignore": "/rootonly.txt\n"}, []string{"rootonly.txt"}, []string{"sub/rootonly.txt"}},
	{"anchored middle slash", map[string]string{".gitignore": "doc/frotz\n"}, []string{"doc/frotz"}, []string{"a/doc/frotz"}},
	{"leading double star", map[string]string{".gitignore": "**/cache\n"}, []string{"cache/x", "p/q/cache/y"}, []string{"cached/z"}},
	{"middle double star", map[string]string{".gitignore": "a/**/z\n"}, []string{"a/z", "a/b/z", "a/b/c/z"}, []string{"b/a/z"}},
	{"trailing double star", map[string]string{".gitignore": "foo/**\n"}, []string{"foo/x", "foo/y/z"}, []string{"foox"}},
	{"double star after a literal prefix", map[string]string{".gitignore": "x**/y\n"}, []string{"x/y", "xq/y"}, []string{"z/y"}},
	{"double star inside a name", map[string]string{".gitignore": "m**n.txt\n"}, []string{"mabn.txt", "sub/mn.txt"}, []string{"m/n.txt"}},
	{"trailing spaces", map[string]string{".gitignore": "spaces   \n"}, []string{"spaces"}, nil},
	{"escaped trailing space", map[string]string{".gitignore": "trailing\\ \n"}, []string{"trailing "}, []string{"trailing"}},
	{"escaped hash", map[string]string{".gitignore": "\\#hash\n#comment\n"}, []string{"#hash"}, []string{"#comment"}},
	{"escaped bang", map[string]string{".gitignore": "\\!bang\n"}, []string{"!bang"}, []string{"bang"}},
	{"negated class", map[string]string{".gitignore": "[!0-9]x.dat\n"}, []string{"ax.dat"}, []string{"1x.dat"}},
	{"caret class", map[string]string{".gitignore": "[^a-m]y.dat\n"}, []string{"zy.dat"}, []string{"by.dat"}},
	{"range class", map[string]string{".gitignore": "num[0-9].txt\n"}, []string{"num5.txt"}, []string{"numx.txt"}},
	{"posix class", map[string]string{".gitignore": "[[:digit:]]*.cls\n"}, []string{"9a.cls"}, []string{"a9.cls"}},
	{"question mark", map[string]string{".gitignore": "?.q\n"}, []string{"x.q", "d/y.q"}, []string{"xy.q"}},
	{"escaped star", map[string]string{".gitignore": "escaped\\*star\n"}, []string{"escaped*star"}, []string{"escapedXstar"}},
	{"anchored negation re-includes", map[string]string{".gitignore": "*.o\n!keep/*.o\n"}, []string{"a.o", "keep/sub/b.o"}, []string{"keep/c.o"}},
	{"nothing re-included under an excluded dir", map[string]string{".gitignore": "ign_dir/\n!ign_dir/reinclude.txt\n"}, []string{"ign_dir/reinclude.txt", "ign_dir/other"}, nil},
	{"star then not dirs then go", map[string]string{"only-go/.gitignore": "*\n!*/\n!*.go\n"}, []string{"only-go/x.txt", "only-go/sub/y.md"}, []string{"only-go/x.go", "only-go/sub/y.go"}},
	{"deepest file wins", map[string]string{".gitignore": "*.tmp\n", "deep/.gitignore": "!debug.tmp\n"}, []string{"deep/other.tmp", "debug.tmp"}, []string{"deep/debug.tmp", "deep/x/debug.tmp"}},
	{"deeper file ignores again", map[string]string{".gitignore": "*.bak\n!important.bak\n", "deep2/.gitignore": "important.bak\n"}, []string{"deep2/important.bak"}, []string{"important.bak"}},
	{"last rule wins", map[string]string{".gitignore": "!late.txt\nlate.txt\nearly.txt\n!early.txt\n"}, []string{"late.txt"}, []string{"early.txt"}},
	{"name matches file and dir", map[string]string{".gitignore": "logs\n"}, []string{"logs", "x/logs/y"}, []string{"logsx"}},
	{"nested anchored pattern", map[string]string{"nest/.gitignore": "/top.txt\nmid/low.txt\n"}, []string{"nest/top.txt", "nest/mid/low.txt"}, []string{"nest/a/top.txt", "nest/a/mid/low.txt", "top.txt"}},
	{"crlf file", map[string]string{"crlf/.gitignore": "a.crlf\r\nb.crlf\r\n"}, []string{"crlf/a.crlf", "crlf/b.crlf"}, []string{"crlf/c.crlf"}},
	{"bom", map[string]string{"bom/.gitignore": "\xef\xbb\xbfbomfirst\n"}, []string{"bom/bomfirst"}, nil},
	{"no final newline", map[string]string{"nonl/.gitignore": "lastline"}, []string{"nonl/lastline"}, nil},
	{"info exclude", map[string]string{".git/info/exclude": "*.excl\n", ".gitignore": "!special.excl\n"}, []string{"x.excl"}, []string{"special.excl"}},
	{"hidden files are git's business", map[string]string{".gitignore": ".secret\n"}, []string{".secret", "h/.secret"}, []string{".visible"}},
	{"dir-only with wildcard", map[string]string{".gitignore": "tmp*/\n"}, []string{"tmp1/f", "q/tmpx/f"}, []string{"tmpfile"}},
	{"slash star matches one level", map[string]string{".gitignore": "lvl/*\n!lvl/keep\n"}, []string{"lvl/a", "lvl/d/e"}, []string{"lvl/keep/deeper"}},
}

// isolate gives the test (and the git it runs) a home of its own, so that
// the user's own git configuration and excludes file count for neither.
func isolate(t *testing.T) {
	testenv.IsolateGit(t)
	t.Setenv("HOME", t.TempDir())
}

// buildGitTree makes the repository of gitTree and returns its top.
func buildGitTree(t *testing.T) string {
	t.Helper()
	isolate(t)
	dir := t.TempDir()
	testenv.Git(t, dir, nil, "init", "-q")
	ignoreFiles := map[string]string{}
	for _, c := range gitTree {
		for p, content := range c.files {
			ignoreFiles[p] += content
		}
	}
	for p, content := range ignoreFiles {
		write(t, filepath.Join(dir, p), content)
	}
	for _, c := range gitTree {
		for _, p := range append(append([]string{}, c.ignored...), c.kept...) {
			write(t, filepath.Join(dir, p), "x\n")
		}
	}
	return dir
}

// write writes the file p, making its folders.
func write(t *testing.T, p, content string) {
	t.Helper()
	testenv.WriteFiles(t, filepath.Dir(p), map[string]string{filepath.Base(p): content})
}

func gitLines(t *testing.T, dir string, args ...string) map[string]bool {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	set := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			set[p] = true
		}
	}
	return set
}

func TestIgnoreAgainstGit(t *testing.T) {
	dir := buildGitTree(t)
	kept := gitLines(t, dir, "ls-files", "-z", "--others", "--exclude-standard")
	ignored := gitLines(t, dir, "ls-files", "-z", "--others", "--ignored", "--exclude-standard")

	if len(kept) < 20 || len(ignored) < 40 {
		t.Fatalf("git keeps %d files and ignores %d: the tree is not what the cases describe", len(kept), len(ignored))
	}
	t.Logf("git keeps %d files and ignores %d", len(kept), len(ignored))

	// The expectations of each case, as git sees them.
	for _, c := range gitTree {
		for _, p := range c.ignored {
			if !ignored[p] || kept[p] {
				t.Errorf("%s: git does not ignore %q as the case expects", c.name, p)
			}
		}
		for _, p := range c.kept {
			if !kept[p] {
				t.Errorf("%s: git ignores %q, which the case expects kept", c.name, p)
			}
		}
	}

	// The walker must list exactly what git lists.
	files, _, err := Collect(context.Background(), dir, WalkOptions{IncludeHidden: true}, func(f *File) bool { return !f.IsDir() })
	if err != nil {
		t.Fatal(err)
	}
	walked := map[string]bool{}
	for _, f := range files {
		walked[f.Rel] = true
	}
	for _, p := range slices.Sorted(maps.Keys(kept)) {
		if !walked[p] {
			t.Errorf("git keeps %q, the walker does not", p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(walked)) {
		if !kept[p] {
			t.Errorf("the walker keeps %q, git does not", p)
		}
	}

	// The one-off matcher must agree too, file by file.
	ig := NewIgnorer(dir)
	all, _, err := Collect(context.Background(), dir, WalkOptions{IncludeHidden: true, IncludeIgnored: true}, func(f *File) bool { return !f.IsDir() })
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		if got, want := ig.Excluded(f.Rel, false), !kept[f.Rel]; got != want {
			t.Errorf("Ignorer.Excluded(%q) = %v, git says %v", f.Rel, got, want)
		}
	}

	// And git check-ignore, for the paths themselves.
	var paths []string
	for _, f := range all {
		paths = append(paths, f.Rel)
	}
	cmd := exec.Command("git", "check-ignore", "-z", "--stdin")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	out, _ := cmd.Output() // exit status 1 when nothing is ignored
	checked := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		checked[p] = p != ""
	}
	for _, p := range paths {
		if checked[p] != !kept[p] {
			t.Errorf("git check-ignore says %q ignored=%v, ls-files says %v", p, checked[p], !kept[p])
		}
	}
}

// TestIgnoreIndex checks the indexed Match of long rule lists against
// trying every rule in order.
func TestIgnoreIndex(t *testing.T) {
	t.Parallel()
	pool := []string{"a", "b.go", "*.go", "*.txt", "!*.txt", "!keep.go", "x/", "/top", "/a/b", "src/*.go", "**/gen",
		"*~", "[ab].go", "!a", "dir/**", "*.tar.gz", "!/top", "c*", "*.go/", ".env*", "b.go/"}
	paths := []string{"a", "b.go", "c.txt", "x", "top", "a/b", "src/m.go", "q/gen", "f~", "a.go", "dir/z", "v.tar.gz",
		"sub/top", "keep.go", "cat", "t.go", ".env.local", "deep/a", "deep/b.go"}
	r := rand.New(rand.NewSource(3))
	for iter := 0; iter < 500; iter++ {
		var lines []string
		for n := 9 + r.Intn(30); n > 0; n-- {
			lines = append(lines, pool[r.Intn(len(pool))])
		}
		rules := ParseIgnore([]byte(strings.Join(lines, "\n") + "\n"))
		for _, p := range paths {
			for _, isDir := range []bool{false, true} {
				wantM, wantI := false, false
				for i := len(rules.rules) - 1; i >= 0; i-- {
					if rules.rules[i].matches(p, isDir) {
						wantM, wantI = true, !rules.rules[i].negate
						break
					}
				}
				if m, ign := rules.Match(p, isDir); m != wantM || ign != wantI {
					t.Fatalf("rules %q, path %q dir %v: got %v %v, want %v %v", lines, p, isDir, m, ign, wantM, wantI)
				}
			}
		}
	}
}

// TestIgnoreGlobalExcludes checks the user's excludes file, by default and
// through core.excludesFile, against git.
func TestIgnoreGlobalExcludes(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, viaConfig := range []bool{false, true} {
		home := t.TempDir()
		t.Setenv("HOME", home)
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "xdg"))
		t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
		if viaConfig {
			write(t, filepath.Join(home, "cfg"), "[user]\n\tname = x\n[core]\n\texcludesFile = ~/my-ignore\n")
			write(t, filepath.Join(home, "my-ignore"), "*.mine\n*.glob\n")
			t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "cfg"))
		} else {
			write(t, filepath.Join(home, "xdg", "git", "ignore"), "*.glob\n")
			t.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, "none"))
		}
		dir := t.TempDir()
		cmd := exec.Command("git", "init", "-q", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init: %v: %s", err, out)
		}
		write(t, filepath.Join(dir, ".git", "info", "exclude"), "!keep.glob\n")
		for _, f := range []string{"a.glob", "keep.glob", "b.mine", "c.txt"} {
			write(t, filepath.Join(dir, f), "")
		}
		cmd = exec.Command("git", "ls-files", "-z", "--others", "--exclude-standard")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, p := range strings.Split(string(out), "\x00") {
			if p != "" {
				want = append(want, p)
			}
		}
		sort.Strings(want)
		files, _, err := Collect(context.Background(), dir, WalkOptions{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range files {
			got = append(got, f.Rel)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("core.excludesFile via config %v: walker %q, git %q", viaConfig, got, want)
		}
		if len(want) == 4 {
			t.Errorf("git ignored nothing: the test is not testing")
		}
	}
}
