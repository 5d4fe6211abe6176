package approval

import (
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/workspace"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	read := Tool{Name: "read_file", ReadOnly: true, Approval: "auto"}
	write := Tool{Name: "write_file", Approval: "conditional", Risk: RiskWrite}
	edit := Tool{Name: "edit_file", Approval: "ask", Risk: RiskWrite}
	del := Tool{Name: "delete_file", Approval: "ask", Dangerous: true}
	kill := Tool{Name: "shell_kill", Approval: "auto"}
	mem := NewMemory("")
	mem.Remember("edit_file")
	cfg := func(mode string, rules map[string]string) *workspace.Config {
		c := workspace.DefaultConfig()
		c.Approval.Mode, c.Approval.Tools = mode, rules
		return c
	}
	tests := []struct {
		name string
		cfg  *workspace.Config
		mem  *Memory
		tool Tool
		a    Assessment
		want Action
		by   string
		risk Risk
	}{
		{"safe read", cfg("safe", nil), nil, read, Assessment{}, Auto, "auto", ""},
		{"safe tool auto", cfg("safe", nil), nil, kill, Assessment{}, Auto, "auto", ""},
		{"safe create", cfg("safe", nil), nil, write, Assessment{}, Auto, "auto", RiskWrite},
		{"safe overwrite", cfg("safe", nil), nil, write, Assessment{NeedsApproval: true}, Ask, "", RiskWrite},
		{"safe edit", cfg("safe", nil), nil, edit, Assessment{}, Ask, "", RiskWrite},
		{"ask mode read", cfg("ask", nil), nil, read, Assessment{}, Ask, "", RiskRead},
		{"ask rule read", cfg("safe", map[string]string{"read_file": "ask"}), nil, read, Assessment{}, Ask, "", RiskRead},
		{"ask rule read with its own risk", cfg("safe", map[string]string{"web_search": "ask"}), nil, Tool{Name: "web_search", ReadOnly: true, Risk: RiskNetwork}, Assessment{}, Ask, "", RiskNetwork},
		{"ask mode rule", cfg("ask", map[string]string{"read_file": "auto"}), nil, read, Assessment{}, Auto, "config", ""},
		{"yolo edit", cfg("yolo", nil), nil, edit, Assessment{}, Auto, "auto", RiskWrite},
		{"yolo dangerous call", cfg("yolo", nil), nil, edit, Assessment{Dangerous: true, Warning: "rm -r"}, Ask, "", RiskDangerous},
		{"rule auto beats dangerous tool", cfg("safe", map[string]string{"delete_file": "auto"}), nil, del, Assessment{}, Auto, "config", ""},
		{"dangerous tool", cfg("yolo", nil), nil, del, Assessment{}, Ask, "", RiskDangerous},
		{"dangerous call beats rule", cfg("safe", map[string]string{"edit_file": "auto"}), nil, edit, Assessment{Dangerous: true}, Ask, "", RiskDangerous},
		{"deny rule", cfg("yolo", map[string]string{"read_file": "deny"}), nil, read, Assessment{}, Deny, "", ""},
		{"blocked", cfg("yolo", map[string]string{"edit_file": "auto"}), nil, edit, Assessment{Blocked: "fork bomb"}, Deny, "", RiskWrite},
		{"ask rule", cfg("yolo", map[string]string{"edit_file": "ask"}), mem, edit, Assessment{}, Ask, "", RiskWrite},
		{"remembered always", cfg("safe", nil), mem, edit, Assessment{}, Auto, "always", RiskWrite},
		{"always is per key", cfg("safe", nil), mem, edit, Assessment{AlwaysKey: "git push"}, Ask, "", RiskWrite},
		{"allow list", cfg("safe", nil), nil, edit, Assessment{AutoByConfig: true, Risk: RiskExecute}, Auto, "config", RiskExecute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.cfg, tt.mem, tt.tool, tt.a)
			if d.Action != tt.want || d.By != tt.by || d.Risk != tt.risk || d.Reason == "" {
				t.Errorf("Decide = %+v, want %v by %q risk %q with a reason", d, tt.want, tt.by, tt.risk)
			}
		})
	}
}

func TestMemoryPersists(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "a", "always.json")
	m := NewMemory(file)
	if err := m.Remember("shell_exec:go test"); err != nil {
		t.Fatal(err)
	}
	if !NewMemory(file).Allowed("shell_exec:go test") {
		t.Error("answer not persisted")
	}
	if NewMemory("").Allowed("shell_exec:go test") {
		t.Error("session memory leaked")
	}
}
