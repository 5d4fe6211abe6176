package tools

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testenv"
)

// TestParallelEditsOfOneFile: an agent's 40 parallel edit_file calls on
// different lines of one file all land: each is reviewed after the one
// before ended and planned on the text it left, so none is STALE_FILE.
func TestParallelEditsOfOneFile(t *testing.T) {
	t.Parallel()
	env, root := ftEnv(t)
	const n = 40
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	testenv.WriteFiles(t, root, map[string]string{"f.txt": strings.Join(lines, "\n") + "\n"})
	wantSuccess(t, ftCall(t, env, "read_file", map[string]any{"path": "f.txt"}))
	var wg sync.WaitGroup
	results := make([]*Result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = ftCall(t, env, "edit_file", map[string]any{"path": "f.txt",
				"old_string": fmt.Sprintf("line %d\n", i), "new_string": fmt.Sprintf("LINE %d\n", i)})
		}()
	}
	wg.Wait()
	for i, res := range results {
		if res.Status != StatusSuccess {
			t.Errorf("edit %d: %s: %s", i, res.Status, res.Content)
		}
	}
	want := strings.ReplaceAll(strings.Join(lines, "\n")+"\n", "line", "LINE")
	if got := ftRead(t, root, "f.txt"); got != want {
		t.Errorf("f.txt =\n%s\nwant\n%s", got, want)
	}
}
