//go:build !unix

package tensor

func cpuNanos() int64 { return 0 }
