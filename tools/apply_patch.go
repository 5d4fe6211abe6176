package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	godiff "github.com/sourcegraph/go-diff/diff"

	"github.com/agentls/agentls/patch"
	"github.com/agentls/agentls/workspace"
)

// ApplyPatch is apply_patch.
var ApplyPatch = builtin(withPatchNotes(editTool(Def[applyPatchArgs]{
	Spec: Spec{
		Name:     "apply_patch",
		Category: "fs",
		Title:    "Apply patch",
		Description: "Applies a patch to one or several files, in either format models write. A unified diff (as made by " +
			"`diff -u` or `git diff`; paths may carry a/ and b/): --- /dev/null creates a file, +++ /dev/null deletes one, different " +
			"names rename it; a hunk whose lines moved is found up to 50 lines away (or anywhere, when its lines occur once). Or the " +
			"'*** Begin Patch' envelope: *** Add File (+ lines; replaces an existing file), *** Delete File, *** Update File with an " +
			"optional *** Move to (replaces the destination), @@ chunks of ' ', '-' and '+' lines found by their @@ context and lines, " +
			"*** End of File; *** End Patch. Whitespace at line ends is tolerated. All or nothing: if a part does not apply, " +
			"PATCH_FAILED names the file and hunk or chunk and nothing is written. Edits the editor's buffers of open files. " +
			"The person approves the whole patch.",
		Annotations: Annotations{Destructive: true, Approval: "ask"},
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["patch"],"properties":{
			"patch":{"type":"string","minLength":1,"description":"the unified diff (for each file a ---/+++ header and @@ hunks), or a '*** Begin Patch' … '*** End Patch' envelope"}}}`),
	},
}, planPatch)))

// patchNotes passes the notes of planPatch (hunks found away from their
// stated line, or only when whitespace is ignored) from the plan to the
// Assess that called it, keyed by the call.
var patchNotes sync.Map // *Call → []string

// withPatchNotes shows the person the notes of a patch with the question
// (as its warning) and tells the model in the result.
func withPatchNotes(d Def[applyPatchArgs]) Def[applyPatchArgs] {
	assess, execute := d.Assess, d.Execute
	d.Assess = func(c *Call, args applyPatchArgs) (Assessment, error) {
		a, err := assess(c, args)
		if notes, ok := patchNotes.LoadAndDelete(c); ok && err == nil {
			a.Warning = strings.TrimSuffix(strings.Join(notes.([]string), "; ")+"; "+a.Warning, "; ")
		}
		return a, err
	}
	d.Execute = func(c *Call, args applyPatchArgs) (*Result, error) {
		res, err := execute(c, args)
		patchNotes.Delete(c) // when Execute planned again itself
		if res != nil && res.Status == StatusSuccess && c.Assessed.Warning != "" {
			res.Content += "\nNote: " + c.Assessed.Warning + ". Read the changed lines to check them."
		}
		return res, err
	}
	return d
}

// bareHunkHeader matches a hunk header without line numbers ("@@" or
// "@@ @@ section"), which models write: such a hunk is found by its lines
// alone (it must occur once in the file). It becomes "@@ -0,0 +0,0 @@",
// which no diff of a real change has.
var bareHunkHeader = regexp.MustCompile(`(?m)^@@[ \t]*(?:@@([^\r\n]*))?(\r?)$`)

// patchFuzz is how many lines away from its stated position a hunk is
// searched for.
const patchFuzz = 50

type applyPatchArgs struct {
	Patch string `json:"patch"`
}

func planPatch(c *Call, a applyPatchArgs) (*workspace.Plan, error) {
	if patch.Is(a.Patch) {
		return planEnvelope(c, a.Patch)
	}
	text := a.Patch
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text = bareHunkHeader.ReplaceAllString(text, "@@ -0,0 +0,0 @@$1$2")
	fds, err := godiff.ParseMultiFileDiff([]byte(text))
	if err != nil {
		return nil, Errorf(InvalidParams, "the patch is not a unified diff: %v", err)
	}
	var files []*godiff.FileDiff
	byName := map[[2]string]*godiff.FileDiff{}
	for _, fd := range fds {
		if fd.OrigName == "" && fd.NewName == "" && len(fd.Hunks) == 0 {
			continue // a header go-diff could not name (git's mode-only change)
		}
		// Models split one file's hunks over several diffs of it: they are
		// one diff, hunks in the order of the file.
		orig, dst := patchNames(fd.OrigName, fd.NewName)
		if key := [2]string{orig, dst}; orig != "" && orig == dst {
			if first, ok := byName[key]; ok {
				first.Hunks = append(first.Hunks, fd.Hunks...)
				sort.SliceStable(first.Hunks, func(i, j int) bool { return first.Hunks[i].OrigStartLine < first.Hunks[j].OrigStartLine })
				continue
			}
			byName[key] = fd
		}
		files = append(files, fd)
	}
	if len(files) == 0 {
		return nil, Errorf(InvalidParams, "the patch has no file diffs: each file needs a '--- old' and '+++ new' header followed by @@ hunks")
	}
	plan := &workspace.Plan{}
	seen := map[string]bool{}
	var failures []string
	var failDetails []map[string]any
	var notes []string
	for _, fd := range files {
		orig, dst := patchNames(fd.OrigName, fd.NewName)
		if orig == "" && dst == "" {
			return nil, Errorf(InvalidParams, "a file diff has /dev/null on both sides")
		}
		var origPath, dstPath string
		if orig != "" {
			if origPath, err = c.Workspace.Resolve(orig); err != nil {
				return nil, err
			}
		}
		if dst != "" {
			if dstPath, err = c.Workspace.Resolve(dst); err != nil {
				return nil, err
			}
		}
		for _, p := range patchPaths(origPath, dstPath) {
			if seen[p] {
				return nil, Errorf(InvalidParams, "%s appears more than once in the patch; give each file one diff", c.Workspace.Rel(p))
			}
			seen[p] = true
		}
		changes, fails, err := planFilePatch(c, fd, origPath, dstPath, &notes)
		if err != nil {
			return nil, err
		}
		for _, f := range fails {
			failures = append(failures, f.message)
			failDetails = append(failDetails, f.details)
		}
		plan.Changes = append(plan.Changes, changes...)
	}
	return finishPatch(c, plan, "hunks", failures, failDetails, notes)
}

// finishPatch ends the plan of a patch, all or nothing: PATCH_FAILED
// listing every failure (unit names what failed: hunks, chunks) with its
// details, INVALID_PARAMS when the patch changes nothing; the notes are
// kept for the question (withPatchNotes).
func finishPatch(c *Call, plan *workspace.Plan, unit string, failures []string, failDetails []map[string]any, notes []string) (*workspace.Plan, error) {
	if len(failures) > 0 {
		msg := strings.Join(failures, "\n\n")
		if len(failures) > 1 {
			msg = fmt.Sprintf("%d %s do not apply.\n\n%s", len(failures), unit, msg)
		}
		msg += "\n\nNothing was written. Read the files again and make the patch against their current text."
		return nil, Errorf(PatchFailed, "%s", msg).WithDetails(map[string]any{"failed": failDetails})
	}
	if len(plan.Changes) == 0 {
		return nil, Errorf(InvalidParams, "the patch changes nothing")
	}
	if len(notes) > 0 {
		patchNotes.Store(c, notes)
	}
	return plan, nil
}

// patchPaths lists the distinct non-empty paths of a file diff.
func patchPaths(a, b string) []string {
	switch {
	case a == "" && b == "":
		return nil
	case a == "":
		return []string{b}
	case b == "" || a == b:
		return []string{a}
	}
	return []string{a, b}
}

// patchNames strips git's a/ and b/ prefixes when the header uses them,
// and turns /dev/null into "".
func patchNames(orig, dst string) (string, string) {
	orig, dst = strings.TrimSpace(orig), strings.TrimSpace(dst)
	null := func(s string) bool { return s == "/dev/null" || s == "" }
	git := (null(orig) || strings.HasPrefix(orig, "a/")) && (null(dst) || strings.HasPrefix(dst, "b/")) && !(null(orig) && null(dst))
	if null(orig) {
		orig = ""
	} else if git {
		orig = orig[2:]
	}
	if null(dst) {
		dst = ""
	} else if git {
		dst = dst[2:]
	}
	return orig, dst
}

// hunkFailure is one hunk that does not apply.
type hunkFailure struct {
	message string
	details map[string]any
}

// planFilePatch plans one file's diff. A hunk that does not apply is
// returned as a failure, not an error, so that every failure is reported.
func planFilePatch(c *Call, fd *godiff.FileDiff, origPath, dstPath string, notes *[]string) ([]workspace.FileChange, []hunkFailure, error) {
	switch {
	case origPath == "": // create
		rel := c.Workspace.Rel(dstPath)
		if fi, err := c.Workspace.Lstat(dstPath); err == nil {
			what := "file"
			if fi.IsDir() {
				what = "directory"
			}
			return nil, nil, Errorf(AlreadyExists, "the patch creates %s (--- /dev/null), but that %s already exists; make a diff against it instead", rel, what)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fileError(rel, err)
		}
		var out strings.Builder
		for i, h := range fd.Hunks {
			lines := hunkLines(h)
			for _, l := range lines {
				if l.op != '+' {
					return nil, []hunkFailure{{
						message: fmt.Sprintf("hunk %d of %s: the patch creates this file (--- /dev/null), so every line must be an added line (+), but it has %q", i+1, rel, string(l.op)+l.text),
						details: map[string]any{"path": rel, "hunk": i + 1},
					}}, nil
				}
				out.WriteString(l.text)
				if l.nl {
					out.WriteByte('\n')
				}
			}
		}
		return []workspace.FileChange{{Op: workspace.OpCreate, Path: dstPath, NewText: out.String()}}, nil, nil
	}
	rel := c.Workspace.Rel(origPath)
	if fi, err := c.Workspace.Stat(origPath); err == nil && fi.IsDir() {
		return nil, nil, Errorf(NotAFile, "%s is a directory", rel)
	}
	old, exists, err := currentText(c, origPath)
	if err != nil {
		return nil, nil, err
	}
	if !exists {
		return nil, nil, Errorf(FileNotFound, "the patch changes %s, which does not exist (a new file needs --- /dev/null)", rel)
	}
	if strings.IndexByte(old, 0) >= 0 {
		return nil, nil, Errorf(BinaryFile, "%s is a binary file; apply_patch changes text files", rel)
	}
	if err := checkFresh(c, origPath, old); err != nil {
		return nil, nil, err
	}
	e := detectEOL(old)
	newText, fails := applyHunks(rel, e.toLF(old), fd.Hunks, dstPath == "", notes)
	if len(fails) > 0 {
		return nil, fails, nil
	}
	if dstPath == "" { // delete
		return []workspace.FileChange{{Op: workspace.OpDelete, Path: origPath, OldText: old, Version: version(c, origPath)}}, nil, nil
	}
	newText = e.restore(newText)
	if dstPath == origPath {
		if newText == old {
			return nil, nil, nil
		}
		return []workspace.FileChange{{Op: workspace.OpModify, Path: origPath, OldText: old, NewText: newText, Version: version(c, origPath)}}, nil, nil
	}
	// A rename, then the renamed file's changes.
	dstRel := c.Workspace.Rel(dstPath)
	if _, err := c.Workspace.Lstat(dstPath); err == nil {
		return nil, nil, Errorf(AlreadyExists, "the patch renames %s to %s, which already exists", rel, dstRel)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fileError(dstRel, err)
	}
	out := []workspace.FileChange{{Op: workspace.OpRename, Path: origPath, NewPath: dstPath}}
	if newText != old {
		out = append(out, workspace.FileChange{Op: workspace.OpModify, Path: dstPath, OldText: old, NewText: newText})
	}
	return out, nil, nil
}

// patchLine is one line of a hunk: op is ' ', '-' or '+'; nl is false for
// the last line of a side that has no final newline.
type patchLine struct {
	op   byte
	text string
	nl   bool
	bare bool // an empty line without the ' ' prefix
}

// hunkLines splits a hunk's body. Empty lines (no prefix, as models and
// some mail clients write blank context) are context; trailing ones beyond
// the hunk's stated length are dropped (a blank line between files).
func hunkLines(h *godiff.Hunk) (lines []patchLine) {
	oldCount := 0
	body := h.Body
	lastNL := bytes.HasSuffix(body, []byte("\n"))
	body = bytes.TrimSuffix(body, []byte("\n"))
	if len(body) == 0 && !lastNL {
		return nil
	}
	raw := strings.Split(string(body), "\n")
	for i, r := range raw {
		l := patchLine{op: ' ', nl: true, bare: r == ""}
		if r != "" {
			l.op, l.text = r[0], r[1:]
			if l.op == '\\' {
				continue
			}
		}
		if i == len(raw)-1 && !lastNL {
			l.nl = false
		}
		lines = append(lines, l)
		if l.op != '+' {
			oldCount++
		}
	}
	for len(lines) > 0 && oldCount > int(h.OrigLines) {
		if !lines[len(lines)-1].bare {
			break
		}
		lines = lines[:len(lines)-1]
		oldCount--
	}
	return lines
}

// applyHunks applies hunks to text (LF line endings) and returns the new
// text, or the hunks that do not apply. whole says the hunks must cover
// the whole file (a deletion). Hunks found away from their stated line, or
// only when whitespace at line ends is ignored, are added to notes.
func applyHunks(rel, text string, hunks []*godiff.Hunk, whole bool, notes *[]string) (string, []hunkFailure) {
	file := workspace.SplitLines(text)
	hunks = placeBareHunks(file, hunks)
	var out []string // pieces, each a line that may lack its terminator
	var fails []hunkFailure
	cursor, shift := 0, 0
	for i, h := range hunks {
		lines := hunkLines(h)
		var old []string
		for _, l := range lines {
			if l.op != '+' {
				old = append(old, l.text)
			}
		}
		expected := int(h.OrigStartLine) - 1
		if h.OrigLines == 0 {
			expected = int(h.OrigStartLine)
		}
		pos, ok := findHunk(file, old, expected+shift, cursor)
		if bareHunk(h) {
			ok = false // its lines do not occur once (placeBareHunks)
		}
		if ok && whole && (pos != 0 || len(old) != len(file)) {
			ok = false
		}
		if !ok {
			fails = append(fails, hunkFailed(rel, file, h, i+1, len(hunks), lines, expected, whole))
			continue
		}
		if pos != expected && !bareHunk(h) {
			*notes = append(*notes, fmt.Sprintf("hunk %d of %s applied at line %d, not %d as the patch says", i+1, rel, pos+1, expected+1))
		}
		for j, o := range old {
			if !sameLine(file[pos+j], o, false) {
				*notes = append(*notes, fmt.Sprintf("hunk %d of %s matched only when whitespace at line ends is ignored", i+1, rel))
				break
			}
		}
		shift = pos - expected
		out = append(out, file[cursor:pos]...)
		cursor = pos
		for _, l := range lines {
			switch l.op {
			case ' ':
				out = append(out, file[cursor])
				cursor++
			case '-':
				cursor++
			case '+':
				t := l.text
				if l.nl {
					t += "\n"
				}
				out = append(out, t)
			}
		}
	}
	if len(fails) > 0 {
		return "", fails
	}
	if whole && len(hunks) == 0 {
		return "", nil
	}
	out = append(out, file[cursor:]...)
	var b strings.Builder
	for i, l := range out {
		b.WriteString(l)
		if i < len(out)-1 && !strings.HasSuffix(l, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}

// placeBareHunks gives the hunks without line numbers the line where
// their lines occur (once), and orders the hunks by line. A bare hunk
// whose lines do not occur exactly once stays bare, and fails.
func placeBareHunks(file []string, hunks []*godiff.Hunk) []*godiff.Hunk {
	placed := false
	out := slices.Clone(hunks)
	for i, h := range out {
		if !bareHunk(h) {
			continue
		}
		var old []string
		for _, l := range hunkLines(h) {
			if l.op != '+' {
				old = append(old, l.text)
			}
		}
		if len(old) == 0 {
			continue
		}
		for _, loose := range []bool{false, true} {
			found, n := -1, 0
			for p := 0; p+len(old) <= len(file) && n < 2; p++ {
				if linesAt(file, old, p, loose) {
					found, n = p, n+1
				}
			}
			if n == 1 {
				hc := *h
				hc.OrigStartLine, hc.OrigLines = int32(found+1), int32(len(old))
				hc.NewStartLine, hc.NewLines = hc.OrigStartLine, 1
				out[i], placed = &hc, true
				break
			}
			if n > 1 {
				break
			}
		}
	}
	if placed {
		sort.SliceStable(out, func(i, j int) bool { return out[i].OrigStartLine < out[j].OrigStartLine })
	}
	return out
}

// linesAt reports whether old occurs in file at p.
func linesAt(file, old []string, p int, loose bool) bool {
	for j, o := range old {
		if !sameLine(file[p+j], o, loose) {
			return false
		}
	}
	return true
}

// bareHunk reports a hunk whose header had no line numbers.
func bareHunk(h *godiff.Hunk) bool {
	return h.OrigStartLine == 0 && h.OrigLines == 0 && h.NewStartLine == 0 && h.NewLines == 0
}

// findHunk finds where old occurs in file at or after from: exactly, then
// ignoring whitespace at line ends, first within patchFuzz lines of
// expected (nearest first), then anywhere if it occurs only once.
func findHunk(file, old []string, expected, from int) (int, bool) {
	maxPos := len(file) - len(old)
	if expected < from {
		expected = from
	}
	if len(old) == 0 {
		return max(from, min(expected, len(file))), true
	}
	if maxPos < from {
		return 0, false
	}
	for _, loose := range []bool{false, true} {
		at := func(p int) bool { return p >= from && p <= maxPos && linesAt(file, old, p, loose) }
		for d := 0; d <= patchFuzz; d++ {
			if at(expected - d) {
				return expected - d, true
			}
			if d > 0 && at(expected+d) {
				return expected + d, true
			}
		}
		found, n := -1, 0
		for p := from; p <= maxPos && n < 2; p++ {
			if at(p) {
				found, n = p, n+1
			}
		}
		if n == 1 {
			return found, true
		}
	}
	return 0, false
}

// sameLine compares a file line (with its terminator) with a patch line.
func sameLine(fileLine, patch string, loose bool) bool {
	l := strings.TrimSuffix(fileLine, "\n")
	if !loose {
		return l == patch
	}
	return strings.TrimRight(l, " \t\r\f\v") == strings.TrimRight(patch, " \t\r\f\v")
}

// hunkFailed explains a hunk that does not apply: the lines it expected,
// and what the file has where they come closest.
func hunkFailed(rel string, file []string, h *godiff.Hunk, n, of int, lines []patchLine, expected int, whole bool) hunkFailure {
	header := fmt.Sprintf("@@ -%d,%d +%d,%d @@", h.OrigStartLine, h.OrigLines, h.NewStartLine, h.NewLines)
	var b strings.Builder
	fmt.Fprintf(&b, "hunk %d of %d of %s (%s) does not apply", n, of, rel, header)
	var want []string
	for _, l := range lines {
		if l.op != '+' {
			want = append(want, l.text)
		}
	}
	details := map[string]any{"path": rel, "hunk": n, "header": header, "expected": want}
	if whole {
		b.WriteString(": the patch deletes the file, so its lines must be the whole file")
	}
	b.WriteString(". It expects these lines")
	if bareHunk(h) {
		b.WriteString(" (its header has no line numbers, so they must occur once in the file)")
	} else if !whole {
		fmt.Fprintf(&b, " near line %d", expected+1)
	}
	b.WriteString(":\n")
	for i, w := range want {
		if i == 12 {
			fmt.Fprintf(&b, "    … (%d more)\n", len(want)-i)
			break
		}
		fmt.Fprintf(&b, "    %s\n", w)
	}
	// Where does the file come closest? The best match of the longest
	// expected line, shown with the lines around it.
	anchor := -1
	for i, w := range want {
		if anchor < 0 || len(strings.TrimSpace(w)) > len(strings.TrimSpace(want[anchor])) {
			anchor = i
		}
	}
	best, bestScore := -1, 0.5
	if anchor >= 0 && len([]rune(strings.TrimSpace(want[anchor]))) > 1 {
		wb := bigrams(strings.TrimSpace(want[anchor]))
		for i, l := range file {
			s := dice(wb, bigrams(strings.TrimSpace(l)))
			if s > bestScore || best >= 0 && s == bestScore && distanceAbs(i-anchor-expected) < distanceAbs(best-anchor-expected) {
				best, bestScore = i, s
			}
		}
	}
	if best >= 0 {
		from := max(best-anchor-1, 0)
		to := min(max(best-anchor, 0)+len(want)+1, len(file))
		fmt.Fprintf(&b, "The closest lines of the file are:\n")
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "%6d\t%s\n", i+1, strings.TrimRight(file[i], "\r\n"))
		}
		details["closest_line"] = best + 1
	}
	// Already applied? The new side's lines are in the file.
	var added []string
	for _, l := range lines {
		if l.op != '-' {
			added = append(added, l.text)
		}
	}
	if len(added) > 0 && len(added) != len(want) || len(added) > 0 && strings.Join(added, "\n") != strings.Join(want, "\n") {
		if _, ok := findHunk(file, added, expected, 0); ok {
			b.WriteString("The file already has this hunk's result: was the patch applied already?\n")
			details["already_applied"] = true
		}
	}
	return hunkFailure{message: strings.TrimSuffix(b.String(), "\n"), details: details}
}

func distanceAbs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
