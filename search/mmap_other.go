//go:build !unix

package search

import (
	"io"
	"os"
)

// mapFile reads the size bytes of the open file f (no mapping here).
func mapFile(f *os.File, size int) ([]byte, func(), error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}
