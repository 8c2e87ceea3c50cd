//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pull

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive, non-blocking advisory lock on the folder that
// holds final, so two pulls never write the same partial file. The lock
// goes with the process, so a killed pull leaves nothing to clean up.
func lockDir(final string) (unlock func(), err error) {
	dir := filepath.Dir(final)
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("pull: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("pull: another specd pull is downloading into %s; wait for it to finish", dir)
		}
		return nil, fmt.Errorf("pull: locking %s: %w", dir, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
