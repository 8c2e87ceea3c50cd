//go:build amd64 && !noasm

package tensor

// Roofline probes (roof_amd64.s), for BenchmarkRoofline: what one core can
// do at best, against which the kernels' speed is judged.

//go:noescape
func peakFMA(n int)

//go:noescape
func peakDPBUSD(n int)

//go:noescape
func streamRead(p *byte, n int) uint32

// roofProbes reports whether the probes can run: peakFMA and streamRead
// need AVX2+FMA, peakDPBUSD also AVX-512 VNNI.
func roofProbes() (fma, vnni bool) { return hasAVX2FMA, hasVNNI }
