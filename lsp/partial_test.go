package lsp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/tools"
)

// TestGrepPartialResultsNotRepeated: with a partialResultToken, grep's
// matches come as $/progress batches and the final result carries none of
// them, only the summary (LSP 3.17).
func TestGrepPartialResultsNotRepeated(t *testing.T) {
	t.Parallel()
	c, root, ctx := started(t, nil, nil)
	for i := range 30 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d.txt", i)), []byte("needle\nhay\nneedle é\n"), 0o644)
	}
	for _, tt := range []struct {
		max       int
		truncated bool
	}{{1000, false}, {45, true}} {
		token := fmt.Sprintf("tok-%d", tt.max)
		var res tools.Result
		err := c.Call(ctx, "tool/call", map[string]any{"name": "grep", "partialResultToken": token,
			"arguments": map[string]any{"pattern": "needle", "max_results": tt.max}}, &res)
		if err != nil || res.Status != tools.StatusSuccess {
			t.Fatalf("grep: %+v %v", res, err)
		}
		streamed := map[string]bool{}
		for _, m := range c.Received("$/progress") {
			var p struct {
				Token string `json:"token"`
				Value struct {
					Matches []tools.GrepMatch `json:"matches"`
				} `json:"value"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Token != token {
				continue
			}
			for _, g := range p.Value.Matches {
				k := fmt.Sprintf("%s:%d", g.Path, g.Line)
				if streamed[k] {
					t.Errorf("%s streamed twice", k)
				}
				streamed[k] = true
			}
		}
		want := min(60, tt.max)
		if len(streamed) != want {
			t.Errorf("max %d: %d matches streamed, want %d", tt.max, len(streamed), want)
		}
		var st struct {
			Matches   []tools.GrepMatch `json:"matches"`
			Truncated bool              `json:"truncated"`
			Streamed  int               `json:"streamed"`
		}
		b, _ := json.Marshal(res.Structured)
		json.Unmarshal(b, &st)
		if len(st.Matches) != 0 || st.Streamed != want || st.Truncated != tt.truncated {
			t.Errorf("max %d: final result repeats or misses the summary: %s", tt.max, b)
		}
	}
	// Without a token, the final result has everything.
	res, _ := c.ToolCall(ctx, "grep", map[string]any{"pattern": "needle"})
	b, _ := json.Marshal(res.Structured)
	var st struct{ Matches []tools.GrepMatch }
	json.Unmarshal(b, &st)
	if len(st.Matches) != 60 {
		t.Errorf("without a token: %d matches", len(st.Matches))
	}
}
