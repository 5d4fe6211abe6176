package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentls/agentls/internal/schema"
	"github.com/agentls/agentls/workspace"
)

// gitGlobal are the options every git command starts with: no pager, no
// quoting of non-ASCII paths, pathspecs taken literally (a path with * or a
// leading : is a file name, not a pattern or magic), no fsmonitor hook (a
// repository's config could name any program there, and git_status runs
// without asking), no colour and no ext:: transport.
var gitGlobal = []string{
	"--no-pager", "--literal-pathspecs",
	"-c", "core.quotepath=off",
	"-c", "core.fsmonitor=false",
	"-c", "color.ui=false",
	"-c", "protocol.ext.allow=never",
}

// gitMaxOutput caps what is read from one git command's stdout; gitMaxStderr
// its stderr.
const (
	gitMaxOutput = 64 << 20
	gitMaxStderr = 64 << 10
)

// Repo is the repository a git tool call works in: the workspace's own
// repository of the root that holds the call's path (env.go), always
// named explicitly. A call nobody approved runs git automatically: with
// every program that configuration names turned off (safe). A Repo belongs
// to one call: it is not safe for concurrent use.
type Repo struct {
	ctx    context.Context
	ws     *workspace.Workspace
	base   []string // the environment before git's own settings
	gitDir string   // the repository's git directory
	top    string   // the repository's top-level folder
	roots  []string
	// safe is set when no person approved the call (or while it is being
	// assessed): overrides then turn off every program key.
	safe      bool
	overrides [][2]string // in force: safeOver when safe, else nil
	safeOver  [][2]string
	// programs lists the program keys the repository's own configuration
	// sets (key=value), which approved calls honour.
	programs []string
}

// Cmd describes one git command beyond its arguments.
type Cmd struct {
	// Full runs git with the repository's configuration in force even in
	// a safe repo: only for commands that run no program (rev-parse).
	Full  bool
	Stdin io.Reader
	Env   []string // extra KEY=VALUE entries
	Max   int      // stdout cap; 0 means gitMaxOutput
	// OkExit lists exit codes other than 0 that are not failures.
	OkExit []int
}

// Output is what one git command printed.
type Output struct {
	Stdout    []byte
	Stderr    string
	Exit      int
	Truncated bool // stdout was longer than the cap
}

// capBuffer keeps the first max bytes written to it and counts the rest.
type capBuffer struct {
	buf   bytes.Buffer
	max   int
	total int64
}

func (w *capBuffer) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (w *capBuffer) truncated() bool { return w.total > int64(w.buf.Len()) }

// OptionLike refuses a value that git could read as an option (or that
// holds a NUL byte); field names the argument in the error.
func OptionLike(field, v string) error {
	if strings.HasPrefix(v, "-") {
		return invalidf("%s %q starts with \"-\" and would be read as a git option; "+
			"a file whose name starts with a dash is given as ./NAME", field, v).
			withDetails(map[string]any{"violations": []schema.Violation{{Pointer: "/" + field, Reason: "starts with - (an option)"}}})
	}
	if strings.IndexByte(v, 0) >= 0 {
		return invalidf("%s contains a NUL byte", field)
	}
	return nil
}

// Options say how Open's repository runs git.
type Options struct {
	// Safe makes the repository's git runs automatic: every program that
	// configuration names is turned off (SetSafe changes it later).
	Safe bool
	// Env is the environment git runs with before its own settings are
	// added (for a tool: the commands' environment, secrets removed);
	// nil means the server's environment.
	Env []string
}

// Open returns the workspace repository of the root of ws that holds near
// (an absolute path inside the workspace), or with "" of the first root:
// the repository git finds from that root, never one found from near, so
// that a git directory planted in a subfolder is never used. Outside a
// repository it fails with an *Error saying so. The repository's commands
// run under ctx.
func Open(ctx context.Context, ws *workspace.Workspace, near string, o Options) (*Repo, error) {
	roots := ws.Roots()
	if len(roots) == 0 {
		return nil, errors.New("the workspace has no root")
	}
	root := roots[0]
	if near != "" {
		root = RootOf(ws, near)
	}
	loc, ok, err := workspaceRepo(root)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, execf("git is not installed or not on PATH")
		}
		return nil, fmt.Errorf("find the repository of %s: %w", root, err)
	}
	if !ok {
		e := execf("%s is not inside a git repository (no .git in the workspace root or any parent folder; "+
			"a repository in a subfolder is not used); `git init` creates one", root)
		e.NoRepository = true
		return nil, e
	}
	if ctx == nil {
		ctx = context.Background()
	}
	base := o.Env
	if base == nil {
		base = os.Environ()
	}
	r := &Repo{ctx: ctx, ws: ws, base: base, gitDir: loc.gitDir, top: loc.top, roots: roots, safe: o.Safe}
	overrides, programs, err := gitSafeConfig(ctx, loc, r.env(nil, true))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, execf("git cannot read the configuration of the repository at %s: %v", loc.top, err)
	}
	r.programs, r.safeOver = programs, overrides
	r.SetSafe(r.safe)
	return r, nil
}

// Top is the repository's top-level folder (its work tree).
func (r *Repo) Top() string { return r.top }

// SetSafe makes the repo's git runs automatic (safe) or approved.
func (r *Repo) SetSafe(safe bool) {
	r.safe, r.overrides = safe, nil
	if safe {
		r.overrides = r.safeOver
	}
}

// env is the environment git runs with: the base one without variables
// that locate another repository, plus git's non-interactive settings, the
// overrides of a safe repo (unless full) and extra.
func (r *Repo) env(extra []string, full bool) []string {
	var env []string
	for _, kv := range gitBaseEnv(r.base) {
		name, _, _ := strings.Cut(kv, "=")
		if name == "LC_ALL" || name == "LANGUAGE" || gitLiteralEnv[name] {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"GIT_TERMINAL_PROMPT=0", // never ask for credentials on a terminal
		"GIT_OPTIONAL_LOCKS=0",  // status does not take the index lock to refresh it
		"GIT_EDITOR=true", "GIT_SEQUENCE_EDITOR=true", "GIT_PAGER=cat",
		"LC_ALL=C", // English messages, which errors are recognised by
		"GIT_CEILING_DIRECTORIES="+gitCeilings(os.Getenv("GIT_CEILING_DIRECTORIES"), r.roots, r.top),
	)
	if r.overrides != nil && !full {
		env = append(env, gitConfigEnv(r.overrides)...)
	}
	return append(env, extra...)
}

// gitLiteralEnv are inherited variables that change how pathspecs are read.
var gitLiteralEnv = map[string]bool{
	"GIT_LITERAL_PATHSPECS": true, "GIT_GLOB_PATHSPECS": true, "GIT_NOGLOB_PATHSPECS": true, "GIT_ICASE_PATHSPECS": true,
}

// Run runs git with args in the repository. A non-zero exit (not in
// OkExit) is an *Error carrying git's message; cancellation returns the
// context's error.
func (r *Repo) Run(o Cmd, args ...string) (Output, error) {
	ctx := r.ctx
	argv := append(append([]string{"--git-dir=" + r.gitDir, "--work-tree=" + r.top}, gitGlobal...), args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Env = r.env(o.Env, o.Full)
	cmd.Dir = r.top
	cmd.Stdin = o.Stdin
	cmd.WaitDelay = 2 * time.Second
	limit := o.Max
	if limit == 0 {
		limit = gitMaxOutput
	}
	stdout := &capBuffer{max: limit}
	stderr := &capBuffer{max: gitMaxStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	out := Output{Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.String(), Truncated: stdout.truncated()}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out, nil
	case errors.As(err, &ee):
		out.Exit = ee.ExitCode()
		for _, ok := range o.OkExit {
			if out.Exit == ok {
				return out, nil
			}
		}
		return out, r.failed(args, out)
	case errors.Is(err, exec.ErrNotFound):
		return out, execf("git is not installed or not on PATH")
	}
	return out, fmt.Errorf("run git %s: %w", args[0], err)
}

// urlCredentials matches the user information of a URL (user:password@ or
// token@).
var urlCredentials = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'"]+@`)

// RedactURLs hides the credentials of URLs in s: what git prints about a
// remote can carry the token of its URL.
func RedactURLs(s string) string {
	return urlCredentials.ReplaceAllString(s, "${1}[redacted]@")
}

// failed turns a failed git command into the error the model sees.
func (r *Repo) failed(args []string, out Output) error {
	out.Stderr = RedactURLs(out.Stderr)
	out.Stdout = []byte(RedactURLs(string(out.Stdout)))
	msg := strings.TrimSpace(out.Stderr)
	if msg == "" {
		msg = strings.TrimSpace(string(out.Stdout))
	}
	details := map[string]any{"exit_code": out.Exit, "stderr": out.Stderr, "command": "git " + strings.Join(args, " ")}
	switch {
	case strings.Contains(msg, "not a git repository"):
		return execf("%s is not inside a git repository (no .git in it or any parent folder); "+
			"`git init` creates one", r.top).withDetails(details)
	case strings.Contains(msg, "dubious ownership"):
		return execf("git refuses the repository at %s: it belongs to another user "+
			"(git config --global --add safe.directory %s allows it): %s", r.top, r.top, msg).withDetails(details)
	case strings.Contains(msg, "must be run in a work tree"):
		return execf("%s is inside a git folder or a bare repository, not a work tree", r.top).withDetails(details)
	}
	return execf("git %s failed (exit %d): %s", args[0], out.Exit, msg).withDetails(details)
}

// Hooks lists the hooks the repository has (executable files in its hooks
// folder, core.hooksPath included), which a person-approved call runs.
func (r *Repo) Hooks() []string {
	out, err := r.Run(Cmd{Full: true}, "rev-parse", "--path-format=absolute", "--git-path", "hooks")
	if err != nil {
		return nil
	}
	return listHooks(r.ws, strings.TrimSpace(string(out.Stdout)))
}

// listHooks lists the hooks in the folder dir (git's path for it, which
// git gives with its symlinks resolved).
func listHooks(ws *workspace.Workspace, dir string) []string {
	// Inside a root (.git/hooks) the folder is listed and its files stat'ed
	// beneath the root, so a symlink swapped in cannot list an outside
	// folder; a hooks folder elsewhere (core.hooksPath, a linked work
	// tree's git directory, a link git resolved) is where git runs hooks
	// from and is read by path: the list goes to the person. What cannot
	// be read beneath the root (a folder swapped for a link since git
	// named it, a hook linking outside, which git would follow) is still
	// named: the list warns, so it may say too much but never too little.
	ents, err := ws.ReadDirAny(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return []string{fmt.Sprintf("in %s (not listed: %v)", ws.Rel(dir), err)}
	}
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".sample") {
			continue
		}
		fi, err := ws.StatAny(filepath.Join(dir, e.Name()))
		if err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 || err != nil && !errors.Is(err, fs.ErrNotExist) {
			names = append(names, e.Name())
		}
	}
	return names
}

// ProgramsWarning says which programs the repository names that a call the
// person approves will run (its hooks, and program keys of its own
// configuration), or "".
func (r *Repo) ProgramsWarning(what string) string {
	var parts []string
	if h := r.Hooks(); len(h) > 0 {
		parts = append(parts, "hooks "+strings.Join(h, ", "))
	}
	if len(r.programs) > 0 {
		parts = append(parts, "configuration "+strings.Join(r.programs, ", "))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s runs programs the repository names (%s); the preview was made without them",
		what, strings.Join(parts, "; "))
}

// IndexEntries returns the index's entries by path (relative to the top),
// each the `ls-files --stage` lines of the path.
func (r *Repo) IndexEntries(o Cmd) (map[string]string, error) {
	out, err := r.Run(o, "ls-files", "--stage", "-z")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, rec := range strings.Split(string(out.Stdout), "\x00") {
		if _, path, ok := strings.Cut(rec, "\t"); ok {
			m[path] += rec + "\x00"
		}
	}
	return m, nil
}

// Rel turns a path git printed (relative to the top level) into one
// relative to the workspace root that holds it.
func (r *Repo) Rel(p string) string {
	return r.ws.Rel(filepath.Join(r.top, filepath.FromSlash(p)))
}

// CurrentBranch returns the checked-out branch, or "" when HEAD is detached.
func (r *Repo) CurrentBranch() (string, error) {
	out, err := r.Run(Cmd{OkExit: []int{1}}, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out.Stdout)), nil
}

// HasCommits reports whether HEAD points at a commit (false on an unborn
// branch).
func (r *Repo) HasCommits() (bool, error) {
	out, err := r.Run(Cmd{OkExit: []int{1, 128}}, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return false, err
	}
	return out.Exit == 0, nil
}

// CheckRev refuses a revision argument unless it names commits: a commit,
// branch or tag, or a range A..B or A...B of them (a side may be empty,
// meaning HEAD). Object paths such as HEAD:.env and blob ids are refused,
// so that a diff of two blobs cannot show a sensitive file.
func (r *Repo) CheckRev(field, ref string) error {
	if err := OptionLike(field, ref); err != nil {
		return err
	}
	sides := []string{ref}
	if a, b, ok := strings.Cut(ref, "..."); ok {
		sides = []string{a, b}
	} else if a, b, ok := strings.Cut(ref, ".."); ok {
		sides = []string{a, b}
	}
	for _, side := range sides {
		if side == "" {
			continue
		}
		if err := OptionLike(field, side); err != nil {
			return err
		}
		out, err := r.Run(Cmd{OkExit: []int{1, 128}}, "rev-parse", "--verify", "--quiet", "--end-of-options", side+"^{commit}")
		if err != nil {
			return err
		}
		if out.Exit != 0 || strings.Contains(side, ":") {
			return invalidf("%s: %q is not a commit, branch or tag of this repository "+
				"(a revision or a range A..B or A...B of them)", field, side)
		}
	}
	return nil
}

// CheckBranchName refuses a name git would not accept as a branch.
func (r *Repo) CheckBranchName(field, name string) error {
	if err := OptionLike(field, name); err != nil {
		return err
	}
	if strings.HasPrefix(name, "+") || strings.ContainsAny(name, ": ") {
		return invalidf("%s %q is not a branch name", field, name)
	}
	out, err := r.Run(Cmd{OkExit: []int{1, 128}}, "check-ref-format", "--branch", name)
	if err != nil {
		return err
	}
	if out.Exit != 0 {
		return invalidf("%s %q is not a valid branch name (git check-ref-format)", field, name)
	}
	return nil
}

// DiffFile is one file of a diff, from --numstat and --name-status.
type DiffFile struct {
	Path      string `json:"path"`
	OldPath   string `json:"old_path,omitempty"`
	Status    string `json:"status"` // added, modified, deleted, renamed, copied, type_changed, unmerged
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Binary    bool   `json:"binary"`
	Sensitive bool   `json:"sensitive,omitempty"`

	// GitPath and GitOldPath are the paths as git printed them, relative
	// to the repository's top level.
	GitPath    string `json:"-"`
	GitOldPath string `json:"-"`
}

// StatusName names a status letter of --name-status or porcelain v2.
func StatusName(b byte) string {
	switch b {
	case 'A':
		return "added"
	case 'M':
		return "modified"
	case 'D':
		return "deleted"
	case 'R':
		return "renamed"
	case 'C':
		return "copied"
	case 'T':
		return "type_changed"
	case 'U':
		return "unmerged"
	}
	return "changed"
}

// DiffSpec names a diff: options such as --cached, revisions (placed
// after --end-of-options) and absolute pathspecs (placed after --).
type DiffSpec struct {
	Opts  []string
	Revs  []string
	Paths []string
}

// args returns the git arguments of the diff with extra options.
func (d DiffSpec) args(extra ...string) []string {
	args := append([]string{"diff"}, d.Opts...)
	args = append(args, "--no-ext-diff", "--no-textconv", "-M")
	args = append(args, extra...)
	args = append(args, "--end-of-options")
	args = append(args, d.Revs...)
	if len(d.Paths) > 0 {
		args = append(args, "--")
		args = append(args, d.Paths...)
	}
	return args
}

// DiffFiles lists the files of a diff, with their line counts and status.
func (r *Repo) DiffFiles(o Cmd, d DiffSpec) ([]DiffFile, error) {
	out, err := r.Run(o, d.args("--numstat", "-z")...)
	if err != nil {
		return nil, err
	}
	files := []DiffFile{}
	// Each record: "add\tdel\tpath\0", or for renames "add\tdel\t\0old\0new\0".
	rest := string(out.Stdout)
	for rest != "" {
		rec, after, _ := strings.Cut(rest, "\x00")
		rest = after
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			continue
		}
		f := DiffFile{Status: "modified"}
		if parts[0] == "-" {
			f.Binary = true
		} else {
			f.Additions, _ = strconv.Atoi(parts[0])
			f.Deletions, _ = strconv.Atoi(parts[1])
		}
		if parts[2] == "" {
			var old, nw string
			old, rest, _ = strings.Cut(rest, "\x00")
			nw, rest, _ = strings.Cut(rest, "\x00")
			f.OldPath, f.Path, f.Status = r.Rel(old), r.Rel(nw), "renamed"
			f.GitOldPath, f.GitPath = old, nw
		} else {
			f.Path, f.GitPath = r.Rel(parts[2]), parts[2]
		}
		files = append(files, f)
	}
	// --name-status tells added, deleted, copied and type changes apart.
	out, err = r.Run(o, d.args("--name-status", "-z")...)
	if err != nil {
		return nil, err
	}
	status := map[string]string{}
	recs := strings.Split(strings.TrimSuffix(string(out.Stdout), "\x00"), "\x00")
	for i := 0; i+1 < len(recs); {
		code := recs[i]
		if code == "" {
			i++
			continue
		}
		if code[0] == 'R' || code[0] == 'C' {
			if i+2 < len(recs) {
				status[r.Rel(recs[i+2])] = StatusName(code[0])
			}
			i += 3
			continue
		}
		status[r.Rel(recs[i+1])] = StatusName(code[0])
		i += 2
	}
	for i := range files {
		if s, ok := status[files[i].Path]; ok {
			files[i].Status = s
		}
		files[i].Sensitive = r.ws.IsSensitive(files[i].Path) ||
			(files[i].OldPath != "" && r.ws.IsSensitive(files[i].OldPath))
	}
	return files, nil
}

// DiffText runs a diff and returns its text, at most limit bytes of it, and
// whether it was cut. Files that match the sensitive patterns are left out
// of the text (their names stay in files, marked sensitive) unless
// keepSensitive.
func (r *Repo) DiffText(o Cmd, d DiffSpec, files []DiffFile, limit int, keepSensitive bool) (string, bool, error) {
	if len(files) == 0 {
		return "", false, nil
	}
	if !keepSensitive {
		var kept []string
		omitted := false
		for _, f := range files {
			if f.Sensitive {
				omitted = true
				continue
			}
			kept = append(kept, filepath.Join(r.top, filepath.FromSlash(f.Path)))
			if f.OldPath != "" {
				kept = append(kept, filepath.Join(r.top, filepath.FromSlash(f.OldPath)))
			}
		}
		if omitted {
			if len(kept) == 0 {
				return "", false, nil
			}
			d.Paths = kept
		}
	}
	o.Max = limit
	out, err := r.Run(o, d.args("--no-color")...)
	if err != nil {
		return "", false, err
	}
	return string(out.Stdout), out.Truncated, nil
}

// Blobs reads objects named like "HEAD:path" or ":0:path" with one
// `git cat-file --batch`. Names that do not exist are left out of the map;
// names with a newline cannot be asked for and are left out too. It fails
// when the objects together exceed limit bytes.
func (r *Repo) Blobs(o Cmd, names []string, limit int) (map[string][]byte, error) {
	var in strings.Builder
	var asked []string
	for _, n := range names {
		if !strings.ContainsAny(n, "\n\r") {
			in.WriteString(n + "\n")
			asked = append(asked, n)
		}
	}
	o.Stdin = strings.NewReader(in.String())
	o.Max = limit
	out, err := r.Run(o, "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	if out.Truncated {
		return nil, fmt.Errorf("cat-file: more than %d bytes", limit)
	}
	got := map[string][]byte{}
	rest := out.Stdout
	for _, n := range asked {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return nil, fmt.Errorf("cat-file: short output")
		}
		header := strings.Fields(string(rest[:i]))
		rest = rest[i+1:]
		if len(header) != 3 {
			continue // "<name> missing" or "ambiguous"
		}
		size, err := strconv.Atoi(header[2])
		if err != nil || size+1 > len(rest) {
			return nil, fmt.Errorf("cat-file: bad header %q", header)
		}
		got[n] = rest[:size]
		rest = rest[size+1:]
	}
	return got, nil
}

// WithTempIndex runs fn with the environment of a throwaway copy of the
// repository's index whose new objects go to a throwaway folder, so that
// staging into it changes nothing in the repository.
func (r *Repo) WithTempIndex(fn func(env []string) error) error {
	out, err := r.Run(Cmd{}, "rev-parse", "--path-format=absolute", "--git-path", "index", "--git-path", "objects")
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(out.Stdout)), "\n")
	if len(lines) != 2 {
		return fmt.Errorf("git rev-parse --git-path printed %q", out.Stdout)
	}
	index, objects := lines[0], lines[1]
	tmp, err := os.MkdirTemp("", "agentls-git-")
	if err != nil {
		return fmt.Errorf("temp index: %w", err)
	}
	defer os.RemoveAll(tmp)
	// The index inside a root is read beneath it (a symlink swapped in
	// cannot copy an outside file); a git directory elsewhere by path.
	if data, err := r.ws.ReadDiskAny(index); err == nil {
		if err := os.WriteFile(filepath.Join(tmp, "index"), data, 0o600); err != nil {
			return fmt.Errorf("temp index: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read index: %w", err)
	}
	if err := os.Mkdir(filepath.Join(tmp, "objects"), 0o700); err != nil {
		return fmt.Errorf("temp objects: %w", err)
	}
	return fn([]string{
		"GIT_INDEX_FILE=" + filepath.Join(tmp, "index"),
		"GIT_OBJECT_DIRECTORY=" + filepath.Join(tmp, "objects"),
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + objects,
	})
}
