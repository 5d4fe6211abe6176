package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every call of this package's tests checks its structured result against
// the tool's output schema (as AGENTLS_CHECK_OUTPUTS=1 does for the binary).
func init() { checkOutputs = true }

// TestCheckOutput: a structured result that breaks the output schema is
// found, naming the field; one that keeps it passes.
func TestCheckOutput(t *testing.T) {
	t.Parallel()
	tool := &Tool{Spec: Spec{Name: "t", OutputSchema: json.RawMessage(`{"type":"object","required":["items"],"properties":{"items":{"type":"array"}}}`)}}
	for _, tc := range []struct {
		structured any
		want       string
	}{
		{map[string]any{"items": []string{}}, ""},
		{map[string]any{"items": nil}, "/items: got null, want array"},
		{map[string]any{}, `missing required field "items"`},
	} {
		err := checkOutput(tool, &Result{Status: StatusSuccess, Structured: tc.structured})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.structured, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want %q", tc.structured, err, tc.want)
		}
	}
}
