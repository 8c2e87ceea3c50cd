package tensor

import (
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
)

// TestStreamRead checks the bandwidth probe really reads its input: its
// checksum is the XOR of every 32-bit word.
func TestStreamRead(t *testing.T) {
	if fma, _ := roofProbes(); !fma {
		t.Skip("no AVX2+FMA: the roofline probes need it")
	}
	b := make([]byte, 4096+128)
	for i := range b {
		b[i] = byte(i*131 + i>>8)
	}
	for _, n := range []int{0, 128, 4096, len(b)} {
		var want uint32
		for i := 0; i < n; i += 4 {
			want ^= binary.LittleEndian.Uint32(b[i:])
		}
		if got := streamRead(&b[0], n); got != want {
			t.Errorf("%d bytes: checksum %#x, want %#x", n, got, want)
		}
	}
}

// BenchmarkRoofline measures the two ceilings of a forward pass on this
// machine: one core's peak multiply-add rate (float32 FMA and, where the
// CPU has it, int8 VPDPBUSD, each from registers) and the memory
// bandwidth of a streaming read of 256 MiB by 1 and 2 threads. A 1-token
// pass streams the weights once (bandwidth-bound); a k-token pass does k
// times the multiply-adds over the same bytes, so its cost relative to a
// 1-token pass cannot be lower than max(1, k·MACs/peak ÷ bytes/bandwidth).
//
//	go test -run '^$' -bench Roofline -count 5 ./tensor
func BenchmarkRoofline(b *testing.B) {
	fma, vnni := roofProbes()
	if !fma {
		b.Skip("no AVX2+FMA")
	}
	const iters = 1 << 16
	b.Run("fma-f32", func(b *testing.B) {
		for b.Loop() {
			peakFMA(iters)
		}
		b.ReportMetric(float64(b.N)*iters*64/b.Elapsed().Seconds()/1e9, "GMAC/s")
	})
	if vnni {
		b.Run("vpdpbusd-int8", func(b *testing.B) {
			for b.Loop() {
				peakDPBUSD(iters)
			}
			b.ReportMetric(float64(b.N)*iters*256/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
	buf := make([]byte, 256<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = byte(i) // fault every page in before timing
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("stream/threads=%d", threads), func(b *testing.B) {
			part := len(buf) / threads
			for b.Loop() {
				var wg sync.WaitGroup
				for t := range threads {
					wg.Go(func() { streamRead(&buf[t*part], part) })
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N)*float64(len(buf))/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
