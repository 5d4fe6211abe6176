package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/git"
)

// GitBranch is git_branch: lists branches, or creates one. Listing needs
// no approval; creating asks in safe mode.
var GitBranch = builtin(Def[gitBranchArgs]{
	Spec: Spec{
		Name:     "git_branch",
		Category: "git",
		Title:    "Git branch",
		Description: "Without arguments, lists the local branches (all: true adds remote-tracking ones) with their commit, upstream, " +
			"ahead/behind and which one is checked out. With name and create: true, creates the branch at start_point " +
			"(default HEAD); checkout: true also switches to it (local changes are carried over). Creating asks for approval.",
		Annotations: Annotations{Approval: "conditional"},
		Risk:        approval.RiskWrite,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"name":{"type":"string","minLength":1,"description":"the branch to create"},
			"create":{"type":"boolean","default":false,"description":"create the branch name"},
			"start_point":{"type":"string","minLength":1,"description":"commit, tag or branch the new branch starts at (default HEAD)"},
			"checkout":{"type":"boolean","default":false,"description":"switch to the new branch"},
			"all":{"type":"boolean","default":false,"description":"list remote-tracking branches too"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["current"],"properties":{
			"current":{"type":"string","description":"the checked-out branch; empty when HEAD is detached"},
			"branches":{"type":"array","items":{"type":"object","required":["name","commit","current","remote"],"properties":{
				"name":{"type":"string"},"commit":{"type":"string"},"current":{"type":"boolean"},"remote":{"type":"boolean"},
				"upstream":{"type":"string"},"ahead":{"type":"integer"},"behind":{"type":"integer"},"gone":{"type":"boolean"},
				"subject":{"type":"string"}}}},
			"created":{"type":"string"},"commit":{"type":"string"},"checked_out":{"type":"boolean"}}}`),
	},
	Validate: func(a gitBranchArgs) error {
		switch {
		case a.Create && a.Name == "":
			return Errorf(InvalidParams, "create needs name: the branch to create")
		case !a.Create && a.Name != "":
			return Errorf(InvalidParams, "name is only used with create: true (listing takes no name)")
		case !a.Create && (a.StartPoint != "" || a.Checkout):
			return Errorf(InvalidParams, "start_point and checkout are only used with create: true")
		}
		if err := git.OptionLike("name", a.Name); err != nil {
			return err
		}
		return git.OptionLike("start_point", a.StartPoint)
	},
	Assess: func(c *Call, a gitBranchArgs) (Assessment, error) {
		// Listing changes nothing; creating a branch (and switching) does.
		as := Assessment{Assessment: approval.Assessment{NeedsApproval: a.Create}}
		if a.Create && a.Checkout {
			if repo, err := openRepo(c, ""); err == nil {
				as.Warning = repo.ProgramsWarning("switching branches")
			}
		}
		return as, nil
	},
	Execute: gitBranch,
})

type gitBranchArgs struct {
	Name       string `json:"name"`
	Create     bool   `json:"create"`
	StartPoint string `json:"start_point"`
	Checkout   bool   `json:"checkout"`
	All        bool   `json:"all"`
}

// gitBranchInfo is one branch of the list.
type gitBranchInfo struct {
	Name     string `json:"name"`
	Commit   string `json:"commit"`
	Current  bool   `json:"current"`
	Remote   bool   `json:"remote"`
	Upstream string `json:"upstream,omitempty"`
	Ahead    int    `json:"ahead,omitempty"`
	Behind   int    `json:"behind,omitempty"`
	Gone     bool   `json:"gone,omitempty"`
	Subject  string `json:"subject"`
}

func gitBranch(c *Call, a gitBranchArgs) (*Result, error) {
	repo, err := openRepo(c, "")
	if err != nil {
		return nil, err
	}
	if a.Create {
		return gitCreateBranch(repo, a)
	}
	current, err := repo.CurrentBranch()
	if err != nil {
		return nil, err
	}
	refs := []string{"refs/heads"}
	if a.All {
		refs = append(refs, "refs/remotes")
	}
	args := append([]string{"for-each-ref",
		"--format=%(refname)%1f%(objectname)%1f%(upstream:short)%1f%(HEAD)%1f%(upstream:track,nobracket)%1f%(contents:subject)",
		"--end-of-options"}, refs...)
	out, err := repo.Run(git.Cmd{}, args...)
	if err != nil {
		return nil, err
	}
	branches := []gitBranchInfo{}
	for _, line := range strings.Split(string(out.Stdout), "\n") {
		f := strings.SplitN(line, "\x1f", 6)
		if len(f) != 6 {
			continue
		}
		b := gitBranchInfo{Commit: f[1], Upstream: f[2], Current: f[3] == "*", Subject: f[5]}
		switch {
		case strings.HasPrefix(f[0], "refs/heads/"):
			b.Name = strings.TrimPrefix(f[0], "refs/heads/")
		case strings.HasPrefix(f[0], "refs/remotes/"):
			b.Name, b.Remote = strings.TrimPrefix(f[0], "refs/remotes/"), true
			if strings.HasSuffix(b.Name, "/HEAD") {
				continue // a symbolic ref to the remote's default branch
			}
		default:
			continue
		}
		for _, part := range strings.Split(f[4], ", ") {
			switch {
			case part == "gone":
				b.Gone = true
			case strings.HasPrefix(part, "ahead "):
				fmt.Sscan(strings.TrimPrefix(part, "ahead "), &b.Ahead)
			case strings.HasPrefix(part, "behind "):
				fmt.Sscan(strings.TrimPrefix(part, "behind "), &b.Behind)
			}
		}
		branches = append(branches, b)
	}
	var sb strings.Builder
	for _, b := range branches {
		mark := "  "
		if b.Current {
			mark = "* "
		}
		fmt.Fprintf(&sb, "%s%s %s", mark, b.Name, shortHash(b.Commit))
		if b.Upstream != "" {
			fmt.Fprintf(&sb, " [%s", b.Upstream)
			switch {
			case b.Gone:
				sb.WriteString(": gone")
			case b.Ahead > 0 || b.Behind > 0:
				fmt.Fprintf(&sb, ": ahead %d, behind %d", b.Ahead, b.Behind)
			}
			sb.WriteString("]")
		}
		fmt.Fprintf(&sb, " %s\n", b.Subject)
	}
	if len(branches) == 0 {
		fmt.Fprintf(&sb, "No branches yet (on %s, no commits).\n", current)
	} else if current == "" {
		sb.WriteString("HEAD is detached.\n")
	}
	return Success(sb.String(), map[string]any{"current": current, "branches": branches}), nil
}

// gitCreateBranch creates a.Name and, with a.Checkout, switches to it.
func gitCreateBranch(repo *git.Repo, a gitBranchArgs) (*Result, error) {
	if err := repo.CheckBranchName("name", a.Name); err != nil {
		return nil, err
	}
	exists, err := repo.Run(git.Cmd{OkExit: []int{1}}, "show-ref", "--verify", "--quiet", "refs/heads/"+a.Name)
	if err != nil {
		return nil, err
	}
	if exists.Exit == 0 {
		return nil, Errorf(AlreadyExists, "a branch named %s already exists", a.Name)
	}
	if a.StartPoint != "" {
		if err := repo.CheckRev("start_point", a.StartPoint); err != nil {
			return nil, err
		}
	}
	var args []string
	if a.Checkout {
		args = []string{"switch", "--quiet", "--no-guess", "-c", a.Name, "--end-of-options"}
	} else {
		args = []string{"branch", "--end-of-options", a.Name}
	}
	if a.StartPoint != "" {
		args = append(args, a.StartPoint)
	}
	if _, err := repo.Run(git.Cmd{}, args...); err != nil {
		return nil, err
	}
	out, err := repo.Run(git.Cmd{}, "rev-parse", "--verify", "--end-of-options", "refs/heads/"+a.Name)
	if err != nil {
		return nil, err
	}
	commit := strings.TrimSpace(string(out.Stdout))
	current, err := repo.CurrentBranch()
	if err != nil {
		return nil, err
	}
	content := fmt.Sprintf("Created branch %s at %s.\n", a.Name, shortHash(commit))
	if a.Checkout {
		content = fmt.Sprintf("Created branch %s at %s and switched to it.\n", a.Name, shortHash(commit))
	}
	return Success(content, map[string]any{"current": current, "created": a.Name, "commit": commit, "checked_out": a.Checkout}), nil
}
