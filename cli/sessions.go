package cli

import (
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/agentls/agentls/attach"
)

// sessionsCommand lists the editor sessions `agentls mcp` can attach to
// (docs/protocol.md, "Attaching to an editor session"): one line each, id,
// pid, editor and roots, oldest first; --json prints the descriptors.
// Stale sessions are removed on the way.
func sessionsCommand(fs *flag.FlagSet, args []string, stdio IO) int {
	asJSON := fs.Bool("json", false, "print the session descriptors as JSON")
	if pos, err := parse(fs, args); err != nil || len(pos) > 0 {
		return usageError(stdio, err, pos)
	}
	sessions, err := attach.List()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "agentls: %v\n", err)
		return 1
	}
	if *asJSON {
		if sessions == nil {
			sessions = []attach.Descriptor{}
		}
		if !writeJSON(stdio, sessions) {
			return 1
		}
		return exitOK
	}
	if len(sessions) == 0 {
		fmt.Fprintln(stdio.Stderr, "agentls: no editor session (open the workspace in an editor with agentls)")
		return exitOK
	}
	w := tabwriter.NewWriter(stdio.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tPID\tEDITOR\tROOT")
	for _, s := range sessions {
		editor := s.Editor
		if editor == "" {
			editor = "-"
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", s.ID, s.PID, editor, strings.Join(s.Roots, ", "))
	}
	w.Flush()
	return exitOK
}
