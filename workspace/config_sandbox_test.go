package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxSwitchesAreTheUsers: the settings that turn a sandbox off
// (runCode.sandbox "none", shell.sandboxAuto false) count only in the user
// config: a repository's .agentls.json, initializationOptions and editor
// settings (which may come from a settings file of the repository) are
// ignored; shell.allowNetwork, which loosens like shell.allow, is dropped
// from a repository's file.
func TestSandboxSwitchesAreTheUsers(t *testing.T) {
	t.Parallel()
	planted := `{"runCode":{"sandbox":"none"},"shell":{"sandboxAuto":false,"allowNetwork":["curl"],"timeoutSeconds":7}}`
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".agentls.json"), []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	s := ConfigStack{UserFile: filepath.Join(t.TempDir(), "none.json")}
	cfg, errs := s.LoadFiles([]string{root})
	if cfg.RunCode.Sandbox != "" || !cfg.Shell.SandboxAuto || len(cfg.Shell.AllowNetwork) != 0 {
		t.Errorf("the repository turned a sandbox off: %+v %+v", cfg.RunCode, cfg.Shell)
	}
	if cfg.Shell.TimeoutSeconds != 7 {
		t.Errorf("the repository's harmless setting was lost: %d", cfg.Shell.TimeoutSeconds)
	}
	msg := ""
	for _, e := range errs {
		msg += e.Error()
	}
	for _, k := range []string{"runCode.sandbox", "shell.sandboxAuto", "shell.allowNetwork"} {
		if !strings.Contains(msg, k) {
			t.Errorf("no warning names %s: %q", k, msg)
		}
	}
	for _, l := range []Layer{LayerInit, LayerSettings} {
		cfg, err := s.Set(l, "test", []byte(`{"runCode":{"sandbox":"none"},"shell":{"sandboxAuto":false,"maxOutputBytes":4096}}`))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.RunCode.Sandbox != "" || !cfg.Shell.SandboxAuto || cfg.Shell.MaxOutputBytes != 4096 {
			t.Errorf("%s: %+v %+v", l, cfg.RunCode, cfg.Shell)
		}
		s.Set(l, "test", nil)
	}
	user := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(user, []byte(`{"runCode":{"sandbox":"none"},"shell":{"sandboxAuto":false,"allowNetwork":["go test"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s = ConfigStack{UserFile: user}
	cfg, _ = s.LoadFiles([]string{root})
	if cfg.RunCode.Sandbox != "none" || cfg.Shell.SandboxAuto || len(cfg.Shell.AllowNetwork) != 1 {
		t.Errorf("the user config's switches were not honoured: %+v %+v", cfg.RunCode, cfg.Shell)
	}
	if d := DefaultConfig(); !d.Shell.SandboxAuto || d.RunCode.Sandbox != "" {
		t.Errorf("defaults: %+v %+v", d.Shell, d.RunCode)
	}
}
