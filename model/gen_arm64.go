//go:build ignore

// gen_arm64.go writes attn_arm64.s, the NEON forms of the attention,
// SwiGLU and RMSNorm loops (attn_arm64.go documents each contract), and
// ../internal/libm/vec_arm64.s, internal/libm's vector expf kernels:
// GOARCH=arm64 go generate ./model (the directive is in attn_arm64.go), or
// go run gen_arm64.go in model/.
//
// The Go assembler lacks the NEON floating-point arithmetic (FADD, FMUL,
// FDIV, the half and double conversions, the compares), so those are
// emitted as WORD with the ARM mnemonic in a comment, from the small
// encoder below; TestARM64Encodings checks every such word against llvm-mc
// where it is installed, and the kernels' tests check what they compute.
// Helpers take their operands in ARM order (destination first), whichever
// syntax they emit.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"strings"
)

type gen struct{ b bytes.Buffer }

func (g *gen) p(format string, a ...any) { fmt.Fprintf(&g.b, "\t"+format+"\n", a...) }
func (g *gen) c(format string, a ...any) { fmt.Fprintf(&g.b, "\t// "+format+"\n", a...) }
func (g *gen) label(l string)            { fmt.Fprintf(&g.b, "%s:\n", l) }
func (g *gen) raw(s string)              { g.b.WriteString(s) }

// enc is an instruction the Go assembler lacks: its encoding with every
// register field zero and its ARM syntax, %d for the registers in the
// order d, n, m (and the lane last for by-element forms).
type enc struct {
	base uint32
	text string
}

var ops = map[string]enc{
	// d, n, m: Rd bits 0-4, Rn 5-9, Rm 16-20.
	"fadd":    {0x4e20d400, "fadd v%d.4s, v%d.4s, v%d.4s"},
	"fsub":    {0x4ea0d400, "fsub v%d.4s, v%d.4s, v%d.4s"},
	"fmul":    {0x6e20dc00, "fmul v%d.4s, v%d.4s, v%d.4s"},
	"fdiv":    {0x6e20fc00, "fdiv v%d.4s, v%d.4s, v%d.4s"},
	"fmla":    {0x4e20cc00, "fmla v%d.4s, v%d.4s, v%d.4s"},
	"fmls":    {0x4ea0cc00, "fmls v%d.4s, v%d.4s, v%d.4s"},
	"faddp":   {0x6e20d400, "faddp v%d.4s, v%d.4s, v%d.4s"},
	"fcmgt":   {0x6ea0e400, "fcmgt v%d.4s, v%d.4s, v%d.4s"},
	"facgt":   {0x6ea0ec00, "facgt v%d.4s, v%d.4s, v%d.4s"},
	"fcmeq":   {0x4e20e400, "fcmeq v%d.4s, v%d.4s, v%d.4s"},
	"fadd.2d": {0x4e60d400, "fadd v%d.2d, v%d.2d, v%d.2d"},
	"fsub.2d": {0x4ee0d400, "fsub v%d.2d, v%d.2d, v%d.2d"},
	"fmul.2d": {0x6e60dc00, "fmul v%d.2d, v%d.2d, v%d.2d"},
	"fmla.2d": {0x4e60cc00, "fmla v%d.2d, v%d.2d, v%d.2d"},
	"ext8":    {0x6e004000, "ext v%d.16b, v%d.16b, v%d.16b, #8"},
	"fmul.e":  {0x4f809000, "fmul v%d.4s, v%d.4s, v%d.s[%d]"},
	"fmla.e":  {0x4f801000, "fmla v%d.4s, v%d.4s, v%d.s[%d]"},
	// d, n.
	"faddp.s":   {0x7e30d800, "faddp s%d, v%d.2s"},
	"fcvtl":     {0x0e217800, "fcvtl v%d.4s, v%d.4h"},
	"fcvtl2":    {0x4e217800, "fcvtl2 v%d.4s, v%d.8h"},
	"fcvtn":     {0x0e216800, "fcvtn v%d.4h, v%d.4s"},
	"fcvtl.2d":  {0x0e617800, "fcvtl v%d.2d, v%d.2s"},
	"fcvtl2.2d": {0x4e617800, "fcvtl2 v%d.2d, v%d.4s"},
	"fcvtn.2s":  {0x0e616800, "fcvtn v%d.2s, v%d.2d"},
	"fcvtn2.4s": {0x4e616800, "fcvtn2 v%d.4s, v%d.2d"},
	"fcmle0":    {0x6ea0d800, "fcmle v%d.4s, v%d.4s, #0.0"},
	"fneg":      {0x6ea0f800, "fneg v%d.4s, v%d.4s"},
}

func reg(r int) uint32 {
	if r < 0 || r > 31 {
		log.Panicf("register %d out of range", r)
	}
	return uint32(r)
}

// w emits an instruction of ops with registers regs (and, for by-element
// forms, the lane last).
func (g *gen) w(name string, regs ...int) {
	e, ok := ops[name]
	if !ok {
		log.Panicf("no encoding for %s", name)
	}
	v := e.base
	args := make([]any, len(regs))
	for i, r := range regs {
		args[i] = r
	}
	switch {
	case strings.HasSuffix(name, ".e"):
		d, n, m, idx := regs[0], regs[1], regs[2], regs[3]
		if idx < 0 || idx > 3 {
			log.Panicf("%s: v%d.s[%d]", name, m, idx)
		}
		v |= reg(m)<<16 | reg(n)<<5 | reg(d) | uint32(idx&1)<<21 | uint32(idx>>1)<<11
	case len(regs) == 3:
		v |= reg(regs[2])<<16 | reg(regs[1])<<5 | reg(regs[0])
	case len(regs) == 2:
		v |= reg(regs[1])<<5 | reg(regs[0])
	default:
		log.Panicf("%s: %d registers", name, len(regs))
	}
	if strings.Count(e.text, "%d") != len(regs) {
		log.Panicf("%s: %d operands for %q", name, len(regs), e.text)
	}
	g.p("WORD $0x%08x // %s", v, fmt.Sprintf(e.text, args...))
}

// Go-assembler instructions, operands in ARM order.
func (g *gen) zero(d int)        { g.p("VEOR V%d.B16, V%d.B16, V%d.B16", d, d, d) }
func (g *gen) mov(d, n int)      { g.p("VORR V%d.B16, V%d.B16, V%d.B16", n, n, d) }
func (g *gen) bit(d, n, m int)   { g.p("VBIT V%d.B16, V%d.B16, V%d.B16", m, n, d) }
func (g *gen) bif(d, n, m int)   { g.p("VBIF V%d.B16, V%d.B16, V%d.B16", m, n, d) }
func (g *gen) bsl(d, n, m int)   { g.p("VBSL V%d.B16, V%d.B16, V%d.B16", m, n, d) }
func (g *gen) vand(d, n, m int)  { g.p("VAND V%d.B16, V%d.B16, V%d.B16", m, n, d) }
func (g *gen) add4s(d, n, m int) { g.p("VADD V%d.S4, V%d.S4, V%d.S4", m, n, d) }
func (g *gen) sub4s(d, n, m int) { g.p("VSUB V%d.S4, V%d.S4, V%d.S4", m, n, d) }
func (g *gen) shl4s(d, n, s int) { g.p("VSHL $%d, V%d.S4, V%d.S4", s, n, d) }
func (g *gen) add2d(d, n, m int) { g.p("VADD V%d.D2, V%d.D2, V%d.D2", m, n, d) }
func (g *gen) shl2d(d, n, s int) { g.p("VSHL $%d, V%d.D2, V%d.D2", s, n, d) }

// dup32 and dup64 broadcast a constant through R9.
func (g *gen) dup32(d int, bits uint32, what string) {
	g.p("MOVW $0x%08x, R9 // %s", bits, what)
	g.p("VDUP R9, V%d.S4", d)
}

func (g *gen) dup64(d int, bits uint64, what string) {
	g.p("MOVD $0x%016x, R9 // %s", bits, what)
	g.p("VDUP R9, V%d.D2", d)
}

// ld and st move consecutive registers; post > 0 post-increments ptr.
func (g *gen) ld(ptr string, post int, regs ...int) { g.mem("VLD1", ptr, post, regs) }
func (g *gen) st(ptr string, post int, regs ...int) { g.mem("VST1", ptr, post, regs) }

func (g *gen) mem(op, ptr string, post int, regs []int) {
	var names []string
	for _, r := range regs {
		names = append(names, fmt.Sprintf("V%d.S4", r))
	}
	list := "[" + strings.Join(names, ", ") + "]"
	switch {
	case post > 0 && op == "VLD1":
		g.p("VLD1.P %d(%s), %s", post, ptr, list)
	case post > 0:
		g.p("VST1.P %s, %d(%s)", list, post, ptr)
	case op == "VLD1":
		g.p("VLD1 (%s), %s", ptr, list)
	default:
		g.p("VST1 %s, (%s)", list, ptr)
	}
}

func seq(from, n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = from + i
	}
	return r
}

// half rounds the four floats of v to halves and back (ties to even,
// overflow to ±Inf, subnormal halves kept), as VCVTPS2PH/VCVTPH2PS.
func (g *gen) half(v int) {
	g.w("fcvtn", v, v)
	g.w("fcvtl", v, v)
}

// reduce4x8 folds four 8-lane accumulators, accumulator j in V(2j) (lanes
// 0-3) and V(2j+1) (lanes 4-7), into S0 as reduce4x8: (a0+a2)+(a1+a3) per
// lane, the halves, then (t0+t1)+(t2+t3).
func (g *gen) reduce4x8() {
	g.w("fadd", 0, 0, 4)
	g.w("fadd", 2, 2, 6)
	g.w("fadd", 0, 0, 2)
	g.w("fadd", 1, 1, 5)
	g.w("fadd", 3, 3, 7)
	g.w("fadd", 1, 1, 3)
	g.w("fadd", 0, 0, 1)
	g.w("faddp", 0, 0, 0)
	g.w("faddp.s", 0, 0)
}

// reduce4x16 folds four 16-lane accumulators, accumulator j in V(4j) to
// V(4j+3), into S0 as reduce4x16: (a0+a2)+(a1+a3) per lane, then lanes
// eight apart, four apart, two apart (EXT by 8 bytes) and the last pair.
func (g *gen) reduce4x16() {
	for r := range 4 {
		g.w("fadd", r, r, 8+r)
		g.w("fadd", 4+r, 4+r, 12+r)
		g.w("fadd", r, r, 4+r)
	}
	g.w("fadd", 0, 0, 2)
	g.w("fadd", 1, 1, 3)
	g.w("fadd", 0, 0, 1)
	g.w("ext8", 1, 0, 0)
	g.w("fadd", 0, 0, 1)
	g.w("faddp.s", 0, 0)
}

// dot emits dot32NEON, dot64NEON, dot32F16NEON or dot64F16NEON.
func (g *gen) dot(lanes int, f16 bool) {
	name := fmt.Sprintf("dot%d", 4*lanes)
	kt := "*float32"
	if f16 {
		name += "F16"
		kt = "*uint16"
	}
	name += "NEON"
	g.raw(fmt.Sprintf("\n// func %s(k %s, q *float32, n int) float32\n", name, kt))
	g.raw(fmt.Sprintf("TEXT ·%s(SB), NOSPLIT, $0-28\n", name))
	g.p("MOVD k+0(FP), R0")
	g.p("MOVD q+8(FP), R1")
	g.p("MOVD n+16(FP), R2")
	shift := 5
	if lanes == 16 {
		shift = 6
	}
	g.p("LSR $%d, R2", shift)
	nacc := lanes // 4 accumulators of lanes floats = lanes registers
	for r := range nacc {
		g.zero(r)
	}
	g.p("CBZ R2, %sreduce", name)
	g.label(name + "loop")
	switch {
	case !f16:
		// 32 floats at a time: keys V16-V23, queries V24-V31.
		for part := 0; part < nacc; part += 8 {
			g.ld("R0", 64, seq(16, 4)...)
			g.ld("R0", 64, seq(20, 4)...)
			g.ld("R1", 64, seq(24, 4)...)
			g.ld("R1", 64, seq(28, 4)...)
			for i := range 8 {
				g.w("fmla", part+i, 16+i, 24+i)
			}
		}
	default:
		// 16 halves at a time: V16-V17, widened to V20-V23 exactly;
		// queries V24-V27.
		for part := 0; part < nacc; part += 4 {
			g.ld("R0", 32, 16, 17)
			g.ld("R1", 64, seq(24, 4)...)
			g.w("fcvtl", 20, 16)
			g.w("fcvtl2", 21, 16)
			g.w("fcvtl", 22, 17)
			g.w("fcvtl2", 23, 17)
			for i := range 4 {
				g.w("fmla", part+i, 20+i, 24+i)
			}
		}
	}
	g.p("SUBS $1, R2")
	g.p("BNE %sloop", name)
	g.label(name + "reduce")
	if lanes == 16 {
		g.reduce4x16()
	} else {
		g.reduce4x8()
	}
	g.p("FMOVS F0, ret+24(FP)")
	g.p("RET")
}

// dotRows emits dot32F16RowsNEON: dot32F16NEON's loop and reduction for
// n rows of keys stride halves apart.
func (g *gen) dotRows() {
	g.raw(`
// func dot32F16RowsNEON(out *float32, k *uint16, q *float32, n, d32, stride int)
TEXT ·dot32F16RowsNEON(SB), NOSPLIT, $0-48
`)
	g.p("MOVD out+0(FP), R3")
	g.p("MOVD k+8(FP), R4")
	g.p("MOVD q+16(FP), R5")
	g.p("MOVD n+24(FP), R6")
	g.p("MOVD d32+32(FP), R7")
	g.p("LSR $5, R7")
	g.p("MOVD stride+40(FP), R8")
	g.p("LSL $1, R8")
	g.label("rowsrow")
	g.p("MOVD R4, R0")
	g.p("MOVD R5, R1")
	g.p("MOVD R7, R2")
	for r := range 8 {
		g.zero(r)
	}
	g.label("rowsloop")
	for part := 0; part < 8; part += 4 {
		g.ld("R0", 32, 16, 17)
		g.ld("R1", 64, seq(24, 4)...)
		g.w("fcvtl", 20, 16)
		g.w("fcvtl2", 21, 16)
		g.w("fcvtl", 22, 17)
		g.w("fcvtl2", 23, 17)
		for i := range 4 {
			g.w("fmla", part+i, 20+i, 24+i)
		}
	}
	g.p("SUBS $1, R2")
	g.p("BNE rowsloop")
	g.reduce4x8()
	g.p("FMOVS.P F0, 4(R3)")
	g.p("ADD R8, R4")
	g.p("SUBS $1, R6")
	g.p("BNE rowsrow")
	g.p("RET")
}

// scaleHalf emits scaleHalfNEON.
func (g *gen) scaleHalf() {
	g.raw(`
// func scaleHalfNEON(acc *float32, s float32, n int)
TEXT ·scaleHalfNEON(SB), NOSPLIT, $0-24
`)
	g.p("MOVD acc+0(FP), R0")
	g.p("FMOVS s+8(FP), F31")
	g.p("MOVD n+16(FP), R2")
	g.p("LSR $3, R2")
	g.p("CBZ R2, scaledone")
	g.label("scaleloop")
	g.ld("R0", 0, 0, 1)
	g.w("fmul.e", 0, 0, 31, 0)
	g.w("fmul.e", 1, 1, 31, 0)
	g.half(0)
	g.half(1)
	g.st("R0", 32, 0, 1)
	g.loopEnd("scaleloop", "scaledone")
}

// madHalf emits madHalfF16NEON.
func (g *gen) madHalf() {
	g.raw(`
// func madHalfF16NEON(acc *float32, v *uint16, s float32, n int)
TEXT ·madHalfF16NEON(SB), NOSPLIT, $0-32
`)
	g.p("MOVD acc+0(FP), R0")
	g.p("MOVD v+8(FP), R1")
	g.p("FMOVS s+16(FP), F15")
	g.p("MOVD n+24(FP), R2")
	g.p("LSR $3, R2")
	g.p("CBZ R2, maddone")
	g.label("madloop")
	g.ld("R1", 16, 4)
	g.ld("R0", 0, 0, 1)
	g.w("fcvtl", 2, 4)
	g.w("fcvtl2", 3, 4)
	g.w("fmla.e", 0, 2, 15, 0)
	g.w("fmla.e", 1, 3, 15, 0)
	g.half(0)
	g.half(1)
	g.st("R0", 32, 0, 1)
	g.loopEnd("madloop", "maddone")
}

// madRows emits madRowsF16NEON: column blocks of 64 held in V16-V31 over
// all rows (then blocks of 8 in V16-V17), the sum taken on the first walk
// over the rows (R7 set), where it overlaps the vector work.
func (g *gen) madRows() {
	g.raw(`
// func madRowsF16NEON(acc *float32, v *uint16, e, flag *float32, n, d8, stride int, s float32) float32
TEXT ·madRowsF16NEON(SB), NOSPLIT, $0-68
`)
	const (
		accR = 16 // V16-V31: the accumulator block
		wR   = 15 // S15: the value's weight
		eR   = 14 // S14: e[p], the rescale factor on flag 0
	)
	g.p("MOVD acc+0(FP), R0")
	g.p("MOVD v+8(FP), R1")
	g.p("MOVD n+32(FP), R4")
	g.p("MOVD d8+40(FP), R5")
	g.p("MOVD stride+48(FP), R6")
	g.p("LSL $1, R6")
	g.p("FMOVS s+56(FP), F13")
	g.p("FMOVS $(1.0), F12")
	g.p("MOVD $1, R7")
	for _, blk := range []struct {
		cols int
		pre  string
	}{{64, "mad64"}, {8, "mad8"}} {
		nreg := blk.cols / 4
		pre := blk.pre
		g.label(pre + "cols")
		if blk.cols == 64 {
			g.p("CMP $64, R5")
			g.p("BLT mad8cols")
		} else {
			g.p("CBZ R5, maddone")
		}
		g.p("MOVD R0, R8")
		for r := 0; r < nreg; r += 4 {
			g.ld("R8", 16*min(4, nreg-r), seq(accR+r, min(4, nreg-r))...)
		}
		g.p("MOVD R1, R9")
		g.p("MOVD e+16(FP), R10")
		g.p("MOVD flag+24(FP), R11")
		g.p("MOVD R4, R12")
		g.label(pre + "rows")
		g.p("FMOVS.P 4(R10), F%d", eR)
		g.p("FMOVS.P 4(R11), F11")
		g.p("FCMPS $(0.0), F11")
		g.p("BEQ %sscale", pre)
		g.p("FMOVS F%d, F%d", eR, wR)
		g.p("CBZ R7, %smad", pre)
		g.p("FADDS F%d, F13, F13 // s += e[p]", eR)
		g.label(pre + "mad")
		g.p("MOVD R9, R13")
		// 16 halves (two registers' worth of widened values) at a time:
		// V0-V1 loaded, widened to V2-V5.
		for r := 0; r < nreg; r += 4 {
			if nreg-r >= 4 {
				g.ld("R13", 16*2, 0, 1)
				g.w("fcvtl", 2, 0)
				g.w("fcvtl2", 3, 0)
				g.w("fcvtl", 4, 1)
				g.w("fcvtl2", 5, 1)
				for i := range 4 {
					g.w("fmla.e", accR+r+i, 2+i, wR, 0)
				}
				for i := range 4 {
					g.half(accR + r + i)
				}
				continue
			}
			g.ld("R13", 16, 0)
			g.w("fcvtl", 2, 0)
			g.w("fcvtl2", 3, 0)
			g.w("fmla.e", accR+r, 2, wR, 0)
			g.w("fmla.e", accR+r+1, 3, wR, 0)
			g.half(accR + r)
			g.half(accR + r + 1)
		}
		g.p("ADD R6, R9")
		g.p("SUBS $1, R12")
		g.p("BNE %srows", pre)
		for r := 0; r < nreg; r += 4 {
			g.st("R0", 16*min(4, nreg-r), seq(accR+r, min(4, nreg-r))...)
		}
		g.p("ADD $%d, R1", 2*blk.cols)
		g.p("SUB $%d, R5", blk.cols)
		g.p("MOVD $0, R7")
		g.p("B %scols", pre)
		g.label(pre + "scale")
		for r := range nreg {
			g.w("fmul.e", accR+r, accR+r, eR, 0)
		}
		for r := range nreg {
			g.half(accR + r)
		}
		g.p("FMOVS F12, F%d // weight 1", wR)
		g.p("CBZ R7, %smad", pre)
		g.p("FMADDS F%d, F12, F13, F13 // s = s*e[p] + 1", eR)
		g.p("B %smad", pre)
	}
	g.label("maddone")
	g.p("FMOVS F13, ret+64(FP)")
	g.p("RET")
}

// The libm kernels (internal/libm/vec_arm64.s): expf (internal/libm) on
// four floats at a time, as two pairs of doubles, the table entries loaded
// through general registers. Registers: V0 the input, V1-V14 and V16-V20
// the evaluation's, V21-V31 its constants (expConsts), V15 and V25 free.
const (
	cInv, cShift, c0, c1, c2, cOne = 31, 30, 29, 28, 27, 26
	cOver, cUnder, cInf, cZero     = 24, 23, 22, 21
)

// expConsts loads the evaluation's constants and the table's address (R8).
func (g *gen) expConsts() {
	g.p("MOVD $·Exp2Table(SB), R8")
	g.dup64(cInv, 0x40471547652b82fe, "32/ln2")
	g.dup64(cShift, 0x4338000000000000, "shift 0x1.8p52")
	g.dup64(c0, 0x3ebc6af84b912394, "c0")
	g.dup64(c1, 0x3f2ebfce50fac4f3, "c1")
	g.dup64(c2, 0x3f962e42ff0c52d6, "c2")
	g.dup64(cOne, 0x3ff0000000000000, "1")
	g.dup32(cOver, 0x42b17217, "overflow threshold 0x1.62e42ep6")
	g.dup32(cUnder, 0xc2cff1b4, "underflow threshold -0x1.9fe368p6")
	g.dup32(cInf, 0x7f800000, "+Inf")
	g.zero(cZero)
}

// expf4 sets V18 = expf(V0) lane by lane.
func (g *gen) expf4() {
	g.w("fcvtl.2d", 1, 0)
	g.w("fcvtl2.2d", 2, 0)
	// Each pair: V(x) in, V(y) out; temporaries from V3.
	pair := func(x, y, t int) {
		z, kd, r, s, p, r2 := t, t+1, t+2, t+3, t+4, t+5
		g.w("fmul.2d", z, x, cInv)    // z = 32/ln2 · xd
		g.w("fadd.2d", kd, z, cShift) // kd = z + shift; ki = its bits
		g.w("fsub.2d", r, kd, cShift) // kd - shift
		g.w("fsub.2d", r, z, r)       // r = z - kd
		g.p("VMOV V%d.D[0], R3", kd)
		g.p("VMOV V%d.D[1], R4", kd)
		g.p("AND $31, R3")
		g.p("AND $31, R4")
		g.p("MOVD (R8)(R3<<3), R3")
		g.p("MOVD (R8)(R4<<3), R4")
		g.p("VMOV R3, V%d.D[0]", s)
		g.p("VMOV R4, V%d.D[1]", s)
		g.shl2d(kd, kd, 47)
		g.add2d(s, s, kd) // s = 2^(k/32)
		g.mov(p, c1)
		g.w("fmla.2d", p, c0, r) // p = c0·r + c1
		g.w("fmul.2d", r2, r, r) // r2
		g.mov(y, cOne)
		g.w("fmla.2d", y, c2, r) // y = c2·r + 1
		g.w("fmla.2d", y, p, r2) // y = p·r2 + y
		g.w("fmul.2d", y, y, s)  // y·s
	}
	pair(1, 16, 3)
	pair(2, 17, 9)
	g.w("fcvtn.2s", 18, 16)
	g.w("fcvtn2.4s", 18, 17)
	g.w("fcmgt", 19, cUnder, 0) // x < underflow threshold (or -Inf)
	g.bit(18, cZero, 19)        // then 0
	g.w("fcmgt", 19, 0, cOver)  // x > overflow threshold (or +Inf)
	g.bit(18, cInf, 19)         // then +Inf
	g.w("fcmeq", 19, 0, 0)      // not NaN
	g.w("fadd", 20, 0, 0)
	g.bif(18, 20, 19) // NaN: x+x
}

// libm writes the kernels of internal/libm/vec_arm64.s (vec_arm64.go there
// documents each contract).
func (g *gen) libm() {
	g.raw(`
// func expfsAsm(x *float32, n int)
TEXT ·expfsAsm(SB), NOSPLIT, $0-16
`)
	g.p("MOVD x+0(FP), R0")
	g.p("MOVD n+8(FP), R2")
	g.p("LSR $2, R2")
	g.p("CBZ R2, expfsdone")
	g.expConsts()
	g.label("expfsloop")
	g.ld("R0", 0, 0)
	g.expf4()
	g.st("R0", 16, 18)
	g.loopEnd("expfsloop", "expfsdone")

	g.raw(`
// func expSumAsm(dst, x *float32, n int, temp, m float32) float32
//
// V25 temp and R10 m (broadcast into V19 at each step), F15 the sum: per
// four elements the quotients and differences (FDIV and FSUB round each
// lane as the scalar operations do), expf4, the store, and the four
// results added to the sum one at a time, in order.
TEXT ·expSumAsm(SB), NOSPLIT, $0-36
`)
	g.p("MOVD dst+0(FP), R0")
	g.p("MOVD x+8(FP), R1")
	g.p("MOVD n+16(FP), R2")
	g.p("FMOVS temp+24(FP), F25")
	g.p("VDUP V25.S[0], V25.S4")
	g.p("MOVWU m+28(FP), R10")
	g.zero(15)
	g.p("LSR $2, R2")
	g.p("CBZ R2, expsumdone")
	g.expConsts()
	g.label("expsumloop")
	g.ld("R1", 16, 0)
	g.w("fdiv", 0, 0, 25) // x/temp
	g.p("VDUP R10, V19.S4")
	g.w("fsub", 0, 0, 19) // - m
	g.expf4()
	g.st("R0", 16, 18)
	g.p("FADDS F18, F15, F15 // + e0")
	for l := 1; l < 4; l++ {
		g.p("VDUP V18.S[%d], V20.S4", l)
		g.p("FADDS F20, F15, F15 // + e%d", l)
	}
	g.p("SUBS $1, R2")
	g.p("BNE expsumloop")
	g.label("expsumdone")
	g.p("FMOVS F15, ret+32(FP)")
	g.p("RET")

	g.raw(`
// func divAsm(x *float32, n int, d float32)
TEXT ·divAsm(SB), NOSPLIT, $0-20
`)
	g.p("MOVD x+0(FP), R0")
	g.p("MOVD n+8(FP), R2")
	g.p("FMOVS d+16(FP), F1")
	g.p("VDUP V1.S[0], V1.S4")
	g.p("LSR $2, R2")
	g.p("CBZ R2, divdone")
	g.label("divloop")
	g.ld("R0", 0, 0)
	g.w("fdiv", 0, 0, 1)
	g.st("R0", 16, 0)
	g.loopEnd("divloop", "divdone")
}

// swiglu emits swiglu4NEON: ggml_v_silu with ggml_v_expf as vexpf has it
// (the AVX2 and NEON forms are the same arithmetic), times u.
func (g *gen) swiglu() {
	g.raw(`
// func swiglu4NEON(gp, up *float32, n int)
TEXT ·swiglu4NEON(SB), NOSPLIT, $0-24
`)
	g.p("MOVD gp+0(FP), R0")
	g.p("MOVD up+8(FP), R1")
	g.p("MOVD n+16(FP), R2")
	g.p("LSR $2, R2")
	g.p("CBZ R2, swdone")
	const (
		cShift, cLog2e, cHi, cLo, cP0, cP1, cP2, cP3, cP4 = 31, 30, 29, 28, 27, 26, 25, 24, 23
		cOne, c126, c192, cS1, cSign                      = 22, 21, 20, 19, 18
	)
	g.dup32(cShift, 0x4b400000, "shift 0x1.8p23")
	g.dup32(cLog2e, 0x3fb8aa3b, "log2(e)")
	g.dup32(cHi, 0x3f317200, "ln2 hi")
	g.dup32(cLo, 0x35bfbe8e, "ln2 lo")
	g.dup32(cP0, 0x3c072010, "p0")
	g.dup32(cP1, 0x3d2b9f17, "p1")
	g.dup32(cP2, 0x3e2aaf33, "p2")
	g.dup32(cP3, 0x3efffedb, "p3")
	g.dup32(cP4, 0x3f7ffff6, "p4")
	g.dup32(cOne, 0x3f800000, "1")
	g.dup32(c126, 0x42fc0000, "126")
	g.dup32(c192, 0x43400000, "192")
	g.dup32(cS1, 0x7f000000, "s1 bias")
	g.dup32(cSign, 0x82000000, "s1 sign and scale for n <= 0")
	g.label("swloop")
	g.ld("R0", 0, 0)
	g.ld("R1", 16, 1)
	const x, nx, z, n, b, e, k, u, j, t, c, d, s1, s2, r = 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
	g.w("fneg", nx, x) // -x
	g.mov(z, cShift)
	g.w("fmla", z, nx, cLog2e) // z = -x·log2e + shift
	g.w("fsub", n, z, cShift)  // n = z - shift
	g.mov(b, nx)
	g.w("fmls", b, n, cHi) // b = -x - n·ln2hi
	g.w("fmls", b, n, cLo) // b -= n·ln2lo
	g.shl4s(e, z, 23)      // e = bits(z) << 23
	g.add4s(k, e, cOne)    // k = bits(e + bits(1))
	g.w("fmul", u, b, b)   // u = b·b
	g.mov(j, cP1)
	g.w("fmla", j, cP0, b) // p0·b + p1
	g.mov(t, cP3)
	g.w("fmla", t, cP2, b) // p2·b + p3
	g.w("fmla", t, j, u)   // (p0·b + p1)·u + (p2·b + p3)
	g.w("fmul", j, cP4, b) // p4·b
	g.w("fmla", j, t, u)   // j
	g.mov(r, k)
	g.w("fmla", r, k, j) // |n| <= 126: k·j + k
	g.w("fcmle0", d, n)  // n <= 0
	g.vand(d, d, cSign)  // d = n <= 0 ? 0x82000000 : 0
	g.add4s(s1, d, cS1)  // s1
	g.sub4s(s2, e, d)    // s2
	g.mov(c, s2)
	g.w("fmla", c, s2, j)    // s2·j + s2
	g.w("fmul", c, c, s1)    // (s2·j + s2)·s1
	g.w("facgt", t, n, c126) // |n| > 126
	g.bit(r, c, t)
	g.w("fmul", c, s1, s1)   // s1·s1
	g.w("facgt", t, n, c192) // |n| > 192
	g.bit(r, c, t)           // e^-x
	g.w("fadd", r, r, cOne)  // 1 + e^-x
	g.w("fdiv", r, x, r)     // x / (1 + e^-x)
	g.w("fmul", r, r, 1)     // · u
	g.st("R0", 16, r)
	g.loopEnd("swloop", "swdone")
}

// rmsScale emits rmsScaleNEON: out[i] = (x[i]·scale)·w[i], 16 at a time
// then 4 at a time.
func (g *gen) rmsScale() {
	g.raw(`
// func rmsScaleNEON(out, x, w *float32, scale float32, n int)
TEXT ·rmsScaleNEON(SB), NOSPLIT, $0-40
`)
	g.p("MOVD out+0(FP), R0")
	g.p("MOVD x+8(FP), R1")
	g.p("MOVD w+16(FP), R3")
	g.p("FMOVS scale+24(FP), F15")
	g.p("MOVD n+32(FP), R2")
	g.p("LSR $2, R2")
	g.label("rms16")
	g.p("CMP $4, R2")
	g.p("BLT rms4")
	g.ld("R1", 64, 0, 1, 2, 3)
	g.ld("R3", 64, 4, 5, 6, 7)
	for i := range 4 {
		g.w("fmul.e", i, i, 15, 0)
	}
	for i := range 4 {
		g.w("fmul", i, i, 4+i)
	}
	g.st("R0", 64, 0, 1, 2, 3)
	g.p("SUB $4, R2")
	g.p("B rms16")
	g.label("rms4")
	g.p("CBZ R2, rmsdone")
	g.ld("R1", 16, 0)
	g.ld("R3", 16, 4)
	g.w("fmul.e", 0, 0, 15, 0)
	g.w("fmul", 0, 0, 4)
	g.st("R0", 16, 0)
	g.p("SUB $1, R2")
	g.p("B rms4")
	g.label("rmsdone")
	g.p("RET")
}

func main() {
	var g gen
	g.raw("// Code generated by gen_arm64.go; DO NOT EDIT.\n\n//go:build arm64 && !noasm\n\n#include \"textflag.h\"\n")
	g.dot(8, false)
	g.dot(16, false)
	g.dot(8, true)
	g.dot(16, true)
	g.dotRows()
	g.scaleHalf()
	g.madHalf()
	g.madRows()
	g.swiglu()
	g.rmsScale()
	if err := os.WriteFile("attn_arm64.s", g.b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	var l gen
	l.raw("// Code generated by model/gen_arm64.go; DO NOT EDIT.\n\n//go:build arm64 && !noasm\n\n#include \"textflag.h\"\n")
	l.libm()
	if err := os.WriteFile("../internal/libm/vec_arm64.s", l.b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// loopEnd ends a function's loop over R2 steps: back to loop while steps
// are left, then the label done and the return.
func (g *gen) loopEnd(loop, done string) {
	g.p("SUBS $1, R2")
	g.p("BNE %s", loop)
	g.label(done)
	g.p("RET")
}
