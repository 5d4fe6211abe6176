//go:build !unix

package private

import "io/fs"

const noFollow = 0

// Owner is unknown without Unix permissions: every check of this package
// refuses.
func Owner(fs.FileInfo) (int, bool) { return -1, false }
