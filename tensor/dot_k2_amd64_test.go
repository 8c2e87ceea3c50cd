//go:build amd64 && !noasm

package tensor

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// k2Gemvs are the multi-row kernels of k2Types (by type).
var k2Gemvs = map[Type]gemv{
	Q2_K:   gemvQ2K,
	Q3_K:   gemvQ3K,
	Q5_K:   gemvQ5K,
	IQ4_XS: gemvIQ4XS,
}

// k2GemvCase is a gemv and the type and reference it reproduces.
type k2GemvCase struct {
	name string
	c    k2Type
	g    gemv
}

// k2GemvCases are k2Gemvs and Q2_K's gemv in the Q2KRepacked order.
func k2GemvCases() []k2GemvCase {
	var l []k2GemvCase
	for _, c := range k2Types {
		l = append(l, k2GemvCase{c.typ.String(), c, k2Gemvs[c.typ]})
	}
	q2r := k2Types[0]
	q2r.fast, q2r.ref = dotQ2KR, dotQ2KRepackedRef
	return append(l, k2GemvCase{"Q2_K/repacked", q2r, gemvQ2KR})
}

// TestKQuants2Gemv runs the Q2_K, Q3_K, Q5_K and IQ4_XS gemv kernels over
// strided weight, activation and output rows (gaps filled with guard
// values) and checks every output against the single-row reference, bit
// for bit, and that no gap was written: in the form useVNNI selects, and
// where the CPU has VNNI in the AVX2 form too (with the extreme-quant,
// MatMul and allocation checks).
func TestKQuants2Gemv(t *testing.T) {
	if !haveAVX2K {
		t.Skip("no AVX2 on this CPU")
	}
	checkKQuants2Gemv(t)
	if !hasVNNI {
		return
	}
	defer setVNNI(useVNNI)
	setVNNI(!useVNNI)
	checkKQuants2Gemv(t)
	TestKQuants2GemvExtremeQuants(t)
	TestKQuants2MatMul(t)
	TestKQuants2NoAllocs(t)
}

func checkKQuants2Gemv(t *testing.T) {
	t.Helper()
	r := rand.New(rand.NewPCG(51, 52))
	for _, gc := range k2GemvCases() {
		c, g := gc.c, gc.g
		if gemvs[c.typ] == nil {
			t.Errorf("%v: gemv not registered", c.typ)
		}
		for _, nb := range []int{1, 2, 3, 5} {
			for _, rows := range []int{1, 2, 5, 9} {
				for ntok := 1; ntok <= 17; ntok++ {
					for _, isRaw := range []bool{false, true} {
						name := fmt.Sprintf("%s vnni=%v nb=%d rows=%d ntok=%d raw=%v", gc.name, useVNNI, nb, rows, ntok, isRaw)
						checkKGemvStrided(t, r, name, g, c.ref, c.gen, c.bs, nb, rows, ntok, isRaw)
					}
				}
			}
		}
	}
}

// TestKQuants2GemvExtremeQuants runs the gemv kernels on weights whose
// quant bytes are all 0xff (the largest unsigned quants, for IQ4_XS the
// level 113) and on ones of all 0x00 (IQ4_XS: −127) against activations
// of all −128 or all 127, where the 16-bit pair sums are largest; scales
// are random. Every output must match the reference bit for bit.
func TestKQuants2GemvExtremeQuants(t *testing.T) {
	if !haveAVX2K {
		t.Skip("no AVX2 on this CPU")
	}
	r := rand.New(rand.NewPCG(53, 54))
	const nb, rows, ntok = 2, 11, 9
	for _, gc := range k2GemvCases() {
		c, g := gc.c, gc.g
		for _, fill := range []byte{0xff, 0x00} {
			w := c.gen(r, rows*nb)
			for b := 0; b < rows*nb; b++ {
				blk := w[b*c.bs : (b+1)*c.bs]
				for i := range blk {
					if i != c.dOff[0] && i != c.dOff[0]+1 && i != c.dOff[1] && i != c.dOff[1]+1 && !k2IsScaleByte(c.typ, i) {
						blk[i] = fill
					}
				}
			}
			what := fmt.Sprintf("%s vnni=%v fill=%#x", gc.name, useVNNI, fill)
			checkKGemvTokens(t, what, g, c.ref, w, c.bs, rows, kExtremeActs(r, nb, ntok), nb, ntok)
		}
	}
}

// k2IsScaleByte reports whether byte i of a block of type t holds sub-block
// scales (kept random by TestKQuants2GemvExtremeQuants).
func k2IsScaleByte(t Type, i int) bool {
	switch t {
	case Q2_K:
		return i < 16
	case Q3_K:
		return i >= q3KScales && i < q3KD
	case Q5_K:
		return i >= q5KScales && i < q5KQh
	case IQ4_XS:
		return i >= 2 && i < iq4XSQs
	}
	return false
}

// BenchmarkGemvK2 runs 64 rows of 512 columns of each type against ntok
// tokens, weight bytes per call (as BenchmarkGemvQ4_K).
func BenchmarkGemvK2(b *testing.B) {
	for _, gc := range k2GemvCases() {
		c, g := gc.c, gc.g
		for _, n := range []int{1, 4, 5} {
			b.Run(fmt.Sprintf("%s/ntok=%d", gc.name, n), func(b *testing.B) { kBenchGemv(b, c.bs, g, c.gen, 64, n) })
		}
	}
}
