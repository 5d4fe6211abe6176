package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/codeindex"
	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/tools"
	"github.com/agentls/agentls/workspace"
)

// TestMain gives the package's tests a home of their own: no user
// configuration read, no history or index copy written in the user's.
func TestMain(m *testing.M) { testenv.Main(m) }

// open starts a session of a fresh root holding files, with an approver
// that says yes.
func open(t *testing.T, files map[string]string, o Options) (*Session, string) {
	t.Helper()
	root := t.TempDir()
	testenv.WriteFiles(t, root, files)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	o.Folders = []workspace.Folder{{Path: root}}
	if o.Runner == nil {
		o.Runner = tools.NewRunner(tools.NewBuiltinRegistry(), nil)
	}
	if o.Approver == nil {
		o.Approver = approval.Fixed(approval.Approve, "")
	}
	s, errs, err := New(o)
	if err != nil || len(errs) > 0 {
		t.Fatalf("New: %v %v", err, errs)
	}
	t.Cleanup(s.Close)
	return s, root
}

func run(t *testing.T, s *Session, name, args string) *tools.Result {
	t.Helper()
	return s.Run(context.Background(), tools.Request{Name: name, Arguments: json.RawMessage(args)}, nil)
}

// TestConfigurationLayers: the files, then the front end's settings, then
// the editor's; an invalid layer is refused and the configuration in force
// stays; a changed configuration file is read again.
func TestConfigurationLayers(t *testing.T) {
	s, root := open(t, map[string]string{".agentls.json": `{"limits":{"readLines":7}}`},
		Options{Settings: json.RawMessage(`{"history":{"enabled":false}}`)})
	cfg := s.Workspace().Config()
	if cfg.Limits.ReadLines != 7 || cfg.History.Enabled {
		t.Fatalf("config = readLines %d, history %v; want the file's 7 and the settings' false", cfg.Limits.ReadLines, cfg.History.Enabled)
	}
	if err := s.SetSettings("test", json.RawMessage(`{"limits":{"readLines":"many"}}`)); err == nil {
		t.Fatal("an invalid settings layer was accepted")
	}
	if got := s.Workspace().Config().Limits.ReadLines; got != 7 {
		t.Fatalf("after an invalid layer, readLines = %d, want 7 still", got)
	}
	if err := s.SetSettings("test", json.RawMessage(`{"limits":{"readLines":9}}`)); err != nil {
		t.Fatal(err)
	}
	if got := s.Workspace().Config().Limits.ReadLines; got != 9 {
		t.Fatalf("settings: readLines = %d, want 9", got)
	}
	if err := s.SetSettings("test", nil); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, ".agentls.json")
	if err := os.WriteFile(file, []byte(`{"limits":{"readLines":11}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := s.FileChanged(file); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := s.Workspace().Config().Limits.ReadLines; got != 11 {
		t.Fatalf("after the file changed, readLines = %d, want 11", got)
	}
	if err := os.WriteFile(file, []byte(`{"limits":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if errs := s.FileChanged(file); len(errs) != 1 {
		t.Fatalf("a broken file gave errors %v, want one", errs)
	}
}

// TestServicesFollowTheTools: a file a tool writes reaches the search cache
// and the index through the session (no front end in between), and the
// front end still hears the event.
func TestServicesFollowTheTools(t *testing.T) {
	var events []tools.Event
	s, _ := open(t, map[string]string{"a.go": "package a\n\nfunc Old() {}\n"}, Options{
		SearchCache: true,
		Events:      tools.EventsFunc(func(e tools.Event) { events = append(events, e) }),
	})
	if res := run(t, s, "grep", `{"pattern":"New"}`); res.Status != tools.StatusSuccess || !strings.Contains(res.Content, "No matches") {
		t.Fatalf("grep before: %s %s", res.Status, res.Content)
	}
	if res := run(t, s, "symbols", `{"query":"Old"}`); res.Status != tools.StatusSuccess || !strings.Contains(res.Content, "Old") {
		t.Fatalf("symbols before: %s %s", res.Status, res.Content)
	}
	if res := run(t, s, "read_file", `{"path":"a.go"}`); res.Status != tools.StatusSuccess {
		t.Fatal(res.Content)
	}
	if res := run(t, s, "write_file", `{"path":"a.go","content":"package a\n\nfunc New() {}\n"}`); res.Status != tools.StatusSuccess {
		t.Fatal(res.Content)
	}
	if res := run(t, s, "grep", `{"pattern":"New"}`); res.Status != tools.StatusSuccess || !strings.Contains(res.Content, "a.go") {
		t.Fatalf("grep after the write (the cache must have dropped a.go): %s %s", res.Status, res.Content)
	}
	s.Index().Flush()
	if res := run(t, s, "symbols", `{"query":"New"}`); res.Status != tools.StatusSuccess || !strings.Contains(res.Content, "New") {
		t.Fatalf("symbols after the write: %s %s", res.Status, res.Content)
	}
	changed := false
	for _, e := range events {
		changed = changed || e.Kind == "fileChanged" && e.Path == "a.go"
	}
	if !changed {
		t.Fatalf("the front end did not hear fileChanged a.go: %+v", events)
	}
}

// TestRememberedAnswersPersist: with approval.persistAlways (a user
// setting), an "always" answer given in one session is in force in the next
// one of the same roots, whatever the front end (the call command used to
// forget it).
func TestRememberedAnswersPersist(t *testing.T) {
	user := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(user, []byte(`{"approval":{"persistAlways":true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, root := open(t, nil, Options{UserConfig: user})
	if err := s.Memory().Remember("write_file"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	next, _, err := New(Options{Folders: []workspace.Folder{{Path: root}}, UserConfig: user, Runner: s.Runner()})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if !next.Memory().Allowed("write_file") {
		t.Fatal("the remembered answer did not reach the next session")
	}
}

// TestCloseEndsShells: a background shell ends with the session, and the
// session refuses to start another.
func TestCloseEndsShells(t *testing.T) {
	s, _ := open(t, nil, Options{})
	mark := fmt.Sprintf("%d.%06d", 3000+os.Getpid()%1000, time.Now().Nanosecond()/1000)
	res := run(t, s, "shell_background", `{"command":"sleep `+mark+`"}`)
	if res.Status != tools.StatusSuccess {
		t.Fatalf("shell_background: %s", res.Content)
	}
	if !running(mark) {
		t.Fatal("the shell's process is not running (the check would prove nothing)")
	}
	s.Close()
	s.Close() // twice is harmless
	if running(mark) {
		t.Fatal("the background shell outlived its session")
	}
	if res := run(t, s, "shell_background", `{"command":"true"}`); res.Status == tools.StatusSuccess {
		t.Fatal("a closed session started a shell")
	}
}

// running reports whether a process whose command line holds mark runs.
func running(mark string) bool {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), mark) && !strings.Contains(string(b), "shell_background") {
			return true
		}
	}
	return false
}

// TestFolders: SetFolders replaces the roots and reads the new root's
// configuration.
func TestFolders(t *testing.T) {
	s, _ := open(t, nil, Options{})
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, ".agentls.json"), []byte(`{"limits":{"readLines":5}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	errs, err := s.SetFolders([]workspace.Folder{{Path: other}})
	if err != nil || len(errs) > 0 {
		t.Fatal(err, errs)
	}
	if got := s.Workspace().Config().Limits.ReadLines; got != 5 || s.Workspace().Root() != other {
		t.Fatalf("after SetFolders: root %s, readLines %d", s.Workspace().Root(), got)
	}
}

// TestResultCacheFollowsTheSession: a session answers a repeated read from
// its result cache, and drops the answer when the front end reports a file
// changed on disk (didSave, didChangeWatchedFiles) even when the stat did
// not change, and when a tool of the session writes.
func TestResultCacheFollowsTheSession(t *testing.T) {
	s, root := open(t, map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n"}, Options{})
	time.Sleep(2100 * time.Millisecond) // the cache vouches for a file whose ctime is 2 s old
	read := func(want string, cached bool) {
		t.Helper()
		res := run(t, s, "read_file", `{"path":"a.txt"}`)
		if res.Status != tools.StatusSuccess || !strings.Contains(res.Content, want) || res.Cached != cached {
			t.Fatalf("read_file: %s cached=%v %q; want %q cached=%v", res.Status, res.Cached, res.Content, want, cached)
		}
	}
	read("alpha", false)
	read("alpha", true)
	s.FileChanged(filepath.Join(root, "b.txt"))
	read("alpha", false)
	read("alpha", true)
	if res := run(t, s, "write_file", `{"path":"b.txt","content":"other\n"}`); res.Status != tools.StatusSuccess {
		t.Fatal(res.Content)
	}
	read("alpha", false)
}

// TestWatcherSeesEarlyConfigChange: a configuration file rewritten right
// after the session read it, before its watcher had the root in place
// (no event comes for it), is read again once the watch is in place.
func TestWatcherSeesEarlyConfigChange(t *testing.T) {
	for i := range 10 {
		s, root := open(t, map[string]string{".agentls.json": `{"limits":{"readLines":7}}`, "a/b.txt": "b\n"},
			Options{Watch: &DiskWatch{}})
		if err := os.WriteFile(filepath.Join(root, ".agentls.json"), []byte(`{"limits":{"readLines":11}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for s.Workspace().Config().Limits.ReadLines != 11 {
			if time.Now().After(deadline) {
				t.Fatalf("session %d: the rewritten configuration was never read (readLines %d)", i, s.Workspace().Config().Limits.ReadLines)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestCodeIndexFedBySearch: the code index of a session with a search
// cache takes its files from the search index's build (one walk, one read
// of each file) and holds what its own walk gives: no hidden file, nothing
// below vendor, testdata or node_modules, nothing ignored, nothing binary
// or over its size cap; a file over the search index's smaller cap is
// read all the same; and a source file the search walk leaves out
// (paths.sensitive) makes it walk the root itself, as it does without a
// search cache.
func TestCodeIndexFedBySearch(t *testing.T) {
	files := map[string]string{
		"a.go":                   "package a\n\nfunc SymA() {}\n",
		".hidden.go":             "package a\n\nfunc SymHidden() {}\n",
		"vendor/v/v.go":          "package v\n\nfunc SymVendor() {}\n",
		"sub/testdata/t.go":      "package t\n\nfunc SymTestdata() {}\n",
		"node_modules/m/m.js":    "function SymNode() {}\n",
		".ignore":                "ignored.go\n",
		"ignored.go":             "package a\n\nfunc SymIgnored() {}\n",
		"bin.go":                 "package a\n\nfunc SymBin() {}\n\x00",
		"big.go":                 "package a\n\nfunc SymBig() {}\n\n//" + strings.Repeat("x", 3<<20) + "\n",
		"mid.go":                 "package a\n\nfunc SymMid() {}\n\n//" + strings.Repeat("x", 1500<<10) + "\n",
		"sub/b.py":               "def SymPy():\n    pass\n",
		"sub/.hid/h.go":          "package h\n\nfunc SymHidDir() {}\n",
		"secret/s.go":            "package s\n\nfunc SymSecret() {}\n",
		"deep/er/still/deep.go":  "package d\n\nfunc SymDeep() {}\n",
		"deep/er/still/notes.md": "# SymHeading\n",
	}
	for _, tc := range []struct {
		name   string
		config string
		fed    bool // the build took the search index's files
	}{
		{"defaults", `{}`, true},
		{"search cap below the index's", `{"limits":{"maxFileBytes":1048576}}`, true},
		{"sensitive source", `{"paths":{"sensitive":["secret/**"]}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CACHE_HOME", t.TempDir())
			fs := map[string]string{".agentls.json": tc.config}
			for p, c := range files {
				fs[p] = c
			}
			s, _ := open(t, fs, Options{SearchCache: true})
			ix := s.Index()
			ix.Start(nil)
			s.WarmUp()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if !ix.Wait(ctx) {
				t.Fatal("the code index's build did not end")
			}
			if got := ix.Status().Fed; got != map[bool]int{true: 1}[tc.fed] {
				t.Errorf("Status().Fed = %d, want fed %v", got, tc.fed)
			}
			alone := codeindex.New(s.Workspace())
			defer alone.Close()
			alone.Start(nil)
			if !alone.Wait(ctx) {
				t.Fatal("the build without a feed did not end")
			}
			names := func(ix *codeindex.Index) []string {
				syms, partial := ix.Search("Sym", 1000)
				if partial {
					t.Error("partial answer")
				}
				var out []string
				for _, sym := range syms {
					out = append(out, sym.Name)
				}
				slices.Sort(out)
				return out
			}
			want := names(alone)
			if got := names(ix); !slices.Equal(got, want) {
				t.Errorf("fed index holds %v, its own walk %v", got, want)
			}
			if !slices.Contains(want, "SymMid") || !slices.Contains(want, "SymDeep") || slices.Contains(want, "SymVendor") {
				t.Errorf("own walk %v: want SymMid and SymDeep, not SymVendor", want)
			}
		})
	}
}
