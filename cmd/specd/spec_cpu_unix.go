//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is the process's user+system CPU time so far, so that benchmark
// figures can be read per CPU-second on a machine shared with other work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
