// Command asm writes package tensor's generated amd64 assembly with avo
// (github.com/mmcloughlin/avo). It is a module of its own, so that avo is
// no dependency of the product's build; package tensor runs it through go
// generate, once per kernel family:
//
//	go run -C asm . -kernels dotk -out ../dotk_amd64.s -stubs ../dotk_stubs_amd64.go -pkg tensor
//	go run -C asm . -kernels q32 -out ../dotq32_lanes_amd64.s -stubs ../dotq32_lanes_stubs_amd64.go -pkg tensor
//	go run -C asm . -kernels q4t -out ../dotq4x8t_amd64.s -stubs ../dotq4x8t_stubs_amd64.go -pkg tensor
//
// The stubs file declares every kernel, with the reference loop it
// computes bit for bit.
//
// # dotk: the T-token K-quant kernels
//
// AVX-512 (VL, BW, VNNI) kernels that run T = 2..8 activation rows through
// one pass over the weights. Each weight block is decoded once for all
// tokens. Per token, VPDPBUSD sums the unsigned quants times the int8
// activations four at a time (|sum| < 2^15), two such vectors are packed
// into words, and one VPDPWSSD applies both their scales and accumulates
// in int32 lanes: three multiplies per 64 elements instead of four, with
// the same exact sums as the AVX2 kernels, grouped differently. Q4_K packs
// with VPACKSSDW (only the block total matters); Q6_K must keep each
// four-element sum in its ggml lane, so it moves the second vector's sums
// into the high words (shift, then a word-masked move with K1). The float
// work is the single-row kernels', op for op: Q4_K reduces each token's
// sums to one lane per token and runs its two fused multiply-adds per block
// on the token lanes; Q6_K keeps ggml's eight lanes per token.
//
// Q4_K and Q6_K also have AVX2 forms, in 16 virtual vector registers: Q4_K
// for T = 2..7 (q4k_avx2.go: the same tables and float work on token lanes,
// with each 64 elements' integer work per token as the single-row AVX2
// kernel does it: two VPMADDUBSW, two VPMADDWD by the scales, two VPADDD),
// Q6_K for T = 2..8 (q6k_avx2.go: the single-row AVX2 kernel's operations
// per token, ggml's eight float lanes in registers or, past four tokens,
// in the frame).
//
// The Q2_K, Q3_K, Q5_K and IQ4_XS kernels keep the AVX2 kernels' integer
// work per token (VPMADDUBSW of each 32-element group against the token's
// activations), but fuse the VPMADDWD by the scales and the VPADDD into one
// VPDPWSSD, which gives the same wrapping int32 lanes.
//
// General-purpose registers are avo's virtual registers, and so are the
// vectors that decode a block and hold the constants, but for Q4_K. The
// per-token vectors are physical, because the kernels' design is a budget
// of the 32 of them: token t's int32 sums live in Y16+t and its float
// lanes in Y24+t (Q4_K: the sums of even blocks in Y16+t, of odd blocks in
// Y24+t), so T = 8 uses all of Y16-Y31 and one function per T exists
// because every token has registers of its own. That leaves the virtual
// registers Y0-Y15, which the VEX-only instructions (VPAND, VPSIGNB,
// VPHADDW) need. Q4_K is physical throughout: it interleaves a block's
// float work with the next block's integer work and so uses all of Y0-Y15
// at once, which avo's greedy allocator need not find.
//
// # q32: the lanes kernels of Q5_0, Q4_1 and Q5_1
//
// See q32.go: AVX2 forms for 1 to 4 tokens and for one token four rows at
// a time, AVX-512 VNNI forms for 1 to 8 tokens, all from one description
// of each type. Registers are virtual, but for the VNNI forms' per-token
// accumulators (Y16+t, X24+t), which keep the allocator's other vectors in
// Y0-Y15.
//
// # q4t: the AVX2 T-token kernels of interleaved Q4_0
//
// See q4x8t.go: 2 to 5 tokens a pass, every token's int16 sums and float
// accumulators in registers of its own (physical Y0-Y15).
//
// # avo's limits met here
//
// avo v0.5.0 has no AVX512_VNNI instructions: VPDPBUSD and VPDPWSSD are
// built as ir.Instructions with their inputs and outputs (see vnni). Its
// allocator may hand out Y16-Y31, which VEX-only instructions cannot take
// (the assembler then rejects the file), and its liveness tracks a
// register's halves apart, so a value written by halves (a 128-bit load,
// then VINSERTI128) looks live across the loop; the kernels write whole
// registers instead (VBROADCASTI128, VPBLENDD). It knows VPXOR's zeroing
// idiom but not VPXORD's (a VPXORD-zeroed virtual register looks live
// from the function's entry), so virtual registers are zeroed with VPXOR.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// maxBlocks is kMaxQ4KTBlocks in package tensor: the most blocks per row
// the Q4_K kernels' frame tables hold.
const maxBlocks = 64

// c is the context instructions go to: main's, or a capture's.
var c *build.Context

// top is the file's context; virtual registers always come from it, so that
// captured instructions keep their registers' identities.
var top *build.Context

func gp64() GPVirtual { return top.GP64() }
func gp32() GPVirtual { return top.GP32() }

// capture returns the instructions f emits.
func capture(f func()) []*ir.Instruction {
	saved := c
	c = build.NewContext()
	c.Function("capture")
	f()
	file, err := c.Result()
	if err != nil {
		fail(err)
	}
	c = saved
	var l []*ir.Instruction
	for _, n := range file.Functions()[0].Nodes {
		i, ok := n.(*ir.Instruction)
		if !ok {
			fail(fmt.Errorf("capture: %T in captured code", n))
		}
		l = append(l, i)
	}
	return l
}

// interleave emits the instructions of a with those of b spread evenly
// among them (b's in order, each after about len(a)/len(b) of a's).
func interleave(a, b []*ir.Instruction) {
	j := 0
	for i, ins := range a {
		c.Instruction(ins)
		for j < len(b) && (j+1)*len(a) <= (i+1)*len(b) {
			c.Instruction(b[j])
			j++
		}
	}
	for ; j < len(b); j++ {
		c.Instruction(b[j])
	}
}

// vnni emits an AVX512_VNNI multiply-accumulate (VPDPBUSD, VPDPWSSD;
// suffix "BCST" for a broadcast dword source), which avo v0.5.0 lacks:
// acc += op(src2, src1), in Go's operand order.
func vnni(opcode string, suffix []string, src2, src1 Op, acc Register) {
	c.Instruction(&ir.Instruction{
		Opcode:   opcode,
		Suffixes: suffix,
		Operands: []Op{src2, src1, acc},
		Inputs:   []Op{src2, src1, acc},
		Outputs:  []Op{acc},
		ISA:      []string{"AVX512_VNNI", "AVX512VL"},
	})
}

func vpdpbusd(src2, src1 Op, acc Register) { vnni("VPDPBUSD", nil, src2, src1, acc) }
func vpdpwssd(src2, src1 Op, acc Register) { vnni("VPDPWSSD", nil, src2, src1, acc) }
func vpdpwssdBcst(src2, src1 Op, acc Register) {
	vnni("VPDPWSSD", []string{"BCST"}, src2, src1, acc)
}

// text starts the function name with attributes a and the signature sig.
func text(name string, a attr.Attribute, sig string) {
	c.Function(name)
	c.Attributes(a)
	c.SignatureExpr(sig)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "asm:", err)
	os.Exit(1)
}

// Y is the 256-bit vector register n, X its low 128 bits.
func Y(n int) VecPhysical { return ymm[n] }
func X(n int) VecPhysical { return xmm[n] }

var (
	ymm = [32]VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15,
		Y16, Y17, Y18, Y19, Y20, Y21, Y22, Y23, Y24, Y25, Y26, Y27, Y28, Y29, Y30, Y31}
	xmm = [32]VecPhysical{X0, X1, X2, X3, X4, X5, X6, X7, X8, X9, X10, X11, X12, X13, X14, X15,
		X16, X17, X18, X19, X20, X21, X22, X23, X24, X25, X26, X27, X28, X29, X30, X31}
)

// sp is byte off of the function's frame.
func sp(off int) Mem { return NewStackAddr(off) }

// arg is the address of the argument name at off(FP).
func arg(name string, off int) Mem { return NewParamAddr(name, off) }

// tokens holds the registers that address the T tokens' current activation
// blocks: base[0..3] those of tokens 0-3, and tokens 4-7 at base[t-4] plus
// four row strides (stride).
type tokens struct {
	T      int
	base   [4]GPVirtual
	stride GPVirtual
}

func newTokens(T int, stride GPVirtual) *tokens {
	k := &tokens{T: T, stride: stride}
	for i := 0; i < min(T, 4); i++ {
		k.base[i] = gp64()
	}
	return k
}

// at is the address of byte off of token t's current activation block.
func (k *tokens) at(t, off int) Mem {
	m := Mem{Base: k.base[t&3], Disp: off}
	if t >= 4 {
		m = m.Idx(k.stride, 4)
	}
	return m
}

// load points the token registers at x (x+24(FP)) and the rows after it.
func (k *tokens) load() {
	c.MOVQ(arg("x", 24), k.base[0])
	if k.T > 1 {
		c.LEAQ(Mem{Base: k.base[0], Index: k.stride, Scale: 1}, k.base[1])
	}
	if k.T > 2 {
		c.LEAQ(Mem{Base: k.base[0], Index: k.stride, Scale: 2}, k.base[2])
	}
	if k.T > 3 {
		c.LEAQ(Mem{Base: k.base[1], Index: k.stride, Scale: 2}, k.base[3])
	}
}

// advance moves every token to its next Q8_K block (292 bytes).
func (k *tokens) advance() {
	for i := 0; i < min(k.T, 4); i++ {
		c.ADDQ(U32(292), k.base[i])
	}
}

// vreg is a vector register, physical or virtual.
type vreg interface {
	Register
	Vec
}

// tree reduces the eight int32 lanes of each of the T vectors v[t] into lane
// t of out (lanes T..7 hold sums of repeated vectors); v is clobbered, tmp
// is a scratch register. Integer adds only, so the grouping is free. With
// vex the halves are paired by VPERM2I128 (AVX2; registers Y0-Y15 only),
// else by VSHUFI64X2 (AVX-512VL, any register).
func tree(v []vreg, tmp, out vreg, vex bool) {
	T := len(v)
	at := func(i int) vreg { return v[min(i, T-1)] }
	y := func(r vreg) Op { return r.AsY() }
	// Level 1: pairs (a, b) → [a0+a2, b0+b2, a1+a3, b1+b3] per 128-bit half.
	var l1 []vreg
	for i := 0; i < T; i += 2 {
		a, bb := at(i), at(i+1)
		if i+1 >= T {
			bb = a
		}
		c.VPUNPCKLDQ(y(bb), y(a), y(tmp))
		c.VPUNPCKHDQ(y(bb), y(a), y(a))
		c.VPADDD(y(tmp), y(a), y(a))
		l1 = append(l1, a)
	}
	// Level 2: quads → [t0, t1, t2, t3] per half.
	var l2 []vreg
	for i := 0; i < len(l1); i += 2 {
		a := l1[i]
		bb := a
		if i+1 < len(l1) {
			bb = l1[i+1]
		}
		c.VPUNPCKLQDQ(y(bb), y(a), y(tmp))
		c.VPUNPCKHQDQ(y(bb), y(a), y(a))
		c.VPADDD(y(tmp), y(a), y(a))
		l2 = append(l2, a)
	}
	// Level 3: the two halves of the low and high quads.
	cc, d := l2[0], l2[0]
	if len(l2) > 1 {
		d = l2[1]
	}
	if vex {
		c.VPERM2I128(U8(0x20), y(d), y(cc), y(tmp))
		c.VPERM2I128(U8(0x31), y(d), y(cc), y(out))
	} else {
		c.VSHUFI64X2(U8(0), y(d), y(cc), y(tmp))
		c.VSHUFI64X2(U8(3), y(d), y(cc), y(out))
	}
	c.VPADDD(y(tmp), y(out), y(out))
}

// storeLanes writes lanes 0..T-1 of Y reg to out, out+os, out+2·os, ...
// (out is advanced; clobbers X3 when T > 4).
func storeLanes(T, reg int, out, os GPVirtual) {
	for t := 0; t < T; t++ {
		if t == 4 {
			c.VEXTRACTF128(U8(1), Y(reg), X3)
		}
		src := reg
		lane := t
		if t >= 4 {
			src, lane = 3, t-4
		}
		if lane == 0 {
			c.VMOVSS(X(src), Mem{Base: out})
		} else {
			c.VEXTRACTPS(U8(lane), X(src), Mem{Base: out})
		}
		if t < T-1 {
			c.ADDQ(os, out)
		}
	}
}

// khsum8 adds the eight lanes of acc as ggml's hsum_float_8 does (see
// KHSUM8 in dotk_avx2_amd64.h) and returns the register whose lane 0 holds
// the sum.
func khsum8(acc VecVirtual) VecVirtual {
	t, u := top.XMM(), top.XMM()
	c.VEXTRACTF128(U8(1), acc, t)
	c.VADDPS(acc.AsX(), t, t)
	c.VMOVHLPS(t, t, u)
	c.VADDPS(u, t, t)
	c.VMOVSHDUP(t, u)
	c.VADDSS(u, t, t)
	return t
}

// q4KScales unpacks the scales and mins of the Q4_K block at w into x
// (bytes 0-7 the scales, 8-15 the mins, as q4KScaleMin).
func q4KScales(w GPVirtual, x Register) {
	a, d, lo, hi := gp32(), gp32(), gp32(), gp32()
	c.MOVL(Mem{Base: w, Disp: 4}, a)
	c.MOVL(Mem{Base: w, Disp: 12}, d)
	c.MOVL(a, lo)
	c.ANDL(U32(0x3f3f3f3f), lo)
	c.MOVL(d, hi)
	c.ANDL(U32(0x0f0f0f0f), hi)
	c.SHRL(U8(6), a)
	c.ANDL(U32(0x03030303), a)
	c.SHLL(U8(4), a)
	c.ORL(a, hi)
	c.SHLQ(U8(32), hi.As64())
	c.ORQ(hi.As64(), lo.As64())
	c.MOVL(Mem{Base: w, Disp: 8}, a)
	c.MOVL(a, hi)
	c.ANDL(U32(0x3f3f3f3f), hi)
	c.SHRL(U8(4), d)
	c.ANDL(U32(0x0f0f0f0f), d)
	c.SHRL(U8(6), a)
	c.ANDL(U32(0x03030303), a)
	c.SHLL(U8(4), a)
	c.ORL(a, d)
	c.SHLQ(U8(32), d.As64())
	c.ORQ(d.As64(), hi.As64())
	c.VMOVQ(lo.As64(), x)
	c.VPINSRQ(U8(1), hi.As64(), x, x)
}

// half returns the float16 at m converted to float32, in lane 0 of a new
// register.
func half(m Mem) VecVirtual {
	h, x := gp32(), top.XMM()
	c.MOVWLZX(m, h)
	c.VMOVD(h, x)
	c.VCVTPH2PS(x, x)
	return x
}

// halves returns the two float16 at m converted to float32, in lanes 0 and
// 1 of a new register.
func halves(m Mem) VecVirtual {
	h, x := gp32(), top.XMM()
	c.MOVL(m, h)
	c.VMOVD(h, x)
	c.VCVTPH2PS(x, x)
	return x
}

// loadHalves loads the two float16 at m into X x's low words and converts
// them to float32 in lanes 0 and 1.
func loadHalves(m Mem, x int) {
	h := gp32()
	c.MOVL(m, h)
	c.VMOVD(h, X(x))
	c.VCVTPH2PS(X(x), X(x))
}

func main() {
	fs := flag.NewFlagSet("asm", flag.ExitOnError)
	flags := build.NewFlags(fs)
	kernels := fs.String("kernels", "dotk", "the kernels to write: dotk (the T-token K-quant kernels), q32 (the Q5_0, Q4_1 and Q5_1 lanes kernels) or q4t (the AVX2 T-token kernels of interleaved Q4_0)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		fail(err)
	}
	top = build.NewContext()
	c = top
	c.ConstraintExpr("amd64,!noasm")
	switch *kernels {
	case "dotk":
		dotk()
	case "q32":
		q32()
	case "q4t":
		q4x8T()
	default:
		fail(fmt.Errorf("-kernels %q: want dotk, q32 or q4t", *kernels))
	}
	os.Exit(build.Main(flags.Config(), top))
}

// dotk writes the T-token K-quant kernels.
func dotk() {
	data()
	data2()
	for T := 1; T <= 8; T++ {
		q4K(T) // T = 1: the one-token pass, a row at a time on VNNI
	}
	for _, wide := range []bool{false, true} {
		for T := 2; T <= q4KAVX2MaxT; T++ {
			q4KAVX2(T, wide)
		}
	}
	for T := 2; T <= 8; T++ {
		q6K(T)
	}
	for T := 2; T <= q6KAVX2MaxT; T++ {
		q6KAVX2(T)
	}
	for _, k := range []struct {
		gen func(T int)
		// the most tokens its AVX2 form takes, and keeps the float
		// lanes of in registers, in Y0-Y15 (TestGeneratedAVX2KernelsVEX
		// in package tensor fails where they do not fit)
		avx2Max, regT int
		frame         int // the kernel's own frame bytes
	}{{q2KT, 8, 4, 24}, {q3KT, 6, 3, 24}, {q5KT, 6, 4, 96}, {iq4XST, 8, 4, 64}} {
		for T := 2; T <= 8; T++ {
			kf = vnniForm(T)
			k.gen(T)
		}
		for T := 2; T <= k.avx2Max; T++ {
			kf = avx2Form(T, k.frame, k.regT)
			k.gen(T)
		}
	}
}
