package workspace

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Git metadata is what makes git run programs or find a repository: a
// .git folder or file, a folder shaped like a git directory (HEAD,
// objects/, refs/, config…), .gitattributes naming filter, diff or merge
// drivers, .gitmodules and git configuration files. A write that creates or
// changes any of it must not happen without the person: git run later
// (by a person, an editor or an allow-listed command) would run what it
// names. GitMetadata tells; the tools make such a call ask.

// gitDirMarkers are the entries git looks for in a git directory: HEAD,
// objects/ and refs/ make one (git's is_git_directory); the others are
// what a git directory also holds, and where programs and settings live.
var gitDirMarkers = map[string]bool{
	"HEAD": true, "objects": true, "refs": true,
	"config": true, "config.worktree": true, "index": true, "packed-refs": true, "commondir": true, "gitdir": true,
	"hooks": true, "info": true, "logs": true, "modules": true, "worktrees": true, "shallow": true,
	"FETCH_HEAD": true, "ORIG_HEAD": true, "MERGE_HEAD": true,
}

// gitDirCore are the entries that, present in a folder, make writing any
// other marker into it git metadata (HEAD first: gitMetaTree relies on it).
var gitDirCore = []string{"HEAD", "objects", "refs"}

// builtinDiffDrivers are git's own diff drivers (gitattributes(5), "Defining
// a custom hunk-header"): diff=<one of them> runs no program.
var builtinDiffDrivers = map[string]bool{
	"ada": true, "bash": true, "bibtex": true, "cpp": true, "csharp": true, "css": true, "dts": true, "elixir": true,
	"fortran": true, "fountain": true, "golang": true, "html": true, "java": true, "kotlin": true, "markdown": true,
	"matlab": true, "objc": true, "pascal": true, "perl": true, "php": true, "python": true, "ruby": true, "rust": true,
	"scheme": true, "tex": true,
}

// builtinMergeDrivers are git's own merge drivers.
var builtinMergeDrivers = map[string]bool{"text": true, "binary": true, "union": true}

// GitMetadata returns why a change of the plan p writes git metadata, one
// reason per path, or nil. root returns the workspace root that holds an
// absolute path ("" for none: then only the path's own name is looked at).
// Deletions are not looked at (they ask anyway).
func GitMetadata(p *Plan, root func(path string) string) []string {
	// What the plan itself creates counts as present: one patch may write
	// HEAD, objects/ and refs/ at once.
	planned := map[string]bool{}
	for _, ch := range p.Changes {
		for _, path := range []string{ch.Path, ch.NewPath} {
			if path == "" || ch.Op == OpDelete {
				continue
			}
			if ch.Op == OpRename && path == ch.Path {
				continue
			}
			for d := path; ; d = filepath.Dir(d) {
				planned[d] = true
				if filepath.Dir(d) == d {
					break
				}
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(why string) {
		if why != "" && !seen[why] {
			seen[why] = true
			out = append(out, why)
		}
	}
	for _, ch := range p.Changes {
		switch ch.Op {
		case OpDelete:
			continue
		case OpRename:
			// Moving metadata away or into place both change it.
			add(gitMetaPath(ch.Path, root(ch.Path), nil, planned, true))
			add(gitMetaPath(ch.NewPath, root(ch.NewPath), nil, planned, true))
			add(gitMetaTree(ch.Path, root(ch.NewPath)))
		case OpMkdir:
			add(gitMetaPath(ch.Path, root(ch.Path), nil, planned, true))
		default:
			text := ch.NewText
			add(gitMetaPath(ch.Path, root(ch.Path), &text, planned, false))
		}
	}
	return out
}

// gitMetaPath says why writing path (a folder when dir; a file with
// content, nil when unknown) is git metadata, or "".
func gitMetaPath(path, root string, content *string, planned map[string]bool, dir bool) string {
	rel := filepath.Base(path)
	if root != "" {
		if r, err := filepath.Rel(root, path); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			rel = r
		}
	}
	show := filepath.ToSlash(rel)
	segs := strings.Split(show, "/")
	for _, s := range segs {
		if strings.EqualFold(s, ".git") {
			return fmt.Sprintf("%s is inside a .git folder or is one: git metadata, whose hooks and config make git run programs", show)
		}
	}
	name := segs[len(segs)-1]
	lower := strings.ToLower(name)
	switch {
	case lower == ".gitmodules":
		return fmt.Sprintf("%s is .gitmodules: it names the repositories git fetches as submodules and how they are updated", show)
	case lower == ".gitconfig" || strings.HasSuffix(lower, ".gitconfig") || lower == ".lfsconfig":
		return fmt.Sprintf("%s is a git configuration file: it can name programs git runs", show)
	case lower == ".gitattributes" && !dir:
		if content == nil {
			return fmt.Sprintf("%s is .gitattributes: it can make git run filter, diff and merge programs", show)
		}
		if drivers := gitAttributeDrivers(*content); len(drivers) > 0 {
			return fmt.Sprintf("%s makes git run the programs of the drivers %s (filter, diff and merge drivers run programs "+
				"named in git configuration)", show, strings.Join(drivers, ", "))
		}
	}
	// A folder shaped like a git directory: for each folder on the way
	// (inside the root), is the entry below it a git directory's entry?
	base := root
	if base == "" || rel == filepath.Base(path) && filepath.Dir(path) != root {
		base = filepath.Dir(path)
	}
	for i, s := range segs {
		if !gitDirMarkers[s] {
			continue
		}
		folder := filepath.Join(append([]string{base}, filepath.FromSlash(strings.Join(segs[:i], "/")))...)
		last := i == len(segs)-1
		if s == "HEAD" && last {
			return fmt.Sprintf("%s is a file named HEAD, which with objects/ and refs/ makes %s a git directory "+
				"(whose config names programs git runs)", show, gitShow(strings.Join(segs[:i], "/")))
		}
		for _, core := range gitDirCore {
			if core == s {
				continue
			}
			if planned[filepath.Join(folder, core)] || exists(filepath.Join(folder, core)) {
				return fmt.Sprintf("%s writes %s into %s, which has %s: a folder shaped like a git directory "+
					"(whose config names programs git runs)", show, s, gitShow(strings.Join(segs[:i], "/")), core)
			}
		}
	}
	return ""
}

// gitShow names a folder for a warning.
func gitShow(rel string) string {
	if rel == "" {
		return "the root"
	}
	return rel + "/"
}

// gitMetaTree says why moving the folder src brings git metadata along (a
// .git inside it, or a folder in it with HEAD and objects/ or refs/),
// looking at most at
// gitTreeLimit entries; a folder too large to look through counts as
// metadata.
func gitMetaTree(src, root string) string {
	fi, err := os.Lstat(src)
	if err != nil || !fi.IsDir() {
		return ""
	}
	show := filepath.ToSlash(filepath.Base(src))
	if root != "" {
		if r, err := filepath.Rel(root, src); err == nil {
			show = filepath.ToSlash(r)
		}
	}
	n := 0
	found := ""
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > gitTreeLimit {
			found = fmt.Sprintf("%s holds more than %d entries; it was not looked through for git metadata", show, gitTreeLimit)
			return filepath.SkipAll
		}
		if strings.EqualFold(d.Name(), ".git") {
			found = fmt.Sprintf("%s holds %s: git metadata, whose hooks and config make git run programs", show, filepath.ToSlash(strings.TrimPrefix(p, src+string(filepath.Separator))))
			return filepath.SkipAll
		}
		if d.IsDir() && exists(filepath.Join(p, "HEAD")) {
			shaped := false
			for _, core := range gitDirCore[1:] {
				shaped = shaped || exists(filepath.Join(p, core))
			}
			if shaped {
				found = fmt.Sprintf("%s holds a folder shaped like a git directory (%s)", show, filepath.ToSlash(p))
				return filepath.SkipAll
			}
		}
		return nil
	})
	return found
}

// gitTreeLimit bounds the entries gitMetaTree looks at.
const gitTreeLimit = 20000

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// gitAttributeDrivers returns the drivers a .gitattributes text names that
// run programs: every filter, a diff driver that is not built in, a merge
// driver that is not built in. Macro definitions ([attr]name …) count.
func gitAttributeDrivers(text string) []string {
	set := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			switch k {
			case "filter":
				set["filter="+v] = true
			case "diff":
				if !builtinDiffDrivers[v] {
					set["diff="+v] = true
				}
			case "merge":
				if !builtinMergeDrivers[v] {
					set["merge="+v] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}
