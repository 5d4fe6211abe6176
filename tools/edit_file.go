package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentls/agentls/workspace"
)

// EditFile is edit_file.
var EditFile = builtin(editTool(Def[editFileArgs]{
	Spec: Spec{
		Name:     "edit_file",
		Category: "fs",
		Title:    "Edit file",
		Description: "Replaces an exact string in a file with another. old_string must match the file's text exactly, " +
			"including indentation and line breaks, and must be unique unless replace_all is true: include enough surrounding lines " +
			"to make it so. Edits the editor's buffer when the file is open. The person approves the change as a diff in their editor.",
		Aliases:     []string{"edit"},
		Annotations: Annotations{Destructive: true, Approval: "ask"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path","old_string","new_string"],"properties":{
			"path":{"type":"string","description":"file path, relative to the workspace root or absolute inside it"},
			"old_string":{"type":"string","minLength":1,"description":"the exact text to replace"},
			"new_string":{"type":"string","description":"the text to put in its place"},
			"replace_all":{"type":"boolean","default":false,"description":"replace every occurrence"}}}`),
	},
}, planEdit))

// Edit is one replacement of edit_file and multi_edit.
type Edit struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

type editFileArgs struct {
	Path string `json:"path"`
	Edit
}

func planEdit(c *Call, a editFileArgs) (*workspace.Plan, error) {
	return planEdits(c, a.Path, []Edit{a.Edit})
}

// planEdits applies edits in order to the current text of path; all or none.
// editableText resolves arg and returns the current text of the text file
// it names, which the model must not have seen in another version
// (checkFresh). create says how to create a missing file.
func editableText(c *Call, arg, create string) (path, rel, old string, err error) {
	path, rel, err = resolveArg(c, arg)
	if err != nil {
		return "", "", "", err
	}
	old, exists, err := currentText(c, path)
	if err != nil {
		return "", "", "", err
	}
	if !exists {
		return "", "", "", Errorf(FileNotFound, "%s does not exist; create it with %s", rel, create)
	}
	if strings.IndexByte(old, 0) >= 0 {
		return "", "", "", Errorf(BinaryFile, "%s is a binary file", rel)
	}
	return path, rel, old, checkFresh(c, path, old)
}

func planEdits(c *Call, arg string, edits []Edit) (*workspace.Plan, error) {
	path, rel, old, err := editableText(c, arg, "write_file")
	if err != nil {
		return nil, err
	}
	e := detectEOL(old)
	text := e.toLF(old)
	for i, ed := range edits {
		where := ""
		if len(edits) > 1 {
			where = fmt.Sprintf("edit %d: ", i+1)
		}
		from, to := e.toLF(ed.OldString), e.toLF(ed.NewString)
		if from == "" {
			return nil, Errorf(InvalidParams, "%sold_string is empty; use write_file to create or replace a whole file", where)
		}
		if from == to {
			return nil, Errorf(InvalidParams, "%sold_string and new_string are the same", where)
		}
		// One pass over the text for the usual edit: its match, and no
		// other after it (strings.Count and strings.Replace scan it all,
		// each).
		at := strings.Index(text, from)
		switch {
		case at < 0:
			return nil, noMatch(rel, text, from, where)
		case ed.ReplaceAll:
			text = strings.ReplaceAll(text, from, to)
		case strings.Contains(text[at+len(from):], from):
			n := strings.Count(text, from)
			lines := matchLines(text, from)
			return nil, Errorf(AmbiguousMatch, "%sold_string occurs %d times in %s (lines %s); add surrounding lines to make it unique, or set replace_all", where, n, rel, joinInts(lines)).
				WithDetails(map[string]any{"lines": lines})
		default:
			text = text[:at] + to + text[at+len(from):]
		}
	}
	return &workspace.Plan{Changes: []workspace.FileChange{{
		Op: workspace.OpModify, Path: path, OldText: old, NewText: e.restore(text), Version: version(c, path),
	}}}, nil
}

// matchLines returns the 1-based lines where the occurrences of s start,
// counted without overlap as strings.Count does.
func matchLines(text, s string) []int {
	var out []int
	line, last := 1, 0
	for off := 0; ; {
		i := strings.Index(text[off:], s)
		if i < 0 {
			return out
		}
		pos := off + i
		line += strings.Count(text[last:pos], "\n")
		last = pos
		out = append(out, line)
		off = pos + len(s)
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}

// noMatch explains a failed match with the closest lines of the file.
func noMatch(rel, text, from, where string) error {
	lines := strings.Split(text, "\n")
	// Only whitespace differs?
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	if sq := squash(from); sq != "" && strings.Contains(squash(text), sq) {
		first := squash(strings.SplitN(from, "\n", 2)[0])
		for i, l := range lines {
			if first != "" && squash(l) == first {
				return Errorf(NoMatch, "%sold_string was not found in %s, but matches when whitespace is ignored, from line %d: copy its indentation and line breaks exactly (read the file again)", where, rel, i+1).
					WithDetails(map[string]any{"line": i + 1, "whitespace_only": true})
			}
		}
	}
	want := strings.TrimSpace(strings.SplitN(strings.TrimLeft(from, "\n"), "\n", 2)[0])
	type cand struct {
		line  int
		score float64
	}
	var cands []cand
	wb := bigrams(want)
	for i, l := range lines {
		if s := dice(wb, bigrams(strings.TrimSpace(l))); s > 0.5 {
			cands = append(cands, cand{i + 1, s})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	if len(cands) > 3 {
		cands = cands[:3]
	}
	msg := fmt.Sprintf("%sold_string was not found in %s", where, rel)
	var hint []map[string]any
	if len(cands) > 0 {
		msg += ". The closest lines are:"
		for _, c := range cands {
			msg += fmt.Sprintf("\n%6d\t%s", c.line, lines[c.line-1])
			hint = append(hint, map[string]any{"line": c.line, "text": lines[c.line-1]})
		}
	}
	msg += "\nRead the file again and copy the text exactly."
	return Errorf(NoMatch, "%s", msg).WithDetails(map[string]any{"closest": hint})
}

func bigrams(s string) map[string]int {
	m := map[string]int{}
	r := []rune(s)
	for i := 0; i+1 < len(r); i++ {
		m[string(r[i:i+2])]++
	}
	return m
}

// dice is the Sørensen–Dice coefficient of two bigram multisets.
func dice(a, b map[string]int) float64 {
	na, nb, common := 0, 0, 0
	for k, v := range a {
		na += v
		common += min(v, b[k])
	}
	for _, v := range b {
		nb += v
	}
	if na+nb == 0 {
		return 0
	}
	return 2 * float64(common) / float64(na+nb)
}
