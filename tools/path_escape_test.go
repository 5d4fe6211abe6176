package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
)

// escapeAttempt is one path that must not get through a file tool.
type escapeAttempt struct {
	name string
	path string
	code Code
}

// escapeCorpus builds the attempts against root, with outside a folder
// next to it that holds outside.txt. The tree it needs is made by
// escapeTree.
func escapeCorpus(root, outside string) []escapeAttempt {
	ob := filepath.Base(outside)
	return []escapeAttempt{
		// .. forms
		{"dotdot", "../x", InvalidPath},
		{"dotdot to sibling", "../" + ob + "/outside.txt", InvalidPath},
		{"a/../../x", "a/../../x", InvalidPath},
		{"./../x", "./../x", InvalidPath},
		{"a/./../../x", "a/./../../x", InvalidPath},
		{"dir/../../sibling", "dir/../../" + ob + "/outside.txt", InvalidPath},
		{"deep dotdot", "../../../../../../../../etc/passwd", InvalidPath},
		{"bare dotdot", "..", InvalidPath},
		{"a/b/../../..", "a/b/../../..", InvalidPath},
		{"dotdot after a dir", "dir/sub/../../../x", InvalidPath},
		// absolute paths and URIs
		{"/etc/passwd", "/etc/passwd", InvalidPath},
		{"absolute outside file", filepath.Join(outside, "outside.txt"), InvalidPath},
		{"absolute outside folder", outside, InvalidPath},
		{"absolute new file outside", filepath.Join(outside, "new.txt"), InvalidPath},
		{"absolute root then dotdot", root + "/../" + ob + "/outside.txt", InvalidPath},
		{"file URI /etc/passwd", "file:///etc/passwd", InvalidPath},
		{"file URI outside", "file://" + filepath.ToSlash(filepath.Join(outside, "outside.txt")), InvalidPath},
		{"file URI localhost", "file://localhost/etc/passwd", InvalidPath},
		{"file URI encoded dotdot", "file://" + filepath.ToSlash(root) + "/%2e%2e/" + ob + "/outside.txt", InvalidPath},
		{"file URI encoded dotdot upper", "file://" + filepath.ToSlash(root) + "/a/%2E%2E/%2E%2E/x", InvalidPath},
		{"file URI encoded slash dotdot", "file://" + filepath.ToSlash(root) + "/..%2f" + ob + "%2foutside.txt", InvalidPath},
		{"file URI remote host", "file://evil.example" + filepath.ToSlash(root) + "/normal.txt", InvalidPath},
		// ~ and NUL
		{"tilde", "~", InvalidPath},
		{"tilde slash", "~/x", InvalidPath},
		{"tilde user", "~root/.bashrc", InvalidPath},
		{"NUL", "normal.txt\x00.png", InvalidPath},
		{"NUL alone", "\x00", InvalidPath},
		{"NUL encoded in a URI", "file://" + filepath.ToSlash(root) + "/normal.txt%00.png", InvalidPath},
		// symlinks leading outside
		{"symlinked file", "link_file", InvalidPath},
		{"symlinked file absolute", filepath.Join(root, "link_file"), InvalidPath},
		{"symlinked folder", "link_dir", InvalidPath},
		{"existing file in symlinked folder", "link_dir/outside.txt", InvalidPath},
		{"new file in symlinked folder", "link_dir/new.txt", InvalidPath},
		{"new deep file in symlinked folder", "link_dir/newdir/deeper/new.txt", InvalidPath},
		{"dotdot back into symlinked folder", "dir/../link_dir/outside.txt", InvalidPath},
		{"relative symlink outside", "rel_link", InvalidPath},
		{"chain of links", "link_chain/outside.txt", InvalidPath},
		{"dangling link outside", "dangling", InvalidPath},
		{"new file below a dangling folder link", "dangling_dir/new.txt", InvalidPath},
		{"symlinked folder in a subfolder", "dir/inner_link/outside.txt", InvalidPath},
		// sensitive files
		{".env", ".env", SensitivePath},
		{".env.local", ".env.local", SensitivePath},
		{"a/.ssh/id_rsa", "a/.ssh/id_rsa", SensitivePath},
		{"a/.ssh folder", "a/.ssh", SensitivePath},
		{"x.pem", "x.pem", SensitivePath},
		{"credentials.json", "credentials.json", SensitivePath},
		{"nested credentials.json", "config/credentials.json", SensitivePath},
		{"id_rsa.pub", "id_rsa.pub", SensitivePath},
		{".aws", "home/.aws/config", SensitivePath},
		{".env via dotdot", "./a/../.env", SensitivePath},
		{".env absolute", filepath.Join(root, ".env"), SensitivePath},
		{".env file URI", "file://" + filepath.ToSlash(root) + "/.env", SensitivePath},
		{"new .env.production", ".env.production", SensitivePath},
		{"symlink to .env", "env_link", SensitivePath},
		{"symlink to x.pem", "pem_link.txt", SensitivePath},
		{"key through a symlinked .ssh", "ssh_link/id_rsa", SensitivePath},
		{"innocent name through a symlinked .ssh", "ssh_link/known", SensitivePath},
	}
}

// escapeTree makes the workspace and the outside folder the corpus needs.
func escapeTree(t *testing.T, root, outside string) {
	t.Helper()
	testenv.WriteFiles(t, outside, map[string]string{"outside.txt": "SECRET\n", "sub/inner.txt": "SECRET\n"})
	testenv.WriteFiles(t, root, map[string]string{
		"normal.txt": "SECRET\n", "dir/sub/file.txt": "SECRET\n", "a/b/c.txt": "SECRET\n",
		".env": "SECRET\n", ".env.local": "SECRET\n", "a/.ssh/id_rsa": "SECRET\n", "a/.ssh/known": "SECRET\n",
		"x.pem": "SECRET\n", "credentials.json": "SECRET\n", "config/credentials.json": "SECRET\n",
		"id_rsa.pub": "SECRET\n", "home/.aws/config": "SECRET\n",
	})
	links := map[string]string{
		"link_file":      filepath.Join(outside, "outside.txt"),
		"link_dir":       outside,
		"rel_link":       "../" + filepath.Base(outside) + "/outside.txt",
		"link_chain":     "link_dir",
		"dangling":       filepath.Join(outside, "missing.txt"),
		"dangling_dir":   filepath.Join(outside, "missing-dir"),
		"dir/inner_link": outside,
		"env_link":       ".env",
		"pem_link.txt":   "x.pem",
		"ssh_link":       "a/.ssh",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot records every path below dir (without following links) with its
// content or link target.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out = append(out, p+" error "+err.Error())
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out = append(out, rel+" -> "+target)
		case d.IsDir():
			out = append(out, rel+"/")
		default:
			b, _ := os.ReadFile(p)
			out = append(out, rel+" = "+string(b))
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// escapeCalls are the ways each file tool takes a path: name → arguments
// for the attempted path p.
func escapeCalls(p string) []struct {
	tool string
	args any
} {
	type call = struct {
		tool string
		args any
	}
	patch := func(header string) string { return header + "@@ -1 +1 @@\n-SECRET\n+pwned\n" }
	return []call{
		{"read_file", map[string]any{"path": p}},
		{"read_file", map[string]any{"path": p, "encoding": "base64"}},
		{"write_file", map[string]any{"path": p, "content": "pwned\n"}},
		{"edit_file", map[string]any{"path": p, "old_string": "SECRET", "new_string": "pwned"}},
		{"multi_edit", map[string]any{"path": p, "edits": []any{map[string]any{"old_string": "SECRET", "new_string": "pwned"}}}},
		{"apply_patch", map[string]any{"patch": patch("--- " + p + "\n+++ " + p + "\n")}},
		{"apply_patch", map[string]any{"patch": patch("diff --git a/" + p + " b/" + p + "\n--- a/" + p + "\n+++ b/" + p + "\n")}},
		{"apply_patch", map[string]any{"patch": "--- /dev/null\n+++ " + p + "\n@@ -0,0 +1 @@\n+pwned\n"}},
		{"apply_patch", map[string]any{"patch": "--- " + p + "\n+++ /dev/null\n@@ -1 +0,0 @@\n-SECRET\n"}},
		{"apply_patch", map[string]any{"patch": "--- normal.txt\n+++ " + p + "\n@@ -1 +1 @@\n-SECRET\n+pwned\n"}},
		{"apply_patch", map[string]any{"patch": "--- " + p + "\n+++ normal2.txt\n@@ -1 +1 @@\n-SECRET\n+pwned\n"}},
		{"list_directory", map[string]any{"path": p}},
		{"list_directory", map[string]any{"path": p, "recursive": true, "include_hidden": true}},
		{"create_directory", map[string]any{"path": p}},
		{"delete_file", map[string]any{"path": p, "recursive": true}},
		{"move_file", map[string]any{"from": p, "to": "moved.txt"}},
		{"move_file", map[string]any{"from": "normal.txt", "to": p, "overwrite": true}},
		{"copy_file", map[string]any{"source": p, "dest": "copied.txt"}},
		{"copy_file", map[string]any{"source": "normal.txt", "dest": p, "overwrite": true}},
	}
}

// TestPathEscapeCorpus runs every escape attempt through every path
// argument of every file tool: each is refused with INVALID_PATH or
// SENSITIVE_PATH, and neither the outside folder nor the workspace changes.
func TestPathEscapeCorpus(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	outside := t.TempDir() // a sibling of root: ../<base> reaches it
	escapeTree(t, root, outside)
	corpus := escapeCorpus(root, outside)
	if len(corpus) < 40 {
		t.Fatalf("corpus has %d attempts, want at least 40", len(corpus))
	}
	// The model has read everything it could, so staleness is never the
	// reason a call fails.
	for _, p := range []string{"normal.txt"} {
		wantSuccess(t, ftCall(t, env, "read_file", map[string]any{"path": p}))
	}
	beforeOut, beforeRoot := snapshot(t, outside), snapshot(t, root)
	tools := map[string]bool{}
	calls := 0
	for _, at := range corpus {
		for i, c := range escapeCalls(at.path) {
			tools[c.tool] = true
			calls++
			res := ftCall(t, env, c.tool, c.args)
			label := fmt.Sprintf("%s #%d on %s (%q)", c.tool, i, at.name, at.path)
			if res.Status != StatusError || res.Error == nil {
				t.Errorf("%s got through: %s %s", label, res.Status, res.Content)
			} else if res.Error.Code != at.code {
				t.Errorf("%s: code %s (%s), want %s", label, res.Error.Code, res.Error.Message, at.code)
			} else if strings.Contains(at.name, "NUL") && !strings.Contains(res.Error.Message, "NUL byte") {
				t.Errorf("%s: %s, want it to say NUL byte", label, res.Error.Message)
			}
			if s := snapshot(t, outside); s != beforeOut {
				t.Fatalf("%s changed the outside folder:\n%s", label, s)
			}
			if s := snapshot(t, root); s != beforeRoot {
				t.Fatalf("%s changed the workspace:\n%s", label, s)
			}
		}
	}
	for _, name := range []string{"read_file", "write_file", "edit_file", "multi_edit", "apply_patch", "list_directory",
		"create_directory", "delete_file", "move_file", "copy_file"} {
		if !tools[name] {
			t.Errorf("%s is not in the corpus run", name)
		}
	}
	t.Logf("%d attempts × %d calls = %d refused calls", len(corpus), len(escapeCalls("x")), calls)
}

// TestPathEscapeControls checks that what a refused read returns holds
// no outside content, and that the tools still work on the workspace's own
// files next to the traps (the corpus does not pass by refusing everything).
func TestPathEscapeControls(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	outside := t.TempDir()
	escapeTree(t, root, outside)
	res := ftCall(t, env, "read_file", map[string]any{"path": "link_file"})
	if strings.Contains(res.Content, "SECRET") {
		t.Errorf("refused read leaks the file: %s", res.Content)
	}
	for _, p := range []string{"normal.txt", "./normal.txt", "dir/../normal.txt", filepath.Join(root, "normal.txt"), "file://" + filepath.ToSlash(root) + "/normal.txt"} {
		wantSuccess(t, ftCall(t, env, "read_file", map[string]any{"path": p}))
	}
	wantSuccess(t, ftCall(t, env, "edit_file", map[string]any{"path": "normal.txt", "old_string": "SECRET", "new_string": "fine"}))
	wantSuccess(t, ftCall(t, env, "copy_file", map[string]any{"source": "normal.txt", "dest": "dir/copy.txt"}))
	wantSuccess(t, ftCall(t, env, "move_file", map[string]any{"from": "dir/copy.txt", "to": "dir/moved.txt"}))
	wantSuccess(t, ftCall(t, env, "list_directory", map[string]any{"path": "dir", "recursive": true}))
	wantSuccess(t, ftCall(t, env, "create_directory", map[string]any{"path": "made/here"}))
	wantSuccess(t, ftCall(t, env, "delete_file", map[string]any{"path": "dir/moved.txt"}))
	// A link inside the workspace that stays inside is followed.
	os.Symlink("normal.txt", filepath.Join(root, "inside_link"))
	wantSuccess(t, ftCall(t, env, "read_file", map[string]any{"path": "inside_link"}))
	// A listing of the root shows the links as links and does not follow them.
	res = ftCall(t, env, "list_directory", map[string]any{"recursive": true, "include_hidden": true})
	wantSuccess(t, res)
	if strings.Contains(res.Content, "link_dir/") || strings.Contains(res.Content, "inner_link/") || !strings.Contains(res.Content, "link_dir -> ") {
		t.Errorf("listing follows links out of the workspace:\n%s", res.Content)
	}
	if strings.Contains(res.Content, "a/.ssh/id_rsa") {
		t.Errorf("listing enters a sensitive folder:\n%s", res.Content)
	}
}

// TestPathEscapeThroughContents covers what a path check alone cannot see:
// a directory deleted or moved with a sensitive file in it, a workspace
// root deleted or moved, and a relative symlink that would lead out once
// moved.
func TestPathEscapeThroughContents(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	outside := t.TempDir()
	escapeTree(t, root, outside)
	os.Symlink("../normal.txt", filepath.Join(root, "dir", "up_link")) // inside now; outside once moved to the root
	os.Symlink("../../normal.txt", filepath.Join(root, "dir", "sub", "deep_link"))
	before := snapshot(t, root)
	cases := []struct {
		tool string
		args map[string]any
		code Code
	}{
		{"delete_file", map[string]any{"path": "config", "recursive": true}, SensitivePath},
		{"delete_file", map[string]any{"path": "a", "recursive": true}, SensitivePath},
		{"delete_file", map[string]any{"path": "home", "recursive": true}, SensitivePath},
		{"move_file", map[string]any{"from": "config", "to": "elsewhere"}, SensitivePath},
		{"move_file", map[string]any{"from": "a", "to": "b"}, SensitivePath},
		{"delete_file", map[string]any{"path": ".", "recursive": true}, InvalidPath},
		{"delete_file", map[string]any{"path": "dir/..", "recursive": true}, InvalidPath},
		{"delete_file", map[string]any{"path": root, "recursive": true}, InvalidPath},
		{"move_file", map[string]any{"from": ".", "to": "x"}, InvalidPath},
		{"move_file", map[string]any{"from": "dir/up_link", "to": "up_link"}, InvalidPath},
		{"move_file", map[string]any{"from": "dir/sub", "to": "sub"}, InvalidPath},
	}
	for _, tc := range cases {
		res := ftCall(t, env, tc.tool, tc.args)
		if res.Status != StatusError || res.Error.Code != tc.code {
			t.Errorf("%s %v = %s %+v, want %s", tc.tool, tc.args, res.Status, res.Error, tc.code)
		}
		if s := snapshot(t, root); s != before {
			t.Fatalf("%s %v changed the workspace", tc.tool, tc.args)
		}
	}
	// Moving a link where its relative target still resolves inside is fine.
	wantSuccess(t, ftCall(t, env, "move_file", map[string]any{"from": "dir/up_link", "to": "a/up_link"}))
}

// TestPathEscapeRootIsSymlink: a workspace opened through a symlinked
// folder still refuses the corpus and still reaches its own files.
func TestPathEscapeRootIsSymlink(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	outside := t.TempDir()
	escapeTree(t, real, outside)
	root := filepath.Join(t.TempDir(), "ws-link")
	if err := os.Symlink(real, root); err != nil {
		t.Fatal(err)
	}
	env, _ := ftEnv(t)
	if err := env.Workspace.SetRoots([]string{root}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"normal.txt", filepath.Join(root, "normal.txt")} {
		wantSuccess(t, ftCall(t, env, "read_file", map[string]any{"path": p}))
	}
	before := snapshot(t, outside)
	for _, at := range escapeCorpus(root, outside) {
		for _, c := range escapeCalls(at.path)[:6] {
			res := ftCall(t, env, c.tool, c.args)
			if res.Status != StatusError || (res.Error.Code != InvalidPath && res.Error.Code != SensitivePath) {
				t.Errorf("%s on %s (%q): %s %+v", c.tool, at.name, at.path, res.Status, res.Error)
			}
		}
	}
	if snapshot(t, outside) != before {
		t.Fatal("the outside folder changed")
	}
}

// TestPathEscapeWhileWaitingForApproval: a folder swapped for a symlink
// that leads out, between the plan and the write (while the person was
// asked), is refused when the edit is applied.
func TestPathEscapeWhileWaitingForApproval(t *testing.T) {
	t.Parallel()
	for _, tc := range []toolCall{
		{"write_file", map[string]any{"path": "dir/new.txt", "content": "pwned\n"}},
		{"edit_file", map[string]any{"path": "dir/f.txt", "old_string": "SECRET", "new_string": "pwned"}},
		{"apply_patch", map[string]any{"patch": "--- a/dir/f.txt\n+++ b/dir/f.txt\n@@ -1 +1 @@\n-SECRET\n+pwned\n"}},
		{"move_file", map[string]any{"from": "normal.txt", "to": "dir/f.txt", "overwrite": true}},
		{"create_directory", map[string]any{"path": "dir/sub"}},
		{"delete_file", map[string]any{"path": "dir/f.txt"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			env, root := ftEnv(t)
			outside := t.TempDir()
			testenv.WriteFiles(t, outside, map[string]string{"f.txt": "SECRET\n"})
			testenv.WriteFiles(t, root, map[string]string{"dir/f.txt": "SECRET\n", "normal.txt": "n\n"})
			cfg := *env.Workspace.Config()
			cfg.Approval.Mode = "ask"
			env.Workspace.SetConfig(&cfg)
			inner := env.Approver
			env.Approver = approval.ApproverFunc(func(ctx context.Context, r approval.Request) (approval.Response, error) {
				dir := filepath.Join(root, "dir")
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, dir); err != nil {
					t.Fatal(err)
				}
				return inner.Ask(ctx, r)
			})
			before := snapshot(t, outside)
			res := ftCall(t, env, tc.tool, tc.args)
			wantError(t, res, InvalidPath, "symlink")
			if snapshot(t, outside) != before {
				t.Fatalf("the outside folder changed:\n%s", snapshot(t, outside))
			}
		})
	}
}

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
	for _, c := range []toolCall{
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
