package tensor

// Weight-side K-quant quantizers: float32 rows to Q4_K and Q6_K blocks,
// byte for byte as ggml's quantize_row_q4_K_ref and quantize_row_q6_K_ref
// (what llama-quantize runs for these types without an importance matrix).
// They search for good scales, so they cost far more than the activation
// quantizer; they are for writing files and tests, not the decode loop.
//
// Every float operation below is float32 with one rounding, in the order
// ggml's C evaluates it (its base library is built without fused
// multiply-add); explicit float32(...) conversions keep Go from fusing.

import (
	"encoding/binary"
	"math"
)

// registerKQuantQuantizers registers the Q4_K and Q6_K quantizers.
func registerKQuantQuantizers() {
	registerQuantize(Q4_K, quantizeRowQ4K)
	registerQuantize(Q6_K, quantizeRowQ6K)
}

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it is treated as all zeros.
const groupMaxEps = 1e-15

// makeQKX2Quants is ggml's make_qkx2_quants for one group x with weights w:
// it picks a scale and a non-positive offset min so that
// x ≈ scale·L + min with L in [0, nmax], trying nstep+1 scales around
// nmax/(max-min) and keeping the one with the least weighted squared error
// (weighted absolute error where mad, ggml's use_mad).
// It writes L and returns scale and -min.
func makeQKX2Quants(nmax int32, x, w []float32, l, laux []uint8, rmin, rdelta float32, nstep int, mad bool) (scale, negMin float32) {
	n := len(x)
	xmin, xmax := x[0], x[0]
	sumW := w[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < xmin {
			xmin = x[i]
		}
		if x[i] > xmax {
			xmax = x[i]
		}
		sumW += w[i]
		sumX += float32(w[i] * x[i])
	}
	if xmin > 0 {
		xmin = 0
	}
	if xmax == xmin {
		clear(l[:n])
		return 0, -xmin
	}
	fmax := float32(nmax)
	iscale := fmax / (xmax - xmin)
	scale = 1 / iscale
	var bestError float32
	for i := 0; i < n; i++ {
		q := max(0, min(nmax, nearestInt(float32(iscale*(x[i]-xmin)))))
		l[i] = uint8(q)
		diff := float32(float32(scale*float32(l[i]))+xmin) - x[i]
		bestError += float32(w[i] * kErr(diff, mad))
	}
	if nstep < 1 {
		return scale, -xmin
	}
	for is := 0; is <= nstep; is++ {
		iscale = float32(float32(rmin+float32(rdelta*float32(is)))+fmax) / (xmax - xmin)
		var sumL, sumL2, sumXL float32
		for i := 0; i < n; i++ {
			q := max(0, min(nmax, nearestInt(float32(iscale*(x[i]-xmin)))))
			laux[i] = uint8(q)
			fl := float32(q)
			sumL += float32(w[i] * fl)
			sumL2 += float32(float32(w[i]*fl) * fl)
			sumXL += float32(float32(w[i]*fl) * x[i])
		}
		d := float32(sumW*sumL2) - float32(sumL*sumL)
		if d > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / d
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / d
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := 0; i < n; i++ {
				diff := float32(float32(thisScale*float32(laux[i]))+thisMin) - x[i]
				curError += float32(w[i] * kErr(diff, mad))
			}
			if curError < bestError {
				copy(l[:n], laux[:n])
				bestError = curError
				scale = thisScale
				xmin = thisMin
			}
		}
	}
	return scale, -xmin
}

// kErr is make_qkx2_quants' error term: |diff| where mad, else diff².
func kErr(diff float32, mad bool) float32 {
	if mad {
		return abs32(diff)
	}
	return float32(diff * diff)
}

// quantizeRowQ4K converts len(src) floats (a multiple of 256) into Q4_K
// blocks as ggml's quantize_row_q4_K_ref: per sub-block of 32, a weighted
// scale/min search (weights av|x| + |x|); the eight scales and mins are then
// quantized to 6 bits against the block's largest, d and dmin stored as F16,
// and the values requantized with the stored scales (quantizeKScaleMin).
func quantizeRowQ4K(dst []byte, src []float32) {
	nb := len(src) / qkK
	_ = dst[nb*q4KBytes-1]
	var l [qkK]uint8
	for i := 0; i < nb; i++ {
		b := dst[i*q4KBytes : (i+1)*q4KBytes]
		quantizeKScaleMin(b, b[q4KScales:q4KScales+12], src[i*qkK:(i+1)*qkK], &l, 15, -1, 20)
		q := b[q4KQs : q4KQs+128]
		for j := 0; j < 4; j++ {
			for k := 0; k < 32; k++ {
				q[32*j+k] = l[64*j+k] | l[64*j+k+32]<<4
			}
		}
	}
}

// quantizeKScaleMin is the part of quantize_row_q4_K_ref and
// quantize_row_q5_K_ref that Q4_K and Q5_K share, for one super-block x of
// 256 floats: per sub-block of 32 a weighted scale/min search
// (makeQKX2Quants with nmax, rmin, steps of 0.1 and nstep; weights
// av|x| + |x|); the eight scales and mins quantized to 6 bits against the
// block's largest into sc (12 bytes), d and dmin as F16 into b[0:4]; then
// the values requantized with the stored scales into l, each in [0, nmax].
func quantizeKScaleMin(b, sc []byte, x []float32, l *[qkK]uint8, nmax int32, rmin float32, nstep int) {
	var (
		laux    [32]uint8
		weights [32]float32
		mins    [8]float32
		scales  [8]float32
	)
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := float32(math.Sqrt(float64(sumX2 / 32)))
		for k, v := range xs {
			weights[k] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], l[32*j:32*j+32], laux[:], rmin, 0.1, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	clear(sc)
	for j := 0; j < 8; j++ {
		ls := min(uint8(nearestInt(float32(invScale*scales[j]))), 63)
		lm := min(uint8(nearestInt(float32(invMin*mins[j]))), 63)
		if j < 4 {
			sc[j] = ls
			sc[j+4] = lm
		} else {
			sc[j+4] = ls&0xf | (lm&0xf)<<4
			sc[j-4] |= (ls >> 4) << 6
			sc[j] |= (lm >> 4) << 6
		}
	}
	hd, hm := F32ToF16(maxScale/63), F32ToF16(maxMin/63)
	binary.LittleEndian.PutUint16(b, hd)
	binary.LittleEndian.PutUint16(b[2:], hm)
	fd, fm := F16ToF32(hd), F16ToF32(hm)
	scs, mns := q4KScaleMin(sc)
	for j := 0; j < 8; j++ {
		d := float32(fd * float32(scs[j]))
		if d == 0 {
			continue
		}
		dm := float32(fm * float32(mns[j]))
		for k := 0; k < 32; k++ {
			q := nearestInt(float32(x[32*j+k]+dm) / d)
			l[32*j+k] = uint8(max(0, min(nmax, q)))
		}
	}
}

// makeQXQuants is ggml's make_qx_quants with rmse_type 1 and no importance
// weights, for one group x: symmetric quants L+nmax in [0, 2·nmax) with the
// scale chosen among 19 candidates to minimise Σ x²·(x − scale·l)². It
// writes L (offset by nmax) and returns the scale.
func makeQXQuants(nmax int32, x []float32, l []int8) float32 {
	var vmax, amax float32
	for _, v := range x {
		if ax := abs32(v); ax > amax {
			amax, vmax = ax, v
		}
	}
	if amax < groupMaxEps {
		clear(l[:len(x)])
		return 0
	}
	fmax := float32(nmax)
	iscale := -fmax / vmax
	var sumLX, sumL2 float32
	for i, v := range x {
		q := max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
		l[i] = int8(q + nmax)
		w := float32(v * v)
		fl := float32(q)
		sumLX += float32(float32(w*v) * fl)
		sumL2 += float32(float32(w*fl) * fl)
	}
	var scale float32
	if sumL2 != 0 {
		scale = sumLX / sumL2
	}
	best := float32(scale * sumLX)
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -float32(fmax+float32(0.1*float32(is))) / vmax
		sumLX, sumL2 = 0, 0
		for _, v := range x {
			q := max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
			w := float32(v * v)
			fl := float32(q)
			sumLX += float32(float32(w*v) * fl)
			sumL2 += float32(float32(w*fl) * fl)
		}
		if sumL2 > 0 && float32(sumLX*sumLX) > float32(best*sumL2) {
			for i, v := range x {
				q := max(-nmax, min(nmax-1, nearestInt(float32(iscale*v))))
				l[i] = int8(q + nmax)
			}
			scale = sumLX / sumL2
			best = float32(scale * sumLX)
		}
	}
	return scale
}

// quantizeRowQ6K converts len(src) floats (a multiple of 256) into Q6_K
// blocks as ggml's quantize_row_q6_K_ref: a scale per sub-block of 16 from
// makeQXQuants, the sixteen scales quantized to int8 against the largest
// (d = max/-128 as F16), and the values requantized with the stored scales.
func quantizeRowQ6K(dst []byte, src []float32) {
	nb := len(src) / qkK
	_ = dst[nb*q6KBytes-1]
	var (
		l      [qkK]int8
		scales [16]float32
	)
	for i := 0; i < nb; i++ {
		x := src[i*qkK : (i+1)*qkK]
		b := dst[i*q6KBytes : (i+1)*q6KBytes]
		var maxScale, maxAbsScale float32
		for ib := 0; ib < 16; ib++ {
			s := makeQXQuants(32, x[16*ib:16*ib+16], l[16*ib:16*ib+16])
			scales[ib] = s
			if as := abs32(s); as > maxAbsScale {
				maxAbsScale, maxScale = as, s
			}
		}
		if maxAbsScale < groupMaxEps {
			clear(b)
			continue
		}
		iscale := -128 / maxScale
		hd := F32ToF16(1 / iscale)
		binary.LittleEndian.PutUint16(b[q6KD:], hd)
		for ib := 0; ib < 16; ib++ {
			b[q6KScales+ib] = byte(int8(min(127, nearestInt(float32(iscale*scales[ib])))))
		}
		fd := F16ToF32(hd)
		for j := 0; j < 16; j++ {
			d := float32(fd * float32(int8(b[q6KScales+j])))
			if d == 0 {
				continue
			}
			for k := 0; k < 16; k++ {
				q := max(-32, min(31, nearestInt(x[16*j+k]/d)))
				l[16*j+k] = int8(q + 32)
			}
		}
		for h := 0; h < 2; h++ {
			ql := b[64*h : 64*h+64]
			qh := b[q6KQh+32*h : q6KQh+32*h+32]
			L := l[128*h : 128*h+128]
			for k := 0; k < 32; k++ {
				q1, q2, q3, q4 := uint8(L[k]), uint8(L[k+32]), uint8(L[k+64]), uint8(L[k+96])
				ql[k] = q1&0xf | (q3&0xf)<<4
				ql[k+32] = q2&0xf | (q4&0xf)<<4
				qh[k] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}
