//go:build unix

package tensor

import "syscall"

// cpuNanos returns the CPU time (user + system) the process has used. On a
// machine shared with other work, CPU time per operation tracks the
// kernels' cost better than wall time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
