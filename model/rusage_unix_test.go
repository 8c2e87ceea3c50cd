//go:build unix

package model

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user + system) the process has used, or 0 when
// unavailable. Benchmarks report it because wall time is unreliable on a
// shared machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
