//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package gguf

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of fd read-only and shared.
func mapFile(fd *os.File, size int) ([]byte, func() error, error) {
	b, err := syscall.Mmap(int(fd.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() error { return syscall.Munmap(b) }, nil
}
