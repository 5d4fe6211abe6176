package workspace

import (
	"io/fs"
	"strings"
)

// The operations of a FileChange.
const (
	OpCreate = "create" // a new file with NewText (Overwrite: replace an existing one)
	OpModify = "modify" // OldText becomes NewText
	OpDelete = "delete" // remove the file (Dir: a directory, recursively)
	OpRename = "rename" // move Path to NewPath (Overwrite: replace the target)
	OpMkdir  = "mkdir"  // create the directory Path and its parents
)

// FileChange is one change of an edit plan. Paths are absolute.
type FileChange struct {
	Op        string
	Path      string
	NewPath   string // rename only
	OldText   string // modify, delete, create with Overwrite: the text now (the buffer's when open)
	NewText   string // create, modify
	Dir       bool   // delete or mkdir of a directory
	Overwrite bool   // create or rename over an existing file
	Binary    bool   // NewText is bytes, not text: only the server can write it
	// Mode, for a create, is the permission bits the file gets, whoever
	// writes its text (copy_file: the source's); 0 leaves them as they
	// are (an existing file's, or the default of a new one).
	Mode fs.FileMode
	// Version is the open document's version OldText was taken from, or 0
	// when the file is not open in the editor.
	Version int32
}

// Plan is what a call would change, computed before anything is written.
type Plan struct {
	Changes []FileChange
}

// UnifiedDiff renders the plan for a person: one unified diff per file, with
// paths made relative by rel.
func (p *Plan) UnifiedDiff(rel func(string) string) string {
	var b strings.Builder
	for _, c := range p.Changes {
		switch c.Op {
		case OpCreate:
			if c.Overwrite {
				b.WriteString(UnifiedDiff(rel(c.Path), rel(c.Path), c.OldText, c.NewText))
			} else {
				b.WriteString(UnifiedDiff("", rel(c.Path), "", c.NewText))
			}
		case OpModify:
			b.WriteString(UnifiedDiff(rel(c.Path), rel(c.Path), c.OldText, c.NewText))
		case OpDelete:
			if c.Dir {
				b.WriteString("delete directory " + rel(c.Path) + "/ (recursively)\n")
			} else {
				b.WriteString(UnifiedDiff(rel(c.Path), "", c.OldText, ""))
			}
		case OpRename:
			b.WriteString("rename " + rel(c.Path) + " → " + rel(c.NewPath) + "\n")
		case OpMkdir:
			b.WriteString("create directory " + rel(c.Path) + "/\n")
		}
	}
	return b.String()
}
