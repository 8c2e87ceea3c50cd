package tensor

// The eight-lane form of ggml's AVX2 K-quant dot products, shared by Q2_K,
// Q3_K, Q5_K and IQ4_XS (and Q6_K's q6KLanes): each 32-element group of a
// block is one 256-bit vector of weight bytes; VPMADDUBSW against the
// activations' int8 quants gives sixteen pair sums, VPMADDWD by the
// scales four-element sums in eight int32 lanes, added over the block's
// eight groups. Lane L therefore holds, for every group g,
//
//	sc[2g + L/4] · Σ_{i<4} p[32g + 4L + i]
//
// where p are the exact element products and sc the scale of each
// 16-element half-group (the two halves of a 256-bit vector). The per-lane
// sums are exact integers; ggml then converts the lanes to float32 and
// fuses them into eight float accumulators, which hsum8 adds at the end.
// Which lane an element lands in therefore decides the rounding, and the
// reference loops keep ggml's lanes exactly.

// kLanes8 sets lane to the eight lane sums of one block's products p with
// the half-group scales sc (see above). Sums wrap as int32 (they cannot
// overflow for any block of these types).
func kLanes8(lane *[8]int32, p *[qkK]int32, sc *[16]int32) {
	*lane = [8]int32{}
	for g := 0; g < 8; g++ {
		q := p[32*g : 32*g+32]
		s0, s1 := sc[2*g], sc[2*g+1]
		for L := 0; L < 4; L++ {
			lane[L] += s0 * (q[4*L] + q[4*L+1] + q[4*L+2] + q[4*L+3])
			lane[L+4] += s1 * (q[16+4*L] + q[17+4*L] + q[18+4*L] + q[19+4*L])
		}
	}
}

// kFMALanes updates acc[L] = fma(d, float32(lane[L]), acc[L]) for the eight
// lanes, as _mm256_fmadd_ps(set1(d), cvtepi32_ps(lanes), acc).
func kFMALanes(acc *[8]float32, d float32, lane *[8]int32) {
	for L := range acc {
		acc[L] = kFMA32(d, float32(lane[L]), acc[L])
	}
}
