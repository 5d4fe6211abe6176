package git

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// newRepo makes a real repository on branch main with one commit (a.txt)
// in a temporary workspace root and opens it.
func newRepo(t *testing.T, o Options) (*Repo, string) {
	t.Helper()
	root := isolatedRoot(t)
	testenv.GitInit(t, root)
	testenv.WriteFiles(t, root, map[string]string{"a.txt": "one\n"})
	gitIn(t, root, "add", "a.txt")
	gitIn(t, root, "commit", "-q", "-m", "first")
	return openRepo(t, root, o), root
}

// isolatedRoot isolates git from the machine's configuration
// (testenv.IsolateGit) and returns a new folder above which git looks for
// no repository.
func isolatedRoot(t *testing.T) string {
	t.Helper()
	testenv.IsolateGit(t)
	root := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(root))
	return root
}

// openRepo opens the repository of a workspace whose only root is root.
func openRepo(t *testing.T, root string, o Options) *Repo {
	t.Helper()
	ws := workspacetest.New(t, root)
	r, err := Open(context.Background(), ws, "", o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// gitIn runs git in dir and returns its output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return testenv.Git(t, dir, nil, args...)
}

// wantCode fails unless err is an *Error with code.
func wantCode(t *testing.T, err error, code string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error %v (%T), want an *Error with code %s", err, err, code)
	}
	return e
}

// TestPathsAfterDoubleDash: below the tools' checks, every path goes after
// "--" with literal pathspecs: even an unchecked value that looks like an
// option (--output=FILE would make git diff write FILE) is a file name.
func TestPathsAfterDoubleDash(t *testing.T) {
	r, _ := newRepo(t, Options{Safe: true})
	target := filepath.Join(t.TempDir(), "x")
	files, err := r.DiffFiles(Cmd{}, DiffSpec{Paths: []string{"--output=" + target}})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 0 {
		t.Errorf("files %v", files)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the diff created %s", target)
	}
}

// TestCheckNames: a revision argument is a commit, branch or tag or a
// range of them; an option, an object path (HEAD:a.txt, which would show a
// blob) and a blob id are refused as INVALID_PARAMS. Names git refuses as
// branches, and names that would be options or refspecs, are refused as
// INVALID_PARAMS too.
func TestCheckNames(t *testing.T) {
	r, root := newRepo(t, Options{Safe: true})
	blob := strings.TrimSpace(gitIn(t, root, "rev-parse", "HEAD:a.txt"))
	rev, branch := r.CheckRev, r.CheckBranchName
	for _, tc := range []struct {
		check func(field, value string) error
		value string
		ok    bool
	}{
		{rev, "HEAD", true},
		{rev, "main", true},
		{rev, "main..HEAD", true},
		{rev, "...HEAD", true},
		{rev, "-p", false},
		{rev, "--output=/tmp/x", false},
		{rev, "main..-p", false},
		{rev, "HEAD:a.txt", false},
		{rev, blob, false},
		{rev, "nosuchbranch", false},
		{rev, "a\x00b", false},
		{branch, "feature/x", true},
		{branch, "-b", false},
		{branch, "+main", false},
		{branch, "a:b", false},
		{branch, "a b", false},
		{branch, "a..b", false},
		{branch, "x.lock", false},
	} {
		err := tc.check("name", tc.value)
		if tc.ok {
			if err != nil {
				t.Errorf("check %q: %v", tc.value, err)
			}
			continue
		}
		if e := new(*Error); !errors.As(err, e) || (*e).Code != CodeInvalid {
			t.Errorf("check %q: error %v, want an *Error with code %s", tc.value, err, CodeInvalid)
		}
	}
}

// TestOptionLike: a refused value names its field in the message and in
// the violation's pointer.
func TestOptionLike(t *testing.T) {
	t.Parallel()
	e := wantCode(t, OptionLike("files/1", "--exec=x"), CodeInvalid)
	if !strings.Contains(e.Message, "would be read as a git option") || e.ErrorDetails() == nil {
		t.Errorf("message %q details %v", e.Message, e.Details)
	}
	if OptionLike("f", "./-dash") != nil || OptionLike("f", "") != nil {
		t.Error("a ./-name or empty value was refused")
	}
	if e := wantCode(t, OptionLike("f", "a\x00"), CodeInvalid); e.ErrorDetails() != nil {
		t.Errorf("details %v, want none (a nil interface)", e.ErrorDetails())
	}
}

// TestRunFailure: a failed command is an EXECUTION_ERROR with git's message
// (a URL's credentials redacted) and the exit code, stderr and command in
// its details; an accepted exit code is no error; outside a repository
// Open says so.
func TestRunFailure(t *testing.T) {
	r, root := newRepo(t, Options{Safe: true})
	_, err := r.Run(Cmd{}, "fetch", "--end-of-options", "https://user:s3cret@127.0.0.1:1/r.git")
	e := wantCode(t, err, CodeExecution)
	if strings.Contains(e.Message, "s3cret") || strings.Contains(e.Details["stderr"].(string), "s3cret") {
		t.Errorf("the credential reached the error: %q %v", e.Message, e.Details)
	}
	if e.Details["exit_code"] == 0 || !strings.HasPrefix(e.Details["command"].(string), "git fetch") {
		t.Errorf("details %v", e.Details)
	}
	out, err := r.Run(Cmd{OkExit: []int{1}}, "show-ref", "--verify", "--quiet", "refs/heads/none")
	if err != nil || out.Exit != 1 {
		t.Errorf("an accepted exit: %v exit %d", err, out.Exit)
	}
	if b, err := r.CurrentBranch(); err != nil || b != "main" {
		t.Errorf("CurrentBranch = %q, %v", b, err)
	}
	if r.Top() != root {
		t.Errorf("Top = %q, want %q", r.Top(), root)
	}

	bare := t.TempDir()
	ws := workspacetest.New(t, bare)
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(bare))
	_, err = Open(context.Background(), ws, "", Options{})
	if e := wantCode(t, err, CodeExecution); !strings.Contains(e.Message, "is not inside a git repository") {
		t.Errorf("message %q", e.Message)
	}
}

// TestSafeRepoRunsNoProgram: the repository's own configuration names a
// clean filter that .gitattributes selects for a.txt (git diff runs it on
// the work tree's file); a safe Repo's diff runs it not, one set approved
// (SetSafe(false)) does, as git would for the person, and ProgramsWarning
// names it. The control proves that plain git runs the program.
func TestSafeRepoRunsNoProgram(t *testing.T) {
	r, root := newRepo(t, Options{Safe: true})
	marker := filepath.Join(t.TempDir(), "MARK")
	gitIn(t, root, "config", "filter.evil.clean", "sh -c 'echo ran >> "+marker+"; cat'")
	for name, content := range map[string]string{".gitattributes": "a.txt filter=evil\n", "a.txt": "two\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fired := func() bool {
		_, err := os.Stat(marker)
		os.Remove(marker)
		return err == nil
	}
	gitIn(t, root, "diff")
	if !fired() {
		t.Fatal("control: plain git diff ran nothing; the test proves nothing")
	}
	// Open again: the configuration is read when the repository is opened.
	r, err := Open(context.Background(), r.ws, "", Options{Safe: true})
	if err != nil {
		t.Fatal(err)
	}
	diff := func() string {
		t.Helper()
		files, err := r.DiffFiles(Cmd{}, DiffSpec{})
		if err != nil {
			t.Fatal(err)
		}
		text, _, err := r.DiffText(Cmd{}, DiffSpec{}, files, 1<<20, false)
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	if text := diff(); !strings.Contains(text, "+two") {
		t.Errorf("diff text %q", text)
	}
	if fired() {
		t.Error("a safe repo ran the repository's clean filter")
	}
	if w := r.ProgramsWarning("the diff"); !strings.Contains(w, "filter.evil.clean=") {
		t.Errorf("ProgramsWarning = %q", w)
	}
	r.SetSafe(false)
	diff()
	if !fired() {
		t.Error("an approved repo did not run the repository's clean filter")
	}
}
