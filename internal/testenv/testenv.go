// Package testenv holds the set-up that the tests of several packages
// share: a tree of files, a runtime directory of the test's own, a
// listener's accept loop, git isolated from the configuration of the
// person running the tests, a real repository, the CPU time the test
// process used, the processes still alive, the process's own memory
// mappings (Mappings), a value's JSON (MarshalJSON), and an environment
// of the tests' own (Main). Only tests, and lsp/lsptest that only tests
// import, import it.
//
// Every helper that can fail takes a testing.TB and fails the test; none
// asserts anything about the code under test.
package testenv

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// Main runs a package's tests with IsolateHome; call it from TestMain.
// When the tests end it calls cleanups (the package's process-wide
// temporary files, such as lsptest.RemoveBinary's) in order, removes the
// IsolateHome folder and exits with the tests' code: a test process leaves
// nothing in the temporary folder.
func Main(m *testing.M, cleanups ...func()) {
	cleanup := IsolateHome()
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	cleanup()
	os.Exit(code)
}

// IsolateHome points XDG_STATE_HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME and
// XDG_RUNTIME_DIR at a fresh temporary folder so tests never read the
// user's config, write their history or on-disk index copies, or publish
// sessions where the user's `agentls mcp` would find them. Call it from
// TestMain; it returns a function that removes the folder. The go command
// the tests run (to build the binary) keeps the user's build cache and go
// env file, which it would otherwise look for in the new folder.
func IsolateHome() func() {
	dir, err := os.MkdirTemp("", "agentls-home-") // 0700
	if err != nil {
		panic(err)
	}
	if d, err := os.UserCacheDir(); err == nil && os.Getenv("GOCACHE") == "" {
		os.Setenv("GOCACHE", filepath.Join(d, "go-build"))
	}
	if d, err := os.UserConfigDir(); err == nil && os.Getenv("GOENV") == "" {
		os.Setenv("GOENV", filepath.Join(d, "go", "env"))
	}
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	os.Setenv("XDG_RUNTIME_DIR", dir)
	return func() { os.RemoveAll(dir) }
}

// WriteFiles writes files (slash-separated path relative to root →
// content) below root, making their folders.
func WriteFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// RuntimeDir points XDG_RUNTIME_DIR, where agentls keeps its sockets,
// token files and session descriptors, at a fresh directory of the test's
// and returns it. It sets an environment variable, so the test may not be
// parallel.
func RuntimeDir(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", d)
	return d
}

// IsolateGit keeps the machine's system and global git configuration, and
// the person's git excludes file (XDG_CONFIG_HOME/git/ignore), out of the
// test: out of the git it runs and out of agentls's own reading of them.
// It sets environment variables, so the test may not be parallel.
func IsolateGit(t testing.TB) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

// Git runs git in dir with the process's environment plus env, fails the
// test when git fails, and returns git's output (standard output and
// error). It skips the test when git is not installed.
func Git(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// GitInit makes dir a repository on branch main whose local identity is
// Ada Lovelace <ada@example.com>, with commit signing off. Call IsolateGit
// first.
func GitInit(t testing.TB, dir string) {
	t.Helper()
	Git(t, dir, nil, "init", "-q", "-b", "main")
	Git(t, dir, nil, "config", "user.name", "Ada Lovelace")
	Git(t, dir, nil, "config", "user.email", "ada@example.com")
	Git(t, dir, nil, "config", "commit.gpgsign", "false")
}

// Eventually polls cond every 25ms until it holds or d has passed, and
// returns whether it held. It waits for something to happen; what happens
// is for the caller to assert, never how long it took.
func Eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(25 * time.Millisecond)
	}
	return cond()
}

// GoSrc returns $GOROOT/src, the large real tree that search and index
// tests and benchmarks measure, or skips the test where there is none.
func GoSrc(t testing.TB) string {
	t.Helper()
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		t.Skip("no GOROOT/src")
	}
	return src
}

// BenchTree is the tree a benchmark of one tree measures: the first of
// AGENTLS_BENCH_TREES (a list of directories, as scripts/bench.sh sets it),
// else GoSrc.
func BenchTree(t testing.TB) string {
	t.Helper()
	if s := os.Getenv("AGENTLS_BENCH_TREES"); s != "" {
		return filepath.SplitList(s)[0]
	}
	return GoSrc(t)
}

// TreeSize counts the regular files below dir and their bytes (symlinks
// not followed), the size benchmarks compare an index with.
func TreeSize(dir string) (files int, bytes int64) {
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				files, bytes = files+1, bytes+fi.Size()
			}
		}
		return nil
	})
	return files, bytes
}

// MedianMs is the median of ds in milliseconds (ds is not reordered),
// what the benchmarks that time single runs report.
func MedianMs(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}

// MarshalJSON is json.Marshal's encoding of v; it fails the test when v
// cannot be encoded.
func MarshalJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
