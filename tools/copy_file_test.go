package tools

import (
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
)

func TestCopyFile(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	bin := string([]byte{0x89, 'P', 'N', 'G', 0, 0, 0xff, 0xfe, '\n'})
	testenv.WriteFiles(t, root, map[string]string{"a.txt": "A\r\nB\r\n", "img.png": bin, "dir/x": "x"})
	var asked int
	env.Approver = approverCounting(&asked, env.Approver)

	wantSuccess(t, ftCall(t, env, "copy_file", map[string]any{"source": "a.txt", "dest": "copies/a.txt"}))
	// A copy to a new path asks too in safe mode (every change is seen first).
	if asked != 1 || ftRead(t, root, "copies/a.txt") != "A\r\nB\r\n" || ftRead(t, root, "a.txt") != "A\r\nB\r\n" {
		t.Errorf("asked %d, copy %q", asked, ftRead(t, root, "copies/a.txt"))
	}
	// Binary: the bytes, by the server.
	var p workspace.Plan
	_ = p
	res := ftCall(t, env, "copy_file", map[string]any{"source": "img.png", "dest": "img2.png"})
	wantSuccess(t, res)
	if got := ftRead(t, root, "img2.png"); got != bin {
		t.Errorf("binary copy = %q", base64.StdEncoding.EncodeToString([]byte(got)))
	}
	// The buffer of an open source is copied.
	src := filepath.Join(root, "a.txt")
	env.Workspace.Overlays.Open(workspace.Document{URI: workspace.PathToURI(src), Path: src, Version: 2, Text: "unsaved\n"})
	wantError(t, ftCall(t, env, "copy_file", map[string]any{"source": "a.txt", "dest": "copies/a.txt"}), AlreadyExists, "overwrite: true")
	wantSuccess(t, ftCall(t, env, "copy_file", map[string]any{"source": "a.txt", "dest": "copies/a.txt", "overwrite": true}))
	if asked != 3 || ftRead(t, root, "copies/a.txt") != "unsaved\n" {
		t.Errorf("overwrite: asked %d, copy %q", asked, ftRead(t, root, "copies/a.txt"))
	}
	wantError(t, ftCall(t, env, "copy_file", map[string]any{"source": "dir", "dest": "dir3"}), NotAFile)
	wantError(t, ftCall(t, env, "copy_file", map[string]any{"source": "a.txt", "dest": "dir", "overwrite": true}), AlreadyExists, "directory")
	wantError(t, ftCall(t, env, "copy_file", map[string]any{"source": "none", "dest": "x"}), FileNotFound)
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
