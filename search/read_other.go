//go:build !linux

package search

import (
	"os"
	"path/filepath"

	"github.com/agentls/agentls/workspace"
)

// readBeneathRoot reads the file rel below root through the workspace's
// confined reads.
func readBeneathRoot(ws *workspace.Workspace, _ *os.File, rootPath, rel string, buf []byte, max int64) ([]byte, error) {
	return ws.ReadLimited(filepath.Join(rootPath, filepath.FromSlash(rel)), buf, max)
}
