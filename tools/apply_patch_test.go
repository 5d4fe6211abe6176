package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// TestApplyPatchFixtures runs testdata/apply_patch/*.txtar. Sections:
// files/PATH is the tree before, patch the argument, want/PATH a file's
// content after, absent the paths that must not exist after, error the
// expected code (first line) and parts of its message (the other lines);
// nonl lists sections whose final newline is not part of the content.
// After an error every file of the tree must be as it was.
func TestApplyPatchFixtures(t *testing.T) {
	archives, _ := filepath.Glob("testdata/apply_patch/*.txtar")
	if len(archives) == 0 {
		t.Fatal("no fixtures")
	}
	for _, file := range archives {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sections := map[string]string{}
			for _, f := range ar.Files {
				sections[f.Name] = string(f.Data)
			}
			for _, n := range strings.Fields(sections["nonl"]) {
				sections[n] = strings.TrimSuffix(sections[n], "\n")
			}
			env, root := ftEnv(t)
			tree := map[string]string{}
			for name, data := range sections {
				if p, ok := strings.CutPrefix(name, "files/"); ok {
					tree[p] = data
				}
			}
			ftWrite(t, root, tree)
			res := ftCall(t, env, "apply_patch", map[string]any{"patch": sections["patch"]})
			if want, ok := sections["error"]; ok {
				lines := strings.Split(strings.TrimSpace(want), "\n")
				ftWantError(t, res, Code(lines[0]), lines[1:]...)
				for p, c := range tree {
					if got := ftRead(t, root, p); got != c {
						t.Errorf("%s changed after a failed patch: %q", p, got)
					}
				}
			} else {
				ftWantSuccess(t, res)
				var s EditResult
				ftStructured(t, res, &s)
				if s.AppliedBy != "server" || s.Landed != "all" || s.Diff == "" {
					t.Errorf("structured = %+v", s)
				}
			}
			for name, data := range sections {
				if p, ok := strings.CutPrefix(name, "want/"); ok {
					if got := ftRead(t, root, p); got != data {
						t.Errorf("%s = %q, want %q", p, got, data)
					}
				}
			}
			for _, p := range strings.Fields(sections["absent"]) {
				if _, err := os.Lstat(filepath.Join(root, p)); !os.IsNotExist(err) {
					t.Errorf("%s exists after the patch (%v)", p, err)
				}
			}
		})
	}
}
