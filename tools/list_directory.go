package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/agentls/agentls/workspace"
)

// ListDirectory is list_directory.
var ListDirectory = builtin(Def[listDirectoryArgs]{
	Spec: Spec{
		Name:     "list_directory",
		Category: "fs",
		Title:    "List directory",
		Description: "Lists the entries of a directory of the workspace: directories end with /, symlinks show their target. " +
			"recursive lists the whole tree below it (max_depth limits the depth; 1 is the directory's own entries). " +
			"Entries that .gitignore (and .ignore) exclude are left out, and so are hidden ones (a name starting with '.') unless " +
			"include_hidden. Paths are relative to the workspace root. At most 1000 entries are returned; truncated says when there were more.",
		Aliases:     []string{"listFiles", "ls"},
		Annotations: Annotations{ReadOnly: true, Approval: "auto"},
		Cacheable:   true,
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"path":{"type":"string","default":".","description":"directory path, relative to the workspace root or absolute inside it"},
			"recursive":{"type":"boolean","default":false,"description":"list the whole tree below the directory"},
			"include_hidden":{"type":"boolean","default":false,"description":"include entries whose name starts with '.'"},
			"max_depth":{"type":"integer","minimum":1,"description":"how deep to list: 1 is the directory's own entries (a value over 1 implies recursive)"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","required":["path","entries","truncated","total"],"properties":{
			"path":{"type":"string"},
			"entries":{"type":"array","items":{"type":"object","required":["path","name","type"],"properties":{
				"path":{"type":"string"},"name":{"type":"string"},
				"type":{"enum":["file","directory","symlink","other"]},
				"size":{"type":"integer"},"mtime":{"type":"string","format":"date-time"},"target":{"type":"string"},"depth":{"type":"integer"}}}},
			"truncated":{"type":"boolean"},"total":{"type":"integer"},
			"ignored":{"type":"integer"},"hidden":{"type":"integer"}}}`),
	},
	Execute: listDirectory,
})

// listMaxEntries caps the entries of one listing.
const listMaxEntries = 1000

// listCollectCap bounds how many entries a walk collects before it stops.
const listCollectCap = 50 * listMaxEntries

type listDirectoryArgs struct {
	Path          string `json:"path"`
	Recursive     bool   `json:"recursive"`
	IncludeHidden bool   `json:"include_hidden"`
	MaxDepth      int    `json:"max_depth"`
}

// ListEntry is one entry of list_directory's structured result.
type ListEntry struct {
	Path string `json:"path"`
	Name string `json:"name"`
	Type string `json:"type"`
	Size *int64 `json:"size,omitempty"`
	// Mtime is the entry's modification time (of a symlink itself, not its
	// target), RFC 3339 in UTC with nanoseconds; absent when it could not
	// be read.
	Mtime  string `json:"mtime,omitempty"`
	Target string `json:"target,omitempty"`
	Depth  int    `json:"depth"`
}

var errListFull = errors.New("listing full")

func listDirectory(c *Call, a listDirectoryArgs) (*Result, error) {
	if a.Path == "" {
		a.Path = "."
	}
	dir, rel, err := resolveDir(c, a.Path, "is a file, not a directory; read it with read_file")
	if err != nil {
		return nil, err
	}
	depth := a.MaxDepth
	if !a.Recursive && depth <= 1 {
		depth = 1
	}
	prefix := ""
	if rel != "." {
		prefix = rel + "/"
	}
	var mu sync.Mutex
	var entries []ListEntry
	tree := c.dependsOnTree(a.Path, dir)
	stats, err := c.Workspace.Walk(c.Ctx, dir, workspace.WalkOptions{
		IncludeHidden: a.IncludeHidden, Dirs: true, MaxDepth: depth, Roots: c.Workspace.Roots(),
	}, func(f *workspace.File) error {
		e := ListEntry{Path: prefix + f.Rel, Name: f.Name, Depth: f.Depth}
		info, ierr := f.Info()
		if ierr == nil {
			e.Mtime = formatMtime(info.ModTime())
		}
		var skip error
		switch {
		case f.IsDir():
			e.Type = "directory"
			// Names are shown, but a sensitive folder (.ssh) is not entered.
			if c.Workspace.IsSensitive(e.Path) {
				skip = fs.SkipDir
			}
			tree.enter(f.Path) // its mtime is shown: it moves with its entries
		case f.Type&fs.ModeSymlink != 0:
			e.Type = "symlink"
			e.Target, _ = f.Readlink()
		case f.IsRegular():
			e.Type = "file"
			if ierr == nil {
				n := info.Size()
				e.Size = &n
			}
		default:
			e.Type = "other"
		}
		mu.Lock()
		defer mu.Unlock()
		if len(entries) >= listCollectCap {
			return errListFull
		}
		entries = append(entries, e)
		return skip
	})
	full := errors.Is(err, errListFull)
	if err != nil && !full {
		if c.Ctx.Err() != nil {
			return nil, c.Ctx.Err()
		}
		return nil, fileError(rel, err)
	}
	tree.done(!full)
	sort.Slice(entries, func(i, j int) bool { return workspace.ComparePaths(entries[i].Path, entries[j].Path) < 0 })
	total := len(entries)
	truncated := full || total > listMaxEntries
	if total > listMaxEntries {
		entries = entries[:listMaxEntries]
	}
	if entries == nil {
		entries = []ListEntry{}
	}
	var b strings.Builder
	shown := rel
	if shown != "." {
		shown += "/"
	}
	for _, e := range entries {
		b.WriteString(e.Path)
		switch e.Type {
		case "directory":
			b.WriteByte('/')
		case "symlink":
			b.WriteString(" -> " + e.Target)
		}
		b.WriteByte('\n')
	}
	if len(entries) == 0 {
		fmt.Fprintf(&b, "%s is empty", shown)
		if stats.Hidden.Load() > 0 || stats.Ignored.Load() > 0 {
			b.WriteString(" (apart from hidden or ignored entries)")
		}
		b.WriteString(".\n")
	}
	var notes []string
	if truncated {
		more := "more"
		if !full {
			more = fmt.Sprint(total - len(entries))
		}
		notes = append(notes, fmt.Sprintf("truncated: %d entries shown, %s not; list a subdirectory or lower max_depth", len(entries), more))
	}
	if n := stats.Ignored.Load(); n > 0 {
		notes = append(notes, fmt.Sprintf("%d ignored by .gitignore not shown", n))
	}
	if n := stats.Hidden.Load(); n > 0 && !a.IncludeHidden {
		notes = append(notes, fmt.Sprintf("%d hidden not shown (include_hidden)", n))
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, "[%s]\n", strings.Join(notes, "; "))
	}
	return Success(b.String(), map[string]any{
		"path": path.Clean(rel), "entries": entries, "truncated": truncated, "total": total,
		"ignored": stats.Ignored.Load(), "hidden": stats.Hidden.Load(),
	}), nil
}
