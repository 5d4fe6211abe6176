package tools

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/git"
	"github.com/agentls/agentls/workspace"
)

// GitCommit is git_commit: commits the staged changes and the named files.
// Its approval shows exactly the diff that would be committed.
var GitCommit = builtin(Def[gitCommitArgs]{
	Spec: Spec{
		Name:     "git_commit",
		Category: "git",
		Title:    "Git commit",
		Description: "Commits the staged changes plus the files named in files (staged first, like `git add`; deletions included) " +
			"with message. The person approving sees the diff that would be committed. Files matching the sensitive patterns " +
			"(paths.sensitive) inside a named folder are not staged (left_out lists them). Without files, only what is already " +
			"staged is committed; with nothing to commit it fails. Git hooks of the repository run as usual. " +
			"Unsaved editor buffers are not committed: git reads the disk.",
		Annotations: Annotations{Approval: "ask"},
		Risk:        approval.RiskWrite,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["message"],"properties":{
			"message":{"type":"string","minLength":1,"description":"the commit message: a subject line, optionally a blank line and a body"},
			"files":{"type":"array","items":{"type":"string","minLength":1},"description":"files or folders to stage and commit along with what is staged, relative to the workspace root"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["hash","branch","subject","files"],"properties":{
			"hash":{"type":"string"},"branch":{"type":"string"},"subject":{"type":"string"},
			"files":{"type":"array","items":{"type":"object","required":["path","status"],"properties":{
				"path":{"type":"string"},"old_path":{"type":"string"},"status":{"type":"string"},
				"additions":{"type":"integer"},"deletions":{"type":"integer"},"binary":{"type":"boolean"},"sensitive":{"type":"boolean"}}}},
			"additions":{"type":"integer"},"deletions":{"type":"integer"},
			"unsaved":{"type":"array","items":{"type":"string"},"description":"committed files open in the editor with unsaved changes"},
			"left_out":{"type":"array","items":{"type":"string"},"description":"files under the named folders that match paths.sensitive: not staged"}}}`),
	},
	Validate: func(a gitCommitArgs) error {
		if strings.TrimSpace(a.Message) == "" {
			return Errorf(InvalidParams, "message is empty")
		}
		for i, f := range a.Files {
			if err := git.OptionLike(fmt.Sprintf("files/%d", i), f); err != nil {
				return err
			}
		}
		return nil
	},
	Assess:  assessGitCommit,
	Execute: gitCommit,
})

type gitCommitArgs struct {
	Message string   `json:"message"`
	Files   []string `json:"files"`
}

// gitPreviewMax caps the diff shown to the person who approves a commit.
const gitPreviewMax = 4 << 20

// gitCommitPlan is what a commit would contain.
type gitCommitPlan struct {
	repo  *git.Repo
	paths []string // the named files, absolute
	// stage, when set, replaces paths as what `git add` is given: the
	// files the named ones expand to, without the sensitive ones.
	stage []string
	// leftOut are the sensitive files the named ones expand to, which are
	// not staged (relative to their root).
	leftOut []string
	files   []git.DiffFile
	diff    string
	// texts holds the text of each file before ("HEAD:path") and after
	// (":0:path") the commit, for editors that show the two side by side;
	// nil when they are binary or too large.
	texts map[string][]byte
}

// gitPreviewTexts caps the file texts put in a commit's preview.
const gitPreviewTexts = 8 << 20

// commitTexts reads the texts a commit changes, before and after.
func commitTexts(repo *git.Repo, o git.Cmd, files []git.DiffFile) map[string][]byte {
	var names []string
	for _, f := range files {
		if f.Binary {
			continue
		}
		old := f.GitPath
		if f.GitOldPath != "" {
			old = f.GitOldPath
		}
		names = append(names, "HEAD:"+old, ":0:"+f.GitPath)
	}
	texts, err := repo.Blobs(o, names, gitPreviewTexts)
	if err != nil {
		return nil
	}
	return texts
}

// planGitCommit computes the diff a commit would record, by staging the
// named files into a throwaway copy of the index: the repository is not
// changed.
func planGitCommit(c *Call, a gitCommitArgs) (*gitCommitPlan, error) {
	repo, paths, err := openRepoOf(c, "files", a.Files, "")
	if err != nil {
		return nil, err
	}
	repo.SetSafe(true)
	p := &gitCommitPlan{repo: repo, paths: paths}
	d := git.DiffSpec{Opts: []string{"--cached"}}
	err = repo.WithTempIndex(func(env []string) error {
		o := git.Cmd{Env: env}
		if len(paths) > 0 {
			if err := p.stageNamed(c, o); err != nil {
				return err
			}
		}
		files, err := repo.DiffFiles(o, d)
		if err != nil {
			return err
		}
		text, cut, err := repo.DiffText(o, d, files, gitPreviewMax, true)
		if err != nil {
			return err
		}
		if cut {
			text += "\n[diff cut at 4 MiB]\n"
		}
		p.files, p.diff = files, text
		p.texts = commitTexts(repo, o, files)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.files) == 0 {
		msg := "nothing to commit: no changes are staged"
		if len(paths) > 0 {
			msg = "nothing to commit: the named files have no changes and nothing else is staged"
		}
		if len(p.leftOut) > 0 {
			msg += fmt.Sprintf(" (left out, matching paths.sensitive: %s)", strings.Join(p.leftOut, ", "))
		}
		return nil, Errorf(ExecutionError, "%s; name the files to commit in files, or see git_status", msg)
	}
	return p, nil
}

// stageNamed stages the named files into the throwaway index of o the way
// `git add` does, except that a sensitive file (paths.sensitive) that a
// named folder brings in is not staged: it is put back as it was and listed
// in leftOut, and stage lists exactly what is staged instead. The agent can
// name no sensitive file (Resolve refuses it), so a sensitive file reaches
// a commit only when the person staged it; then the commit asks as
// dangerous.
func (p *gitCommitPlan) stageNamed(c *Call, o git.Cmd) error {
	repo := p.repo
	before, err := repo.IndexEntries(o)
	if err != nil {
		return err
	}
	if _, err := repo.Run(o, append([]string{"add", "--"}, p.paths...)...); err != nil {
		return err
	}
	after, err := repo.IndexEntries(o)
	if err != nil {
		return err
	}
	var changed []string
	for path, e := range after {
		if before[path] != e {
			changed = append(changed, path)
		}
	}
	for path := range before {
		if _, ok := after[path]; !ok {
			changed = append(changed, path)
		}
	}
	sort.Strings(changed)
	var keep, drop []string
	for _, path := range changed {
		if c.Workspace.IsSensitive(repo.Rel(path)) {
			drop = append(drop, path)
			p.leftOut = append(p.leftOut, repo.Rel(path))
		} else {
			keep = append(keep, filepath.Join(repo.Top(), filepath.FromSlash(path)))
		}
	}
	if len(drop) == 0 {
		return nil
	}
	// Put the sensitive entries back as they were.
	var in strings.Builder
	for _, path := range drop {
		in.WriteString("0 0000000000000000000000000000000000000000\t" + path + "\x00")
		for _, rec := range strings.Split(strings.TrimSuffix(before[path], "\x00"), "\x00") {
			if rec != "" {
				in.WriteString(rec + "\x00")
			}
		}
	}
	if _, err := repo.Run(git.Cmd{Env: o.Env, Stdin: strings.NewReader(in.String())}, "update-index", "-z", "--index-info"); err != nil {
		return err
	}
	p.stage = keep
	if p.stage == nil {
		p.stage = []string{}
	}
	return nil
}

// add stages the plan's files into the repository's index.
func (p *gitCommitPlan) add() error {
	switch {
	case p.stage == nil && len(p.paths) > 0:
		_, err := p.repo.Run(git.Cmd{}, append([]string{"add", "--"}, p.paths...)...)
		return err
	case len(p.stage) > 0:
		list := strings.Join(p.stage, "\x00") + "\x00"
		_, err := p.repo.Run(git.Cmd{Stdin: strings.NewReader(list)}, "add", "--pathspec-from-file=-", "--pathspec-file-nul")
		return err
	}
	return nil
}

// unsaved lists the files of the commit that are open in the editor with
// text that differs from the disk.
func (p *gitCommitPlan) unsaved(c *Call) []string {
	var out []string
	for _, f := range p.files {
		abs := filepath.Join(p.repo.Top(), filepath.FromSlash(f.GitPath))
		doc, ok := c.Workspace.Overlays.Get(abs)
		if !ok {
			continue
		}
		if diskDiffers(c.Workspace, abs, doc.Text) {
			out = append(out, f.Path)
		}
	}
	return out
}

func assessGitCommit(c *Call, a gitCommitArgs) (Assessment, error) {
	p, err := planGitCommit(c, a)
	if err != nil {
		return Assessment{}, err
	}
	pv := &approval.Preview{UnifiedDiff: p.diff}
	var sensitive []string
	for _, f := range p.files {
		abs := filepath.Join(p.repo.Top(), filepath.FromSlash(f.Path))
		fp := approval.FilePreview{Path: f.Path, URI: workspace.PathToURI(abs), Operation: workspace.OpModify}
		switch f.Status {
		case "added", "copied":
			fp.Operation = workspace.OpCreate
		case "deleted":
			fp.Operation = workspace.OpDelete
		case "renamed":
			fp.Operation = workspace.OpRename
			fp.Path, fp.NewPath = f.OldPath, f.Path
			fp.URI = workspace.PathToURI(filepath.Join(p.repo.Top(), filepath.FromSlash(f.OldPath)))
		}
		if !f.Binary {
			old := f.GitPath
			if f.GitOldPath != "" {
				old = f.GitOldPath
			}
			if t, ok := p.texts["HEAD:"+old]; ok && fp.Operation != workspace.OpCreate && utf8.Valid(t) {
				s := string(t)
				fp.OldText = &s
			}
			if t, ok := p.texts[":0:"+f.GitPath]; ok && fp.Operation != workspace.OpDelete && utf8.Valid(t) {
				s := string(t)
				fp.NewText = &s
			}
		}
		pv.Files = append(pv.Files, fp)
		if f.Sensitive {
			sensitive = append(sensitive, f.Path)
		}
	}
	as := Assessment{Preview: pv}
	var warnings []string
	if unsaved := p.unsaved(c); len(unsaved) > 0 {
		warnings = append(warnings, "unsaved in the editor (the commit takes the file on disk): "+strings.Join(unsaved, ", "))
	}
	if len(p.leftOut) > 0 {
		warnings = append(warnings, "not staged, matching paths.sensitive: "+strings.Join(p.leftOut, ", "))
	}
	if w := p.repo.ProgramsWarning("the commit"); w != "" {
		warnings = append(warnings, w)
	}
	as.Warning = strings.Join(warnings, "; ")
	if len(sensitive) > 0 {
		// Secrets in history are hard to take back: always ask.
		as.Dangerous = true
		as.Warning = strings.TrimPrefix(as.Warning+"; the commit includes files matching the sensitive patterns (paths.sensitive): "+
			strings.Join(sensitive, ", "), "; ")
	}
	return as, nil
}

func gitCommit(c *Call, a gitCommitArgs) (*Result, error) {
	p, err := planGitCommit(c, a)
	if err != nil {
		return nil, err
	}
	// The plan is made as the assessment made it (automatic git, no
	// program of the repository), to compare it with what was approved;
	// the commit itself runs as the call was decided.
	if pv := c.Assessed.Preview; pv != nil && pv.UnifiedDiff != p.diff {
		return nil, Errorf(StaleFile, "the changes to commit are no longer the ones that were approved (files or the index "+
			"changed meanwhile); nothing was committed; call git_commit again")
	}
	repo := p.repo
	repo.SetSafe(unapproved(c))
	if err := p.add(); err != nil {
		return nil, err
	}
	if _, err := repo.Run(git.Cmd{Stdin: strings.NewReader(a.Message)}, "commit", "--quiet", "--file=-"); err != nil {
		return nil, err
	}
	out, err := repo.Run(git.Cmd{}, "log", "-1", "--format=%H%x1f%s", "--end-of-options", "HEAD")
	if err != nil {
		return nil, err
	}
	hash, subject, _ := strings.Cut(strings.TrimSpace(string(out.Stdout)), "\x1f")
	branch, err := repo.CurrentBranch()
	if err != nil {
		return nil, err
	}
	adds, dels := 0, 0
	for _, f := range p.files {
		adds += f.Additions
		dels += f.Deletions
	}
	s := map[string]any{"hash": hash, "branch": branch, "subject": subject, "files": p.files, "additions": adds, "deletions": dels}
	if len(p.leftOut) > 0 {
		s["left_out"] = p.leftOut
	}
	where := branch
	if where == "" {
		where = "detached HEAD"
	}
	content := fmt.Sprintf("Committed %s on %s: %s\n%d file(s) changed, +%d -%d\n", shortHash(hash), where, subject, len(p.files), adds, dels)
	if len(p.leftOut) > 0 {
		content += "Not staged, matching paths.sensitive: " + strings.Join(p.leftOut, ", ") + "\n"
	}
	if unsaved := p.unsaved(c); len(unsaved) > 0 {
		s["unsaved"] = unsaved
		content += "Unsaved in the editor, committed as on disk: " + strings.Join(unsaved, ", ") + "\n"
	}
	return Success(content, s), nil
}
