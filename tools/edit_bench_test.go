package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/workspace"
)

// BenchmarkEditPlan10MB measures edit planning on a 10 MB file: reading
// it, finding the unique old_string (planEdits), and the minimal
// replacements of the WorkspaceEdit sent to the editor
// (workspace.Replacements).
func BenchmarkEditPlan10MB(b *testing.B) {
	env, root := ftEnv(b)
	var sb strings.Builder
	for i := 0; sb.Len() < 10_000_000; i++ {
		fmt.Fprintf(&sb, "line %07d: the quick brown fox jumps over the lazy dog %d\n", i, i*7)
	}
	text := sb.String()
	testenv.WriteFiles(b, root, map[string]string{"big.txt": text})
	mid := strings.Index(text, "line 0080000:")
	old := text[mid : mid+strings.IndexByte(text[mid:], '\n')]
	edits := []Edit{{OldString: old, NewString: "edited line 80000"}}
	c := &Call{Ctx: context.Background(), Workspace: env.Workspace, Session: env.Session, Tool: EditFile}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		p, err := planEdits(c, filepath.Join(root, "big.txt"), edits)
		if err != nil {
			b.Fatal(err)
		}
		ch := p.Changes[0]
		rs := workspace.Replacements(ch.OldText, ch.NewText)
		if len(rs) != 1 || rs[0].Text != "edited line 80000\n" {
			b.Fatalf("replacements = %+v", rs)
		}
	}
}
