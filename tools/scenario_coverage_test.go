package tools

import "testing"

// TestEveryToolHasAScenario fails when a built-in tool is called by no
// scenario of testdata/scenarios (see scenario_test.go): a tool's
// specification is its scenario, so a new tool comes with one. A call by
// an alias counts for the tool it names; a call of a name the registry
// does not know counts for none.
func TestEveryToolHasAScenario(t *testing.T) {
	t.Parallel()
	reg := NewBuiltinRegistry()
	calledBy := map[string][]string{} // canonical name → scenarios
	for _, file := range scenarioFiles(t) {
		for _, st := range loadScenario(t, file).steps {
			if tool, ok := reg.Lookup(st.tool); ok {
				calledBy[tool.Name] = append(calledBy[tool.Name], file.Name)
			}
		}
	}
	tools := Builtins()
	if len(tools) == 0 {
		t.Fatal("no built-in tools")
	}
	for _, tool := range tools {
		if len(calledBy[tool.Name]) == 0 {
			t.Errorf("built-in tool %s is called by no scenario: add testdata/scenarios/%s.txtar (the format is at the top of scenario_test.go)", tool.Name, tool.Name)
		}
	}
}
