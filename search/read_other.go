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

// batchReader reads batches of files where the system has a way to (on
// Linux, io_uring: read_uring_linux.go); here there is none.
type batchReader struct{}

func newBatchReader() *batchReader { return nil }

func (*batchReader) release() {}

func (*batchReader) read(*os.File, []string, int64) [][]byte { return nil }
