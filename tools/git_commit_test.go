package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/git"
	"github.com/agentls/agentls/workspace"
)

func TestGitCommit(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "a\n", "b.txt": "b\n", "gone.txt": "g\n"})
	g.write("a.txt", "a staged\n")
	g.git("add", "a.txt")
	g.write("b.txt", "b not committed\n")
	g.write("new.txt", "brand new\n")
	if err := os.Remove(filepath.Join(g.root, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	before := g.git("status", "--porcelain")
	objects := countObjects(t, g.root)

	// Rejected: the question showed the diff to commit, nothing changed.
	g.answer = func(approval.Request) approval.Response {
		return approval.Response{Decision: approval.Reject, Message: "not yet"}
	}
	res := g.call("git_commit", map[string]any{"message": "second", "files": []string{"new.txt", "gone.txt"}})
	if res.Status != StatusRejected {
		t.Fatalf("%s %s", res.Status, res.Content)
	}
	q := g.questions()
	if len(q) != 1 || q[0].Preview == nil || q[0].Risk != approval.RiskWrite {
		t.Fatalf("questions %+v", q)
	}
	diff := q[0].Preview.UnifiedDiff
	for _, want := range []string{"+a staged", "+brand new", "deleted file mode", "-g"} {
		if !strings.Contains(diff, want) {
			t.Errorf("preview lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "b not committed") {
		t.Errorf("preview has the unstaged b.txt:\n%s", diff)
	}
	ops := map[string]string{}
	texts := map[string]string{}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for _, f := range q[0].Preview.Files {
		ops[f.Path] = f.Operation
		texts[f.Path] = str(f.OldText) + "|" + str(f.NewText)
	}
	wantTexts := map[string]string{"a.txt": "a\n|a staged\n", "new.txt": "<nil>|brand new\n", "gone.txt": "g\n|<nil>"}
	for p, want := range wantTexts {
		if texts[p] != want {
			t.Errorf("preview texts of %s: %q, want %q", p, texts[p], want)
		}
	}
	if ops["a.txt"] != workspace.OpModify || ops["new.txt"] != workspace.OpCreate || ops["gone.txt"] != workspace.OpDelete || len(ops) != 3 {
		t.Errorf("preview files %v", ops)
	}
	if after := g.git("status", "--porcelain"); after != before {
		t.Errorf("assessing changed the index:\n%s\nwas\n%s", after, before)
	}
	if n := countObjects(t, g.root); n != objects {
		t.Errorf("assessing wrote objects: %d, was %d", n, objects)
	}

	// Approved.
	g.answer = nil
	res = g.call("git_commit", map[string]any{"message": "second\n\nwith a body", "files": []string{"new.txt", "gone.txt"}})
	wantSuccess(t, res)
	var s struct {
		Hash, Branch, Subject string
		Files                 []git.DiffFile
	}
	decode(t, res, &s)
	if s.Branch != "main" || s.Subject != "second" || len(s.Files) != 3 {
		t.Errorf("result %+v", s)
	}
	if head := strings.TrimSpace(g.git("rev-parse", "HEAD")); head != s.Hash {
		t.Errorf("hash %s, HEAD %s", s.Hash, head)
	}
	if msg := g.git("log", "-1", "--format=%B"); msg != "second\n\nwith a body\n\n" {
		t.Errorf("message %q", msg)
	}
	if names := g.git("show", "--name-only", "--format=", "HEAD"); names != "a.txt\ngone.txt\nnew.txt\n" {
		t.Errorf("committed %q", names)
	}
	if st := g.git("status", "--porcelain"); st != " M b.txt\n" {
		t.Errorf("status after commit %q", st)
	}
}

func TestGitCommitRefusals(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "a\n", ".env": "X=1\n"})
	g.refuses(t, "git_commit", []refusal{
		{"nothing staged", map[string]any{"message": "m"}, ExecutionError, "nothing to commit"},
		{"unchanged file", map[string]any{"message": "m", "files": []string{"a.txt"}}, ExecutionError, "nothing to commit"},
		{"missing file", map[string]any{"message": "m", "files": []string{"nope.txt"}}, ExecutionError, "did not match"},
		{"sensitive", map[string]any{"message": "m", "files": []string{".env"}}, SensitivePath, "sensitive"},
		{"outside", map[string]any{"message": "m", "files": []string{"../x"}}, InvalidPath, "escapes"},
		{"blank message", map[string]any{"message": "  \n"}, InvalidParams, "message is empty"},
	})
	if q := g.questions(); len(q) != 0 {
		t.Errorf("refused commits asked %d times", len(q))
	}
}

// TestGitCommitStale changes the file while the person looks at the diff:
// what was not approved is not committed.
func TestGitCommitStale(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "a\n"})
	g.write("a.txt", "approved\n")
	g.answer = func(approval.Request) approval.Response {
		g.write("a.txt", "sneaked in\n")
		return approval.Response{Decision: approval.Approve}
	}
	res := g.call("git_commit", map[string]any{"message": "m", "files": []string{"a.txt"}})
	wantError(t, res, StaleFile)
	if n := strings.TrimSpace(g.git("rev-list", "--count", "HEAD")); n != "1" {
		t.Errorf("%s commits", n)
	}
}

// countObjects counts the loose objects of a repository.
func countObjects(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.Walk(filepath.Join(root, ".git", "objects"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGitCommitSensitive: a folder (or ".") named in files never stages
// the sensitive files inside it: they are left out, said in the question
// and the result, and stay unstaged. A sensitive file the person staged
// makes the commit ask as dangerous, with a warning, even where a rule
// makes git_commit automatic.
func TestGitCommitSensitive(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "a\n", "config/.env": "X=1\n"})
	g.write("a.txt", "a2\n")
	g.write("config/.env", "X=2\n")
	g.write("config/app.txt", "app\n")
	g.write(".env.local", "TOKEN=abc\n")
	g.write("keys/server.pem", "-----BEGIN-----\n")
	g.config(func(c *workspace.Config) { c.Approval.Tools = map[string]string{"git_commit": "auto"} })
	res := g.call("git_commit", map[string]any{"message": "m", "files": []string{"a.txt"}})
	wantSuccess(t, res)
	if q := g.questions(); len(q) != 0 {
		t.Errorf("plain commit under an auto rule asked: %+v", q)
	}

	for i, files := range [][]string{{"."}, {"config", "keys"}, {"config/", "keys", "a.txt"}} {
		g.config(func(c *workspace.Config) {})
		if i < 2 {
			g.write(fmt.Sprintf("config/new%d.txt", i), "new\n")
		}
		res = g.call("git_commit", map[string]any{"message": "all of " + strings.Join(files, " "), "files": files})
		if len(files) == 3 {
			// Only sensitive files and an unchanged one: nothing to commit.
			wantError(t, res, ExecutionError)
			if !strings.Contains(res.Error.Message, "left out, matching paths.sensitive: config/.env") {
				t.Errorf("%v: %s", files, res.Error.Message)
			}
			continue
		}
		wantSuccess(t, res)
		q := g.questions()
		if len(q) != 1 || q[0].Risk == approval.RiskDangerous || !strings.Contains(q[0].Warning, "not staged, matching paths.sensitive") ||
			!strings.Contains(q[0].Warning, "config/.env") || strings.Contains(q[0].Preview.UnifiedDiff, "X=2") {
			t.Errorf("%v: questions %+v", files, q)
		}
		var out struct {
			LeftOut []string `json:"left_out"`
		}
		decode(t, res, &out)
		if len(out.LeftOut) == 0 || !strings.Contains(res.Content, "Not staged, matching paths.sensitive") {
			t.Errorf("%v: result %s %+v", files, res.Content, out)
		}
		committed := g.git("show", "--name-only", "--format=", "HEAD")
		for _, secret := range []string{".env", "pem"} {
			if strings.Contains(committed, secret) {
				t.Errorf("%v: committed %q", files, committed)
			}
		}
		if st := g.git("status", "--porcelain"); !strings.Contains(st, " M config/.env") {
			t.Errorf("%v: config/.env was staged: %q", files, st)
		}
	}

	// Staged by the person: the commit asks as dangerous.
	g.git("add", "config/.env")
	g.config(func(c *workspace.Config) { c.Approval.Tools = map[string]string{"git_commit": "auto"} })
	g.answer = always(approval.Reject)
	res = g.call("git_commit", map[string]any{"message": "m"})
	if res.Status != StatusRejected {
		t.Fatalf("%s %s", res.Status, res.Content)
	}
	q := g.questions()
	if len(q) != 1 || q[0].Risk != approval.RiskDangerous || !strings.Contains(q[0].Warning, "config/.env") {
		t.Errorf("questions %+v", q)
	}
}

func TestGitCommitRenamePreview(t *testing.T) {
	g := newGitRig(t, true)
	body := strings.Repeat("line\n", 20)
	g.commit("first", map[string]string{"old.txt": body})
	g.git("mv", "old.txt", "new.txt")
	g.write("new.txt", body+"more\n")
	res := g.call("git_commit", map[string]any{"message": "rename", "files": []string{"new.txt"}})
	wantSuccess(t, res)
	q := g.questions()
	if len(q) != 1 || len(q[0].Preview.Files) != 1 {
		t.Fatalf("questions %+v", q)
	}
	f := q[0].Preview.Files[0]
	if f.Operation != workspace.OpRename || f.Path != "old.txt" || f.NewPath != "new.txt" ||
		f.OldText == nil || *f.OldText != body || f.NewText == nil || *f.NewText != body+"more\n" {
		t.Errorf("preview file %+v", f)
	}
	if names := g.git("show", "--name-status", "--format=", "HEAD"); !strings.HasPrefix(names, "R") {
		t.Errorf("committed %q", names)
	}
}

// TestGitCommitUnsaved: git commits the disk; a file open in the editor
// with other text is named in the question and the result.
func TestGitCommitUnsaved(t *testing.T) {
	g := newGitRig(t, true)
	g.commit("first", map[string]string{"a.txt": "a\n"})
	g.write("a.txt", "on disk\n")
	g.ws.Overlays.Open(workspace.Document{Path: filepath.Join(g.root, "a.txt"), Version: 2, Text: "in the editor\n"})
	res := g.call("git_commit", map[string]any{"message": "m", "files": []string{"a.txt"}})
	wantSuccess(t, res)
	q := g.questions()
	if len(q) != 1 || !strings.Contains(q[0].Warning, "unsaved in the editor") || !strings.Contains(q[0].Warning, "a.txt") {
		t.Errorf("questions %+v", q)
	}
	if !strings.Contains(res.Content, "committed as on disk: a.txt") {
		t.Errorf("content %q", res.Content)
	}
	if got := g.git("show", "HEAD:a.txt"); got != "on disk\n" {
		t.Errorf("committed %q", got)
	}
}
