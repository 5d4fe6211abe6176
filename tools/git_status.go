package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/agentls/agentls/git"
	"github.com/agentls/agentls/workspace"
)

// GitStatus is git_status: the branch and the changed files, from
// `git status --porcelain=v2 --branch -z`.
var GitStatus = builtin(Def[gitStatusArgs]{
	Spec: Spec{
		Name:     "git_status",
		Category: "git",
		Title:    "Git status",
		Description: "Shows the git state of the workspace repository: the current branch, its upstream and how far ahead/behind it is, the remote's URL, " +
			"and the changed files: staged (what git_commit would commit), modified but not staged, deleted, renamed, conflicted and untracked. " +
			"path limits the files to a file or folder. It reads the disk: unsaved editor buffers are not seen by git.",
		Aliases:     []string{"getGitInfo"},
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"path":{"type":"string","description":"only files under this file or folder, relative to the workspace root"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["is_repo","branch","detached","commit","ahead","behind","staged","modified","untracked","deleted","renamed","conflicted","clean"],"properties":{
			"is_repo":{"type":"boolean","description":"false when the workspace root is in no git repository (every list empty)"},
			"remote_url":{"type":"string","description":"the URL of the upstream's remote (else origin's), credentials redacted"},
			"branch":{"type":"string","description":"the checked-out branch; empty when detached"},
			"detached":{"type":"boolean"},
			"commit":{"type":"string","description":"HEAD's commit; empty before the first commit"},
			"upstream":{"type":"string"},
			"ahead":{"type":"integer"},"behind":{"type":"integer"},
			"staged":{"type":"array","items":{"type":"object","required":["path","status"],"properties":{
				"path":{"type":"string"},"status":{"type":"string"},"old_path":{"type":"string"}}}},
			"modified":{"type":"array","items":{"type":"string"},"description":"changed in the work tree, not staged"},
			"untracked":{"type":"array","items":{"type":"string"},"description":"untracked files; an untracked folder is listed once with a trailing /"},
			"deleted":{"type":"array","items":{"type":"string"},"description":"deleted, staged or not"},
			"renamed":{"type":"array","items":{"type":"object","required":["from","to"],"properties":{"from":{"type":"string"},"to":{"type":"string"}}}},
			"conflicted":{"type":"array","items":{"type":"string"}},
			"clean":{"type":"boolean"},
			"repository":{"type":"string","description":"the repository's top-level folder"},
			"unsaved":{"type":"array","items":{"type":"string"},"description":"files open in the editor with unsaved changes, which git does not see"}}}`),
	},
	Execute: gitStatus,
})

type gitStatusArgs struct {
	Path string `json:"path"`
}

// gitStaged is one staged change.
type gitStaged struct {
	Path    string `json:"path"`
	Status  string `json:"status"`
	OldPath string `json:"old_path,omitempty"`
}

// gitRename is one rename.
type gitRename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// gitStatusResult is git_status's structured result.
type gitStatusResult struct {
	IsRepo     bool        `json:"is_repo"`
	RemoteURL  string      `json:"remote_url,omitempty"`
	Branch     string      `json:"branch"`
	Detached   bool        `json:"detached"`
	Commit     string      `json:"commit"`
	Upstream   string      `json:"upstream,omitempty"`
	Ahead      int         `json:"ahead"`
	Behind     int         `json:"behind"`
	Staged     []gitStaged `json:"staged"`
	Modified   []string    `json:"modified"`
	Untracked  []string    `json:"untracked"`
	Deleted    []string    `json:"deleted"`
	Renamed    []gitRename `json:"renamed"`
	Conflicted []string    `json:"conflicted"`
	Clean      bool        `json:"clean"`
	Repository string      `json:"repository"`
	Unsaved    []string    `json:"unsaved,omitempty"`
}

func gitStatus(c *Call, a gitStatusArgs) (*Result, error) {
	var abs string
	if a.Path != "" {
		if err := git.OptionLike("path", a.Path); err != nil {
			return nil, err
		}
		p, err := c.Workspace.Resolve(a.Path)
		if err != nil {
			return nil, err
		}
		abs = p
	}
	repo, err := openRepo(c, abs)
	var ge *git.Error
	if errors.As(err, &ge) && ge.NoRepository {
		// Not an error: the answer is that there is no repository.
		return Success(ge.Message+"\n", gitStatusResult{Staged: []gitStaged{}, Modified: []string{}, Untracked: []string{},
			Deleted: []string{}, Renamed: []gitRename{}, Conflicted: []string{}}), nil
	}
	if err != nil {
		return nil, err
	}
	args := []string{"status", "--porcelain=v2", "--branch", "-z"}
	if abs != "" {
		args = append(args, "--", abs)
	}
	out, err := repo.Run(git.Cmd{}, args...)
	if err != nil {
		return nil, err
	}
	s := parseGitStatus(string(out.Stdout), repo.Rel)
	s.IsRepo, s.Repository = true, repo.Top()
	s.RemoteURL = remoteURL(repo, s.Upstream)
	s.Unsaved = gitUnsaved(c, repo.Top(), abs)
	text := gitStatusText(s)
	if s.RemoteURL != "" {
		text += "Remote: " + s.RemoteURL + "\n"
	}
	if len(s.Unsaved) > 0 {
		text += "Unsaved in the editor (git sees the disk):\n  " + strings.Join(s.Unsaved, "\n  ") + "\n"
	}
	return Success(text, s), nil
}

// gitUnsaved lists the editor buffers under top (and under only, when set)
// whose text differs from the disk.
func gitUnsaved(c *Call, top, only string) []string {
	var out []string
	for _, p := range c.Workspace.Overlays.Paths() {
		if !git.Within(top, p) || (only != "" && !git.Within(only, p)) {
			continue
		}
		doc, ok := c.Workspace.Overlays.Get(p)
		if !ok {
			continue
		}
		if diskDiffers(c.Workspace, p, doc.Text) {
			out = append(out, c.Workspace.Rel(p))
		}
	}
	sort.Strings(out)
	return out
}

// diskDiffers reports whether the file p on disk differs from an editor
// buffer's text (or cannot be read). A file inside a root is read beneath
// it; a sensitive one (refused to the agent, not to this comparison, whose
// answer is one line to the person) and one outside the roots by path.
func diskDiffers(ws *workspace.Workspace, p, text string) bool {
	disk, err := ws.ReadDiskAny(p)
	var pe *workspace.PathError
	if errors.As(err, &pe) && pe.Code == "SENSITIVE_PATH" {
		disk, err = os.ReadFile(p)
	}
	return err != nil || string(disk) != text
}

// parseGitStatus parses `git status --porcelain=v2 --branch -z`; rel maps
// the paths git prints.
func parseGitStatus(out string, rel func(string) string) *gitStatusResult {
	s := &gitStatusResult{Staged: []gitStaged{}, Modified: []string{}, Untracked: []string{}, Deleted: []string{},
		Renamed: []gitRename{}, Conflicted: []string{}}
	recs := strings.Split(out, "\x00")
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if len(rec) < 2 {
			continue
		}
		switch rec[0] {
		case '#':
			key, val, _ := strings.Cut(strings.TrimPrefix(rec, "# "), " ")
			switch key {
			case "branch.oid":
				if val != "(initial)" {
					s.Commit = val
				}
			case "branch.head":
				if val == "(detached)" {
					s.Detached = true
				} else {
					s.Branch = val
				}
			case "branch.upstream":
				s.Upstream = val
			case "branch.ab":
				ahead, behind, _ := strings.Cut(val, " ")
				s.Ahead, _ = strconv.Atoi(strings.TrimPrefix(ahead, "+"))
				s.Behind, _ = strconv.Atoi(strings.TrimPrefix(behind, "-"))
			}
		case '1', '2':
			n := 9
			if rec[0] == '2' {
				n = 10
			}
			f := strings.SplitN(rec, " ", n)
			if len(f) != n || len(f[1]) != 2 {
				continue
			}
			x, y := f[1][0], f[1][1]
			path := rel(f[n-1])
			var old string
			if rec[0] == '2' && i+1 < len(recs) {
				i++
				old = rel(recs[i])
			}
			if x != '.' {
				st := gitStaged{Path: path, Status: git.StatusName(x)}
				if old != "" {
					st.OldPath = old
				}
				s.Staged = append(s.Staged, st)
			}
			if old != "" {
				s.Renamed = append(s.Renamed, gitRename{From: old, To: path})
			}
			if y == 'D' || x == 'D' {
				s.Deleted = append(s.Deleted, path)
			}
			if y == 'M' || y == 'T' {
				s.Modified = append(s.Modified, path)
			}
		case 'u':
			f := strings.SplitN(rec, " ", 11)
			if len(f) == 11 {
				s.Conflicted = append(s.Conflicted, rel(f[10]))
			}
		case '?':
			p := rec[2:]
			u := rel(p)
			if strings.HasSuffix(p, "/") && !strings.HasSuffix(u, "/") {
				u += "/"
			}
			s.Untracked = append(s.Untracked, u)
		}
	}
	s.Clean = len(s.Staged)+len(s.Modified)+len(s.Untracked)+len(s.Deleted)+len(s.Conflicted) == 0
	return s
}

// gitStatusText is git_status's content for the model.
func gitStatusText(s *gitStatusResult) string {
	var b strings.Builder
	switch {
	case s.Detached:
		fmt.Fprintf(&b, "HEAD detached at %s\n", shortHash(s.Commit))
	case s.Commit == "":
		fmt.Fprintf(&b, "On branch %s (no commits yet)\n", s.Branch)
	default:
		fmt.Fprintf(&b, "On branch %s\n", s.Branch)
	}
	if s.Upstream != "" {
		fmt.Fprintf(&b, "Upstream %s: ahead %d, behind %d\n", s.Upstream, s.Ahead, s.Behind)
	}
	if s.Clean {
		b.WriteString("Nothing to commit, working tree clean.\n")
		return b.String()
	}
	if len(s.Staged) > 0 {
		b.WriteString("Staged (will be committed):\n")
		for _, st := range s.Staged {
			if st.OldPath != "" {
				fmt.Fprintf(&b, "  %s: %s -> %s\n", st.Status, st.OldPath, st.Path)
			} else {
				fmt.Fprintf(&b, "  %s: %s\n", st.Status, st.Path)
			}
		}
	}
	var unstaged []string
	for _, p := range s.Modified {
		unstaged = append(unstaged, "  modified: "+p)
	}
	staged := map[string]bool{}
	for _, st := range s.Staged {
		staged[st.Path] = true
	}
	for _, p := range s.Deleted {
		if !staged[p] {
			unstaged = append(unstaged, "  deleted: "+p)
		}
	}
	if len(unstaged) > 0 {
		b.WriteString("Not staged:\n" + strings.Join(unstaged, "\n") + "\n")
	}
	if len(s.Conflicted) > 0 {
		b.WriteString("Conflicted (unmerged):\n  " + strings.Join(s.Conflicted, "\n  ") + "\n")
	}
	if len(s.Untracked) > 0 {
		b.WriteString("Untracked:\n  " + strings.Join(s.Untracked, "\n  ") + "\n")
	}
	return b.String()
}

// shortHash abbreviates a commit hash.
func shortHash(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// remoteURL is the URL of the upstream's remote (origin without an
// upstream), credentials redacted; "" when there is none.
func remoteURL(repo *git.Repo, upstream string) string {
	remote := "origin"
	if r, _, ok := strings.Cut(upstream, "/"); ok && r != "" {
		remote = r
	}
	if git.OptionLike("remote", remote) != nil {
		return ""
	}
	out, err := repo.Run(git.Cmd{}, "remote", "get-url", "--", remote)
	if err != nil {
		return ""
	}
	return git.RedactURLs(strings.TrimSpace(string(out.Stdout)))
}
