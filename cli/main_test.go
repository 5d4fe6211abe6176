package cli

import (
	"testing"

	"github.com/agentls/agentls/internal/testenv"
	"github.com/agentls/agentls/lsp/lsptest"
)

// TestMain gives the package's tests a home of their own (a runtime
// directory too: a server started without one would keep its token folder
// in TMPDIR) and removes the binary lsptest.BuildBinary built.
func TestMain(m *testing.M) { testenv.Main(m, lsptest.RemoveBinary) }
