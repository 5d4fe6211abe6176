package tools

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
)

// TestApplyPatchFixtures runs testdata/apply_patch/*.txtar. Sections:
// files/PATH is the tree before, patch the argument, want/PATH a file's
// content after, absent the paths that must not exist after, error the
// expected code (first line) and parts of its message (the other lines);
// nonl lists sections whose final newline is not part of the content.
// After an error every file of the tree must be as it was.
func TestApplyPatchFixtures(t *testing.T) {
	t.Parallel()
	for _, c := range testenv.Txtars(t, "testdata/apply_patch/*.txtar") {
		t.Run(c.Name, func(t *testing.T) {
			sections := c.Sections()
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
			testenv.WriteFiles(t, root, tree)
			res := ftCall(t, env, "apply_patch", map[string]any{"patch": sections["patch"]})
			if want, ok := sections["error"]; ok {
				lines := strings.Split(strings.TrimSpace(want), "\n")
				wantError(t, res, Code(lines[0]), lines[1:]...)
				for p, c := range tree {
					if got := ftRead(t, root, p); got != c {
						t.Errorf("%s changed after a failed patch: %q", p, got)
					}
				}
			} else {
				wantSuccess(t, res)
				var s EditResult
				decode(t, res, &s)
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

func TestApplyPatchCRLFAndBuffers(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"win.txt": "one\r\ntwo\r\nthree\r\n", "open.go": "package open\n"})
	open := filepath.Join(root, "open.go")
	env.Workspace.Overlays.Open(workspace.Document{URI: workspace.PathToURI(open), Path: open, Version: 5,
		Text: "package open\n\nvar unsaved = \"é中😀\"\n"})
	patch := "--- a/win.txt\n+++ b/win.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+TWO\n+2.5\n three\n" +
		"--- a/open.go\n+++ b/open.go\n@@ -2,2 +2,2 @@\n \n-var unsaved = \"é中😀\"\n+var unsaved = \"é中🙂\"\n"
	res := ftCall(t, env, "apply_patch", map[string]any{"patch": patch})
	// No editor applies edits here: the server never writes around the
	// unsaved buffer, and writes nothing of the patch.
	wantError(t, res, UnsavedInEditor, "open.go")
	if got := ftRead(t, root, "win.txt"); got != "one\r\ntwo\r\nthree\r\n" {
		t.Errorf("win.txt written by a refused patch: %q", got)
	}
	// Saved, the buffer loses nothing when the server writes.
	testenv.WriteFiles(t, root, map[string]string{"open.go": "package open\n\nvar unsaved = \"é中😀\"\n"})
	res = ftCall(t, env, "apply_patch", map[string]any{"patch": patch})
	wantSuccess(t, res)
	if got := ftRead(t, root, "win.txt"); got != "one\r\nTWO\r\n2.5\r\nthree\r\n" {
		t.Errorf("CRLF file = %q", got)
	}
	// Made from the buffer, not from the disk's one line.
	if got := ftRead(t, root, "open.go"); got != "package open\n\nvar unsaved = \"é中🙂\"\n" {
		t.Errorf("open file = %q", got)
	}
	// A patch with CRLF lines applies to an LF file, which stays LF.
	testenv.WriteFiles(t, root, map[string]string{"lf.txt": "a\nb\n"})
	res = ftCall(t, env, "apply_patch", map[string]any{"patch": "--- a/lf.txt\r\n+++ b/lf.txt\r\n@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+B\r\n"})
	wantSuccess(t, res)
	if got := ftRead(t, root, "lf.txt"); got != "a\nB\n" {
		t.Errorf("lf.txt = %q", got)
	}
}

func TestApplyPatchErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, patch string
		code        Code
		parts       []string
	}{
		{"not a diff", "hello\nworld\n", InvalidParams, []string{"no file diffs"}},
		{"bad hunk header", "--- a/f.txt\n+++ b/f.txt\n@@ nonsense @@\n-a\n", InvalidParams, []string{"not a unified diff"}},
		{"missing file", "--- a/nope.txt\n+++ b/nope.txt\n@@ -1 +1 @@\n-a\n+b\n", FileNotFound, []string{"nope.txt", "/dev/null"}},
		{"a file changed and deleted", "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n--- a/f.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-a\n-b\n-c\n", InvalidParams, []string{"more than once"}},
		{"context in a created file", "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n x\n+y\n", PatchFailed, []string{"hunk 1 of n.txt", "added line"}},
		{"rename onto an existing file", "--- a/f.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-a\n+b\n", AlreadyExists, []string{"g.txt"}},
		{"hunk too far and not unique", "--- a/f.txt\n+++ b/f.txt\n@@ -1,1 +1,1 @@\n-zzz\n+b\n", PatchFailed, []string{"hunk 1 of 1 of f.txt (@@ -1,1 +1,1 @@)", "    zzz"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, root := ftEnv(t)
			testenv.WriteFiles(t, root, map[string]string{"f.txt": "a\nb\nc\n", "g.txt": "g\n"})
			wantError(t, ftCall(t, env, "apply_patch", map[string]any{"patch": tt.patch}), tt.code, tt.parts...)
			if ftRead(t, root, "f.txt") != "a\nb\nc\n" || ftRead(t, root, "g.txt") != "g\n" || ftRead(t, root, "n.txt") != "<absent>" {
				t.Error("the workspace changed")
			}
		})
	}
}

// TestApplyPatchFuzzLimit: a hunk whose lines occur many times applies at
// the occurrence nearest its stated line, searched patchFuzz lines around
// it; beyond that it fails.
func TestApplyPatchFuzzLimit(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("a\nb\n")
	}
	text := b.String()
	for _, tc := range []struct {
		line    int
		changed int // 1-based line that becomes B; 0: the patch fails
	}{{101, 102}, {104, 104}, {150, 150}, {240, 200}, {252, 0}, {400, 0}} {
		env, root := ftEnv(t)
		testenv.WriteFiles(t, root, map[string]string{"f.txt": text})
		patch := fmt.Sprintf("--- a/f.txt\n+++ b/f.txt\n@@ -%d,2 +%d,2 @@\n a\n-b\n+B\n", tc.line, tc.line)
		res := ftCall(t, env, "apply_patch", map[string]any{"patch": patch})
		if tc.changed == 0 {
			wantError(t, res, PatchFailed, fmt.Sprintf("near line %d", tc.line))
			continue
		}
		wantSuccess(t, res)
		lines := strings.Split(ftRead(t, root, "f.txt"), "\n")
		if lines[tc.changed-1] != "B" || strings.Count(strings.Join(lines, "\n"), "B") != 1 {
			t.Errorf("hunk stated at line %d: B is not (only) at line %d", tc.line, tc.changed)
		}
	}
}

// TestApplyPatchRoundTrip: the diff workspace.UnifiedDiff makes from old
// to new, applied to old, gives new; also when lines were added above the
// hunks since (their context moved), and with or without a final newline.
func TestApplyPatchRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "func x() {", "}", "", "\treturn nil", "// note"}
	randomLines := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[rng.IntN(len(words))]
		}
		return out
	}
	join := func(lines []string, finalNL bool) string {
		s := strings.Join(lines, "\n")
		if finalNL && len(lines) > 0 {
			s += "\n"
		}
		return s
	}
	env, root := ftEnv(t)
	for i := 0; i < 200; i++ {
		oldLines := randomLines(1 + rng.IntN(60))
		newLines := slices.Clone(oldLines)
		for k := rng.IntN(4) + 1; k > 0; k-- {
			at := rng.IntN(len(newLines) + 1)
			switch rng.IntN(3) {
			case 0: // insert
				newLines = slices.Insert(newLines, at, randomLines(1+rng.IntN(3))...)
			case 1: // delete
				if at < len(newLines) {
					newLines = slices.Delete(newLines, at, min(at+1+rng.IntN(3), len(newLines)))
				}
			default: // replace
				if at < len(newLines) {
					newLines[at] = fmt.Sprintf("changed %d", rng.IntN(100))
				}
			}
		}
		old, new := join(oldLines, rng.IntN(4) > 0), join(newLines, rng.IntN(4) > 0)
		if old == new || new == "" {
			continue
		}
		patch := workspace.UnifiedDiff("f.txt", "f.txt", old, new)
		shift := rng.IntN(3) == 0
		base, want := old, new
		if shift {
			base, want = "moved 1\nmoved 2\nmoved 3\n"+old, "moved 1\nmoved 2\nmoved 3\n"+new
		}
		testenv.WriteFiles(t, root, map[string]string{"f.txt": base})
		env.Session = NewSession(env.Workspace, SessionOptions{}) // the model has not read this version
		res := ftCall(t, env, "apply_patch", map[string]any{"patch": patch})
		if res.Status != StatusSuccess {
			t.Fatalf("case %d (shifted %v): %s\nold %q\nnew %q\npatch:\n%s", i, shift, res.Content, old, new, patch)
		}
		if got := ftRead(t, root, "f.txt"); got != want {
			t.Fatalf("case %d (shifted %v):\ngot  %q\nwant %q\npatch:\n%s", i, shift, got, want, patch)
		}
	}
}

// TestApplyPatchNotes: a hunk found away from its stated line, or only
// with whitespace ignored, is said in the question and in the result.
func TestApplyPatchNotes(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"f.txt": "x\ny\nz\na  \nb\nc\n"})
	var warning string
	inner := env.Approver
	env.Approver = approval.ApproverFunc(func(ctx context.Context, r approval.Request) (approval.Response, error) {
		warning = r.Warning
		return inner.Ask(ctx, r)
	})
	res := ftCall(t, env, "apply_patch", map[string]any{"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"})
	wantSuccess(t, res)
	want := "hunk 1 of f.txt applied at line 4, not 1 as the patch says; hunk 1 of f.txt matched only when whitespace at line ends is ignored"
	if warning != want {
		t.Errorf("warning = %q, want %q", warning, want)
	}
	if !strings.Contains(res.Content, "Note: "+want) {
		t.Errorf("content = %q", res.Content)
	}
	if got := ftRead(t, root, "f.txt"); got != "x\ny\nz\na  \nB\nc\n" {
		t.Errorf("file = %q", got)
	}
	// An exact patch has no notes.
	res = ftCall(t, env, "apply_patch", map[string]any{"patch": "--- a/f.txt\n+++ b/f.txt\n@@ -5,2 +5,2 @@\n-B\n+b\n c\n"})
	wantSuccess(t, res)
	if warning != "" || strings.Contains(res.Content, "Note") {
		t.Errorf("warning %q, content %q", warning, res.Content)
	}
}

// TestApplyPatchSplitDiffsOfOneFile: several diffs of one file are its
// hunks, in the order of the file.
func TestApplyPatchSplitDiffsOfOneFile(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"f.txt": "a\nb\nc\nd\ne\nf\ng\nh\n"})
	patch := "--- a/f.txt\n+++ b/f.txt\n@@ -7,2 +7,2 @@\n g\n-h\n+H\n" +
		"--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n"
	wantSuccess(t, ftCall(t, env, "apply_patch", map[string]any{"patch": patch}))
	if got := ftRead(t, root, "f.txt"); got != "A\nb\nc\nd\ne\nf\ng\nH\n" {
		t.Errorf("f.txt = %q", got)
	}
}

// TestApplyPatchHeadersWithoutNumbers: "@@" alone, as models write it,
// finds the hunk by its lines, which must occur once.
func TestApplyPatchHeadersWithoutNumbers(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"f.go": "package f\n\nfunc A() {\n\treturn\n}\n\nfunc B() {\n\treturn\n}\n"})
	patch := "--- a/f.go\n+++ b/f.go\n@@\n func B() {\n-\treturn\n+\tpanic(1)\n }\n@@ @@ func A\n-func A() {\n+func A2() {\n"
	res := ftCall(t, env, "apply_patch", map[string]any{"patch": patch})
	wantSuccess(t, res)
	if got := ftRead(t, root, "f.go"); got != "package f\n\nfunc A2() {\n\treturn\n}\n\nfunc B() {\n\tpanic(1)\n}\n" {
		t.Errorf("f.go = %q", got)
	}
	if strings.Contains(res.Content, "Note") {
		t.Errorf("content = %q", res.Content)
	}
	res = ftCall(t, env, "apply_patch", map[string]any{"patch": "--- a/f.go\n+++ b/f.go\n@@\n }\n+// x\n"})
	wantError(t, res, PatchFailed, "no line numbers")
}
