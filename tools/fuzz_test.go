package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/schema"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// FuzzApplyPatch feeds any text to apply_patch's parser and planner over a
// small workspace. Invariants: no panic; a refusal is a coded error (never
// INTERNAL); a plan changes only paths inside the root, takes the current
// text of the files it modifies (a renamed file's, after a rename), and
// planning writes nothing.
func FuzzApplyPatch(f *testing.F) {
	for _, s := range []string{
		"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
		"--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n",
		"--- a/sub/c.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-c\n",
		"--- a/a.txt\n+++ b/a.txt\n@@\n-two\n+2\n",
		"--- a/../escape.txt\n+++ b/../escape.txt\n@@ -1 +1 @@\n-x\n+y\n",
		"--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-root\n+r00t\n",
		"*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch\n",
		"--- a/a.txt\n+++ b/moved.txt\n@@ -1,3 +1,3 @@\n one\n two\n three\n",
		"--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-one\n+1\n--- a/a.txt\n+++ b/a.txt\n@@ -3,1 +3,1 @@\n-three\n+3\n",
		"diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 100755\n",
		"--- a.txt\n+++ 00\n@@ -0 +0 @@\n+",
	} {
		f.Add(s)
	}
	root := f.TempDir()
	files := map[string]string{"a.txt": "one\ntwo\nthree\n", "sub/c.txt": "c\n"}
	testenv.WriteFiles(f, root, files)
	ws := workspacetest.New(f, root)
	realRoot := ws.Roots()[0]
	inside := func(p string) bool {
		rel, err := filepath.Rel(realRoot, p)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
	}
	sess := NewSession(ws, SessionOptions{})
	defer sess.Close()
	f.Fuzz(func(t *testing.T, patch string) {
		c := &Call{Ctx: context.Background(), Tool: ApplyPatch, Workspace: ws, Session: sess}
		plan, err := planPatch(c, applyPatchArgs{Patch: patch})
		patchNotes.Delete(c)
		if err != nil {
			e, ok := AsError(err)
			if !ok || e.Code == Internal {
				t.Fatalf("%q: uncoded or internal error %v", patch, err)
			}
		} else {
			if len(plan.Changes) == 0 {
				t.Fatalf("%q: an empty plan", patch)
			}
			renamed := map[string]string{} // new path -> the file it was
			for _, ch := range plan.Changes {
				if ch.Op == workspace.OpRename {
					renamed[ch.NewPath] = ch.Path
				}
				for _, p := range []string{ch.Path, ch.NewPath} {
					if p != "" && !inside(p) {
						t.Fatalf("%q: plans %s %s outside the root", patch, ch.Op, p)
					}
				}
				if ch.Op == workspace.OpModify {
					from := ch.Path
					if r, ok := renamed[from]; ok {
						from = r
					}
					if disk, _ := os.ReadFile(from); string(disk) != ch.OldText {
						t.Fatalf("%q: modifies %s from a text that is not its own", patch, ch.Path)
					}
				}
			}
		}
		for name, text := range files {
			if b, _ := os.ReadFile(filepath.Join(root, name)); string(b) != text {
				t.Fatalf("%q: planning changed %s", patch, name)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "new.txt")); err == nil {
			t.Fatalf("%q: planning created a file", patch)
		}
	})
}

// tiny is a schema with small caps, so that the fuzzer reaches them.
var tiny = Define(Def[json.RawMessage]{
	Spec: Spec{
		Name: "tiny", Description: "fuzz target", Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"path":{"type":"string","maxLength":3},
			"files":{"type":"array","maxItems":2,"items":{"type":"string","maxLength":4}},
			"env":{"type":"object","additionalProperties":{"type":"string","maxLength":5}},
			"mode":{"enum":["a","b"]},
			"n":{"type":"integer"},
			"any":{},
			"either":{"anyOf":[{"type":"string","maxLength":2},{"type":"integer"}]},
			"nested":{"type":"object","properties":{"deep":{"type":"array","items":{"type":"string","maxLength":1}}}}}}`),
	},
	Execute: func(c *Call, args json.RawMessage) (*Result, error) { return Success("", nil), nil },
})

// FuzzArguments feeds any JSON to argument validation (prepare) for every
// built-in tool and a tool with tiny caps. Invariants: no panic; the result
// is arguments or INVALID_PARAMS; the raw scan refuses nothing the schema
// would accept (it only answers sooner), and names a pointer that exists;
// arguments that pass keep within every cap once defaults are applied.
func FuzzArguments(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"path":"abcd"}`, `{"files":["a","b","c"]}`, `{"env":{"K":"123456"}}`, `{"mode":"zzzzzz"}`,
		`{"either":"abc"}`, `{"nested":{"deep":["ab"]}}`, `{"path":"\u00e9\u00e9\u00e9"}`, `{"path":"\ud83d\ude00ab"}`,
		`{"n":99999999999999999999}`, `[1,2]`, `"x"`, `{"path":`, `{"a":{"a":{"a":{}}}}`,
	} {
		f.Add(uint8(0), s)
		f.Add(uint8(1), s)
	}
	reg := NewBuiltinRegistry()
	reg.MustRegister(tiny)
	ts := reg.List(nil)
	cfg := workspace.DefaultConfig()
	cfg.Limits.MaxFileBytes = MaxArgumentsBytes // the schema's caps alone
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		tool, _ := reg.Lookup("tiny")
		if which > 0 {
			tool = ts[int(which)%len(ts)]
		}
		args, _, perr := prepare(tool, json.RawMessage(raw), cfg)
		if perr != nil && perr.Code != InvalidParams {
			t.Fatalf("%s %q: error %s, want INVALID_PARAMS", tool.Name, raw, perr.Code)
		}
		if perr == nil {
			if v, _ := checkBounds(args, tool.bounds, 0); v != nil {
				t.Fatalf("%s %q: passed, but its prepared form breaks %v", tool.Name, raw, v)
			}
		}
		v, _ := checkBounds([]byte(raw), tool.bounds, 0)
		if v == nil || strings.HasPrefix(v.Reason, "nested") || strings.HasPrefix(v.Reason, "a literal") {
			return // those two caps are the scan's own
		}
		if perr == nil {
			t.Fatalf("%s %q: the scan refused (%v) but prepare passed", tool.Name, raw, v)
		}
		val, err := schema.Decode([]byte(raw))
		if err != nil {
			return // the decoder refuses it anyway
		}
		s, _ := tool.input()
		if s.Validate(val) == nil {
			t.Fatalf("%s %q: the scan refused %v but the schema accepts it", tool.Name, raw, v)
		}
		if !pointerExists(val, v.Pointer) {
			t.Fatalf("%s %q: the violation's pointer %q is nowhere", tool.Name, raw, v.Pointer)
		}
	})
}

// pointerExists resolves a JSON pointer in a decoded value.
func pointerExists(v any, ptr string) bool {
	if ptr == "" {
		return true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return false
			}
		case []any:
			i := 0
			for _, c := range tok {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return false
			}
			v = x[i]
		default:
			return false
		}
	}
	return true
}
