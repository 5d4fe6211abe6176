//go:build !unix

package listen

import "io/fs"

const noFollow = 0

// owner is unknown without Unix permissions: private directories and token
// files are refused, and so is listening.
func owner(fs.FileInfo) (int, bool) { return -1, false }
