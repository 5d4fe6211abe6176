package tools

import (
	"encoding/base64"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
)

func TestCopyFile(t *testing.T) {
	t.Parallel()
	g := newRig(t, "")
	bin := string([]byte{0x89, 'P', 'N', 'G', 0, 0, 0xff, 0xfe, '\n'})
	testenv.WriteFiles(t, g.root, map[string]string{"a.txt": "A\r\nB\r\n", "img.png": bin, "dir/x": "x"})

	wantSuccess(t, g.call("copy_file", map[string]any{"source": "a.txt", "dest": "copies/a.txt"}))
	// A copy to a new path asks too in safe mode (every change is seen first).
	if asked := len(g.questions()); asked != 1 || ftRead(t, g.root, "copies/a.txt") != "A\r\nB\r\n" || ftRead(t, g.root, "a.txt") != "A\r\nB\r\n" {
		t.Errorf("asked %d, copy %q", asked, ftRead(t, g.root, "copies/a.txt"))
	}
	// Binary: the bytes, by the server.
	res := g.call("copy_file", map[string]any{"source": "img.png", "dest": "img2.png"})
	wantSuccess(t, res)
	if got := ftRead(t, g.root, "img2.png"); got != bin {
		t.Errorf("binary copy = %q", base64.StdEncoding.EncodeToString([]byte(got)))
	}
	// The buffer of an open source is copied.
	src := filepath.Join(g.root, "a.txt")
	g.ws.Overlays.Open(workspace.Document{URI: workspace.PathToURI(src), Path: src, Version: 2, Text: "unsaved\n"})
	wantError(t, g.call("copy_file", map[string]any{"source": "a.txt", "dest": "copies/a.txt"}), AlreadyExists, "overwrite: true")
	wantSuccess(t, g.call("copy_file", map[string]any{"source": "a.txt", "dest": "copies/a.txt", "overwrite": true}))
	// The binary copy and the overwrite asked; the refusal did not.
	if asked := len(g.questions()); asked != 2 || ftRead(t, g.root, "copies/a.txt") != "unsaved\n" {
		t.Errorf("overwrite: asked %d, copy %q", asked, ftRead(t, g.root, "copies/a.txt"))
	}
	wantError(t, g.call("copy_file", map[string]any{"source": "dir", "dest": "dir3"}), NotAFile)
	wantError(t, g.call("copy_file", map[string]any{"source": "a.txt", "dest": "dir", "overwrite": true}), AlreadyExists, "directory")
	wantError(t, g.call("copy_file", map[string]any{"source": "none", "dest": "x"}), FileNotFound)
}

func TestCopyFileBinaryPlan(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	testenv.WriteFiles(t, root, map[string]string{"b.bin": "a\x00b"})
	c := &Call{Workspace: env.Workspace, Session: env.Session, Tool: CopyFile}
	p, err := planCopy(c, copyFileArgs{Source: "b.bin", Dest: "c.bin"})
	if err != nil {
		t.Fatal(err)
	}
	if ch := p.Changes[0]; !ch.Binary || ch.Op != workspace.OpCreate || ch.NewText != "a\x00b" {
		t.Errorf("change = %+v", ch)
	}
}

// TestCopyFileKeepsMode: the copy has the source's permission bits, new or
// over an existing file, text or binary (the server writes both here; the
// editor's path is lsp's TestCopyInEditorKeepsMode).
func TestCopyFileKeepsMode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		mode    fs.FileMode
		content string
		dest    string // an existing file at dest, mode 0644, when set
	}{
		{"executable", 0o755, "#!/bin/sh\necho hi\n", ""},
		{"private", 0o600, "secret\n", ""},
		{"executable over a file", 0o755, "#!/bin/sh\n", "old\n"},
		{"plain over an executable's place", 0o644, "plain\n", "old\n"},
		{"binary executable", 0o750, "\x7fELF\x00\x01", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env, root := ftEnv(t)
			src, dst := filepath.Join(root, "src"), filepath.Join(root, "sub", "dst")
			testenv.WriteFiles(t, root, map[string]string{"src": tt.content})
			if err := os.Chmod(src, tt.mode); err != nil {
				t.Fatal(err)
			}
			args := map[string]any{"source": "src", "dest": "sub/dst"}
			if tt.dest != "" {
				testenv.WriteFiles(t, root, map[string]string{"sub/dst": tt.dest})
				os.Chmod(dst, 0o644)
				if tt.mode == 0o644 {
					os.Chmod(dst, 0o755)
				}
				args["overwrite"] = true
			}
			wantSuccess(t, ftCall(t, env, "copy_file", args))
			fi, err := os.Stat(dst)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tt.mode {
				t.Errorf("copy's mode = %v, want %v", fi.Mode().Perm(), tt.mode)
			}
			if got := ftRead(t, root, "sub/dst"); got != tt.content {
				t.Errorf("copy = %q", got)
			}
		})
	}
}
