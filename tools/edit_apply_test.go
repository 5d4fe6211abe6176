package tools

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/workspace/workspacetest"
)

// TestDiskHolds: diskHolds, which stops reading at the first difference,
// answers as sameText on the whole file does, line endings included, for
// files of one block and of many, differing early, late, at the end, or
// only in their line breaks.
func TestDiskHolds(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := workspacetest.New(t, root)
	big := strings.Repeat("line of text\n", 10000) // many blocks
	crlf := strings.ReplaceAll(big, "\n", "\r\n")
	for _, tt := range []struct{ name, disk, text string }{
		{"same, small", "a\nb\n", "a\nb\n"},
		{"same, big", big, big},
		{"empty", "", ""},
		{"empty file, text", "", "a"},
		{"file, empty text", "a", ""},
		{"differ early", "X" + big[1:], big},
		{"differ late", big[:len(big)-2] + "X\n", big},
		{"file longer", big + "more", big},
		{"file shorter", big, big + "more"},
		{"CRLF file, LF text", crlf, big},
		{"LF file, CRLF text", big, crlf},
		{"CRLF file, LF text, changed late", crlf[:len(crlf)-3] + "X\r\n", big},
		{"a carriage return at the end", "a\r", "a"},
		{"a carriage return at the end of the text", "a", "a\r"},
		{"CRLF then one more", "a\r\nb", "a\nb\n"},
	} {
		path := filepath.Join(root, strings.ReplaceAll(tt.name, " ", "_"))
		if err := os.WriteFile(path, []byte(tt.disk), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := diskHolds(ws, path, tt.text)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if want := sameText([]byte(tt.disk), tt.text); got != want {
			t.Errorf("%s: diskHolds = %v, sameText says %v", tt.name, got, want)
		}
	}
	if _, err := diskHolds(ws, filepath.Join(root, "missing"), "x"); err == nil {
		t.Error("diskHolds of a missing file: no error")
	}
}

// TestAppliedChangesAreEvents: applying a plan reports each change as one
// fileChanged event with its operation and path; a rename's says where the
// file was too.
func TestAppliedChangesAreEvents(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		toolCall
		want Event // its Operation, Path and OldPath
	}{
		{toolCall{"write_file", map[string]any{"path": "new.txt", "content": "n\n"}}, Event{Operation: "create", Path: "new.txt"}},
		{toolCall{"edit_file", map[string]any{"path": "a.txt", "old_string": "x", "new_string": "y"}}, Event{Operation: "modify", Path: "a.txt"}},
		{toolCall{"move_file", map[string]any{"from": "a.txt", "to": "d/b.txt"}}, Event{Operation: "rename", Path: "d/b.txt", OldPath: "a.txt"}},
		{toolCall{"delete_file", map[string]any{"path": "a.txt"}}, Event{Operation: "delete", Path: "a.txt"}},
		{toolCall{"create_directory", map[string]any{"path": "d/e"}}, Event{Operation: "create", Path: "d/e"}},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			g := newRig(t, "")
			g.write("a.txt", "x\n")
			wantSuccess(t, g.call("read_file", map[string]any{"path": "a.txt"}))
			var mu sync.Mutex
			var changed []Event
			g.env.Events = EventsFunc(func(e Event) {
				if e.Kind == "fileChanged" {
					mu.Lock()
					changed = append(changed, e)
					mu.Unlock()
				}
			})
			wantSuccess(t, g.call(tt.tool, tt.args))
			mu.Lock()
			defer mu.Unlock()
			if len(changed) != 1 || changed[0].Operation != tt.want.Operation || changed[0].Path != tt.want.Path || changed[0].OldPath != tt.want.OldPath {
				t.Errorf("fileChanged events = %+v, want one %s of %s (from %q)", changed, tt.want.Operation, tt.want.Path, tt.want.OldPath)
			}
		})
	}
}
