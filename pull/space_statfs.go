//go:build linux || darwin || freebsd

package pull

import "golang.org/x/sys/unix"

// freeSpace returns the bytes available to this user on dir's file system.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
