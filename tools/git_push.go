package tools

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/git"
)

// GitPush is git_push: pushes one local branch to a configured remote.
// It always asks; a force push is dangerous and asks even over rules and
// earlier "always" answers.
var GitPush = builtin(Def[gitPushArgs]{
	Spec: Spec{
		Name:     "git_push",
		Category: "git",
		Title:    "Git push",
		Description: "Pushes a local branch (default: the current one) to a configured remote (default: the branch's upstream " +
			"remote, else origin) under the same name. set_upstream: true records the remote branch as upstream. " +
			"A push that is not a fast-forward is rejected unless force: true, which force-pushes with --force-with-lease " +
			"(it still refuses when the remote has commits this repository has not fetched); only use force when asked to. " +
			"Always asks for approval.",
		Annotations: Annotations{Dangerous: true, Approval: "ask"},
		Risk:        approval.RiskNetwork,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"remote":{"type":"string","minLength":1,"description":"a configured remote's name (default: the upstream's remote, else origin)"},
			"branch":{"type":"string","minLength":1,"description":"the local branch to push (default: the current branch)"},
			"set_upstream":{"type":"boolean","default":false,"description":"make remote/branch the branch's upstream"},
			"force":{"type":"boolean","default":false,"description":"overwrite the remote branch (--force-with-lease); dangerous"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["remote","branch","status"],"properties":{
			"remote":{"type":"string"},"branch":{"type":"string"},
			"status":{"enum":["new","fast_forward","forced","up_to_date","rejected","other"]},
			"summary":{"type":"string"},"output":{"type":"string"}}}`),
	},
	Validate: func(a gitPushArgs) error {
		if err := git.OptionLike("remote", a.Remote); err != nil {
			return err
		}
		return git.OptionLike("branch", a.Branch)
	},
	Assess:  assessGitPush,
	Execute: gitPush,
})

type gitPushArgs struct {
	Remote      string `json:"remote"`
	Branch      string `json:"branch"`
	SetUpstream bool   `json:"set_upstream"`
	Force       bool   `json:"force"`
}

// gitPushTarget resolves the branch and remote of a push and checks them.
func gitPushTarget(c *Call, a gitPushArgs) (*git.Repo, string, string, error) {
	repo, err := openRepo(c, "")
	if err != nil {
		return nil, "", "", err
	}
	branch := a.Branch
	if branch == "" {
		if branch, err = repo.CurrentBranch(); err != nil {
			return nil, "", "", err
		}
		if branch == "" {
			return nil, "", "", Errorf(InvalidParams, "HEAD is detached: name the branch to push")
		}
	}
	if err := repo.CheckBranchName("branch", branch); err != nil {
		return nil, "", "", err
	}
	exists, err := repo.Run(git.Cmd{OkExit: []int{1}}, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil {
		return nil, "", "", err
	}
	if exists.Exit != 0 {
		return nil, "", "", Errorf(InvalidParams, "there is no local branch %s (git_branch lists them)", branch)
	}
	out, err := repo.Run(git.Cmd{}, "remote")
	if err != nil {
		return nil, "", "", err
	}
	remotes := strings.Fields(string(out.Stdout))
	remote := a.Remote
	if remote == "" {
		up, err := repo.Run(git.Cmd{OkExit: []int{1}}, "config", "--get", "branch."+branch+".remote")
		if err != nil {
			return nil, "", "", err
		}
		remote = strings.TrimSpace(string(up.Stdout))
		switch {
		case remote != "" && remote != ".":
		case slices.Contains(remotes, "origin"):
			remote = "origin"
		case len(remotes) == 1:
			remote = remotes[0]
		default:
			remote = ""
		}
	}
	if len(remotes) == 0 {
		return nil, "", "", Errorf(ExecutionError, "the repository has no remote to push to (git remote add creates one)")
	}
	if remote == "" {
		return nil, "", "", Errorf(InvalidParams, "say which remote to push to: %s", strings.Join(remotes, ", "))
	}
	if !slices.Contains(remotes, remote) {
		// Only configured remotes: a URL would send the code anywhere.
		return nil, "", "", Errorf(InvalidParams, "no remote named %s; configured remotes: %s", remote, strings.Join(remotes, ", "))
	}
	return repo, remote, branch, nil
}

func assessGitPush(c *Call, a gitPushArgs) (Assessment, error) {
	repo, remote, branch, err := gitPushTarget(c, a)
	if err != nil {
		return Assessment{}, err
	}
	as := Assessment{Assessment: approval.Assessment{AlwaysKey: "git_push:" + remote + " " + branch}}
	as.Warning = repo.ProgramsWarning("the push")
	if a.Force {
		as.Dangerous = true
		as.Warning = strings.TrimSuffix(fmt.Sprintf("force push: %s/%s is replaced by the local %s; commits there that %s lacks are lost "+
			"(--force-with-lease refuses only if the remote moved since the last fetch); ", remote, branch, branch, branch)+as.Warning, "; ")
	}
	return as, nil
}

// gitPushStatus names a flag of `git push --porcelain`.
var gitPushStatus = map[byte]string{' ': "fast_forward", '+': "forced", '*': "new", '=': "up_to_date", '!': "rejected"}

func gitPush(c *Call, a gitPushArgs) (*Result, error) {
	repo, remote, branch, err := gitPushTarget(c, a)
	if err != nil {
		return nil, err
	}
	args := []string{"push", "--porcelain"}
	if a.Force {
		args = append(args, "--force-with-lease")
	}
	if a.SetUpstream {
		args = append(args, "--set-upstream")
	}
	ref := "refs/heads/" + branch
	args = append(args, "--end-of-options", remote, ref+":"+ref)
	if c.Progress != nil {
		c.Progress.Report(fmt.Sprintf("pushing %s to %s", branch, remote), -1)
	}
	out, err := repo.Run(git.Cmd{OkExit: []int{1, 128}}, args...)
	if err != nil {
		return nil, err
	}
	out.Stdout, out.Stderr = []byte(git.RedactURLs(string(out.Stdout))), git.RedactURLs(out.Stderr)
	status, summary := "other", ""
	for _, line := range strings.Split(string(out.Stdout), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) == 3 && len(f[0]) == 1 && strings.HasPrefix(f[1], ref+":") {
			if s, ok := gitPushStatus[f[0][0]]; ok {
				status = s
			}
			summary = f[2]
		}
	}
	s := map[string]any{"remote": remote, "branch": branch, "status": status, "summary": summary,
		"output": strings.TrimSpace(string(out.Stdout) + "\n" + out.Stderr)}
	if out.Exit != 0 {
		msg := strings.TrimSpace(out.Stderr)
		hint := ""
		if status == "rejected" {
			hint = "; the remote has commits the local branch lacks: fetch and merge or rebase, then push again"
		}
		return nil, &Error{Code: ExecutionError, Recoverable: true, Structured: s,
			Message: fmt.Sprintf("push of %s to %s failed: %s%s", branch, remote, firstLine(summary, msg), hint),
			Details: map[string]any{"exit_code": out.Exit, "stderr": out.Stderr}}
	}
	content := fmt.Sprintf("Pushed %s to %s (%s)", branch, remote, strings.ReplaceAll(status, "_", "-"))
	if summary != "" {
		content += ": " + summary
	}
	return Success(content+"\n", s), nil
}

// firstLine returns the first non-empty of the values, on one line.
func firstLine(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			line, _, _ := strings.Cut(v, "\n")
			return line
		}
	}
	return "unknown error"
}
