//go:build !unix

package workspace

import (
	"io/fs"
	"os"
)

// Without a device and inode number in a stat here, files are known by
// their names only.

func statOf(fs.FileInfo) (fileStat, bool) { return fileStat{}, false }

func lstatID(string) (fileStat, bool) { return fileStat{}, false }

func statID(string) (fileStat, bool) { return fileStat{}, false }

func fstatID(*os.File) (fileStat, bool) { return fileStat{}, false }
