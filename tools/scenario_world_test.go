// The world a tool scenario runs in (scenario_test.go): the editor that
// applies its edits, its git and HTTP servers, and the normaliser that
// makes its results independent of the run (roots, commits, clocks).

package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/workspace"
	"golang.org/x/tools/txtar"
)

// scenarioEditor stands for the person's editor: the real one is an LSP
// client (workspace/applyEdit), exercised by the lsp and editor suites; here
// it records each edit sent to it and applies it the way an editor that
// saves would, by writing the files (with the server's writer), unless it
// declines.
type scenarioEditor struct {
	ws       *workspace.Workspace
	roots    []string
	confirms bool // its own preview asks the person
	declines bool // it answers applied: false

	mu   sync.Mutex
	sent []string
}

func (e *scenarioEditor) CanApply(p *workspace.Plan) bool {
	for _, ch := range p.Changes {
		if ch.Binary {
			return false
		}
	}
	return true
}

func (e *scenarioEditor) Split(p *workspace.Plan) (editor, server *workspace.Plan) {
	editor, server = &workspace.Plan{}, &workspace.Plan{}
	for _, ch := range p.Changes {
		if ch.Binary {
			server.Changes = append(server.Changes, ch)
		} else {
			editor.Changes = append(editor.Changes, ch)
		}
	}
	return editor, server
}

func (e *scenarioEditor) ConfirmsEdits() bool   { return e.confirms }
func (e *scenarioEditor) SavesAfterApply() bool { return true }

func (e *scenarioEditor) Apply(_ context.Context, p *workspace.Plan, label string, confirm bool) (bool, string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "label: %s\nconfirm: %v\n", label, confirm)
	for _, ch := range p.Changes {
		fmt.Fprintf(&b, "%s %s", ch.Op, e.ws.Rel(ch.Path))
		if ch.NewPath != "" {
			fmt.Fprintf(&b, " → %s", e.ws.Rel(ch.NewPath))
		}
		if ch.Overwrite {
			b.WriteString(" (overwrite)")
		}
		b.WriteString("\n")
	}
	b.WriteString(p.UnifiedDiff(e.ws.Rel))
	e.mu.Lock()
	e.sent = append(e.sent, normaliseRoot(b.String(), e.roots))
	e.mu.Unlock()
	if e.declines {
		return false, "declined in the scenario's editor", nil
	}
	if err := writePlan(e.ws, p); err != nil {
		return false, "", err
	}
	return true, "", nil
}

// take returns the edits sent since the last take, one block each; "" for
// none or no editor.
func (e *scenarioEditor) take() string {
	if e == nil {
		return ""
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := strings.Join(e.sent, "\n")
	e.sent = nil
	return s
}

// splitGitLine splits one line of the git section into git's arguments:
// words separated by spaces, "double quotes" around a word with spaces.
func splitGitLine(line string) ([]string, error) {
	var argv []string
	var word strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				argv = append(argv, word.String())
				word.Reset()
				inWord = false
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("git: unclosed quote in %q", line)
	}
	if inWord {
		argv = append(argv, word.String())
	}
	return argv, nil
}

// scenarioGitEnv is the environment of the git section's commands: a fixed
// identity and date, and no user or system configuration (home is a folder
// outside the workspace, beside it).
func scenarioGitEnv(home string) []string {
	env := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(home), // the workspace is home's sibling: look no higher
		"GIT_AUTHOR_NAME=Ada Scenario", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_AUTHOR_DATE=2005-04-07T22:13:13Z",
		"GIT_COMMITTER_NAME=Ada Scenario", "GIT_COMMITTER_EMAIL=ada@example.com", "GIT_COMMITTER_DATE=2005-04-07T22:13:13Z",
		"LC_ALL=C", "TZ=UTC"}
	if p, ok := os.LookupEnv("PATH"); ok {
		env = append(env, "PATH="+p)
	}
	return env
}

// scenarioHTTP serves the http/ sections, each at /PATH with the type its
// extension gives (text/plain when none); anything else is 404.
func scenarioHTTP(files []txtar.File) http.Handler {
	mux := http.NewServeMux()
	for _, f := range files {
		data := f.Data
		typ := mime.TypeByExtension(path.Ext(f.Name))
		if typ == "" {
			typ = "text/plain; charset=utf-8"
		}
		mux.HandleFunc("/"+f.Name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", typ)
			_, _ = w.Write(data)
		})
	}
	return mux
}

// scenarioNormaliser writes the unstable parts of what a scenario sees as
// names (see the top of this file).
type scenarioNormaliser struct {
	roots  []string  // the workspace root as resolved and as given
	http   string    // the HTTP server's URL; "" when none
	remote string    // the $REMOTE folder
	setup  time.Time // when the scenario began to make its files

	gitDir   string
	gitEnv   []string
	baseline map[string]bool // the commits after the git section
	made     []string        // the commits the calls made, first seen first
	zone     *time.Location  // the zone the current call names; nil: none
	order    []string        // scratch: the commits as commits listed them
}

// expand writes the values for the names a scenario may use in its config,
// calls and answers: $HTTP and $REMOTE.
func (n *scenarioNormaliser) expand(s string) string {
	if n.http != "" {
		s = strings.ReplaceAll(s, "$HTTP", n.http)
	}
	return strings.ReplaceAll(s, "$REMOTE", n.remote)
}

// commits lists every commit reachable in the workspace repository and the
// $REMOTE one, oldest first (nil when there is none).
func (n *scenarioNormaliser) commits() map[string]bool {
	var out map[string]bool
	for _, dir := range []string{n.gitDir, n.remote} {
		cmd := exec.Command("git", "rev-list", "--all", "--reflog", "--reverse")
		cmd.Dir, cmd.Env = dir, n.gitEnv
		b, err := cmd.Output()
		if err != nil {
			continue // not a repository
		}
		if out == nil {
			out = map[string]bool{}
		}
		for _, h := range strings.Fields(string(b)) {
			if !out[h] {
				out[h] = true
				n.order = append(n.order, h)
			}
		}
	}
	return out
}

// see names the commits made since the git section.
func (n *scenarioNormaliser) see() {
	if n.baseline == nil {
		return
	}
	n.order = nil
	n.commits()
	for _, h := range n.order {
		if !n.baseline[h] && !slices.Contains(n.made, h) {
			n.made = append(n.made, h)
		}
	}
}

// hexWord is a candidate abbreviated or full object id.
var hexWord = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)

// apply normalises s, the rendering of a call that ran from start to end
// (zero times: no clock to normalise).
func (n *scenarioNormaliser) apply(s string, start, end time.Time) string {
	if s == "" {
		return s
	}
	for _, r := range n.roots {
		s = strings.ReplaceAll(s, r, "$ROOT")
	}
	if n.http != "" {
		s = strings.ReplaceAll(s, n.http, "$HTTP")
		s = strings.ReplaceAll(s, strings.TrimPrefix(n.http, "http://"), "$HTTP_HOST")
	}
	s = strings.ReplaceAll(s, n.remote, "$REMOTE")
	if len(n.made) > 0 {
		s = hexWord.ReplaceAllStringFunc(s, func(w string) string {
			for i, h := range n.made {
				if strings.HasPrefix(h, w) {
					return fmt.Sprintf("$COMMIT%d", i+1)
				}
			}
			return w
		})
	}
	if !start.IsZero() {
		s = normaliseClock(s, start, end, n.zone)
	}
	s = n.mtimes(s)
	s = durationField.ReplaceAllString(s, `"duration_ms": 0`)
	s = cgroupPath.ReplaceAllString(s, "$$CGROUP")
	return pidWord.ReplaceAllString(s, `${1}$$PID`)
}

// mtimeField is a file's modification time in a result.
var mtimeField = regexp.MustCompile(`"mtime": "([^"]*)"`)

// mtimes names the modification times in s that are what they must be:
// RFC 3339 in UTC, from the scenario's start (a second earlier: a file
// system's clock is coarse) to now. Any other stays, to differ from the
// golden.
func (n *scenarioNormaliser) mtimes(s string) string {
	from, to := n.setup.Add(-time.Second), time.Now()
	return mtimeField.ReplaceAllStringFunc(s, func(f string) string {
		v := mtimeField.FindStringSubmatch(f)[1]
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || !strings.HasSuffix(v, "Z") || t.Before(from) || t.After(to) {
			return f
		}
		return `"mtime": "$MTIME"`
	})
}

// durationField is a process's duration, which reads 0 (like durationMs).
var durationField = regexp.MustCompile(`"duration_ms": [0-9]+`)

// cgroupPath is a cgroup made for one run (its name holds the server's pid
// and a counter), which reads $CGROUP.
var cgroupPath = regexp.MustCompile(`/sys/fs/cgroup/[^ ,"]*agentls-[0-9-]+`)

// pidWord is a process id, as a JSON field or in words, which reads $PID.
var pidWord = regexp.MustCompile(`("pid": |\bpid )[0-9]+`)

// unixMs is a candidate Unix time in milliseconds.
var unixMs = regexp.MustCompile(`\b1[0-9]{12}\b`)

// callZone is the time zone a call's timezone argument names, or nil.
func callZone(args json.RawMessage) *time.Location {
	var a struct {
		Timezone string `json:"timezone"`
	}
	if json.Unmarshal(args, &a) != nil || a.Timezone == "" {
		return nil
	}
	loc, err := time.LoadLocation(a.Timezone)
	if err != nil {
		return nil
	}
	return loc
}

// normaliseClock names the instants from start to end (to the second) in
// s, written in zone, or when it is nil in UTC or the local zone.
func normaliseClock(s string, start, end time.Time, zone *time.Location) string {
	from, to := start.Truncate(time.Second), end.Truncate(time.Second)
	for sec := from; !sec.After(to); sec = sec.Add(time.Second) {
		ts := []time.Time{sec.UTC(), sec.Local()}
		if zone != nil {
			ts = []time.Time{sec.In(zone)} // only there: the time must be told in it
		}
		for _, t := range ts {
			s = strings.ReplaceAll(s, t.Format("Monday, January 2, 2006 15:04:05 MST"), "$FULLDATE")
			s = strings.ReplaceAll(s, t.Format(time.RFC3339), "$NOW")
			s = strings.ReplaceAll(s, t.Format(http.TimeFormat), "$HTTPDATE")
			s = strings.ReplaceAll(s, `"`+t.Format("2006-01-02")+`"`, `"$DATE"`)
			s = strings.ReplaceAll(s, `"`+t.Format("15:04:05")+`"`, `"$TIME"`)
			s = strings.ReplaceAll(s, `"`+t.Weekday().String()+`"`, `"$WEEKDAY"`)
		}
		s = regexp.MustCompile(`\b`+strconv.FormatInt(sec.Unix(), 10)+`\b`).ReplaceAllString(s, "$$UNIX")
	}
	lo, hi := start.UnixMilli(), end.UnixMilli()
	return unixMs.ReplaceAllStringFunc(s, func(w string) string {
		if v, err := strconv.ParseInt(w, 10, 64); err == nil && v >= lo && v <= hi {
			return "$UNIX_MS"
		}
		return w
	})
}
