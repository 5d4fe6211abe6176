package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agentls/agentls/workspace"
	"github.com/bmatcuk/doublestar/v4"
)

// Glob is glob: the workspace's files whose paths match a doublestar
// pattern, with ripgrep's defaults (ignored and hidden files skipped).
var Glob = builtin(Def[globArgs]{
	Spec: Spec{
		Name:     "glob",
		Category: "fs",
		Title:    "Find files by name",
		Description: "Lists the workspace's files whose paths match a glob pattern: `*` and `?` within one path segment, `**` across " +
			"directories, `{a,b}` alternatives, `[a-z]` classes. The pattern is matched against paths relative to path (default the " +
			"workspace root): \"**/*.go\" finds Go files at any depth, \"*.go\" only at the top, \"src/**/*_test.go\" below src. " +
			"Files in .gitignore/.ignore and hidden files are skipped (unless include_ignored, or the pattern names a hidden path such as " +
			"\".github/**\"). sort \"path\" (default) or \"mtime\" (newest first); at most limit paths, truncated says when there were more. " +
			"Paths are relative to the workspace root. A pattern that leads outside the workspace (\"../*\", an absolute path " +
			"outside, \"..\" after a wildcard, a symlinked directory leading out) is INVALID_PATH; symlinks are never walked into.",
		Aliases:     []string{"searchFiles", "search_files"},
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		Cacheable:   true,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["pattern"],"properties":{
			"pattern":{"type":"string","description":"glob pattern such as \"**/*.go\" or \"src/**/*.{ts,tsx}\""},
			"path":{"type":"string","default":".","description":"directory to search, relative to the workspace root"},
			"include_ignored":{"type":"boolean","default":false,"description":"also list files the ignore files exclude"},
			"sort":{"enum":["path","mtime"],"default":"path","description":"path order, or modification time, newest first"},
			"limit":{"type":"integer","minimum":1,"maximum":100000,"description":"maximum paths returned (default: limits.grepMaxResults)"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["files","truncated"],"properties":{
			"files":{"type":"array","items":{"type":"string"}},"truncated":{"type":"boolean"},"total":{"type":"integer"}}}`),
	},
	Execute: glob,
})

type globArgs struct {
	Pattern        string `json:"pattern"`
	Path           string `json:"path"`
	IncludeIgnored bool   `json:"include_ignored"`
	Sort           string `json:"sort"`
	Limit          int    `json:"limit"`
}

func glob(c *Call, a globArgs) (*Result, error) {
	if a.Path == "" {
		a.Path = "."
	}
	pattern := filepath.ToSlash(a.Pattern)
	if strings.HasPrefix(pattern, "./") {
		pattern = strings.TrimPrefix(pattern, "./")
	}
	base := a.Path
	if filepath.IsAbs(a.Pattern) || strings.HasPrefix(pattern, "/") {
		// An absolute pattern: its fixed leading directories are the path,
		// confined like any path argument.
		dir, rest := doublestar.SplitPattern(pattern)
		base, pattern = filepath.FromSlash(dir), rest
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, Errorf(InvalidParams, "pattern %q is not a valid glob", a.Pattern)
	}
	root, rootRel, err := resolveDir(c, base, "is not a directory; glob searches a directory")
	if err != nil {
		return nil, err
	}
	limit := a.Limit
	if limit <= 0 {
		limit = c.Workspace.Config().Limits.GrepMaxResults
	}
	// Patterns are confined like paths. The fixed leading directories are
	// resolved as a path (so "../x/*", "a/../../*" or a symlinked directory
	// leading outside is INVALID_PATH) and the walk starts there; ".." after
	// a wildcard could climb anywhere and is refused.
	walkRoot, fixed, rest := root, "", pattern
	if dir, r := doublestar.SplitPattern(pattern); dir != "." && dir != "" && !strings.Contains(dir, `\`) {
		fixed, rest = dir, r
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == ".." {
			return nil, Errorf(InvalidPath, "pattern %q has \"..\" after a wildcard, which could leave the workspace; "+
				"give the directory to search in path instead", a.Pattern)
		}
	}
	if fixed != "" {
		joined := filepath.Join(root, filepath.FromSlash(fixed))
		if walkRoot, err = c.Workspace.Resolve(joined); err != nil {
			var pe *workspace.PathError
			if errors.As(err, &pe) && pe.Code == string(InvalidPath) {
				return nil, Errorf(InvalidPath, "pattern %q leads outside the workspace (%s); patterns are confined like paths", a.Pattern, pe.Reason)
			}
			return nil, err
		}
		if fi, err := c.Workspace.Stat(walkRoot); err != nil || !fi.IsDir() {
			return globResult(nil, limit), nil
		}
	}
	prefix := ""
	if r := c.Workspace.Rel(walkRoot); r != "." {
		prefix = r + "/"
	}
	// Kept only when base and the fixed directories name the walked one
	// without a symlink on the way (resultcache_tree.go).
	tree := c.dependsOnTree(filepath.Join(base, filepath.FromSlash(fixed)), walkRoot)
	opts := workspace.WalkOptions{
		Prune: func(rel string) bool {
			tree.enter(filepath.Join(walkRoot, filepath.FromSlash(rel)))
			return true
		},
		IncludeIgnored: a.IncludeIgnored,
		IncludeHidden:  namesHidden(rest),
		Filter: func(rel string, isDir bool) workspace.Verdict {
			if !isDir {
				return 0
			}
			// Skip directories the pattern cannot reach into.
			if !couldMatchBelow(rest, rel) {
				return workspace.Skip
			}
			return 0
		},
	}
	var mu sync.Mutex
	var found []globFile
	_, err = c.Workspace.Walk(c.Ctx, walkRoot, opts, func(f *workspace.File) error {
		if !f.IsRegular() {
			return nil
		}
		if ok, _ := doublestar.Match(rest, f.Rel); !ok {
			return nil
		}
		g := globFile{path: prefix + f.Rel}
		if a.Sort == "mtime" {
			if info, err := f.Info(); err == nil {
				g.mtime = info.ModTime().UnixNano()
			}
		}
		mu.Lock()
		found = append(found, g)
		mu.Unlock()
		return nil
	})
	if err != nil {
		if c.Ctx.Err() != nil {
			return nil, c.Ctx.Err()
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Errorf(FileNotFound, "%s does not exist", rootRel)
		}
		return nil, fileError(rootRel, err)
	}
	tree.done(true)
	if a.Sort == "mtime" {
		sort.Slice(found, func(i, j int) bool {
			if found[i].mtime != found[j].mtime {
				return found[i].mtime > found[j].mtime
			}
			return workspace.ComparePaths(found[i].path, found[j].path) < 0
		})
	} else {
		sort.Slice(found, func(i, j int) bool { return workspace.ComparePaths(found[i].path, found[j].path) < 0 })
	}
	return globResult(found, limit), nil
}

type globFile struct {
	path  string
	mtime int64
}

func globResult(found []globFile, limit int) *Result {
	truncated := len(found) > limit
	total := len(found)
	if truncated {
		found = found[:limit]
	}
	files := make([]string, len(found))
	var b strings.Builder
	for i, f := range found {
		files[i] = f.path
		b.WriteString(f.path)
		b.WriteByte('\n')
	}
	content := b.String()
	if len(files) == 0 {
		content = "No files found.\n"
	}
	if truncated {
		content += fmt.Sprintf("[%d of %d files; narrow the pattern or raise limit]\n", limit, total)
	}
	return Success(content, map[string]any{"files": files, "truncated": truncated, "total": total})
}

// namesHidden reports whether a pattern names a hidden path literally (a
// segment starting with '.'), so that the walk must not skip hidden entries.
func namesHidden(pattern string) bool {
	for _, seg := range strings.Split(pattern, "/") {
		if strings.HasPrefix(seg, ".") && seg != "." && seg != ".." {
			return true
		}
	}
	return false
}

// couldMatchBelow reports whether some path below dir may match pattern: a
// cheap check on the pattern's leading segments, conservative when unsure.
func couldMatchBelow(pattern, dir string) bool {
	pSegs := strings.Split(pattern, "/")
	dSegs := strings.Split(dir, "/")
	for i, d := range dSegs {
		if i >= len(pSegs)-1 {
			// The pattern's last segment names files; a directory this deep
			// can only hold matches through "**".
			return i < len(pSegs) && strings.Contains(pSegs[i], "**")
		}
		p := pSegs[i]
		if strings.Contains(p, "**") {
			return true
		}
		if ok, err := doublestar.Match(p, d); err != nil || !ok {
			return err != nil
		}
	}
	return true
}
