package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentls/agentls/approval"
	"github.com/agentls/agentls/workspace"
)

// TextEditor is str_replace_based_edit_tool: Anthropic's text editor tool,
// with the commands Claude models are trained on, built on the file tools
// (read_file, list_directory, write_file, edit_file) and reviewed like them.
var TextEditor = builtin(Def[textEditorArgs]{
	Spec: Spec{
		Name:     "str_replace_based_edit_tool",
		Category: "fs",
		Title:    "Text editor",
		Description: "Views, creates and edits files. command view: a file with line numbers (view_range [start, end] limits the " +
			"lines, end -1 = to the end) or a directory's entries two levels deep; create: a new file (or a whole replacement) with " +
			"file_text; str_replace: replaces old_str, which must occur exactly once, with new_str; insert: inserts insert_text after " +
			"line insert_line (0: at the start). Every change is approved by the person.",
		Annotations: Annotations{Destructive: true, Approval: "conditional"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["command","path"],"properties":{
			"command":{"enum":["view","create","str_replace","insert"]},
			"path":{"type":"string","description":"file or directory, relative to the workspace root or absolute inside it"},
			"view_range":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2,"description":"view: [first line, last line], 1-based; -1 as last line: to the end"},
			"file_text":{"type":"string","description":"create: the file's content"},
			"old_str":{"type":"string","description":"str_replace: the exact text to replace"},
			"new_str":{"type":"string","description":"str_replace: the text that replaces it"},
			"insert_line":{"type":"integer","minimum":0,"description":"insert: the line after which to insert (0: at the start)"},
			"insert_text":{"type":"string","description":"insert: the text to insert"}}}`),
		Risk: approval.RiskWrite,
	},
	Validate: checkTextEditorArgs,
	Assess: func(c *Call, a textEditorArgs) (Assessment, error) {
		if a.Command == "view" {
			return Assessment{}, nil // reads: nothing to approve
		}
		p, err := planTextEditor(c, a)
		if err != nil {
			return Assessment{}, err
		}
		return assessPlan(c, p, true), nil // every change is reviewed, as write_file's are
	},
	Execute: func(c *Call, a textEditorArgs) (*Result, error) {
		if a.Command == "view" {
			return viewPath(c, a)
		}
		return applyPlanned(c, a, planTextEditor)
	},
})

type textEditorArgs struct {
	Command    string  `json:"command"`
	Path       string  `json:"path"`
	ViewRange  []int   `json:"view_range"`
	FileText   *string `json:"file_text"`
	OldStr     *string `json:"old_str"`
	NewStr     *string `json:"new_str"`
	InsertLine *int    `json:"insert_line"`
	InsertText *string `json:"insert_text"`
}

// checkTextEditorArgs checks that each command has its arguments.
func checkTextEditorArgs(a textEditorArgs) error {
	need := func(ok bool, name string) error {
		if !ok {
			return Errorf(InvalidParams, "command %s needs %s", a.Command, name)
		}
		return nil
	}
	switch a.Command {
	case "create":
		return need(a.FileText != nil, "file_text")
	case "str_replace":
		return need(a.OldStr != nil, "old_str")
	case "insert":
		if err := need(a.InsertLine != nil, "insert_line"); err != nil {
			return err
		}
		return need(a.InsertText != nil, "insert_text")
	}
	return nil
}

// viewPath is view: read_file for a file, list_directory for a directory.
func viewPath(c *Call, a textEditorArgs) (*Result, error) {
	path, _, err := resolveArg(c, a.Path)
	if err != nil {
		return nil, err
	}
	if fi, err := c.Workspace.Stat(path); err == nil && fi.IsDir() {
		if len(a.ViewRange) > 0 {
			return nil, Errorf(InvalidParams, "view_range is for files; %s is a directory", c.Workspace.Rel(path))
		}
		return listDirectory(c, listDirectoryArgs{Path: a.Path, Recursive: true, MaxDepth: 2})
	}
	r := readFileArgs{Path: a.Path, Offset: 1, Encoding: "utf-8"}
	if len(a.ViewRange) == 2 {
		first, last := a.ViewRange[0], a.ViewRange[1]
		if first < 1 || last != -1 && last < first {
			return nil, Errorf(InvalidParams, "view_range [%d, %d]: the first line is 1 or more, and the last is -1 or not before the first", first, last)
		}
		r.Offset = first
		if last != -1 {
			r.Limit = last - first + 1
		}
	}
	return readFile(c, r)
}

// planTextEditor plans create, str_replace and insert.
func planTextEditor(c *Call, a textEditorArgs) (*workspace.Plan, error) {
	switch a.Command {
	case "create":
		return planWrite(c, writeFileArgs{Path: a.Path, Content: *a.FileText, Encoding: "utf-8", CreateDirs: true})
	case "str_replace":
		newStr := ""
		if a.NewStr != nil {
			newStr = *a.NewStr
		}
		p, err := planEdits(c, a.Path, []Edit{{OldString: *a.OldStr, NewString: newStr}})
		if e, ok := AsError(err); ok {
			// The words Claude models are trained on.
			switch e.Code {
			case NoMatch:
				return nil, Errorf(NoMatch, "No replacement was performed, old_str `%s` did not appear verbatim in %s.", *a.OldStr, a.Path)
			case AmbiguousMatch:
				d, _ := e.Details.(map[string]any)
				lines, _ := d["lines"].([]int)
				return nil, Errorf(AmbiguousMatch, "No replacement was performed. Multiple occurrences of old_str `%s` in lines %s. Please ensure it is unique.",
					*a.OldStr, strings.ReplaceAll(fmt.Sprint(lines), " ", ", "))
			}
		}
		return p, err
	}
	return planInsert(c, a.Path, *a.InsertLine, *a.InsertText)
}

// planInsert plans inserting text after line n of the file at arg.
func planInsert(c *Call, arg string, n int, text string) (*workspace.Plan, error) {
	path, rel, old, err := editableText(c, arg, "command create")
	if err != nil {
		return nil, err
	}
	e := detectEOL(old)
	lines := workspace.SplitLines(e.toLF(old))
	if n > len(lines) {
		return nil, Errorf(InvalidParams, "insert_line %d is past the end of %s, which has %d lines; use 0 to %d", n, rel, len(lines), len(lines))
	}
	ins := e.toLF(text)
	if !strings.HasSuffix(ins, "\n") {
		ins += "\n"
	}
	if n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += "\n" // the last line had no newline: the insertion follows it
	}
	newText := strings.Join(lines[:n], "") + ins + strings.Join(lines[n:], "")
	return &workspace.Plan{Changes: []workspace.FileChange{{
		Op: workspace.OpModify, Path: path, OldText: old, NewText: e.restore(newText), Version: version(c, path),
	}}}, nil
}
