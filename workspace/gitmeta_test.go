package workspace

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

// TestGitMetadata: which writes make git metadata, on real folders. A
// folder gets the others' entries only when it already has (or the same
// plan gives it) HEAD, objects/ or refs/; HEAD itself always counts.
func TestGitMetadata(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	testenv.WriteFiles(t, root, map[string]string{"gitlike/HEAD": "", "half/objects/x": "", "src/hooks/a.ts": "", "objs/objects/x": ""})
	abs := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	create := func(p, text string) FileChange { return FileChange{Op: OpCreate, Path: abs(p), NewText: text} }
	for _, tc := range []struct {
		name    string
		changes []FileChange
		want    string // a part of the reason; "" for none
	}{
		{"plain file", []FileChange{create("a/b.txt", "x")}, ""},
		{".git folder", []FileChange{create(".git/hooks/pre-commit", "x")}, ".git folder"},
		{".git file", []FileChange{create("sub/.git", "gitdir: /x")}, ".git folder"},
		{".Git in another case", []FileChange{create("sub/.Git/config", "x")}, ".git folder"},
		{"HEAD anywhere", []FileChange{create("any/HEAD", "ref: refs/heads/main")}, "named HEAD"},
		{"config beside HEAD", []FileChange{create("gitlike/config", "[core]")}, "has HEAD"},
		{"refs beside objects", []FileChange{create("half/refs/heads/main", "0")}, "has objects"},
		{"objects alone", []FileChange{create("fresh/objects/ab/cd", "x")}, ""},
		{"hooks folder of a web app", []FileChange{create("src/hooks/b.ts", "x")}, ""},
		{"config folder", []FileChange{create("config/app.json", "{}")}, ""},
		{"one plan makes the shape", []FileChange{create("p/objects/x", ""), create("p/refs/y", "")}, "has objects"},
		{"mkdir refs beside objects", []FileChange{{Op: OpMkdir, Path: abs("objs/refs")}}, "has objects"},
		{".gitmodules", []FileChange{create(".gitmodules", "")}, ".gitmodules"},
		{"gitconfig", []FileChange{create("team.gitconfig", "")}, "configuration file"},
		{"lfsconfig", []FileChange{create(".lfsconfig", "")}, "configuration file"},
		{"attributes with a filter", []FileChange{create(".gitattributes", "*.bin filter=lfs -text\n")}, "filter=lfs"},
		{"attributes with a macro", []FileChange{create("d/.gitattributes", "[attr]evil diff=x\n")}, "diff=x"},
		{"attributes with a merge driver", []FileChange{create(".gitattributes", "*.lock merge=ours\n")}, "merge=ours"},
		{"harmless attributes", []FileChange{create(".gitattributes", "# c\n* text=auto\n*.go diff=golang\n*.png binary\n*.txt merge=union\n")}, ""},
		{"move into .git", []FileChange{{Op: OpRename, Path: abs("src/hooks/a.ts"), NewPath: abs(".git/hooks/post-checkout")}}, ".git folder"},
		{"move a git-shaped folder", []FileChange{{Op: OpRename, Path: abs("gitlike"), NewPath: abs("elsewhere")}}, ""},
		{"delete", []FileChange{{Op: OpDelete, Path: abs("gitlike/HEAD")}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			why := GitMetadata(&Plan{Changes: tc.changes}, func(string) string { return root })
			got := strings.Join(why, "; ")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
