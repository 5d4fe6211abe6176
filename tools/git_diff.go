package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentls/agentls/git"
)

// GitDiff is git_diff: the changes of the work tree, the index or a
// revision, as a unified diff with per-file counts.
var GitDiff = builtin(Def[gitDiffArgs]{
	Spec: Spec{
		Name:     "git_diff",
		Category: "git",
		Title:    "Git diff",
		Description: "Shows changes as a unified diff with a per-file summary. By default the work tree against the index (changes not yet " +
			"staged); staged: true shows the staged changes (what git_commit would commit); ref compares against a revision " +
			"(a branch, tag, commit, HEAD~1, or a range such as main..HEAD). path limits the diff to a file or folder. " +
			"Files matching the sensitive patterns are listed but their content is left out. Long diffs are cut " +
			"(limits.maxOutputBytes); narrow them with path. It reads the disk: unsaved editor buffers are not seen by git.",
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"path":{"type":"string","description":"only this file or folder, relative to the workspace root"},
			"staged":{"type":"boolean","default":false,"description":"show staged changes (index against HEAD, or against ref)"},
			"ref":{"type":"string","description":"revision or range to compare with, such as HEAD~1, main or main..HEAD"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["diff","files","truncated"],"properties":{
			"diff":{"type":"string"},
			"files":{"type":"array","items":{"type":"object","required":["path","status","additions","deletions","binary"],"properties":{
				"path":{"type":"string"},"old_path":{"type":"string"},"status":{"type":"string"},
				"additions":{"type":"integer"},"deletions":{"type":"integer"},"binary":{"type":"boolean"},
				"sensitive":{"type":"boolean","description":"content left out: the path matches paths.sensitive"}}}},
			"truncated":{"type":"boolean"}}}`),
	},
	Execute: gitDiff,
})

type gitDiffArgs struct {
	Path   string `json:"path"`
	Staged bool   `json:"staged"`
	Ref    string `json:"ref"`
}

func gitDiff(c *Call, a gitDiffArgs) (*Result, error) {
	repo, paths, err := openRepoOf(c, "path", optionalArg(a.Path), a.Ref)
	if err != nil {
		return nil, err
	}
	d := git.DiffSpec{Paths: paths}
	if a.Ref != "" {
		d.Revs = []string{a.Ref}
	}
	if a.Staged {
		d.Opts = []string{"--cached"}
	}
	files, err := repo.DiffFiles(git.Cmd{}, d)
	if err != nil {
		return nil, err
	}
	limit := c.Workspace.Config().Limits.MaxOutputBytes
	text, truncated, err := repo.DiffText(git.Cmd{}, d, files, limit, false)
	if err != nil {
		return nil, err
	}
	if truncated {
		// End on a whole line.
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i+1]
		}
	}
	s := map[string]any{"diff": text, "files": files, "truncated": truncated}
	return Success(gitDiffContent(a, files, text, truncated), s), nil
}

// gitDiffContent is git_diff's content: a summary line per file, then the
// diff.
func gitDiffContent(a gitDiffArgs, files []git.DiffFile, text string, truncated bool) string {
	if len(files) == 0 {
		switch {
		case a.Ref != "":
			return fmt.Sprintf("No differences against %s.\n", a.Ref)
		case a.Staged:
			return "No staged changes.\n"
		}
		return "No unstaged changes (staged: true shows staged ones).\n"
	}
	var b strings.Builder
	adds, dels := 0, 0
	for _, f := range files {
		adds += f.Additions
		dels += f.Deletions
	}
	fmt.Fprintf(&b, "%d file(s) changed, +%d -%d\n", len(files), adds, dels)
	for _, f := range files {
		name := f.Path
		if f.OldPath != "" {
			name = f.OldPath + " -> " + f.Path
		}
		switch {
		case f.Binary:
			fmt.Fprintf(&b, "  %s %s (binary)\n", f.Status, name)
		default:
			fmt.Fprintf(&b, "  %s %s +%d -%d\n", f.Status, name, f.Additions, f.Deletions)
		}
		if f.Sensitive {
			fmt.Fprintf(&b, "    (content not shown: the path matches paths.sensitive)\n")
		}
	}
	b.WriteString("\n")
	b.WriteString(text)
	if truncated {
		b.WriteString("\n[diff cut at limits.maxOutputBytes; give path to see one file]\n")
	}
	return b.String()
}
