//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pull

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
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
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("pull: another specd pull is downloading into %s; wait for it to finish", dir)
		}
		return nil, fmt.Errorf("pull: locking %s: %w", dir, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}
