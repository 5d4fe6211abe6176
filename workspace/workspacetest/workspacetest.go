// Package workspacetest holds what the tests of the packages above
// workspace share about it: a workspace opened on real folders.
package workspacetest

import (
	"testing"

	"github.com/agentls/agentls/workspace"
)

// New opens the workspace of roots (the current directory when none) and
// fails the test when it cannot.
func New(tb testing.TB, roots ...string) *workspace.Workspace {
	tb.Helper()
	ws, err := workspace.New(roots...)
	if err != nil {
		tb.Fatal(err)
	}
	return ws
}
