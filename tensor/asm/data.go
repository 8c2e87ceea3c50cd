package main

import (
	. "github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/operand"
)

// The constant tables.
var (
	ktMask0F, ktMask03, ktMask0C, ktMask30, ktMaskC0 Mem
	ktQ6PairIdx                                      Mem
	ktMask04, ktMask10, ktByte32                     Mem
	ktScaleShuf, ktQ3High, ktQ3Shifts                Mem
	ktIQ4Values, ktIQ4Shifts                         Mem
	ktDword3, ktDword32, ktDupWord                   Mem
)

// global declares a read-only table of the given 64-bit words.
func global(name string, words ...uint64) Mem {
	m := c.StaticGlobal(name)
	c.DataAttributes(RODATA | NOPTR)
	for i, w := range words {
		c.AddDatum(8*i, U64(w))
	}
	return m
}

// splat returns n copies of w.
func splat(n int, w uint64) []uint64 {
	l := make([]uint64, n)
	for i := range l {
		l[i] = w
	}
	return l
}

// data writes the byte masks and the Q6_K scale-pair indexes (VPERMW's 16
// word indexes for groups 2p and 2p+1, 32 elements each, alternate their
// scales: sub-blocks 4p and 4p+2 in words 0-7, 4p+1 and 4p+3 in words
// 8-15).
func data() {
	const bytes = 0x0101010101010101
	ktMask0F = global("ktMask0F", splat(4, 0x0f*bytes)...)
	ktMask03 = global("ktMask03", splat(4, 0x03*bytes)...)
	ktMask0C = global("ktMask0C", splat(4, 0x0c*bytes)...)
	ktMask30 = global("ktMask30", splat(4, 0x30*bytes)...)
	ktMaskC0 = global("ktMaskC0", splat(4, 0xc0*bytes)...)
	var idx []uint64
	for pr := 0; pr < 4; pr++ {
		for off := 0; off < 32; off += 8 {
			var v uint64
			for i := 3; i >= 0; i-- {
				j := off/2 + i
				v = v<<16 | uint64(2*(2*pr+j&1)+j/8)
			}
			idx = append(idx, v)
		}
	}
	ktQ6PairIdx = global("ktQ6PairIdx", idx...)
}

// data2 writes the tables of the Q2_K, Q3_K, Q5_K and IQ4_XS kernels.
func data2() {
	const bytes = 0x0101010101010101
	ktMask04 = global("ktMask04", splat(4, 0x04*bytes)...)
	ktMask10 = global("ktMask10", splat(4, 0x10*bytes)...)
	ktByte32 = global("ktByte32", splat(2, 0x20*bytes)...)
	// ktScaleShuf+16g: the bytes of sub-blocks 2g and 2g+1, eight each.
	var shuf []uint64
	for g := 0; g < 8; g++ {
		for h := 0; h < 2; h++ {
			shuf = append(shuf, uint64(2*g+h)*bytes)
		}
	}
	ktScaleShuf = global("ktScaleShuf", shuf...)
	// ktQ3High: bytes 8-11 of the Q3_K scales four times (VPSHUFB), and the
	// dword shifts 0, 2, 4, 6 that bring each quarter's two bits down.
	ktQ3High = global("ktQ3High", splat(2, 0x0b0a09080b0a0908)...)
	ktQ3Shifts = global("ktQ3Shifts", 0x0000000200000000, 0x0000000600000004)
	vals := []int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	q := func(v []int8) uint64 {
		var r uint64
		for i, x := range v {
			r |= uint64(uint8(x)) << (8 * i)
		}
		return r
	}
	ktIQ4Values = global("ktIQ4Values", q(vals[:8]), q(vals[8:]), q(vals[:8]), q(vals[8:]))
	var sh []uint64
	for i := 0; i < 4; i++ {
		sh = append(sh, uint64(4*i)|uint64(4*i+2)<<32)
	}
	ktIQ4Shifts = global("ktIQ4Shifts", sh...)
	ktDword3 = global("ktDword3", splat(4, 3|3<<32)...)
	ktDword32 = global("ktDword32", splat(4, 32|32<<32)...)
	// ktDupWord: each dword's low word into both of its words.
	ktDupWord = global("ktDupWord", 0x0504050401000100, 0x0d0c0d0c09080908, 0x0504050401000100, 0x0d0c0d0c09080908)
}
