//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package gguf

import (
	"io"
	"os"
)

// mapFile reads the file into memory where mmap is not available.
func mapFile(fd *os.File, size int) ([]byte, func() error, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(fd, b); err != nil {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
