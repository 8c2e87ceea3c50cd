//go:build !amd64 || noasm

package tensor

func peakFMA(int)                  {}
func peakDPBUSD(int)               {}
func streamRead(*byte, int) uint32 { return 0 }
func roofProbes() (fma, vnni bool) { return false, false }
