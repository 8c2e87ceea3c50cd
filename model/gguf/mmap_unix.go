//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package gguf

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of fd read-only and shared.
func mapFile(fd *os.File, size int) ([]byte, func() error, error) {
	b, err := unix.Mmap(int(fd.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
