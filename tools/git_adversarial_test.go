package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// The standing adversarial suite for automatic git: a repository's
// configuration must not run a program nobody approved. The attacker steers the agent: every file below is written through
// the real runner with the built-in tools, and git is the real git. A
// program the attacker names writes a line to a marker file (in the
// workspace, which automatic commands may write); the suite fails when the marker exists after a call nobody
// approved. Each scenario first proves, with plain git, that the planted
// configuration does run the program (the control), so that a green run
// means the defences held, not that the attack was inert.

// advRig is a workspace behind the real runner with every built-in tool
// and the default configuration plus an allow list of git commands, rules
// that make every writing tool automatic and an automatic custom tool that
// runs git diff.
type advRig struct {
	*rig
	marker string
	script string // sh <script> appends its arguments to marker
	yolo   bool
	repo   bool // the root has a repository, with a commit
}

func newAdvRig(t *testing.T, repo bool) *advRig {
	t.Helper()
	testenv.IsolateGit(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	root := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(root))
	// The marker lies in the workspace: automatic commands run in a
	// sandbox where only the workspace is writable, and the suite tests
	// what git runs, not what the sandbox stops.
	a := &advRig{rig: newRig(t, root), marker: filepath.Join(root, ".marks", "MARK"), repo: repo}
	a.setConfig(false)
	// The worst case: the person approves every write (or the files came
	// in an archive). Git commands the suite runs as "approved" are
	// rejected, so that only the assessment (automatic) runs.
	a.answer = func(req approval.Request) approval.Response {
		if strings.HasPrefix(req.Tool, "git_") {
			return approval.Response{Decision: approval.Reject}
		}
		return approval.Response{Decision: approval.Approve}
	}
	if err := os.Mkdir(filepath.Dir(a.marker), 0o755); err != nil {
		t.Fatal(err)
	}
	if repo {
		testenv.GitInit(t, root)
		a.commit("first", map[string]string{"README": "hello\n"})
	}
	return a
}

// setConfig is the default configuration with `git status`, `git diff`
// and `git log` allowed and every writing tool automatic by rule, in safe
// or yolo mode.
func (a *advRig) setConfig(yolo bool) {
	cfg := workspace.DefaultConfig()
	cfg.Shell.Allow = []string{"git status", "git diff", "git log"}
	// The person made every writing tool automatic: a write of git
	// metadata must ask all the same.
	cfg.Approval.Tools = map[string]string{}
	for _, name := range []string{"write_file", "edit_file", "multi_edit", "apply_patch", "create_directory", "copy_file", "move_file"} {
		cfg.Approval.Tools[name] = "auto"
	}
	// A custom tool the person made automatic, which runs git.
	cfg.Custom = []workspace.CustomTool{{Name: "repo_diff", Description: "git diff", Argv: []string{"git", "diff"}, Approval: "auto"}}
	if yolo {
		cfg.Approval.Mode = "yolo"
	}
	a.yolo = yolo
	a.ws.SetConfig(cfg)
}

// fired returns what the attacker's programs wrote, and clears it.
func (a *advRig) fired() string {
	b, _ := os.ReadFile(a.marker)
	os.Remove(a.marker)
	return string(b)
}

// plantScript writes the attacker's program (a new, ordinary file: an
// automatic write) and returns the command that runs it.
func (a *advRig) plantScript() string {
	a.t.Helper()
	res := a.call("write_file", map[string]any{"path": "tools/x.sh",
		"content": fmt.Sprintf("#!/bin/sh\necho \"$0 $*\" >> %s\ncat >/dev/null 2>&1 </dev/null\n", a.marker)})
	wantSuccess(a.t, res)
	a.script = "sh " + filepath.Join(a.root, "tools", "x.sh")
	return a.script
}

// evilConfig is a git config whose every program is the attacker's; core
// is added to its core section.
func evilConfig(prog string, core string) string {
	return fmt.Sprintf(`[core]
	repositoryformatversion = 0
%[2]s	fsmonitor = %[1]s
	hooksPath = hooks
	pager = %[1]s
	sshCommand = %[1]s
	editor = %[1]s
	askPass = %[1]s
	alternateRefsCommand = %[1]s
[filter "evil"]
	clean = %[1]s
	smudge = %[1]s
	required = true
[diff "evil"]
	textconv = %[1]s
	command = %[1]s
[diff]
	external = %[1]s
[merge "evil"]
	driver = %[1]s
[pager]
	status = %[1]s
	log = %[1]s
[credential]
	helper = !%[1]s
[alias]
	st = !%[1]s
`, prog, core)
}

// gitRun is one automatic git call and what it must end in.
type gitRun struct {
	name string
	args map[string]any
	want gitOutcome
}

// gitOutcome is what a call of gitRuns must end in, so that a tool that
// fails before it runs git cannot count as a defence that held.
type gitOutcome int

const (
	// ranGit: success, or a failure that came after git ran (an exit
	// code of the command; EXECUTION_ERROR of a git tool; git_commit's
	// question, rejected). A defence may make git fail here (a blanked
	// diff driver, a planted folder git will not add).
	ranGit gitOutcome = iota
	// okInRepo: success where the root has a repository.
	okInRepo
	// okAlways: success, with or without a repository.
	okAlways
)

// gitRuns are the automatic git calls every scenario makes: the git tools
// (git_commit is rejected, so only its assessment runs: it stages into a
// throwaway index) and allow-listed git commands, in a folder by cd and by
// cwd, in the foreground and in the background.
func (a *advRig) gitRuns(sub string) []gitRun {
	return []gitRun{
		{"git_status", map[string]any{}, okInRepo},
		{"git_status", map[string]any{"path": sub}, okInRepo},
		{"git_diff", map[string]any{}, okInRepo},
		{"git_diff", map[string]any{"path": sub}, okInRepo},
		{"git_diff", map[string]any{"staged": true}, okInRepo},
		{"git_log", map[string]any{"path": sub}, okInRepo},
		{"git_log", map[string]any{}, okInRepo},
		{"git_branch", map[string]any{}, okInRepo},
		{"git_commit", map[string]any{"message": "m", "files": []string{sub}}, ranGit},
		{"git_commit", map[string]any{"message": "m", "files": []string{"."}}, ranGit},
		{"shell_exec", map[string]any{"command": "cd " + sub + " && git status"}, okInRepo},
		{"shell_exec", map[string]any{"command": "git status", "cwd": sub}, okInRepo},
		{"shell_exec", map[string]any{"command": "git diff", "cwd": sub}, ranGit},
		{"shell_exec", map[string]any{"command": "git log -p", "cwd": sub}, ranGit},
		{"shell_exec", map[string]any{"command": "git status"}, okInRepo},
		{"shell_exec", map[string]any{"command": "git diff"}, ranGit},
		{"shell_background", map[string]any{"command": "git status", "cwd": sub}, okAlways},
		{"repo_diff", map[string]any{}, ranGit},
	}
}

// checkOutcome fails when res is not what r must end in.
func (a *advRig) checkOutcome(r gitRun, res *Result) {
	a.t.Helper()
	if res.Status == StatusSuccess {
		return
	}
	code := Code("")
	if res.Error != nil {
		code = res.Error.Code
	}
	switch {
	case r.want == okAlways || r.want == okInRepo && a.repo:
		a.t.Errorf("%s %v: %s %s, want success: %s", r.name, r.args, res.Status, code, res.Content)
	case !a.repo && strings.HasPrefix(r.name, "git_"):
		// Without a repository the git tools say so, rather than fail
		// for another reason.
		if code != ExecutionError || !strings.Contains(res.Content, "not inside a git repository") {
			a.t.Errorf("%s %v without a repository: %s %s: %s", r.name, r.args, res.Status, code, res.Content)
		}
	case r.name == "git_commit" && res.Status == StatusRejected:
	case strings.HasPrefix(r.name, "git_"):
		if code != ExecutionError {
			a.t.Errorf("%s %v: %s %s, want success or git's own failure: %s", r.name, r.args, res.Status, code, res.Content)
		}
	default: // a command: it must have run and exited
		if s, _ := res.Structured.(map[string]any); code != ExecutionError || s["exit_code"] == nil {
			a.t.Errorf("%s %v: %s %s, want a command that ran: %s", r.name, r.args, res.Status, code, res.Content)
		}
	}
}

// runAll makes every automatic git call and fails on a program run, an
// allow-listed command that asked, or a call that did not end as it must.
func (a *advRig) runAll(sub string) {
	a.t.Helper()
	for _, r := range a.gitRuns(sub) {
		res := a.call(r.name, r.args)
		a.checkOutcome(r, res)
		if r.name == "shell_background" && res.Status == StatusSuccess {
			var s struct {
				ID string `json:"id"`
			}
			decode(a.t, res, &s)
			for i := 0; i < 50; i++ {
				out := a.call("shell_output", map[string]any{"id": s.ID, "wait_ms": 200})
				var o struct {
					Running bool `json:"running"`
				}
				decode(a.t, out, &o)
				if !o.Running {
					break
				}
			}
		}
		q := a.questions()
		if (strings.HasPrefix(r.name, "shell_") || r.name == "repo_diff") && len(q) != 0 {
			a.t.Errorf("%s %v: the allow-listed command asked: %+v", r.name, r.args, q)
		}
		if a.repo && r.name == "shell_exec" && strings.Contains(res.Content, "No commits yet") {
			a.t.Errorf("%s %v used another repository than the root's: %s", r.name, r.args, res.Content)
		}
		if got := a.fired(); got != "" {
			a.t.Errorf("%s %v ran the attacker's program (%s): %s\n%s", r.name, r.args, res.Status, got, res.Content)
		}
	}
}

// control runs plain git (none of the defences) in dir and reports whether
// the planted configuration ran the attacker's program.
func (a *advRig) control(dir string, args ...string) bool {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	out, _ := cmd.CombinedOutput()
	if got := a.fired(); got != "" {
		return true
	}
	a.t.Logf("control: git %v in %s printed:\n%s", args, dir, out)
	return false
}

// TestGitPlantedRepository: an agent assembles a git directory in a
// subfolder with writes that rules make automatic (HEAD, config, objects/,
// refs/, .gitattributes, hooks). Each write that makes git metadata asks,
// as dangerous, with a warning that says why, also in yolo mode. Even
// approved, no automatic git call runs a program the planted config names:
// not the git tools, not allow-listed `git status`/`git diff`/`git log` by
// cd or by cwd, with or without a repository at the root.
func TestGitPlantedRepository(t *testing.T) {
	for _, tc := range []struct {
		name string
		repo bool
		yolo bool
		sub  string
	}{
		{"no repository at the root", false, false, "sub"},
		{"repository at the root", true, false, "sub"},
		{"deeper, yolo writes", true, true, "a/b/sub"},
		{"a planted .git folder", true, false, "nested/.git"},
		{"a planted .git folder, no repository at the root", false, false, "nested/.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAdvRig(t, tc.repo)
			prog := a.plantScript()
			a.questions()
			a.setConfig(tc.yolo)
			sub, work, core := tc.sub, tc.sub, "\tbare = false\n\tworktree = .\n"
			if path.Base(sub) == ".git" {
				work, core = path.Dir(sub), "\tbare = false\n"
			}
			// The planted git directory, written as plain files, each a
			// new file: automatic before the fix.
			writes := []struct {
				tool string
				args map[string]any
			}{
				{"write_file", map[string]any{"path": work + "/a.txt", "content": "hello\n"}},
				{"write_file", map[string]any{"path": sub + "/HEAD", "content": "ref: refs/heads/main\n"}},
				{"write_file", map[string]any{"path": sub + "/objects/info/alternates", "content": ""}},
				{"create_directory", map[string]any{"path": sub + "/refs/heads"}},
				{"write_file", map[string]any{"path": sub + "/config", "content": evilConfig(prog, core)}},
				{"write_file", map[string]any{"path": sub + "/.gitattributes", "content": "* filter=evil diff=evil merge=evil\n"}},
				{"write_file", map[string]any{"path": sub + "/hooks/post-index-change", "content": "#!/bin/sh\n" + prog + " hook\n"}},
				{"write_file", map[string]any{"path": sub + "/packed-refs", "content": "# pack-refs with: peeled\n"}},
			}
			for i, w := range writes {
				res := a.call(w.tool, w.args)
				q := a.questions()
				if p, _ := w.args["path"].(string); strings.HasSuffix(p, ".git/config") {
					// A .git/config is sensitive: refused outright. It
					// can still come in an archive: put it there.
					wantError(t, res, SensitivePath)
					a.write(p, w.args["content"].(string))
					continue
				}
				wantSuccess(t, res)
				if i == 0 {
					if len(q) != 0 && !tc.yolo {
						t.Errorf("an ordinary new file asked: %+v", q)
					}
					continue
				}
				if len(q) != 1 || q[0].Risk != approval.RiskDangerous || !strings.Contains(q[0].Warning, "git") {
					t.Errorf("%s %v: questions %+v", w.tool, w.args["path"], q)
				}
			}
			// The planted directory is live for plain git.
			if !a.control(filepath.Join(a.root, filepath.FromSlash(work)), "status") {
				t.Fatal("control: plain git status in the planted folder ran nothing; the attack is inert and the test proves nothing")
			}
			a.setConfig(false)
			a.runAll(work)
		})
	}
}

// TestGitRepositoryConfigPrograms: the workspace's own repository arrives
// with a .git/config (as an unpacked archive delivers it, or through an
// include of a work-tree file) that names the attacker's programs for
// every hook point; tracked files select its filter and diff drivers.
// Automatic git calls run none of them. An approved commit does run them,
// and its question said so.
func TestGitRepositoryConfigPrograms(t *testing.T) {
	for _, tc := range []struct {
		name    string
		include bool // the programs are in a work-tree file that .git/config includes
	}{
		{"in .git/config", false},
		{"in an included work-tree file", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAdvRig(t, true)
			prog := a.plantScript()
			a.write(".gitattributes", "*.txt filter=evil diff=evil merge=evil\n")
			a.write("f.txt", "one\n")
			a.git("add", ".gitattributes", "f.txt", "tools/x.sh")
			a.git("commit", "-q", "-m", "drivers")
			cfg := evilConfig(prog, "")
			cfgPath := filepath.Join(a.root, ".git", "config")
			old, err := os.ReadFile(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			if tc.include {
				a.write("shared.conf", cfg)
				cfg = "[include]\n\tpath = ../shared.conf\n"
			}
			if err := os.WriteFile(cfgPath, append(old, cfg...), 0o644); err != nil {
				t.Fatal(err)
			}
			hook := filepath.Join(a.root, "hooks", "pre-commit")
			a.write("hooks/pre-commit", "#!/bin/sh\n"+prog+" pre-commit\n")
			if err := os.Chmod(hook, 0o755); err != nil {
				t.Fatal(err)
			}
			a.write("f.txt", "two\n")
			a.fired()
			if !a.control(a.root, "diff") {
				t.Fatal("control: plain git diff ran nothing; the attack is inert")
			}
			a.runAll("tools")

			// Approved: the commit runs the repository's programs, as git
			// would for the person, and the question named them.
			a.env.Approver = approval.ApproverFunc(func(_ context.Context, req approval.Request) (approval.Response, error) {
				a.mu.Lock()
				a.asked = append(a.asked, req)
				a.mu.Unlock()
				return approval.Response{Decision: approval.Approve}, nil
			})
			// In mode ask a person approves each read-only git call: the
			// question named no program, so none runs.
			cfg2 := workspace.DefaultConfig()
			cfg2.Approval.Mode = "ask"
			a.ws.SetConfig(cfg2)
			for _, name := range []string{"git_status", "git_diff", "git_log"} {
				res := a.call(name, map[string]any{})
				wantSuccess(t, res)
				if q := a.questions(); len(q) != 1 {
					t.Errorf("%s in mode ask: questions %+v", name, q)
				}
				if got := a.fired(); got != "" {
					t.Errorf("approved %s ran the attacker's program: %s", name, got)
				}
			}
			a.setConfig(false)
			res := a.call("git_commit", map[string]any{"message": "m", "files": []string{"f.txt"}})
			wantSuccess(t, res)
			q := a.questions()
			if len(q) != 1 || !strings.Contains(q[0].Warning, "pre-commit") || !strings.Contains(q[0].Warning, "filter.evil.clean") {
				t.Errorf("the question did not name the programs: %+v", q)
			}
			if got := a.fired(); !strings.Contains(got, "pre-commit") {
				t.Errorf("the approved commit did not run the repository's hook: %q", got)
			}
		})
	}
}

// TestGitMetadataWritesAsk: every writing tool asks, as dangerous and
// with a warning, for a write that makes git metadata, also in yolo mode
// and under an auto rule for the tool; ordinary writes next to it do not.
func TestGitMetadataWritesAsk(t *testing.T) {
	a := newAdvRig(t, true)
	a.write("gitlike/HEAD", "ref: refs/heads/main\n")
	a.write("gitlike/objects/.keep", "")
	a.write("plain.txt", "one\n")
	a.write(".gitattributes", "*.go diff=golang\n")
	a.write("src/hooks/useThing.ts", "export {}\n")
	cfg, err := os.OpenFile(filepath.Join(a.root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(cfg, "[include]\n\tpath = ../team/included.conf\n[includeIf \"gitdir:%s/\"]\n\tpath = %s\n",
		a.root, filepath.Join(a.root, "team", "cond.conf"))
	cfg.Close()
	read := func(p string) { wantSuccess(t, a.call("read_file", map[string]any{"path": p})) }
	read(".gitattributes")
	read("plain.txt")
	for _, tc := range []struct {
		tool string
		args map[string]any
		ask  bool
	}{
		{"write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "x"}, true},
		{"write_file", map[string]any{"path": "sub/.git", "content": "gitdir: ../x\n"}, true},
		{"write_file", map[string]any{"path": "sub/.GIT/config", "content": "x"}, true},
		{"write_file", map[string]any{"path": "x/HEAD", "content": "ref: refs/heads/main\n"}, true},
		{"write_file", map[string]any{"path": "gitlike/config", "content": "[core]\n"}, true},
		{"write_file", map[string]any{"path": "gitlike/refs/heads/main", "content": "0\n"}, true},
		{"write_file", map[string]any{"path": ".gitmodules", "content": "[submodule \"a\"]\n"}, true},
		{"write_file", map[string]any{"path": "team.gitconfig", "content": "[core]\n"}, true},
		{"write_file", map[string]any{"path": "team/included.conf", "content": "[core]\n"}, true},
		{"write_file", map[string]any{"path": "team/cond.conf", "content": "[core]\n"}, true},
		{"write_file", map[string]any{"path": "team/other.conf", "content": "[core]\n"}, false},
		{"write_file", map[string]any{"path": "sub/.gitattributes", "content": "*.bin filter=lfs\n"}, true},
		{"write_file", map[string]any{"path": "sub2/.gitattributes", "content": "* text=auto\n*.go diff=golang\n*.png binary\n"}, false},
		{"write_file", map[string]any{"path": "src/hooks/useOther.ts", "content": "export {}\n"}, false},
		{"write_file", map[string]any{"path": "config/app.json", "content": "{}\n"}, false},
		{"write_file", map[string]any{"path": "objects/a.txt", "content": "x\n"}, false},
		{"edit_file", map[string]any{"path": ".gitattributes", "old_string": "diff=golang", "new_string": "diff=evil"}, true},
		{"multi_edit", map[string]any{"path": ".gitattributes", "edits": []map[string]any{{"old_string": "*.go", "new_string": "* filter=x"}}}, true},
		{"apply_patch", map[string]any{"patch": "--- /dev/null\n+++ b/p/HEAD\n@@ -0,0 +1 @@\n+ref: refs/heads/main\n"}, true},
		{"apply_patch", map[string]any{"patch": "--- a/plain.txt\n+++ b/plain.txt\n@@ -1 +1 @@\n-one\n+two\n"}, false},
		{"create_directory", map[string]any{"path": "gitlike/refs"}, true},
		{"create_directory", map[string]any{"path": "d/.git"}, true},
		{"copy_file", map[string]any{"source": "plain.txt", "dest": "c/HEAD"}, true},
		{"copy_file", map[string]any{"source": "plain.txt", "dest": ".gitmodules"}, true},
		{"move_file", map[string]any{"from": "plain.txt", "to": "gitlike/index"}, true},
		{"move_file", map[string]any{"from": "gitlike", "to": "moved"}, true},
	} {
		for _, yolo := range []bool{false, true} {
			a.setConfig(yolo)
			if yolo && !tc.ask {
				continue
			}
			res := a.call(tc.tool, tc.args)
			q := a.questions()
			if !tc.ask {
				if len(q) != 0 && tc.tool != "edit_file" && tc.tool != "apply_patch" && tc.tool != "multi_edit" {
					t.Errorf("%s %v asked: %+v", tc.tool, tc.args, q)
				}
				for _, x := range q {
					if strings.Contains(x.Warning, "git") {
						t.Errorf("%s %v: warning %q", tc.tool, tc.args, x.Warning)
					}
				}
				continue
			}
			if len(q) != 1 || q[0].Risk != approval.RiskDangerous || !strings.Contains(q[0].Warning, "git") {
				t.Errorf("%s %v (yolo %v): %s; questions %+v", tc.tool, tc.args, yolo, res.Content, q)
			}
			// Undo what the approval let through, so that the next case
			// starts from the same files.
			switch tc.tool {
			case "move_file":
				from, _ := tc.args["from"].(string)
				to, _ := tc.args["to"].(string)
				os.Rename(filepath.Join(a.root, to), filepath.Join(a.root, from))
			case "edit_file", "multi_edit":
				a.write(".gitattributes", "*.go diff=golang\n")
				read(".gitattributes")
			}
			for _, p := range []string{".git/hooks/pre-commit", "sub", "x", "gitlike/config", "gitlike/refs", ".gitmodules",
				"team.gitconfig", "p", "d", "c", "team"} {
				os.RemoveAll(filepath.Join(a.root, p))
			}
		}
	}
}

// BenchmarkGitMetadataCheck is what the git-metadata check adds to the
// assessment of an ordinary write in a repository.
func BenchmarkGitMetadataCheck(b *testing.B) {
	root := b.TempDir()
	b.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	ws := workspacetest.New(b, root)
	c := &Call{Workspace: ws}
	p := &workspace.Plan{Changes: []workspace.FileChange{{Op: workspace.OpCreate, Path: filepath.Join(root, "src", "a.go"), NewText: "package a\n"}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var a Assessment
		gitMetadata(c, p, &a)
		if a.Dangerous {
			b.Fatal("an ordinary write counted as git metadata")
		}
	}
}
