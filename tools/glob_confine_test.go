package tools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

// TestGlobConfinement attacks glob's pattern: patterns
// are confined like paths, symlinks that lead out are never walked into,
// and a symlink loop ends. Every answer is checked for the outside
// folder's names.
func TestGlobConfinement(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	outside := t.TempDir()
	testenv.WriteFiles(t, outside, map[string]string{"secret-outside.txt": "x", "deep/secret-outside.go": "x"})
	testenv.WriteFiles(t, root, map[string]string{
		"a/one.txt":     "1",
		"b/two.txt":     "2",
		"b/sub/tri.txt": "3",
		"top.txt":       "t",
	})
	for name, target := range map[string]string{
		"out":    outside,                                     // a directory outside
		"outrel": filepath.Join("..", filepath.Base(outside)), // relative, outside
		"inlink": "b",                                         // a directory inside
		"loop":   "loop",                                      // itself
		"loopa":  "loopb",
		"loopb":  "loopa",
		"a/up":   "..", // the root, from below: a cycle inside
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		pattern string
		path    string
		code    Code     // an error with this code, or
		files   []string // exactly these files
	}{
		{"dotdot star", "../*", "", InvalidPath, nil},
		{"dotdot to the outside folder", "../" + filepath.Base(outside) + "/*", "", InvalidPath, nil},
		{"absolute outside", "/etc/*", "", InvalidPath, nil},
		{"absolute outside folder", outside + "/**/*", "", InvalidPath, nil},
		{"climb with no wildcard", "a/../../x", "", InvalidPath, nil},
		{"climb after a wildcard", "**/../../*", "", InvalidPath, nil},
		{"climb after a star", "*/../../*", "", InvalidPath, nil},
		{"climb out of path", "../../*", "a", InvalidPath, nil},
		{"through a link to outside", "out/*", "", InvalidPath, nil},
		{"through a relative link to outside", "outrel/**/*", "", InvalidPath, nil},
		{"path is a link to outside", "*", "out", InvalidPath, nil},
		{"through a loop", "loop/*", "", InvalidPath, nil},
		{"through a two-link loop", "loopa/**", "", InvalidPath, nil},
		// What stays inside works.
		{"everything: links are not walked", "**/*", "", "", []string{"a/one.txt", "b/sub/tri.txt", "b/two.txt", "top.txt"}},
		{"dotdot that stays inside", "a/../b/*.txt", "", "", []string{"b/two.txt"}},
		{"absolute inside", root + "/b/**/*.txt", "", "", []string{"b/sub/tri.txt", "b/two.txt"}},
		{"through a link inside", "inlink/*.txt", "", "", []string{"inlink/two.txt"}},
		{"below path", "*.txt", "b", "", []string{"b/two.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"pattern": tc.pattern}
			if tc.path != "" {
				args["path"] = tc.path
			}
			res := ftCall(t, env, "glob", args)
			if strings.Contains(res.Content, "secret-outside") {
				t.Fatalf("glob %q listed outside names:\n%s", tc.pattern, res.Content)
			}
			if tc.code != "" {
				wantError(t, res, tc.code)
				return
			}
			wantSuccess(t, res)
			var out struct{ Files []string }
			decode(t, res, &out)
			if !slices.Equal(out.Files, tc.files) {
				t.Fatalf("glob %q = %q, want %q", tc.pattern, out.Files, tc.files)
			}
		})
	}
}

// TestWalksDoNotFollowLinksOut: list_directory and grep list a link to an
// outside folder as a link and never enter it, and a link loop ends.
func TestWalksDoNotFollowLinksOut(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	outside := t.TempDir()
	testenv.WriteFiles(t, outside, map[string]string{"secret-outside.txt": "needle-outside"})
	testenv.WriteFiles(t, root, map[string]string{"in/x.txt": "needle-inside"})
	for name, target := range map[string]string{"out": outside, "in/loop": "..", "self": "self"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_directory", map[string]any{"path": ".", "recursive": true, "include_hidden": true}},
		{"grep", map[string]any{"pattern": "needle", "include_ignored": true}},
	} {
		res := ftCall(t, env, c.tool, c.args)
		wantSuccess(t, res)
		if strings.Contains(res.Content, "outside") {
			t.Fatalf("%s reached outside:\n%s", c.tool, res.Content)
		}
		if !strings.Contains(res.Content, "x.txt") {
			t.Fatalf("%s lost the inside file:\n%s", c.tool, res.Content)
		}
	}
}
