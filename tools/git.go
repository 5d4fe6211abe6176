package tools

import (
	"fmt"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/git"
)

// The git tools' glue: the repository a call works in (the engine is the
// git package: which repository, automatic git, argument vectors) and the
// checks of the call's path arguments. A *git.Error becomes the tool error
// the model sees through its ErrorCode (AsError).

// openRepo returns the workspace repository of the root that holds near
// (an absolute path inside the workspace), or with "" of the first root
// (git.Open). Its git runs automatically (git.Options.Safe) when no person
// approved the call, and for a read-only tool even when one did (mode
// ask): the question named no program.
func openRepo(c *Call, near string) (*git.Repo, error) {
	if len(c.Workspace.Roots()) == 0 {
		return nil, Errorf(NotConfigured, "the session has no workspace root")
	}
	safe := unapproved(c) || c.Tool != nil && c.Tool.Annotations.ReadOnly
	return git.Open(c.Ctx, c.Workspace, near, git.Options{Safe: safe, Env: CommandEnv(c.Workspace.Config(), nil)})
}

// openRepoOf checks the path arguments args (resolvePaths; field names
// them) and ref, a revision or range when not "", and opens the repository
// of the first path's root (openRepo), where ref must name something. It
// returns the repository and the resolved paths.
func openRepoOf(c *Call, field string, args []string, ref string) (*git.Repo, []string, error) {
	paths, err := resolvePaths(c, field, args)
	if err != nil {
		return nil, nil, err
	}
	if ref != "" {
		if err := git.OptionLike("ref", ref); err != nil {
			return nil, nil, err
		}
	}
	near := ""
	if len(paths) > 0 {
		near = paths[0]
	}
	repo, err := openRepo(c, near)
	if err != nil {
		return nil, nil, err
	}
	if ref != "" {
		if err := repo.CheckRev("ref", ref); err != nil {
			return nil, nil, err
		}
	}
	return repo, paths, nil
}

// optionalArg is a path argument that may be left out, as a list.
func optionalArg(arg string) []string {
	if arg == "" {
		return nil
	}
	return []string{arg}
}

// resolvePaths checks each path argument; field names the argument.
func resolvePaths(c *Call, field string, args []string) ([]string, error) {
	var out []string
	for i, a := range args {
		if err := git.OptionLike(fmt.Sprintf("%s/%d", field, i), a); err != nil {
			return nil, err
		}
		p, err := c.Workspace.Resolve(a)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// unapproved reports whether no person approved this call: it runs because
// of the mode, a rule, an allow list or an earlier "always" (or outside the
// runner, where nobody was asked). Wider than automatic (the sandbox's
// test): an earlier "always" for `git status` is no approval of what a
// later `cd sub && git status` runs.
func unapproved(c *Call) bool { return c.Decision.Action != approval.Ask }
