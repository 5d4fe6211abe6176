//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/workspace"
)

// TestSensitiveByIdentity attacks paths.sensitive through other names of
// a sensitive file: hard links to .env and to a key in .ssh, a symlink to
// .env, the hard link open in the editor. read_file refuses each with
// SENSITIVE_PATH; grep (twice, the second time with what the search cache
// learned) never shows the secret; git_diff lists a tracked hard link to
// .env as sensitive and leaves its content out.
func TestSensitiveByIdentity(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"plain.txt": "hunter plain\n", "notes.txt": "old notes\n"})
	g.write(".env", "TOKEN=hunter2\n")
	g.write("deep/.ssh/id_rsa", "PRIVATE hunter3\n")
	os.Remove(filepath.Join(g.root, "notes.txt"))
	for link, target := range map[string]string{"notes.txt": ".env", "src/key.txt": "deep/.ssh/id_rsa"} {
		os.MkdirAll(filepath.Dir(filepath.Join(g.root, link)), 0o755)
		if err := os.Link(filepath.Join(g.root, target), filepath.Join(g.root, link)); err != nil {
			t.Fatal(err) // a temporary folder takes hard links on any Linux file system
		}
	}
	if err := os.Symlink(".env", filepath.Join(g.root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	reg := NewBuiltinRegistry()
	call := func(name string, args map[string]any) *Result {
		return runTool(t, t.Context(), NewRunner(reg, nil), g.env, name, args, nil)
	}

	for _, p := range []string{"notes.txt", "src/key.txt", "link.txt", ".env", ".ENV"} {
		res := call("read_file", map[string]any{"path": p})
		want := SensitivePath
		if p == ".ENV" {
			// Another file on a file system that does not ignore case
			// (the case-insensitive one is workspace's TestSensitiveCaseFold).
			want = FileNotFound
		}
		if res.Status != StatusError || res.Error.Code != want || strings.Contains(res.Content, "hunter") {
			t.Errorf("read_file %s: %s %+v %q, want %s", p, res.Status, res.Error, res.Content, want)
		}
	}
	plain := call("read_file", map[string]any{"path": "plain.txt"})
	wantSuccess(t, plain)

	// The hard link is open in the editor, with unsaved text.
	notes := filepath.Join(g.root, "notes.txt")
	g.env.Workspace.Overlays.Open(workspace.Document{Path: notes, URI: workspace.PathToURI(notes), Text: "TOKEN=hunter2 unsaved\n"})

	for round := 1; round <= 2; round++ {
		for _, args := range []map[string]any{
			{"pattern": "hunter"},
			{"pattern": "hunter", "include_ignored": true},
			{"pattern": "hunter", "glob": "**"},
			{"pattern": "hunter", "path": "notes.txt"},
			{"pattern": "hunter", "path": "src"},
		} {
			res := call("grep", args)
			if strings.Contains(res.Content, "hunter2") || strings.Contains(res.Content, "hunter3") {
				t.Errorf("round %d: grep %v showed a secret: %s", round, args, res.Content)
			}
			if args["path"] == nil && !strings.Contains(res.Content, "plain.txt") {
				t.Errorf("round %d: grep %v lost plain.txt: %s %+v", round, args, res.Content, res.Error)
			}
		}
	}

	res := call("git_diff", map[string]any{})
	wantSuccess(t, res)
	if strings.Contains(res.Content, "hunter2") || !strings.Contains(res.Content, "notes.txt") {
		t.Errorf("git_diff of the hard link to .env: %s", res.Content)
	}
}
