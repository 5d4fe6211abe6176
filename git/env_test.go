package git

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// TestProgramKeysOverridden: every key of gitProgramKeys, set in the
// repository's configuration (with a subsection where the key has one), is
// overridden in automatic git with its off value, as real git reads it
// back; and each Always key is overridden when only the global
// configuration sets it.
func TestProgramKeysOverridden(t *testing.T) {
	root := isolatedRoot(t)
	run := func(env []string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	testenv.Git(t, root, nil, "init", "-q")
	keyOf := func(p string) string { return strings.Replace(p, "*", "Some.Name", 1) }
	for _, k := range gitProgramKeys {
		v := "sh /attacker"
		if k.Bang {
			v = "!sh /attacker"
		}
		run(os.Environ(), "config", "--add", keyOf(k.Pattern), v)
	}
	ws := workspacetest.New(t, root)
	env := SafetyEnv(ws, root, os.Environ())
	for _, k := range gitProgramKeys {
		key := keyOf(k.Pattern)
		got := strings.TrimSuffix(run(env, "config", "--get-all", key), "\n")
		last := got[strings.LastIndexByte(got, '\n')+1:]
		if last != k.Off {
			t.Errorf("%s: automatic git reads %q, want %q", key, last, k.Off)
		}
	}
	if !strings.Contains(run(env, "config", "--get", "safe.bareRepository"), "explicit") {
		t.Error("safe.bareRepository is not explicit")
	}
}

// TestSafetyEnv: the environment of an allow-listed command names the
// root's repository, keeps the server's own GIT_CONFIG_COUNT overrides
// (ours come after and win), drops inherited locating variables, and
// without a repository names one that cannot exist; the search stops at
// the roots.
func TestSafetyEnv(t *testing.T) {
	testenv.IsolateGit(t)
	parent := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", parent)
	withRepo, without := filepath.Join(parent, "a"), filepath.Join(parent, "b")
	for _, d := range []string{withRepo, without} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Git(t, withRepo, nil, "init", "-q")
	ws := workspacetest.New(t, withRepo, without)
	base := []string{"PATH=" + os.Getenv("PATH"), "GIT_DIR=/elsewhere", "GIT_INDEX_FILE=/elsewhere/index",
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=Person"}
	for _, tc := range []struct {
		dir, gitDir, workTree string
	}{
		{filepath.Join(withRepo, "sub"), filepath.Join(withRepo, ".git"), withRepo},
		{filepath.Join(without, "sub"), filepath.Join(os.DevNull, "agentls-no-workspace-repository"), ""},
	} {
		m := map[string]string{}
		n := 0
		for _, kv := range SafetyEnv(ws, tc.dir, base) {
			k, v, _ := strings.Cut(kv, "=")
			if _, dup := m[k]; dup {
				t.Errorf("%s twice", k)
			}
			m[k] = v
			n++
		}
		if m["GIT_DIR"] != tc.gitDir || m["GIT_WORK_TREE"] != tc.workTree || m["GIT_INDEX_FILE"] != "" {
			t.Errorf("%s: GIT_DIR %q GIT_WORK_TREE %q GIT_INDEX_FILE %q", tc.dir, m["GIT_DIR"], m["GIT_WORK_TREE"], m["GIT_INDEX_FILE"])
		}
		if m["GIT_CONFIG_KEY_0"] != "user.name" || m["GIT_CONFIG_VALUE_0"] != "Person" || m["GIT_CONFIG_KEY_1"] == "" {
			t.Errorf("%s: inherited overrides lost: %v", tc.dir, m)
		}
		if !strings.Contains(m["GIT_CEILING_DIRECTORIES"], parent) {
			t.Errorf("%s: ceilings %q", tc.dir, m["GIT_CEILING_DIRECTORIES"])
		}
	}
}

// TestRedactURLs: credentials in URLs do not reach what git tools return.
func TestRedactURLs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"To https://user:ghp_abc123@github.com/o/r.git":         "To https://[redacted]@github.com/o/r.git",
		"fatal: unable to access 'https://tok@host/r/': 403":    "fatal: unable to access 'https://[redacted]@host/r/': 403",
		"ssh://git@host:22/r and git@github.com:o/r.git":        "ssh://[redacted]@host:22/r and git@github.com:o/r.git",
		"no credentials: https://github.com/o/r.git ok@example": "no credentials: https://github.com/o/r.git ok@example",
	} {
		if got := RedactURLs(in); got != want {
			t.Errorf("RedactURLs(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkSafetyEnv is what an allow-listed command pays for automatic
// git: the root's repository (cached) and a read of its configuration.
func BenchmarkSafetyEnv(b *testing.B) {
	root := b.TempDir()
	testenv.IsolateGit(b)
	testenv.Git(b, root, nil, "init", "-q")
	ws := workspacetest.New(b, root)
	env := os.Environ()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		SafetyEnv(ws, root, env)
	}
}

// TestConfigFilesAfterGitInit: a root in no work tree has no configuration
// files, and once git init makes it one (with an include), ConfigFiles
// names the included file: the answer for a root without a repository is
// kept only while no .git appears.
func TestConfigFilesAfterGitInit(t *testing.T) {
	testenv.IsolateGit(t)
	root := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(root))
	if !noGitAbove(root) {
		t.Skip("a folder above the temporary folder holds a .git")
	}
	for range 2 { // the second from what the first kept
		if files := ConfigFiles(root); files != nil {
			t.Fatalf("ConfigFiles of a root in no work tree = %q", files)
		}
	}
	testenv.Git(t, root, nil, "init", "-q")
	included := filepath.Join(root, "extra.cfg")
	testenv.Git(t, root, nil, "config", "include.path", included)
	files := ConfigFiles(root)
	found := false
	for _, f := range files {
		found = found || f == included
	}
	if !found {
		t.Errorf("ConfigFiles after git init = %q, want it to name %s", files, included)
	}
}
