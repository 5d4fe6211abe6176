package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/sandbox"
	"github.com/agentls/agentls/workspace"
	"github.com/agentls/agentls/workspace/workspacetest"
)

// Scenario tests: each testdata/scenarios/NAME.txtar is a specification of
// what one or more tool calls do, run against the real runner and the
// built-in registry in a fresh workspace. Its sections, in order:
//
//	(comment)            what the scenario shows, in words
//	-- needs --          what the scenario cannot run without, one word a
//	                     line: bwrap (a working bubblewrap sandbox), git
//	                     (the git program); when one is missing the
//	                     scenario is skipped with a message, never passed
//	                     (a git section needs git without saying so)
//	-- config --         the person's user configuration (JSON): the
//	                     trusted layer, written to a file outside the
//	                     workspace and loaded with the workspace's own
//	                     .agentls.json (a files/ section) the way
//	                     `agentls call` loads them
//	-- config-errors --  expected: the errors of loading the configuration,
//	                     one a line (no section: none)
//	-- files/PATH --     a file of the workspace before the calls; PATH/
//	                     (a name ending in a slash) is an empty folder
//	-- link/PATH --      a symbolic link of the workspace; its text is
//	                     the link's target
//	-- git --            git commands run in the workspace root before the
//	                     calls, one a line: git's arguments separated by
//	                     spaces, "double quotes" around one with spaces
//	                     (no shell). They run with a fixed identity and
//	                     date (scenarioGitEnv) and no user or system git
//	                     configuration, so their commits have stable
//	                     hashes. $REMOTE is a folder outside the workspace
//	                     (for a bare repository to push to)
//	-- worktree/PATH --  a file written after the git section: a change the
//	                     repository has not committed
//	-- http/PATH --      a file served at /PATH by an HTTP server on
//	                     loopback, whose URL (http://127.0.0.1:PORT)
//	                     replaces $HTTP in the config, the calls and the
//	                     approve lines; its type follows PATH's extension
//	-- editor --         an editor is attached, which applies the edits
//	                     (and saves them); its words: confirms (its own
//	                     preview asks the person: no approval request),
//	                     declines (it answers applied: false)
//	-- call --           one call: the tool's name, a space, its JSON
//	                     arguments (on one or more lines)
//	-- approve --        the person's answers, one a line, in the order
//	                     asked: yes, always, no, no: MESSAGE, edit JSON
//	                     (approve with these arguments), or none (the call
//	                     must not ask). No section means none.
//	-- approval --       expected: what the person was asked, one block a
//	                     question (tool, risk, options, warning, diff)
//	-- edits --          expected: the workspace edits sent to the editor
//	-- result --         expected: the ToolResult, as indented JSON
//	-- after/PATH --     expected: a file (or empty folder) created or
//	                     changed by the calls
//	-- deleted/PATH --   expected: a file (or empty folder) the calls removed
//
// call, approve, approval, edits and result repeat once per call, in
// order. Every file and empty folder not named by after/ or deleted/ must
// be as before (the root's .git folder is not compared: the git calls'
// results say what they did to the repository).
//
// What differs from run to run is named, never dropped
// (scenarioNormaliser.apply), in the approval, the edits, the result and
// the config errors:
//   - the call id reads "CALL_ID", durationMs and a process's duration_ms
//     0, a process id (a pid field, or "pid N" in words) $PID, a cgroup
//     made for one run $CGROUP;
//   - the workspace's absolute path reads $ROOT, the HTTP server's URL
//     $HTTP and its host:port $HTTP_HOST, the $REMOTE folder $REMOTE;
//   - the clock: an instant within the call's own time (from just before
//     it started to just after it ended, to the second) reads $NOW in RFC
//     3339, $HTTPDATE in HTTP's form (a Date header), $UNIX and $UNIX_MS
//     as Unix time, $FULLDATE (Monday, January 2, 2006 15:04:05 MST), and
//     as a whole JSON string its parts $DATE (2006-01-02), $TIME
//     (15:04:05) and $WEEKDAY, in the zone the call's timezone argument
//     names, or without one in UTC or the local zone; any other time stays
//     as it is;
//   - a file's modification time (an "mtime" field) reads $MTIME when it
//     is RFC 3339 in UTC and lies between the scenario's start (less a
//     second: file systems keep coarse clocks) and the normalising; any
//     other value stays as it is, and so differs from the golden;
//   - the commits the calls make (their dates differ, so their hashes
//     do): the hash of each commit that was not there after the git
//     section, in full or abbreviated to 7 or more digits, reads $COMMIT1,
//     $COMMIT2, … in the order they were first seen; the setup's own
//     commits keep their (stable) hashes.
//
// go test ./tools -run TestScenarios -update rewrites the expected sections
// (config-errors, approval, edits, result, after, deleted) from what the
// calls did; read the diff before you commit it: a golden file that records
// a bug is a bug.

// scenarioRunner is the runner every scenario uses: the real pipeline over
// the built-in registry.
var scenarioRunner = sync.OnceValue(func() *Runner { return NewRunner(NewBuiltinRegistry(), nil) })

// scenarioStep is one call of a scenario and what it expects.
type scenarioStep struct {
	tool     string
	args     json.RawMessage
	answers  []string // the approve lines; nil: must not ask
	approval string   // expected
	edits    string   // expected
	result   string   // expected
	hasApp   bool     // the file had an approval section
}

// scenario is a parsed scenario file.
type scenario struct {
	comment []byte
	files   []txtar.File // files/ sections, names without the prefix
	links   []txtar.File // link/ sections, names without the prefix
	editor  []string     // the editor section's words; nil: no editor
	hasEd   bool
	steps   []*scenarioStep
	after   map[string]string // after/ sections
	deleted map[string]bool   // deleted/ sections

	needs      []string     // the needs section's words
	config     string       // the config section ("": none)
	configErrs string       // expected config-errors
	hasCfgErrs bool         // the file had a config-errors section
	git        [][]string   // the git section's commands
	gitText    string       // the git section as written
	http       []txtar.File // http/ sections, names without the prefix
	worktree   []txtar.File // worktree/ sections, names without the prefix
}

func parseScenario(ar *txtar.Archive) (*scenario, error) {
	sc := &scenario{comment: ar.Comment, after: map[string]string{}, deleted: map[string]bool{}}
	var cur *scenarioStep
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, "files/"):
			sc.files = append(sc.files, txtar.File{Name: strings.TrimPrefix(f.Name, "files/"), Data: f.Data})
		case strings.HasPrefix(f.Name, "link/"):
			sc.links = append(sc.links, txtar.File{Name: strings.TrimPrefix(f.Name, "link/"), Data: f.Data})
		case strings.HasPrefix(f.Name, "after/"):
			sc.after[strings.TrimPrefix(f.Name, "after/")] = string(f.Data)
		case strings.HasPrefix(f.Name, "deleted/"):
			sc.deleted[strings.TrimPrefix(f.Name, "deleted/")] = true
		case f.Name == "call":
			line := strings.TrimSpace(string(f.Data))
			name, args, _ := strings.Cut(line, " ")
			args = strings.TrimSpace(args)
			if args == "" {
				args = "{}"
			}
			if !json.Valid([]byte(args)) {
				return nil, fmt.Errorf("call %s: arguments are not JSON: %s", name, args)
			}
			cur = &scenarioStep{tool: name, args: json.RawMessage(args)}
			sc.steps = append(sc.steps, cur)
		case f.Name == "needs":
			sc.needs = strings.Fields(string(f.Data))
		case f.Name == "config":
			sc.config = string(f.Data)
		case f.Name == "config-errors":
			sc.configErrs, sc.hasCfgErrs = string(f.Data), true
		case f.Name == "git":
			sc.gitText = string(f.Data)
			for _, l := range strings.Split(string(f.Data), "\n") {
				if l = strings.TrimSpace(l); l == "" {
					continue
				}
				argv, err := splitGitLine(l)
				if err != nil {
					return nil, err
				}
				sc.git = append(sc.git, argv)
			}
		case strings.HasPrefix(f.Name, "worktree/"):
			sc.worktree = append(sc.worktree, txtar.File{Name: strings.TrimPrefix(f.Name, "worktree/"), Data: f.Data})
		case strings.HasPrefix(f.Name, "http/"):
			sc.http = append(sc.http, txtar.File{Name: strings.TrimPrefix(f.Name, "http/"), Data: f.Data})
		case f.Name == "editor":
			sc.hasEd, sc.editor = true, strings.Fields(string(f.Data))
		case f.Name == "approve" || f.Name == "approval" || f.Name == "edits" || f.Name == "result":
			if cur == nil {
				return nil, fmt.Errorf("section %s before any call", f.Name)
			}
			switch f.Name {
			case "approve":
				for _, l := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
					if l = strings.TrimSpace(l); l != "" && l != "none" {
						cur.answers = append(cur.answers, l)
					}
				}
			case "approval":
				cur.approval, cur.hasApp = string(f.Data), true
			case "edits":
				cur.edits = string(f.Data)
			case "result":
				cur.result = string(f.Data)
			}
		default:
			return nil, fmt.Errorf("unknown section %q", f.Name)
		}
	}
	if len(sc.steps) == 0 {
		return nil, fmt.Errorf("no call")
	}
	return sc, nil
}

// scenarioAnswer turns one approve line into the person's response.
func scenarioAnswer(line string) (approval.Response, error) {
	word, rest, _ := strings.Cut(line, " ")
	switch {
	case line == "yes":
		return approval.Response{Decision: approval.Approve}, nil
	case line == "always":
		return approval.Response{Decision: approval.Always}, nil
	case line == "no":
		return approval.Response{Decision: approval.Reject}, nil
	case strings.HasPrefix(line, "no:"):
		return approval.Response{Decision: approval.Reject, Message: strings.TrimSpace(strings.TrimPrefix(line, "no:"))}, nil
	case word == "edit" && json.Valid([]byte(rest)):
		return approval.Response{Decision: approval.Approve, ModifiedArguments: json.RawMessage(rest)}, nil
	}
	return approval.Response{}, fmt.Errorf("approve line %q: want yes, always, no, no: MESSAGE, edit JSON or none", line)
}

// scenarioApprover answers one call's questions from its approve lines and
// renders what it was asked.
type scenarioApprover struct {
	t       testing.TB
	mu      sync.Mutex
	answers []string
	asked   []string
}

func (a *scenarioApprover) Ask(_ context.Context, req approval.Request) (approval.Response, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, a.render(req))
	n := len(a.asked)
	if n > len(a.answers) {
		a.t.Errorf("question %d asked, but the scenario answers %d (approve: none means the call must not ask)", n, len(a.answers))
		return approval.Response{Decision: approval.Reject, Message: "the scenario gives no answer"}, nil
	}
	resp, err := scenarioAnswer(a.answers[n-1])
	if err != nil {
		a.t.Error(err)
		return approval.Response{Decision: approval.Reject, Message: "bad answer"}, nil
	}
	return resp, nil
}

// render writes a question the way a person would read it (the test
// normalises it).
func (a *scenarioApprover) render(req approval.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tool: %s\nrisk: %s\noptions: %s\n", req.Tool, req.Risk, strings.Join(req.Options, " "))
	if req.AlwaysLabel != "" {
		fmt.Fprintf(&b, "always: %s\n", req.AlwaysLabel)
	}
	if req.Warning != "" {
		fmt.Fprintf(&b, "warning: %s\n", req.Warning)
	}
	if req.Cwd != "" {
		fmt.Fprintf(&b, "cwd: %s\n", req.Cwd)
	}
	fmt.Fprintf(&b, "arguments: %s\n", req.Arguments)
	if p := req.Preview; p != nil {
		for _, f := range p.Files {
			fmt.Fprintf(&b, "file: %s %s", f.Operation, f.Path)
			if f.NewPath != "" {
				fmt.Fprintf(&b, " → %s", f.NewPath)
			}
			b.WriteString("\n")
		}
		if p.UnifiedDiff != "" {
			b.WriteString("diff:\n" + p.UnifiedDiff)
			if !strings.HasSuffix(p.UnifiedDiff, "\n") {
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// normaliseRoot writes $ROOT for the workspace's absolute path.
func normaliseRoot(s string, roots []string) string {
	for _, r := range roots {
		s = strings.ReplaceAll(s, r, "$ROOT")
	}
	return s
}

// renderResult is the result as the scenario states it (the test
// normalises it).
func renderResult(res *Result) string {
	r := *res
	r.CallID, r.DurationMs = "CALL_ID", 0
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Sprintf("cannot encode: %v\n", err)
	}
	return buf.String()
}

// scenarioTree returns the files (path → content) and empty folders (path/ →
// "") below root, but for the root's .git folder.
func scenarioTree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case p == root:
		case d.IsDir() && rel == ".git":
			return filepath.SkipDir
		case d.IsDir():
			ents, err := os.ReadDir(p)
			if err != nil {
				return err
			}
			if len(ents) == 0 {
				out[rel+"/"] = ""
			}
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "symlink → " + target
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestScenarios runs every testdata/scenarios/*.txtar (see the top of this
// file for the format).
func TestScenarios(t *testing.T) {
	for _, file := range scenarioFiles(t) {
		t.Run(file.Name, func(t *testing.T) {
			t.Parallel()
			runScenario(t, file)
		})
	}
}

// scenarioFiles parses every testdata/scenarios/*.txtar.
func scenarioFiles(t *testing.T) []testenv.Txtar {
	t.Helper()
	return testenv.Txtars(t, "testdata/scenarios/*.txtar")
}

// loadScenario parses one scenario file.
func loadScenario(t *testing.T, file testenv.Txtar) *scenario {
	t.Helper()
	sc, err := parseScenario(file.Archive)
	if err != nil {
		t.Fatalf("%s: %v", file.Path, err)
	}
	return sc
}

func runScenario(t *testing.T, file testenv.Txtar) {
	sc := loadScenario(t, file)
	needs := sc.needs
	if len(sc.git) > 0 && !slices.Contains(needs, "git") {
		needs = append(slices.Clone(needs), "git") // a git section needs git
	}
	for _, w := range needs {
		switch w {
		case "bwrap":
			if _, err := sandbox.Find(); err != nil {
				t.Skipf("needs a working bwrap, and there is none here: %v", err)
			}
		case "git":
			if _, err := exec.LookPath("git"); err != nil {
				t.Skipf("needs git, and there is none here: %v", err)
			}
		default:
			t.Fatalf("needs: unknown word %q (bwrap, git)", w)
		}
	}
	root, outside := t.TempDir(), t.TempDir()
	n := &scenarioNormaliser{remote: filepath.Join(outside, "remote"), setup: time.Now()}
	if len(sc.http) > 0 {
		srv := httptest.NewServer(scenarioHTTP(sc.http))
		t.Cleanup(srv.Close)
		n.http = srv.URL
	}
	for _, f := range sc.files {
		full := filepath.Join(root, filepath.FromSlash(f.Name))
		if strings.HasSuffix(f.Name, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		testenv.WriteFiles(t, root, map[string]string{f.Name: string(f.Data)})
	}
	for _, l := range sc.links {
		full := filepath.Join(root, filepath.FromSlash(l.Name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(strings.TrimSpace(string(l.Data)), full); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range sc.git {
		argv := make([]string, len(line))
		for i, a := range line {
			argv[i] = strings.ReplaceAll(a, "$REMOTE", n.remote)
		}
		cmd := exec.Command("git", argv...)
		cmd.Dir, cmd.Env = root, scenarioGitEnv(outside)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	for _, f := range sc.worktree {
		testenv.WriteFiles(t, root, map[string]string{f.Name: string(f.Data)})
	}
	n.roots = []string{root}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		n.roots = append([]string{real}, n.roots...)
	}
	if len(sc.git) > 0 { // only a git section makes a repository
		n.gitDir, n.gitEnv = root, scenarioGitEnv(outside)
		n.baseline = n.commits()
	}
	before := scenarioTree(t, root)
	ws := workspacetest.New(t, root)
	// The user configuration is always a file of the scenario's own (absent
	// without a config section), never the user's running the tests.
	stack := workspace.ConfigStack{UserFile: filepath.Join(outside, "config.json")}
	if sc.config != "" {
		if err := os.WriteFile(stack.UserFile, []byte(n.expand(sc.config)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, cfgErrs := stack.LoadFiles(ws.Roots())
	ws.SetConfig(cfg)
	var errLines []string
	for _, e := range cfgErrs {
		errLines = append(errLines, n.apply(e.Error(), time.Time{}, time.Time{})+"\n")
	}
	gotCfgErrs := strings.Join(errLines, "")
	if *update {
		sc.configErrs, sc.hasCfgErrs = gotCfgErrs, gotCfgErrs != ""
	} else if gotCfgErrs != sc.configErrs {
		t.Errorf("loading the configuration: errors differ\n--- got\n%s--- want\n%s", gotCfgErrs, sc.configErrs)
	}
	env := &Env{Workspace: ws, Session: NewSession(ws, SessionOptions{}), Memory: approval.NewMemory("")}
	t.Cleanup(func() { env.Session.Close() })
	var ed *scenarioEditor
	if sc.hasEd {
		ed = &scenarioEditor{ws: ws, roots: n.roots}
		for _, w := range sc.editor {
			switch w {
			case "confirms":
				ed.confirms = true
			case "declines":
				ed.declines = true
			default:
				t.Fatalf("editor: unknown word %q (confirms, declines)", w)
			}
		}
		env.Editor = ed
	}

	for i, st := range sc.steps {
		answers := make([]string, len(st.answers))
		for j, a := range st.answers {
			answers[j] = n.expand(a)
		}
		ap := &scenarioApprover{t: t, answers: answers}
		env.Approver = ap
		args := json.RawMessage(n.expand(string(st.args)))
		n.zone = callZone(args)
		start := time.Now()
		res := scenarioRunner().Run(context.Background(), env, Request{Name: st.tool, Arguments: args}, nil)
		end := time.Now()
		if k := len(ap.asked); k < len(st.answers) {
			t.Errorf("call %d (%s): asked %d question(s), the scenario answers %d", i+1, st.tool, k, len(st.answers))
		}
		n.see()
		gotApproval := n.apply(strings.Join(ap.asked, "\n"), start, end)
		gotEdits := n.apply(ed.take(), start, end)
		gotResult := n.apply(renderResult(res), start, end)
		if *update {
			st.approval, st.hasApp, st.edits, st.result = gotApproval, gotApproval != "", gotEdits, gotResult
			continue
		}
		if gotApproval != st.approval {
			t.Errorf("call %d (%s): the approval asked differs\n--- got\n%s--- want\n%s", i+1, st.tool, gotApproval, st.approval)
		}
		if gotEdits != st.edits {
			t.Errorf("call %d (%s): the edits sent to the editor differ\n--- got\n%s--- want\n%s", i+1, st.tool, gotEdits, st.edits)
		}
		if gotResult != st.result {
			t.Errorf("call %d (%s): the result differs\n--- got\n%s--- want\n%s", i+1, st.tool, gotResult, st.result)
		}
	}

	after := scenarioTree(t, root)
	changed, deleted := map[string]string{}, map[string]bool{}
	for p, c := range after {
		if old, ok := before[p]; !ok || old != c {
			changed[p] = c
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			deleted[p] = true
		}
	}
	if *update {
		sc.after, sc.deleted = changed, deleted
		if err := os.WriteFile(file.Path, formatScenario(sc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for _, p := range slices.Sorted(maps.Keys(changed)) {
		want, ok := sc.after[p]
		switch {
		case !ok:
			t.Errorf("%s changed but the scenario has no after/%s:\n%s", p, p, changed[p])
		case want != changed[p]:
			t.Errorf("%s after the calls:\n--- got\n%s--- want\n%s", p, changed[p], want)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(sc.after)) {
		if _, ok := changed[p]; !ok {
			t.Errorf("after/%s: the calls did not create or change it (now: %q)", p, after[p])
		}
	}
	for p := range deleted {
		if !sc.deleted[p] {
			t.Errorf("%s was removed but the scenario has no deleted/%s", p, p)
		}
	}
	for p := range sc.deleted {
		if !deleted[p] {
			t.Errorf("deleted/%s: it is still there", p)
		}
	}
}

// formatScenario writes sc back in the order of the format.
func formatScenario(sc *scenario) []byte {
	ar := &txtar.Archive{Comment: sc.comment}
	add := func(name, data string) {
		if data != "" && !strings.HasSuffix(data, "\n") {
			data += "\n"
		}
		ar.Files = append(ar.Files, txtar.File{Name: name, Data: []byte(data)})
	}
	addAll := func(dir string, files []txtar.File) {
		for _, f := range files {
			add(dir+f.Name, string(f.Data))
		}
	}
	if len(sc.needs) > 0 {
		add("needs", strings.Join(sc.needs, "\n"))
	}
	if sc.config != "" {
		add("config", sc.config)
	}
	if sc.hasCfgErrs {
		add("config-errors", sc.configErrs)
	}
	addAll("files/", sc.files)
	addAll("link/", sc.links)
	if sc.gitText != "" {
		add("git", sc.gitText)
	}
	addAll("worktree/", sc.worktree)
	addAll("http/", sc.http)
	if sc.hasEd {
		add("editor", strings.Join(sc.editor, "\n"))
	}
	for _, st := range sc.steps {
		add("call", st.tool+" "+string(st.args))
		if len(st.answers) > 0 {
			add("approve", strings.Join(st.answers, "\n"))
		} else {
			add("approve", "none")
		}
		if st.hasApp {
			add("approval", st.approval)
		}
		if st.edits != "" {
			add("edits", st.edits)
		}
		add("result", st.result)
	}
	for _, p := range slices.Sorted(maps.Keys(sc.after)) {
		add("after/"+p, sc.after[p])
	}
	for _, p := range slices.Sorted(maps.Keys(sc.deleted)) {
		add("deleted/"+p, "")
	}
	return txtar.Format(ar)
}
