package cli

import (
	"os"
	"testing"

	"github.com/agentls/agentls/lsp/lsptest"
)

// TestMain removes the binary lsptest.BuildBinary built when the tests end.
func TestMain(m *testing.M) {
	code := m.Run()
	lsptest.RemoveBinary()
	os.Exit(code)
}
