package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/search"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// grepTree is the fixture of the grep and glob tests.
var grepTree = map[string]string{
	".git/HEAD":           "ref: refs/heads/main\n",
	".gitignore":          "*.log\nbuild/\n",
	"main.go":             "package main\n\nfunc main() {\n\tprintln(\"Hello, World\")\n}\n",
	"util.go":             "package main\n\n// helper helps.\nfunc helper() int {\n\treturn 42\n}\n\nfunc other() {}\n",
	"util_test.go":        "package main\n\nimport \"testing\"\n\nfunc TestHelper(t *testing.T) {\n\tif helper() != 42 {\n\t\tt.Fatal(\"helper\")\n\t}\n}\n",
	"docs/readme.md":      "# Title\n\nhello world\nHELLO again\nfoo.bar(baz)\n",
	"docs/notes.txt":      "line one\nline two\nhelper mention\nline four\nline five\nline six\nhelper again\n",
	"web/app.ts":          "export function helper(): number { return 1 }\n",
	"web/app.tsx":         "export const App = () => helper()\n",
	"web/style.css":       ".helper { color: red }\n",
	"debug.log":           "helper in a log\n",
	"build/out.go":        "package build // helper\n",
	".hidden/secret.go":   "package hidden // helper\n",
	".hidden.go":          "package hidden // helper\n",
	".env":                "TOKEN=helper\n",
	"keys/server.pem":     "helper key\n",
	"bin.dat":             "helper\x00binary\n",
	"crlf.txt":            "first helper\r\nsecond\r\n",
	"unicode.txt":         "café helper\nnaïve x\n",
	"multi.txt":           "begin\nmiddle\nend\nbegin\nend\n",
	"words.txt":           "helpers\nhelper\nmyhelper\nhelper_x\n(helper)\n",
	"deep/a/b/c/d.go":     "package d // helper\n",
	"big/many.txt":        strings.Repeat("match me\n", 50),
	"sub dir/space.txt":   "helper with space\n",
	"noeol.txt":           "helper without newline",
	"empty.txt":           "",
	"fold/kelvin.txt":     "\u212aelvin\nkelvin\n",
	"fold/long_s.txt":     "\u017fecret\nsecret\n",
	"unicode/word.txt":    "éhelper\nhelper\n",
	"context/c.txt":       "1\n2\nX\n4\n5\n6\n7\nX\n9\n10\n11\n12\n13\nX\n",
	"deep/a/skip/keep.md": "helper\n",
}

// makeTree writes files in a fresh folder, with git isolated from the
// machine's configuration (the person's git excludes must not count), and
// returns the folder and its workspace.
func makeTree(t *testing.T, files map[string]string) (string, *workspace.Workspace) {
	t.Helper()
	testenv.IsolateGit(t)
	dir := t.TempDir()
	testenv.WriteFiles(t, dir, files)
	ws := workspacetest.New(t, dir)
	return dir, ws
}

// recorder collects partial results.
type recorder struct {
	mu      sync.Mutex
	batches []any
}

func (r *recorder) Report(string, int)   {}
func (r *recorder) StreamsPartial() bool { return true }
func (r *recorder) Partial(v any) {
	r.mu.Lock()
	r.batches = append(r.batches, v)
	r.mu.Unlock()
}

// silent is a Progress without a partialResultToken.
type silent struct{ recorder }

func (*silent) StreamsPartial() bool { return false }

func runSearch(t *testing.T, ws *workspace.Workspace, tool, args string, progress Progress) *Result {
	t.Helper()
	reg := NewRegistry(nil)
	reg.MustRegister(Grep, Glob)
	r := NewRunner(reg, nil)
	env := &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{}), Memory: approval.NewMemory("")}
	return r.Run(context.Background(), env, Request{Name: tool, Arguments: json.RawMessage(args)}, progress)
}

func TestGrep(t *testing.T) {
	_, ws := makeTree(t, grepTree)
	tests := []struct {
		name string
		args string
		want string // content
	}{
		{"literal", `{"pattern":"helper","glob":"*.go"}`,
			".hidden.go:1:package hidden // helper\ndeep/a/b/c/d.go:1:package d // helper\nutil.go:3:// helper helps.\nutil.go:4:func helper() int {\nutil_test.go:6:\tif helper() != 42 {\nutil_test.go:7:\t\tt.Fatal(\"helper\")\n"},
		{"type", `{"pattern":"helper","type":"ts"}`,
			"web/app.ts:1:export function helper(): number { return 1 }\nweb/app.tsx:1:export const App = () => helper()\n"},
		{"brace glob", `{"pattern":"helper","glob":"*.{css,md}"}`,
			"deep/a/skip/keep.md:1:helper\nweb/style.css:1:.helper { color: red }\n"},
		{"negated glob", `{"pattern":"helper","glob":"web/*,!*.tsx"}`,
			"web/app.ts:1:export function helper(): number { return 1 }\nweb/style.css:1:.helper { color: red }\n"},
		{"path", `{"pattern":"helper","path":"web"}`,
			"web/app.ts:1:export function helper(): number { return 1 }\nweb/app.tsx:1:export const App = () => helper()\nweb/style.css:1:.helper { color: red }\n"},
		{"file path", `{"pattern":"l","path":"docs/readme.md"}`,
			"docs/readme.md:1:# Title\ndocs/readme.md:3:hello world\n"},
		{"case-insensitive", `{"pattern":"hello","path":"docs","case_insensitive":true}`,
			"docs/readme.md:3:hello world\ndocs/readme.md:4:HELLO again\n"},
		{"case-insensitive kelvin", `{"pattern":"kelvin","path":"fold","case_insensitive":true}`,
			"fold/kelvin.txt:1:\u212aelvin\nfold/kelvin.txt:2:kelvin\n"},
		{"case-insensitive long s", `{"pattern":"SECRET","path":"fold","case_insensitive":true}`,
			"fold/long_s.txt:1:\u017fecret\nfold/long_s.txt:2:secret\n"},
		{"fixed strings", `{"pattern":"foo.bar(baz)","fixed_strings":true}`,
			"docs/readme.md:5:foo.bar(baz)\n"},
		{"regex not fixed", `{"pattern":"foo.bar\\(baz","path":"docs"}`,
			"docs/readme.md:5:foo.bar(baz)\n"},
		{"word", `{"pattern":"helper","path":"words.txt","word":true}`,
			"words.txt:2:helper\nwords.txt:5:(helper)\n"},
		{"unicode word", `{"pattern":"helper","path":"unicode/word.txt","word":true}`,
			"unicode/word.txt:2:helper\n"},
		{"unicode class", `{"pattern":"caf\\w ","path":"unicode.txt"}`,
			"unicode.txt:1:café helper\n"},
		{"crlf", `{"pattern":"helper$","path":"crlf.txt"}`, "No matches found.\n"},
		{"crlf text", `{"pattern":"first","path":"crlf.txt"}`, "crlf.txt:1:first helper\n"},
		{"no final newline", `{"pattern":"newline$","path":"noeol.txt"}`, "noeol.txt:1:helper without newline\n"},
		{"space in path", `{"pattern":"space"}`, "sub dir/space.txt:1:helper with space\n"},
		{"anchors", `{"pattern":"^end$","path":"multi.txt"}`, "multi.txt:3:end\nmulti.txt:5:end\n"},
		{"multiline", `{"pattern":"begin\\nmiddle","path":"multi.txt","multiline":true}`,
			"multi.txt:1:begin\nmulti.txt:2:middle\n"},
		{"multiline class", `{"pattern":"middle\\s+end","multiline":true}`,
			"multi.txt:2:middle\nmulti.txt:3:end\n"},
		{"context", `{"pattern":"X","path":"context","context":1}`,
			"context/c.txt-2-2\ncontext/c.txt:3:X\ncontext/c.txt-4-4\n--\ncontext/c.txt-7-7\ncontext/c.txt:8:X\ncontext/c.txt-9-9\n--\ncontext/c.txt-13-13\ncontext/c.txt:14:X\n"},
		{"before and after", `{"pattern":"X","path":"context","before":2,"after":0}`,
			"context/c.txt-1-1\ncontext/c.txt-2-2\ncontext/c.txt:3:X\n--\ncontext/c.txt-6-6\ncontext/c.txt-7-7\ncontext/c.txt:8:X\n--\ncontext/c.txt-12-12\ncontext/c.txt-13-13\ncontext/c.txt:14:X\n"},
		{"merged context", `{"pattern":"X","path":"context","after":4}`,
			"context/c.txt:3:X\ncontext/c.txt-4-4\ncontext/c.txt-5-5\ncontext/c.txt-6-6\ncontext/c.txt-7-7\ncontext/c.txt:8:X\ncontext/c.txt-9-9\ncontext/c.txt-10-10\ncontext/c.txt-11-11\ncontext/c.txt-12-12\n--\ncontext/c.txt:14:X\n"},
		{"files", `{"pattern":"helper","output_mode":"files_with_matches","path":"web"}`,
			"web/app.ts\nweb/app.tsx\nweb/style.css\n"},
		{"count", `{"pattern":"helper","output_mode":"count","glob":"*.{go,txt}"}`,
			".hidden.go:1\ncrlf.txt:1\ndeep/a/b/c/d.go:1\ndocs/notes.txt:2\nnoeol.txt:1\nsub dir/space.txt:1\nunicode/word.txt:2\nunicode.txt:1\nutil.go:2\nutil_test.go:2\nwords.txt:5\n"},
		{"ignored and hidden included on request", `{"pattern":"in a log","include_ignored":true}`, "debug.log:1:helper in a log\n"},
		{"ignored skipped", `{"pattern":"in a log"}`, "No matches found.\n"},
		{"binary skipped", `{"pattern":"binary"}`, "No matches found.\n"},
		{"sensitive skipped", `{"pattern":"helper","include_ignored":true,"glob":"*.pem,.env"}`, "No matches found.\n"},
		{"truncated", `{"pattern":"match","max_results":3}`,
			"big/many.txt:1:match me\nbig/many.txt:2:match me\nbig/many.txt:3:match me\n[results truncated at 3; narrow the pattern, path, glob or type, or raise max_results]\n"},
		{"truncated across files", `{"pattern":"helper","max_results":2,"output_mode":"files_with_matches"}`,
			"crlf.txt\ndeep/a/b/c/d.go\n[results truncated at 2; narrow the pattern, path, glob or type, or raise max_results]\n"},
		{"alternation", `{"pattern":"HELLO|Title","path":"docs"}`, "docs/readme.md:1:# Title\ndocs/readme.md:4:HELLO again\n"},
		{"no literal", `{"pattern":"^[0-9]{2}$","path":"context"}`, "context/c.txt:10:10\ncontext/c.txt:11:11\ncontext/c.txt:12:12\ncontext/c.txt:13:13\n"},
		{"empty pattern", `{"pattern":"","path":"empty.txt"}`, "No matches found.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runSearch(t, ws, "grep", tt.args, nil)
			if res.Status != StatusSuccess {
				t.Fatalf("status %s: %s", res.Status, res.Content)
			}
			if res.Content != tt.want {
				t.Errorf("content:\n%s\nwant:\n%s", res.Content, tt.want)
			}
		})
	}
}

// grepMatches is the list of matches of grep's structured result st.
func grepMatches(t *testing.T, st any) []GrepMatch {
	t.Helper()
	runs, ok := st.(map[string]any)["matches"].(search.MatchRuns)
	if !ok {
		t.Fatalf("structured matches: %T", st.(map[string]any)["matches"])
	}
	var ms []GrepMatch
	for m := range runs.All() {
		ms = append(ms, *m)
	}
	return ms
}

func TestGrepStructured(t *testing.T) {
	_, ws := makeTree(t, grepTree)
	res := runSearch(t, ws, "grep", `{"pattern":"hel+o","path":"docs","case_insensitive":true}`, nil)
	st := res.Structured.(map[string]any)
	want := []GrepMatch{
		{Path: "docs/readme.md", Line: 3, Column: 1, Text: "hello world"},
		{Path: "docs/readme.md", Line: 4, Column: 1, Text: "HELLO again"},
	}
	if got := grepMatches(t, st); !reflect.DeepEqual(got, want) || st["truncated"] != false {
		t.Errorf("structured %+v", st)
	}
	res = runSearch(t, ws, "grep", `{"pattern":"again","path":"docs/notes.txt"}`, nil)
	if got := grepMatches(t, res.Structured); len(got) != 1 || got[0].Column != 8 || got[0].Line != 7 {
		t.Errorf("column: %+v", got)
	}
	res = runSearch(t, ws, "grep", `{"pattern":"helper","output_mode":"count","path":"words.txt"}`, nil)
	if got := res.Structured.(map[string]any)["counts"]; !reflect.DeepEqual(got, map[string]int{"words.txt": 5}) {
		t.Errorf("counts %v", got)
	}
	res = runSearch(t, ws, "grep", `{"pattern":"helper","word":true,"path":"words.txt"}`, nil)
	if got := grepMatches(t, res.Structured); got[1].Column != 2 {
		t.Errorf("word column %+v", got)
	}
	// The JSON shape.
	b, _ := json.Marshal(res.Structured)
	if !bytes.Contains(b, []byte(`{"path":"words.txt","line":2,"column":1,"text":"helper"}`)) {
		t.Errorf("json %s", b)
	}
}

func TestGrepErrors(t *testing.T) {
	_, ws := makeTree(t, grepTree)
	tests := []struct {
		args string
		code Code
	}{
		{`{"pattern":"("}`, InvalidParams},
		{`{"pattern":"a\\nb"}`, InvalidParams},
		{`{"pattern":"x","type":"cobol"}`, InvalidParams},
		{`{"pattern":"x","path":"missing"}`, FileNotFound},
		{`{"pattern":"x","path":"../outside"}`, InvalidPath},
		{`{"pattern":"x","bogus":1}`, InvalidParams},
		{`{"pattern":"x","output_mode":"lines"}`, InvalidParams},
		{`{}`, InvalidParams},
	}
	for _, tt := range tests {
		res := runSearch(t, ws, "grep", tt.args, nil)
		if res.Status != StatusError || res.Error.Code != tt.code {
			t.Errorf("%s: got %s %+v, want %s", tt.args, res.Status, res.Error, tt.code)
		}
	}
}

func TestGrepOverlay(t *testing.T) {
	dir, ws := makeTree(t, grepTree)
	path := filepath.Join(dir, "main.go")
	ws.Overlays.Open(workspace.Document{Path: path, Text: "package main\n\n// unsaved edit\n"})
	res := runSearch(t, ws, "grep", `{"pattern":"unsaved|World"}`, nil)
	if res.Content != "main.go:3:// unsaved edit\n" {
		t.Errorf("overlay: %q", res.Content)
	}
	// A new buffer not on disk yet is searched too; ignored or hidden ones are not.
	ws.Overlays.Open(workspace.Document{Path: filepath.Join(dir, "web", "new.ts"), Text: "const unsaved = 1\n"})
	ws.Overlays.Open(workspace.Document{Path: filepath.Join(dir, "new.log"), Text: "unsaved log\n"})
	ws.Overlays.Open(workspace.Document{Path: filepath.Join(dir, ".hidden", "new.go"), Text: "unsaved hidden\n"})
	res = runSearch(t, ws, "grep", `{"pattern":"unsaved"}`, nil)
	if res.Content != "main.go:3:// unsaved edit\nweb/new.ts:1:const unsaved = 1\n" {
		t.Errorf("new buffers: %q", res.Content)
	}
	res = runSearch(t, ws, "grep", `{"pattern":"const","path":"web/new.ts"}`, nil)
	if res.Content != "web/new.ts:1:const unsaved = 1\n" {
		t.Errorf("a new buffer as the path: %q", res.Content)
	}
	res = runSearch(t, ws, "grep", `{"pattern":"unsaved","type":"go"}`, nil)
	if res.Content != "main.go:3:// unsaved edit\n" {
		t.Errorf("new buffers with a type: %q", res.Content)
	}
}

func TestGrepPartialAndDeterminism(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 300; i++ {
		files[filepath.Join("d", string(rune('a'+i%26)), strings.Repeat("f", 1+i/26)+".txt")] = "needle\nhay\nneedle\n"
	}
	_, ws := makeTree(t, files)
	// Streamed: the batches hold the whole result (max_results units, each
	// once), the final result none of it, only the summary (LSP 3.17).
	rec := &recorder{}
	streamed := runSearch(t, ws, "grep", `{"pattern":"needle","max_results":250}`, rec)
	st := streamed.Structured.(map[string]any)
	if st["truncated"] != true || st["streamed"] != 250 || len(grepMatches(t, st)) != 0 {
		t.Errorf("final result after streaming = %v", st)
	}
	if !strings.Contains(streamed.Content, "250 matching lines") || strings.Contains(streamed.Content, "needle") {
		t.Errorf("final content after streaming = %q", streamed.Content)
	}
	partial := 0
	seen := map[GrepMatch]bool{}
	for _, b := range rec.batches {
		for _, m := range b.(map[string]any)["matches"].([]any) {
			if seen[m.(GrepMatch)] {
				t.Errorf("%v streamed twice", m)
			}
			seen[m.(GrepMatch)] = true
			partial++
		}
	}
	if len(rec.batches) < 2 || partial != 250 {
		t.Errorf("%d batches with %d matches, want 250", len(rec.batches), partial)
	}
	// Not streamed (a Progress that reaches no client): the whole result.
	first := runSearch(t, ws, "grep", `{"pattern":"needle","max_results":250}`, &silent{})
	if first.Structured.(map[string]any)["truncated"] != true {
		t.Error("not truncated")
	}
	if n := len(grepMatches(t, first.Structured)); n != 250 {
		t.Errorf("%d matches", n)
	}
	for i := 0; i < 5; i++ {
		again := runSearch(t, ws, "grep", `{"pattern":"needle","max_results":250}`, nil)
		if again.Content != first.Content {
			t.Fatal("results differ between runs")
		}
	}
	all := runSearch(t, ws, "grep", `{"pattern":"needle","max_results":100000}`, nil)
	if !strings.HasPrefix(all.Content, strings.TrimSuffix(first.Content, "[results truncated at 250; narrow the pattern, path, glob or type, or raise max_results]\n")) {
		t.Error("the truncated result is not the start of the whole result")
	}
}

// TestGrepCachedSession greps through a session with a search cache (as the
// LSP server's) while the file tools change files, and through a fresh
// session after each change: the answers must be the same. The engine's
// own tests (search/cache_test.go) attack the cache in more ways.
func TestGrepCachedSession(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	files := map[string]string{"a/target.go": "package a\n// nothing here\n", "b/other.go": "package b\n// xyzzy plugh\n"}
	for i := range 10 {
		files[fmt.Sprintf("d%d/f%d.go", i%3, i)] = fmt.Sprintf("package d\n\nfunc F%d() {}\n", i)
	}
	testenv.WriteFiles(t, root, files)
	for p := range files {
		if err := os.Chtimes(filepath.Join(root, p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	ws := workspacetest.New(t, root)
	env := &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{SearchCache: true}), Memory: approval.NewMemory(""),
		Approver: approval.ApproverFunc(func(context.Context, approval.Request) (approval.Response, error) {
			return approval.Response{Decision: approval.Approve}, nil
		})}
	t.Cleanup(env.Session.Close)
	check := func(step string) {
		t.Helper()
		for _, q := range []string{`{"pattern":"xyzzy"}`, `{"pattern":"plugh|frobnicate","output_mode":"count"}`} {
			got := ftRunner().Run(context.Background(), env, Request{Name: "grep", Arguments: json.RawMessage(q)}, nil)
			want := RunTool(context.Background(), ws, "grep", json.RawMessage(q))
			if got.Status != StatusSuccess || got.Content != want.Content {
				t.Fatalf("%s, %s: cached session says\n%s\na fresh one\n%s", step, q, got.Content, want.Content)
			}
		}
	}
	check("first")
	// The first search starts the index's build in the background.
	for deadline := time.Now().Add(time.Minute); !env.Session.Search.Status().Ready && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := env.Session.Search.Len(); n != len(files) {
		t.Fatalf("the session's search index holds %d files, want %d", n, len(files))
	}
	check("unchanged")
	for _, call := range []struct{ name, args string }{
		{"read_file", `{"path":"d1/f1.go"}`},
		{"write_file", `{"path":"d1/f1.go","content":"package d\n// xyzzy\nfunc F11() {}\n"}`},
		{"edit_file", `{"path":"d1/f1.go","old_string":"xyzzy","new_string":"plugh"}`},
		{"write_file", `{"path":"e/tool.go","content":"package e\n// frobnicate xyzzy\n"}`},
		{"delete_file", `{"path":"b/other.go"}`},
	} {
		res := ftRunner().Run(context.Background(), env, Request{Name: call.name, Arguments: json.RawMessage(call.args)}, nil)
		if res.Status != StatusSuccess {
			t.Fatalf("%s %s: %s", call.name, call.args, res.Content)
		}
		check(call.name + " " + call.args)
	}
	ws.Changed(filepath.Join(root, "d1/f1.go")) // the cache follows what the workspace announces
	check("notified")
	ws.SetConfig(ws.Config()) // a reset: emptied and filled again
	check("reset")
}

// TestCappedTextCutsLikeTheWholeText: the bounded builder gives, for every
// bound, the text that building all of it and cutting it at the bound gave:
// the same whole lines kept, the same counts in the note.
func TestCappedTextCutsLikeTheWholeText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		pieces []string
	}{
		{"lines", []string{"a.go", ":", "1", ":", "func main() {", "\n", "a.go", "-", "2", "-", "}", "\n", "--\n", "b/c.go:10:x\n"}},
		{"newline in a path", []string{"we\nird", ":", "3", ":", "text", "\n", "z", ":", "4", ":", "more text", "\n"}},
		{"long line", []string{strings.Repeat("x", 40), "\n", "y\n", strings.Repeat("z", 30) + "\n"}},
		{"empty", nil},
	}
	for _, tt := range tests {
		whole := strings.Join(tt.pieces, "")
		for bound := 0; bound <= len(whole)+2; bound++ {
			want := whole
			if bound > 0 && len(whole) > bound {
				cut := strings.LastIndexByte(whole[:bound], '\n') + 1
				want = whole[:cut] + fmt.Sprintf("[content cut at %d of %d lines (limits.maxOutputBytes); every match is in structured; "+
					"narrow the pattern, path, glob or type, lower context, or use output_mode files_with_matches or count]\n",
					strings.Count(whole[:cut], "\n"), strings.Count(whole, "\n"))
			}
			c := cappedText{max: bound}
			for _, p := range tt.pieces {
				c.WriteString(p)
			}
			if got := c.String(); got != want {
				t.Errorf("%s, bound %d:\n got %q\nwant %q", tt.name, bound, got, want)
			}
			if c.size != len(whole) {
				t.Errorf("%s, bound %d: size %d, want %d", tt.name, bound, c.size, len(whole))
			}
			longest := 0
			for _, p := range tt.pieces {
				longest = max(longest, len(p))
			}
			if bound > 0 && c.b.Len() > bound+longest {
				t.Errorf("%s, bound %d: kept %d bytes, want at most the bound and one piece", tt.name, bound, c.b.Len())
			}
		}
	}
}
