package git

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

// TestGitHooksBeneathRoot: the hooks folder inside the root is listed
// beneath it. Its executable files are named, and so is a hook that is a
// link to a program outside the workspace (git follows it; the warning may
// say too much, never too little); when the folder itself is swapped for a
// link to an outside folder after git named it, the warning says the hooks
// were not listed and names nothing from that folder.
func TestGitHooksBeneathRoot(t *testing.T) {
	root := isolatedRoot(t)
	outside := t.TempDir()
	testenv.Git(t, root, nil, "init", "-q")
	hooks := filepath.Join(root, ".git", "hooks")
	write := func(p string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(hooks, "pre-commit"), 0o755)
	write(filepath.Join(hooks, "post-merge"), 0o644) // not executable: git skips it
	write(filepath.Join(outside, "prog"), 0o755)
	if err := os.Symlink(filepath.Join(outside, "prog"), filepath.Join(hooks, "pre-push")); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(outside, "hooks", "outsidehookname"), 0o755)

	r := openRepo(t, root, Options{})
	if got := strings.Join(r.Hooks(), " "); got != "pre-commit pre-push" {
		t.Errorf("hooks = %q, want %q", got, "pre-commit pre-push")
	}

	// A folder swapped for a link to an outside one after git named it:
	// nothing of the outside folder is listed, and the warning says so.
	if err := os.Rename(hooks, hooks+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "hooks"), hooks); err != nil {
		t.Fatal(err)
	}
	got := listHooks(r.ws, hooks)
	if len(got) != 1 || !strings.HasPrefix(got[0], "in .git/hooks (not listed") || strings.Contains(got[0], "outsidehookname") {
		t.Errorf("hooks through a link to an outside folder = %q, want one entry saying they were not listed", got)
	}
	// Asked now, git names the folder it runs hooks from (the link
	// resolved, outside the workspace), which is listed by path.
	if got := strings.Join(r.Hooks(), " "); got != "outsidehookname" {
		t.Errorf("hooks from git's resolved path = %q, want outsidehookname", got)
	}
}
