package tools

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentls/agentls/git"
)

// GitLog is git_log: recent commits, newest first.
var GitLog = builtin(Def[gitLogArgs]{
	Spec: Spec{
		Name:     "git_log",
		Category: "git",
		Title:    "Git log",
		Description: "Lists commits, newest first: hash, author, email, date (ISO 8601) and subject. limit is how many (default 20); " +
			"path keeps the commits that touched a file or folder (a file's history follows its renames); ref starts from a branch, tag or commit (default HEAD) " +
			"or takes a range such as main..HEAD.",
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"limit":{"type":"integer","minimum":1,"maximum":1000,"default":20,"description":"number of commits"},
			"path":{"type":"string","description":"only commits touching this file or folder, relative to the workspace root"},
			"ref":{"type":"string","description":"where to start (default HEAD), or a range such as main..HEAD"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["commits","truncated"],"properties":{
			"commits":{"type":"array","items":{"type":"object","required":["hash","author","email","date","subject"],"properties":{
				"hash":{"type":"string"},"author":{"type":"string"},"email":{"type":"string"},
				"date":{"type":"string","description":"author date, ISO 8601"},"subject":{"type":"string"}}}},
			"truncated":{"type":"boolean","description":"more commits match than limit"}}}`),
	},
	Execute: gitLog,
})

type gitLogArgs struct {
	Limit int    `json:"limit"`
	Path  string `json:"path"`
	Ref   string `json:"ref"`
}

// gitCommitInfo is one commit of git_log.
type gitCommitInfo struct {
	Hash    string `json:"hash"`
	Author  string `json:"author"`
	Email   string `json:"email"`
	Date    string `json:"date"`
	Subject string `json:"subject"`
}

func gitLog(c *Call, a gitLogArgs) (*Result, error) {
	if a.Limit == 0 {
		a.Limit = 20
	}
	repo, paths, err := openRepoOf(c, "path", optionalArg(a.Path), a.Ref)
	if err != nil {
		return nil, err
	}
	commits := []gitCommitInfo{}
	if a.Ref == "" {
		ok, err := repo.HasCommits()
		if err != nil {
			return nil, err
		}
		if !ok {
			return Success("No commits yet.\n", map[string]any{"commits": commits, "truncated": false}), nil
		}
	}
	args := []string{"log", "--no-color", "--format=%H%x1f%an%x1f%ae%x1f%aI%x1f%s", "-z", "-n", strconv.Itoa(a.Limit + 1)}
	if len(paths) == 1 {
		if fi, err := c.Workspace.StatAny(paths[0]); err == nil && fi.Mode().IsRegular() {
			args = append(args, "--follow") // one file's history goes on across renames
		}
	}
	args = append(args, "--end-of-options")
	if a.Ref != "" {
		args = append(args, a.Ref)
	}
	args = append(args, "--")
	args = append(args, paths...)
	out, err := repo.Run(git.Cmd{}, args...)
	if err != nil {
		return nil, err
	}
	for _, rec := range strings.Split(string(out.Stdout), "\x00") {
		f := strings.SplitN(strings.TrimPrefix(rec, "\n"), "\x1f", 5)
		if len(f) != 5 {
			continue
		}
		commits = append(commits, gitCommitInfo{Hash: f[0], Author: f[1], Email: f[2], Date: f[3], Subject: strings.TrimRight(f[4], "\n")})
	}
	truncated := len(commits) > a.Limit
	if truncated {
		commits = commits[:a.Limit]
	}
	var b strings.Builder
	for _, cm := range commits {
		fmt.Fprintf(&b, "%s %s %s <%s> %s\n", shortHash(cm.Hash), cm.Date, cm.Author, cm.Email, cm.Subject)
	}
	if len(commits) == 0 {
		b.WriteString("No commits match.\n")
	}
	if truncated {
		fmt.Fprintf(&b, "[first %d commits; raise limit for more]\n", a.Limit)
	}
	return Success(b.String(), map[string]any{"commits": commits, "truncated": truncated}), nil
}
