package tools

import (
	"os"

	"github.com/agentls/agentls/workspace"
)

// stampOf returns the stamp of the stat fi (an open file's, or the
// workspace's confined Stat), and false when fi is not a regular file's
// stat.
func stampOf(fi os.FileInfo) (workspace.Stamp, bool) { return workspace.StampOf(fi) }
