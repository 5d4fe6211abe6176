package approval

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestTerminalFollowsOptions: the terminal offers "always" only when the
// request does, labelled with what it covers; "a" typed for a dangerous
// call is not an answer, and the question is asked again.
func TestTerminalFollowsOptions(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	term := NewTerminal(strings.NewReader("a\ny\n"), &out)
	resp, err := term.Ask(context.Background(), Request{Tool: "shell_exec", Risk: RiskDangerous, Agent: "claude",
		Cwd: "/w", Options: OptionsFor(RiskDangerous)})
	if err != nil || resp.Decision != Approve {
		t.Fatalf("dangerous: %+v %v", resp, err)
	}
	if s := out.String(); strings.Contains(s, "[a]") || strings.Count(s, "approve?") != 2 || !strings.Contains(s, "claude wants to run shell_exec") || !strings.Contains(s, "in: /w") {
		t.Errorf("terminal output:\n%s", s)
	}
	out.Reset()
	term = NewTerminal(strings.NewReader("a\n"), &out)
	resp, _ = term.Ask(context.Background(), Request{Tool: "shell_exec", Risk: RiskExecute, Options: OptionsFor(RiskExecute),
		AlwaysLabel: "always allow `echo x …`"})
	if resp.Decision != Always || !strings.Contains(out.String(), "[a] always allow `echo x …`") {
		t.Errorf("always: %+v\n%s", resp, out.String())
	}
}

// TestTerminalInputEnds: input that ends before an answer (a closed
// terminal, an empty pipe) is a rejection that says so and how to answer,
// not a failure of the approval; a last answer without its newline counts.
func TestTerminalInputEnds(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "maybe\n", "y"} {
		var out bytes.Buffer
		resp, err := NewTerminal(strings.NewReader(in), &out).Ask(context.Background(),
			Request{Tool: "write_file", Risk: RiskWrite, Options: OptionsFor(RiskWrite)})
		want := Reject
		if in == "y" {
			want = Approve
		}
		if err != nil || resp.Decision != want || (want == Reject && !strings.Contains(resp.Message, "--approve")) {
			t.Errorf("input %q: %+v %v", in, resp, err)
		}
	}
}
