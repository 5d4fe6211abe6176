//go:build !linux

package tools

import (
	"errors"
	"syscall"
)

// netnsAttr reports that network namespaces exist only on Linux.
func netnsAttr() (*syscall.SysProcAttr, string, error) {
	return nil, "", errors.New("network namespaces exist only on Linux")
}
