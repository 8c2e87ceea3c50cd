//go:build ignore

// gen_arm64.go writes the arm64 assembly kernels (dot_arm64.s, dotk_arm64.s,
// act_arm64.s and vec_arm64.s): GOARCH=arm64 go generate ./tensor (the
// directive is in dot_arm64.go), or go run gen_arm64.go in tensor/. With
// -stats it prints each kernel's inner-loop instructions by pipeline class
// instead (docs/performance.md's arm64 estimate).
//
// The kernels are unrolled by token count and built in two forms from one
// template: plain NEON (what every arm64 CPU has) and one with the
// dot-product (SDOT) or FP16 multiply-long (FMLAL) extension; the
// multi-token Q8_0, Q4_0, IQ4_NL and Q4_K kernels have a third, with the int8
// matrix multiply (SMMLA), sharing the others' frame and float steps. The Go
// assembler lacks most of the NEON arithmetic these kernels need, so those
// instructions are emitted as WORD with the mnemonic in a comment, from the
// small encoder below; TestARM64Encodings checks every such word against an
// assembler (llvm-mc) where one is installed. Helpers take their operands
// in ARM order (destination first), whichever syntax they emit.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"regexp"
	"sort"
	"strings"
)

type gen struct {
	b bytes.Buffer
}

// p emits one line of Go assembly.
func (g *gen) p(format string, a ...any) { fmt.Fprintf(&g.b, "\t"+format+"\n", a...) }

// c emits a comment line.
func (g *gen) c(format string, a ...any) { fmt.Fprintf(&g.b, "\t// "+format+"\n", a...) }

func (g *gen) label(l string) { fmt.Fprintf(&g.b, "%s:\n", l) }

func (g *gen) word(w uint32, text string) { fmt.Fprintf(&g.b, "\tWORD $0x%08x // %s\n", w, text) }

// enc is an instruction the Go assembler lacks: its encoding with all
// register fields zero, and the ARM syntax with %d for the registers in
// order (d, n, m) and, for by-element forms, the index last.
type enc struct {
	base uint32
	text string
}

// Three-register forms: Rd bits 0-4, Rn 5-9, Rm 16-20.
var ops3 = map[string]enc{
	"sdot":      {0x4e809400, "sdot v%d.4s, v%d.16b, v%d.16b"},
	"smmla":     {0x4e80a400, "smmla v%d.4s, v%d.16b, v%d.16b"},
	"tbl":       {0x4e000000, "tbl v%d.16b, {v%d.16b}, v%d.16b"},
	"cmtst":     {0x4e208c00, "cmtst v%d.16b, v%d.16b, v%d.16b"},
	"bic":       {0x4e601c00, "bic v%d.16b, v%d.16b, v%d.16b"},
	"fmlal":     {0x4e20ec00, "fmlal v%d.4s, v%d.4h, v%d.4h"},
	"fmlal2":    {0x6e20cc00, "fmlal2 v%d.4s, v%d.4h, v%d.4h"},
	"fadd":      {0x4e20d400, "fadd v%d.4s, v%d.4s, v%d.4s"},
	"faddp":     {0x6e20d400, "faddp v%d.4s, v%d.4s, v%d.4s"},
	"facgt":     {0x6ea0ec00, "facgt v%d.4s, v%d.4s, v%d.4s"},
	"fmax":      {0x4e20f400, "fmax v%d.4s, v%d.4s, v%d.4s"},
	"fcmeq":     {0x4e20e400, "fcmeq v%d.4s, v%d.4s, v%d.4s"},
	"fmin":      {0x4ea0f400, "fmin v%d.4s, v%d.4s, v%d.4s"},
	"fmul":      {0x6e20dc00, "fmul v%d.4s, v%d.4s, v%d.4s"},
	"sub.4s":    {0x6ea08400, "sub v%d.4s, v%d.4s, v%d.4s"},
	"smin.4s":   {0x4ea06c00, "smin v%d.4s, v%d.4s, v%d.4s"},
	"smull.8h":  {0x0e20c000, "smull v%d.8h, v%d.8b, v%d.8b"},
	"smull2.8h": {0x4e20c000, "smull2 v%d.8h, v%d.16b, v%d.16b"},
	"smlal.8h":  {0x0e208000, "smlal v%d.8h, v%d.8b, v%d.8b"},
	"smlal2.8h": {0x4e208000, "smlal2 v%d.8h, v%d.16b, v%d.16b"},
	"smull.4s":  {0x0e60c000, "smull v%d.4s, v%d.4h, v%d.4h"},
	"smull2.4s": {0x4e60c000, "smull2 v%d.4s, v%d.8h, v%d.8h"},
	"smlal2.4s": {0x4e608000, "smlal2 v%d.4s, v%d.8h, v%d.8h"},
	"mul.4s":    {0x4ea09c00, "mul v%d.4s, v%d.4s, v%d.4s"},
	"mla.4s":    {0x4ea09400, "mla v%d.4s, v%d.4s, v%d.4s"},
	"addp.4s":   {0x4ea0bc00, "addp v%d.4s, v%d.4s, v%d.4s"},
	"addp.8h":   {0x4e60bc00, "addp v%d.8h, v%d.8h, v%d.8h"},
	"ushl":      {0x6e204400, "ushl v%d.16b, v%d.16b, v%d.16b"},
	"ext8":      {0x6e004000, "ext v%d.16b, v%d.16b, v%d.16b, #8"},
	"fsub":      {0x4ea0d400, "fsub v%d.4s, v%d.4s, v%d.4s"},
}

// Two-register forms (Rd, Rn).
var ops2 = map[string]enc{
	"fcvtl":      {0x0e217800, "fcvtl v%d.4s, v%d.4h"},
	"fcvtl2":     {0x4e217800, "fcvtl2 v%d.4s, v%d.8h"},
	"fcvtn":      {0x0e216800, "fcvtn v%d.4h, v%d.4s"},
	"fcvtn2":     {0x4e216800, "fcvtn2 v%d.8h, v%d.4s"},
	"faddp.s":    {0x7e30d800, "faddp s%d, v%d.2s"},
	"scvtf":      {0x4e21d800, "scvtf v%d.4s, v%d.4s"},
	"scvtf.s":    {0x5e21d800, "scvtf s%d, s%d"},
	"fcvtns":     {0x4e21a800, "fcvtns v%d.4s, v%d.4s"},
	"fabs":       {0x4ea0f800, "fabs v%d.4s, v%d.4s"},
	"fmaxv":      {0x6e30f800, "fmaxv s%d, v%d.4s"},
	"fminv":      {0x6eb0f800, "fminv s%d, v%d.4s"},
	"xtn.4h":     {0x0e612800, "xtn v%d.4h, v%d.4s"},
	"xtn2.8h":    {0x4e612800, "xtn2 v%d.8h, v%d.4s"},
	"xtn.8b":     {0x0e212800, "xtn v%d.8b, v%d.8h"},
	"xtn2.16b":   {0x4e212800, "xtn2 v%d.16b, v%d.8h"},
	"saddlv.16b": {0x4e303800, "saddlv h%d, v%d.16b"},
	"sqxtn.4h":   {0x0e614800, "sqxtn v%d.4h, v%d.4s"},
	"sqxtn2.8h":  {0x4e614800, "sqxtn2 v%d.8h, v%d.4s"},
	"sqxtn.8b":   {0x0e214800, "sqxtn v%d.8b, v%d.8h"},
	"sqxtn2.16b": {0x4e214800, "sqxtn2 v%d.16b, v%d.8h"},
	"sadalp.4s":  {0x4e606800, "sadalp v%d.4s, v%d.8h"},
	"saddlp.4s":  {0x4e602800, "saddlp v%d.4s, v%d.8h"},
	"sxtl.8h":    {0x0f08a400, "sxtl v%d.8h, v%d.8b"},
	"shll.4s":    {0x2e613800, "shll v%d.4s, v%d.4h, #16"},
	"shll2.4s":   {0x6e613800, "shll2 v%d.4s, v%d.8h, #16"},
	"sxtl2.8h":   {0x4f08a400, "sxtl2 v%d.8h, v%d.16b"},
	"sxtl.4s":    {0x0f10a400, "sxtl v%d.4s, v%d.4h"},
	"sxtl2.4s":   {0x4f10a400, "sxtl2 v%d.4s, v%d.8h"},
	"shl5.4s":    {0x4f255400, "shl v%d.4s, v%d.4s, #5"},
	"mvn.8b":     {0x2e205800, "mvn v%d.8b, v%d.8b"},
	"mvn.16b":    {0x6e205800, "mvn v%d.16b, v%d.16b"},
}

// By-element forms on 32-bit elements (Rd, Rn, Rm, index): the index goes
// to H (bit 11) and L (bit 21).
var opsE = map[string]enc{
	"fmul.e": {0x4f809000, "fmul v%d.4s, v%d.4s, v%d.s[%d]"},
	"fmla.e": {0x4f801000, "fmla v%d.4s, v%d.4s, v%d.s[%d]"},
	"mla.e":  {0x6f800000, "mla v%d.4s, v%d.4s, v%d.s[%d]"},
	// fmla (by element) on one single: s(d) += s(n)·v(m).s[i], fused.
	"fmla.es": {0x5f801000, "fmla s%d, s%d, v%d.s[%d]"},
	// fmls (by element) on one single: s(d) −= s(n)·v(m).s[i], fused.
	"fmls.es": {0x5f805000, "fmls s%d, s%d, v%d.s[%d]"},
}

func reg(r int) uint32 {
	if r < 0 || r > 31 {
		log.Panicf("register %d out of range", r)
	}
	return uint32(r)
}

// o3 emits a three-register instruction in ARM operand order.
func (g *gen) o3(name string, d, n, m int) {
	e, ok := ops3[name]
	if !ok {
		log.Panicf("no encoding for %s", name)
	}
	text := e.text
	if strings.Count(text, "%d") == 2 {
		g.word(e.base|reg(n)<<5|reg(d), fmt.Sprintf(text, d, n))
		return
	}
	g.word(e.base|reg(m)<<16|reg(n)<<5|reg(d), fmt.Sprintf(text, d, n, m))
}

// o2 emits a two-register instruction (d, n).
func (g *gen) o2(name string, d, n int) {
	e, ok := ops2[name]
	if !ok {
		log.Panicf("no encoding for %s", name)
	}
	if name == "mov.16b" {
		g.word(e.base|reg(n)<<16|reg(n)<<5|reg(d), fmt.Sprintf(e.text, d, n))
		return
	}
	if strings.Count(e.text, "%d") == 1 {
		g.word(e.base|reg(d), fmt.Sprintf(e.text, d))
		return
	}
	g.word(e.base|reg(n)<<5|reg(d), fmt.Sprintf(e.text, d, n))
}

// oe emits a by-element instruction on 32-bit lanes.
func (g *gen) oe(name string, d, n, m, idx int) {
	e, ok := opsE[name]
	if !ok {
		log.Panicf("no encoding for %s", name)
	}
	if idx < 0 || idx > 3 {
		log.Panicf("lane %d", idx)
	}
	w := e.base | reg(m)<<16 | reg(n)<<5 | reg(d) | uint32(idx&1)<<21 | uint32(idx>>1)<<11
	g.word(w, fmt.Sprintf(e.text, d, n, m, idx))
}

// Go-assembler instructions, operands in ARM order.
func (g *gen) zero(d int)           { g.p("VEOR V%d.B16, V%d.B16, V%d.B16", d, d, d) }
func (g *gen) vand(d, n, m int)     { g.p("VAND V%d.B16, V%d.B16, V%d.B16", m, n, d) }
func (g *gen) vorr(d, n, m int)     { g.p("VORR V%d.B16, V%d.B16, V%d.B16", m, n, d) }
func (g *gen) vsub16b(d, n, m int)  { g.p("VSUB V%d.B16, V%d.B16, V%d.B16", m, n, d) }
func (g *gen) vsub4s(d, n, m int)   { g.p("VSUB V%d.S4, V%d.S4, V%d.S4", m, n, d) }
func (g *gen) fmla(d, n, m int)     { g.p("VFMLA V%d.S4, V%d.S4, V%d.S4", m, n, d) }
func (g *gen) ushr16b(d, n, sh int) { g.p("VUSHR $%d, V%d.B16, V%d.B16", sh, n, d) }
func (g *gen) shl16b(d, n, sh int)  { g.p("VSHL $%d, V%d.B16, V%d.B16", sh, n, d) }
func (g *gen) movi(d, imm int)      { g.p("VMOVI $%d, V%d.B16", imm, d) }
func (g *gen) addv(d, n int)        { g.p("VADDV V%d.S4, V%d", n, d) }
func (g *gen) bif(d, n, m int)      { g.p("VBIF V%d.B16, V%d.B16, V%d.B16", m, n, d) }
func (g *gen) uxtl8h(d, n int)      { g.p("VUXTL V%d.B8, V%d.H8", n, d) }
func (g *gen) uxtl4s(d, n int)      { g.p("VUXTL V%d.H4, V%d.S4", n, d) }
func (g *gen) uxtl2_4s(d, n int)    { g.p("VUXTL2 V%d.H8, V%d.S4", n, d) }
func (g *gen) dupR(d int, r string) { g.p("VDUP %s, V%d.S4", r, d) }
func (g *gen) zip1d(d, n, m int)    { g.p("VZIP1 V%d.D2, V%d.D2, V%d.D2", m, n, d) }
func (g *gen) zip2d(d, n, m int)    { g.p("VZIP2 V%d.D2, V%d.D2, V%d.D2", m, n, d) }
func (g *gen) ld1b16(ptr string, post int, regs ...int) {
	g.ld1("B16", ptr, post, regs...)
}

// ld1 loads consecutive registers; post > 0 post-increments ptr.
func (g *gen) ld1(arr, ptr string, post int, regs ...int) {
	var names []string
	for _, r := range regs {
		names = append(names, fmt.Sprintf("V%d.%s", r, arr))
	}
	list := "[" + strings.Join(names, ", ") + "]"
	if post > 0 {
		g.p("VLD1.P %d(%s), %s", post, ptr, list)
	} else {
		g.p("VLD1 (%s), %s", ptr, list)
	}
}

// fn is a kernel: its name, its arguments (8 bytes each, named as in its
// Go declaration) and the comment above its TEXT.
type fn struct {
	name   string
	args   []string
	doc    string
	frame  int // argument bytes, if not 8 per argument
	locals int // the local frame's bytes (at name-locals(SP) up to 0(SP))
}

func (g *gen) text(f fn) {
	g.b.WriteString("\n")
	for _, l := range strings.Split(strings.TrimSpace(f.doc), "\n") {
		fmt.Fprintf(&g.b, "// %s\n", l)
	}
	frame := f.frame
	if frame == 0 {
		frame = 8 * len(f.args)
	}
	fmt.Fprintf(&g.b, "TEXT ·%s(SB), NOSPLIT, $%d-%d\n", f.name, f.locals, frame)
}

// loadArgs loads the arguments into the registers given, in order.
func (g *gen) loadArgs(f fn, regs ...string) {
	for i, r := range regs {
		if r == "" {
			continue
		}
		g.p("MOVD %s+%d(FP), %s", f.args[i], 8*i, r)
	}
}

const header = `// Code generated by gen_arm64.go; DO NOT EDIT.

//go:build arm64 && !noasm

#include "textflag.h"
`

func write(name string, g *gen) {
	if *stats {
		printStats(name, g.b.String())
		return
	}
	if err := os.WriteFile(name, []byte(header+g.b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}

var stats = flag.Bool("stats", false, "print each kernel's instructions per loop iteration by pipeline class instead of writing the files")

func main() {
	flag.Parse()
	var d gen
	genF16(&d)
	genBF16(&d)
	genQ0(&d)
	genQ8Lanes(&d)
	genQ32Lanes(&d)
	write("dot_arm64.s", &d)

	var k gen
	genQ4K(&k)
	genQ6K(&k)
	genQ5K(&k)
	genQ3K(&k)
	genQ2K(&k)
	genIQ4XS(&k)
	write("dotk_arm64.s", &k)

	var a gen
	genAct(&a)
	genQ8K(&a)
	write("act_arm64.s", &a)

	var v gen
	genVec(&v)
	write("vec_arm64.s", &v)
}

// ---- F16 ----------------------------------------------------------------

// f16Reduce folds the eight accumulators a[0..7] (a[k] holds elements
// 4k..4k+3 of dotF16Generic's 32 lanes) as reduce32 does and leaves the
// sum in s<dst>; t0..t3 are scratch registers.
func (g *gen) f16Reduce(a [8]int, t [4]int) {
	g.c("reduce32: (acc[l]+acc[16+l]) + (acc[8+l]+acc[24+l]), then lanes l+4, then pairs")
	g.fold8(a, t)
	g.o3("faddp", t[0], t[0], t[0])
	g.o2("faddp.s", t[0], t[0])
}

// fold8 adds the eight accumulators a[0..7] (a[k] holds elements 4k..4k+3
// of ggml's 32 lanes) into s<t[0]>'s four lanes: v[l] = (acc[l]+acc[16+l])
// + (acc[8+l]+acc[24+l]), then v[l] + v[l+4], the first steps of reduce32
// and reduceBF16; t are scratch registers.
func (g *gen) fold8(a [8]int, t [4]int) {
	g.o3("fadd", t[0], a[0], a[4])
	g.o3("fadd", t[1], a[2], a[6])
	g.o3("fadd", t[0], t[0], t[1])
	g.o3("fadd", t[2], a[1], a[5])
	g.o3("fadd", t[3], a[3], a[7])
	g.o3("fadd", t[2], t[2], t[3])
	g.o3("fadd", t[0], t[0], t[2])
}

// genF16 writes f16Rows<T><form>: T tokens (1 to 3) against every row, in
// steps of 16 elements (T > 1) or 32 (T = 1). The FHM form multiplies the
// halves with FMLAL/FMLAL2, which do not round the product (exact for
// halves anyway) before the single rounding of the add: the same bits as
// widening with FCVTL and a fused FMLA, which the NEON form does.
func genF16(g *gen) {
	for _, fhm := range []bool{false, true} {
		form := "NEON"
		if fhm {
			form = "FHM"
		}
		genF16T1(g, form, fhm)
		for T := 2; T <= 3; T++ {
			genF16T(g, T, form, fhm)
		}
	}
}

func genF16T1(g *gen, form string, fhm bool) {
	acc := [8]int{16, 17, 18, 19, 20, 21, 22, 23}
	g.floatRows1Start("f16Rows1"+form, acc)
	g.ld1("H8", "R6", 64, 0, 1, 2, 3)
	g.ld1("H8", "R7", 64, 4, 5, 6, 7)
	if fhm {
		for k := range 4 {
			g.o3("fmlal", acc[2*k], k, 4+k)
			g.o3("fmlal2", acc[2*k+1], k, 4+k)
		}
	} else {
		for k := range 4 {
			g.o2("fcvtl", 8+2*k, k)
			g.o2("fcvtl2", 9+2*k, k)
			g.o2("fcvtl", 24+2*k, 4+k)
			g.o2("fcvtl2", 25+2*k, 4+k)
		}
		for k := range 8 {
			g.fmla(acc[k], 8+k, 24+k)
		}
	}
	g.floatRows1End(acc, g.f16Reduce)
}

// floatRows1Start begins a one-token float kernel (F32, F16, BF16) of
// the signature (w *byte, wstride, rows int, x *byte, n int, out *float32),
// n elements in steps of 32: the row loop, the accumulators acc zeroed,
// the weights at R6 and the token at R7; the step's body follows.
func (g *gen) floatRows1Start(name string, acc [8]int) {
	f := fn{name: name, args: []string{"w", "wstride", "rows", "x", "n", "out"},
		doc: "func " + name + "(w *byte, wstride, rows int, x *byte, n int, out *float32)"}
	g.text(f)
	g.loadArgs(f, "R0", "R1", "R2", "R3", "R4", "R5")
	g.p("LSR $5, R4, R4")
	g.label("row")
	g.p("MOVD R0, R6")
	g.p("MOVD R3, R7")
	g.p("MOVD R4, R8")
	for _, a := range acc {
		g.zero(a)
	}
	g.p("CBZ R8, reduce")
	g.label("loop")
}

// floatRows1End ends a one-token float kernel's step loop and stores each
// row's sum, the accumulators folded by reduce.
func (g *gen) floatRows1End(acc [8]int, reduce func(a [8]int, t [4]int)) {
	g.p("SUBS $1, R8, R8")
	g.p("BNE loop")
	g.label("reduce")
	reduce(acc, [4]int{0, 1, 2, 3})
	g.p("FMOVS.P F0, 4(R5)")
	g.p("ADD R1, R0, R0")
	g.p("SUBS $1, R2, R2")
	g.p("BNE row")
	g.p("RET")
}

// genF16T writes the T-token form: acc(t, k) = V(8+8t+k).
func genF16T(g *gen, T int, form string, fhm bool) {
	acc := g.floatRowsTStart(fmt.Sprintf("f16Rows%d%s", T, form), T)
	for h := range 2 {
		g.c("elements %d..%d of the step", 16*h, 16*h+15)
		g.ld1("H8", "R9", 32, 0, 1)
		if !fhm {
			g.o2("fcvtl", 4, 0)
			g.o2("fcvtl2", 5, 0)
			g.o2("fcvtl", 6, 1)
			g.o2("fcvtl2", 7, 1)
		}
		for t := range T {
			g.ld1("H8", floatRowsTPtrs[t], 32, 2, 3)
			a := func(k int) int { return acc(t, 4*h+k) }
			if fhm {
				g.o3("fmlal", a(0), 0, 2)
				g.o3("fmlal2", a(1), 0, 2)
				g.o3("fmlal", a(2), 1, 3)
				g.o3("fmlal2", a(3), 1, 3)
				continue
			}
			g.o2("fcvtl", 0, 2)
			g.o2("fcvtl2", 1, 2)
			g.o2("fcvtl", 2, 3)
			g.o2("fcvtl2", 3, 3)
			for k := range 4 {
				g.fmla(a(k), 4+k, k)
			}
		}
	}
	g.floatRowsTEnd(T, acc, g.f16Reduce)
}

// floatRowsTPtrs are the tokens' activation pointers of the T-token float
// kernels.
var floatRowsTPtrs = []string{"R10", "R11", "R12"}

// floatRowsTStart begins a T-token float kernel (F16, BF16) of the
// signature (w *byte, wstride, rows int, x *byte, xstride, n int, out
// *float32, ostride int), n elements in steps of 32: the row loop, each
// token's eight accumulators acc(t, k) = V(8+8t+k) zeroed, the weights at
// R9 and the tokens at floatRowsTPtrs; it returns acc, the step's body
// follows.
func (g *gen) floatRowsTStart(name string, T int) func(t, k int) int {
	f := fn{name: name, args: []string{"w", "wstride", "rows", "x", "xstride", "n", "out", "ostride"},
		doc: fmt.Sprintf("func %s(w *byte, wstride, rows int, x *byte, xstride, n int, out *float32, ostride int)", name)}
	g.text(f)
	g.loadArgs(f, "R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7")
	g.p("LSR $5, R5, R5")
	g.p("LSL $2, R7, R7")
	acc := func(t, k int) int { return 8 + 8*t + k }
	xp := floatRowsTPtrs
	g.label("row")
	g.p("MOVD R0, R9")
	g.p("MOVD R3, R10")
	for t := 1; t < T; t++ {
		g.p("ADD R4, %s, %s", xp[t-1], xp[t])
	}
	g.p("MOVD R5, R13")
	for t := range T {
		for k := range 8 {
			g.zero(acc(t, k))
		}
	}
	g.p("CBZ R13, reduce")
	g.label("loop")
	return acc
}

// floatRowsTEnd ends the step loop of a T-token float kernel and stores
// each token's sum, its accumulators folded by reduce.
func (g *gen) floatRowsTEnd(T int, acc func(t, k int) int, reduce func(a [8]int, t [4]int)) {
	g.p("SUBS $1, R13, R13")
	g.p("BNE loop")
	g.label("reduce")
	g.storeRow(T, "R14", func(t int) {
		var a [8]int
		for k := range 8 {
			a[k] = acc(t, k)
		}
		reduce(a, [4]int{0, 1, 2, 3})
	})
}

// genBF16 writes bf16Rows<T>NEON: dotBF16WideGeneric for T tokens (1 to
// 3) of widened activations (bf16Wide: float32s) against every row, in
// steps of 32 elements (T = 1) or 16 (T > 1): the weights widened by SHLL
// (a bfloat16 is the top half of its float32), ggml's unfused products
// and adds (FMUL, FADD) into eight 4-lane accumulators standing for its
// 32 lanes, and reduceBF16's tree. NEON has all it needs; there is no
// extension form.
func genBF16(g *gen) {
	genBF16T1(g)
	for T := 2; T <= 3; T++ {
		genBF16T(g, T)
	}
}

// bf16Reduce folds the eight accumulators a[0..7] (a[k] holds elements
// 4k..4k+3 of the 32 lanes) as reduceBF16 does and leaves the sum in
// s<t[0]>; t are scratch registers.
func (g *gen) bf16Reduce(a [8]int, t [4]int) {
	g.c("reduceBF16: (acc[l]+acc[16+l]) + (acc[8+l]+acc[24+l]), then lanes l+4, then (0+2)+(1+3)")
	g.fold8(a, t)
	g.o3("ext8", t[1], t[0], t[0])
	g.o3("fadd", t[0], t[0], t[1])
	g.o2("faddp.s", t[0], t[0])
}

func genBF16T1(g *gen) {
	acc := [8]int{20, 21, 22, 23, 24, 25, 26, 27}
	g.floatRows1Start("bf16Rows1NEON", acc)
	g.ld1("H8", "R6", 64, 0, 1, 2, 3)
	g.ld1("S4", "R7", 64, 4, 5, 6, 7)
	g.ld1("S4", "R7", 64, 8, 9, 10, 11)
	for k := range 4 {
		g.o2("shll.4s", 12+2*k, k)
		g.o2("shll2.4s", 13+2*k, k)
	}
	for m := range 8 {
		g.o3("fmul", 4+m, 4+m, 12+m)
		g.o3("fadd", acc[m], acc[m], 4+m)
	}
	g.floatRows1End(acc, g.bf16Reduce)
}

// genBF16T writes the T-token form: acc(t, k) = V(8+8t+k).
func genBF16T(g *gen, T int) {
	acc := g.floatRowsTStart(fmt.Sprintf("bf16Rows%dNEON", T), T)
	for h := range 2 {
		g.c("elements %d..%d of the step", 16*h, 16*h+15)
		g.ld1("H8", "R9", 32, 0, 1)
		g.o2("shll.4s", 4, 0)
		g.o2("shll2.4s", 5, 0)
		g.o2("shll.4s", 6, 1)
		g.o2("shll2.4s", 7, 1)
		for t := range T {
			g.ld1("S4", floatRowsTPtrs[t], 64, 0, 1, 2, 3)
			for k := range 4 {
				g.o3("fmul", k, k, 4+k)
				g.o3("fadd", acc(t, 4*h+k), acc(t, 4*h+k), k)
			}
		}
	}
	g.floatRowsTEnd(T, acc, g.bf16Reduce)
}

// formName names a kernel's form: Dot with the SDOT extension, else NEON.
func formName(dot bool) string {
	if dot {
		return "Dot"
	}
	return "NEON"
}

// rowsTStart begins the T-token kernel base<T><form> (NEON, Dot or MM) of
// the signature (w *byte, wstride, rows int, x *byte, xstride, nb int,
// out *float32, ostride int), its third argument named rows: its
// arguments in R0-R7, the output stride R7 in bytes.
func (g *gen) rowsTStart(base, rows, form string, T int) { g.rowsTStartFrame(base, rows, form, T, 0) }

// rowsTStartFrame is rowsTStart with a local frame of locals bytes.
func (g *gen) rowsTStartFrame(base, rows, form string, T, locals int) {
	name := fmt.Sprintf("%s%d%s", base, T, form)
	f := fn{name: name, args: []string{"w", "wstride", rows, "x", "xstride", "nb", "out", "ostride"},
		doc:    fmt.Sprintf("func %s(w *byte, wstride, %s int, x *byte, xstride, nb int, out *float32, ostride int)", name, rows),
		locals: locals}
	g.text(f)
	g.loadArgs(f, "R0", "R1", "R2", "R3", "R4", "R5", "R6", "R7")
	g.p("LSL $2, R7, R7")
}

// storeRow writes a row's T outputs and ends the row loop: for each token
// t, each(t) leaves its float in F0, stored at R6 + t·R7 (through out);
// then R6 moves on by a float and R0 by the weight stride R1, and the loop
// goes back to "row" while R2 rows are left, else returns.
func (g *gen) storeRow(T int, out string, each func(t int)) {
	g.p("MOVD R6, %s", out)
	for t := range T {
		each(t)
		g.p("FMOVS F0, (%s)", out)
		if t < T-1 {
			g.p("ADD R7, %s, %s", out, out)
		}
	}
	g.p("ADD $4, R6, R6")
	g.p("ADD R1, R0, R0")
	g.p("SUBS $1, R2, R2")
	g.p("BNE row")
	g.p("RET")
}

// ---- Q8_0 and Q4_0 ------------------------------------------------------

// genQ0 writes q8_0Rows4T<T><form>, q4_0Rows4T<T><form> and
// iq4nlRows4T<T><form>: groups of four weight rows (lanes of one vector)
// against T tokens (1 to 3; 2 to 4 in the MM form, Q4_0 4 only). Per
// block each (row, token) pair's integer sum is exact; the four rows'
// sums, in row order, are converted, multiplied by f16(w.d)·f16(x.d) and
// FMA'd into the token's accumulator: dotQ8_0Generic, dotQ4_0Generic and
// dotIQ4_NLGeneric lane by lane, in every form.
func genQ0(g *gen) {
	for _, k := range []q0Kind{q0Q8, q0Q4, q0IQ4NL} {
		for _, dot := range []bool{false, true} {
			for T := 1; T <= 4; T++ {
				genQ0T(g, k, dot, T)
			}
		}
		for T := k.mmFrom(); T <= 4; T++ {
			genQ0MM(g, k, T)
		}
	}
}

// mmFrom is the fewest tokens a pass for which the kind's MM form costs
// less than its Dot form: 2, but 4 for Q4_0, whose Dot form starts each
// (row, token) sum from its token's off with a load (no vector µop), where
// the MM form's tiles start from zero and take off after them.
func (k q0Kind) mmFrom() int {
	if k.off() {
		return 4
	}
	return 2
}

// q0Kind is a weight type the four-row kernels take: Q8_0 (32 quants a
// block), or 16 bytes of nibbles a block, each element the nibble minus 8
// (Q4_0) or the nibble's level in kvalues_iq4nl (IQ4_NL). The three share
// the block layout {d f16; quants}.
type q0Kind int

const (
	q0Q8 q0Kind = iota
	q0Q4
	q0IQ4NL
)

func (k q0Kind) name() string { return [...]string{"q8_0", "q4_0", "iq4nl"}[k] }

// packed: the block's quants are 16 bytes of nibbles.
func (k q0Kind) packed() bool { return k != q0Q8 }

// off: the kind takes q8VNNI activations (Q4_0): a token's block is its 32
// quants, its scale as a float32 and off = −8·Σ quants, from which each
// (row, token) sum starts, so the nibbles need no −8.
func (k q0Kind) off() bool { return k == q0Q4 }

// q0TokLoad loads token t's block at ptr into x0 and x1 and its scale into
// lane t of V<dx> (f16 for Q8_0 activations, float32 for q8VNNI ones), and
// moves ptr past it, or for q8VNNI to its off (q0TokEnd moves it on).
func (g *gen) q0TokLoad(k q0Kind, ptr string, dx, t, x0, x1 int) {
	if !k.off() {
		g.q0Load(ptr, dx, t, x0, x1)
		return
	}
	g.ld1b16(ptr, 32, x0, x1)
	g.p("VLD1.P 4(%s), V%d.S[%d]", ptr, dx, t)
}

// q0Off adds token t's off (q8VNNI) to the four row sums in s (V27 is
// scratch).
func (g *gen) q0Off(k q0Kind, t, s int) {
	if k.off() {
		g.p("VLD1R (%s), [V27.S4]", q0TokPtrs[t])
		g.p("VADD V27.S4, V%d.S4, V%d.S4", s, s)
	}
}

// q0TokEnd moves the tokens' pointers past their blocks' off (q8VNNI).
func (g *gen) q0TokEnd(k q0Kind, T int) {
	if k.off() {
		for t := range T {
			g.p("ADD $4, %s", q0TokPtrs[t])
		}
	}
}

// iq4nlLevels is kvalues_iq4nl, the IQ4_NL level of each nibble, as the
// two little-endian doublewords of a TBL table.
var iq4nlLevels = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// bytesDword packs eight bytes into a little-endian doubleword.
func bytesDword(b []int8) uint64 {
	var d uint64
	for i, v := range b[:8] {
		d |= uint64(uint8(v)) << (8 * i)
	}
	return d
}

// vconst sets V<d> to the two doublewords lo and hi (through R16).
func (g *gen) vconst(d int, lo, hi uint64) {
	g.p("MOVD $0x%016x, R16", lo)
	g.p("VMOV R16, V%d.D[0]", d)
	if hi != lo {
		g.p("MOVD $0x%016x, R16", hi)
	}
	g.p("VMOV R16, V%d.D[1]", d)
}

// q0Regs are the vector registers the four-row kernels' shared code
// takes: the rows' and tokens' scales (dw, dx: lane r and t), a product
// of them (dd), the nibble mask and 8 (Q4_0) or the levels (IQ4_NL) (mask,
// eight), and token t's four float32 accumulators (facc).
type q0Regs struct {
	dw, dx, dd, mask, eight int
	facc                    func(t int) int
}

// The four-row kernels' pointers: the four rows' blocks, the tokens'.
var (
	q0RowPtrs = []string{"R8", "R9", "R10", "R11"}
	q0TokPtrs = []string{"R12", "R13", "R14", "R19"}
)

// q0Kernel writes a four-row kernel around block, which emits one block's
// work for the four rows (at q0RowPtrs) and T tokens (at q0TokPtrs), each
// pointer then moved past the block: the loops over groups and blocks, the
// accumulators' zeroing and their stores, four rows' outputs a token.
func (g *gen) q0Kernel(k q0Kind, form string, T int, r q0Regs, block func()) {
	g.rowsTStart(k.name()+"Rows4T", "groups", form, T)
	rp, xp := q0RowPtrs, q0TokPtrs
	switch k {
	case q0Q4:
		g.movi(r.mask, 15)
	case q0IQ4NL:
		g.movi(r.mask, 15)
		g.vconst(r.eight, bytesDword(iq4nlLevels[:8]), bytesDword(iq4nlLevels[8:]))
	}
	g.label("group")
	g.p("MOVD R0, R8")
	for i := 1; i < 4; i++ {
		g.p("ADD R1, %s, %s", rp[i-1], rp[i])
	}
	g.p("MOVD R3, R12")
	for t := 1; t < T; t++ {
		g.p("ADD R4, %s, %s", xp[t-1], xp[t])
	}
	for t := range T {
		g.zero(r.facc(t))
	}
	g.p("MOVD R5, R15")
	g.p("CBZ R15, store")
	g.label("block")
	block()
	g.p("SUBS $1, R15, R15")
	g.p("BNE block")
	g.label("store")
	g.p("MOVD R6, R16")
	for t := range T {
		g.p("VST1 [V%d.S4], (R16)", r.facc(t))
		if t < T-1 {
			g.p("ADD R7, R16, R16")
		}
	}
	g.p("ADD $16, R6, R6")
	g.p("ADD R1<<2, R0, R0")
	g.p("SUBS $1, R2, R2")
	g.p("BNE group")
	g.p("RET")
}

// q0Load loads the block at ptr and moves ptr past it: its f16 scale into
// lane lane of V<sc>, then its quants into regs (Q8_0: two registers of
// 16; Q4_0 and IQ4_NL: one of 16 bytes of nibbles).
func (g *gen) q0Load(ptr string, sc, lane int, regs ...int) {
	g.p("VLD1.P 2(%s), V%d.H[%d]", ptr, sc, lane)
	g.ld1b16(ptr, 16*len(regs), regs...)
}

// nibbles splits the packed bytes in src into the elements of their low
// nibbles (lo) and of their high nibbles (hi): the nibble (Q4_0, whose −8
// the activations' off carries), its level (IQ4_NL, TBL on the levels in
// r.eight); lo may be src.
func (g *gen) nibbles(k q0Kind, r q0Regs, lo, hi, src int) {
	g.ushr16b(hi, src, 4)
	g.vand(lo, src, r.mask)
	if k == q0IQ4NL {
		g.o3("tbl", lo, r.eight, lo)
		g.o3("tbl", hi, r.eight, hi)
	}
}

// q0Scale adds token t's block: acc = fma(float32(s), f16(w.d)·f16(x.d),
// acc) on the four rows' lanes, s holding their int32 sums.
func (g *gen) q0Scale(r q0Regs, t, s int) {
	g.o2("scvtf", s, s)
	g.oe("fmul.e", r.dd, r.dw, r.dx, t)
	g.fmla(r.facc(t), s, r.dd)
}

// genQ0T writes the NEON and Dot forms: each row's block against each
// token's, the four lanes of a (row, token) pair's partial sums added up
// across the rows by ADDP.
func genQ0T(g *gen, k q0Kind, dot bool, T int) {
	r := q0Regs{dw: 10, dx: 11, dd: 31, mask: 12, eight: 13, facc: func(t int) int { return 28 + t }}
	acc := func(r, t int) int { return 16 + 4*t + r }
	xr := func(t, k int) int { return 4 + 2*t + k }
	const s0, s1 = 14, 15
	// Four tokens take the rows in pairs: each pair's lanes are added up
	// (ADDP) after its second row, the first pair's into V24-V27, so a
	// token needs two registers of partial sums, not four; the scales move
	// to V14 and V15 and the product of scales to V3 (the NEON form's
	// scratch, free by then). The sums are the same: ADDP's tree is
	// unchanged.
	pairs := T == 4
	ps := func(t int) int { return 24 + t }
	if pairs {
		r.dw, r.dx, r.dd = 14, 15, 3
		acc = func(row, t int) int { return 16 + 2*t + row%2 }
	}
	g.q0Kernel(k, formName(dot), T, r, func() {
		for t := range T {
			g.q0TokLoad(k, q0TokPtrs[t], r.dx, t, xr(t, 0), xr(t, 1))
		}
		if !k.off() {
			g.o2("fcvtl", r.dx, r.dx)
		}
		for row, p := range q0RowPtrs {
			if k.packed() {
				g.q0Load(p, r.dw, row, 0)
				g.nibbles(k, r, 0, 1, 0)
			} else {
				g.q0Load(p, r.dw, row, 0, 1)
			}
			for t := range T {
				a := acc(row, t)
				if k.off() {
					g.p("FMOVS (%s), F%d", q0TokPtrs[t], a) // [off, 0, 0, 0]
				}
				switch {
				case dot:
					if !k.off() {
						g.zero(a)
					}
					g.o3("sdot", a, 0, xr(t, 0))
					g.o3("sdot", a, 1, xr(t, 1))
				case k == q0Q4:
					// |q·y| ≤ 1920: four products per int16 lane fit.
					g.o3("smull.8h", 2, 0, xr(t, 0))
					g.o3("smlal2.8h", 2, 0, xr(t, 0))
					g.o3("smlal.8h", 2, 1, xr(t, 1))
					g.o3("smlal2.8h", 2, 1, xr(t, 1))
					g.o2("sadalp.4s", a, 2)
				default:
					// (-128)·(-128) twice (Q8_0), or (-127)·(-128) (IQ4_NL),
					// would overflow int16: widen each product.
					g.o3("smull.8h", 2, 0, xr(t, 0))
					g.o3("smull2.8h", 3, 0, xr(t, 0))
					g.o2("saddlp.4s", a, 2)
					g.o2("sadalp.4s", a, 3)
					g.o3("smull.8h", 2, 1, xr(t, 1))
					g.o3("smull2.8h", 3, 1, xr(t, 1))
					g.o2("sadalp.4s", a, 2)
					g.o2("sadalp.4s", a, 3)
				}
			}
			if pairs && row%2 == 1 {
				g.c("rows %d and %d: their lanes added up in pairs", row-1, row)
				for t := range T {
					d := acc(row, t) - 1 // the pair's first row's register
					if row == 1 {
						d = ps(t)
					}
					g.o3("addp.4s", d, acc(row-1, t), acc(row, t))
				}
			}
		}
		g.o2("fcvtl", r.dw, r.dw)
		for t := range T {
			g.c("token %d: the four rows' block sums, in row order", t)
			if pairs {
				g.o3("addp.4s", acc(2, t), ps(t), acc(2, t))
				g.q0Scale(r, t, acc(2, t))
				continue
			}
			g.o3("addp.4s", s0, acc(0, t), acc(1, t))
			g.o3("addp.4s", s1, acc(2, t), acc(3, t))
			g.o3("addp.4s", s0, s0, s1)
			g.q0Scale(r, t, s0)
		}
		g.q0TokEnd(k, T)
	})
}

// pairChunks interleaves two 32-byte operands, a (a0:a1) and b (b0:b1),
// into the four registers SMMLA takes: V(d+k) = [a's bytes 8k..8k+7, b's
// bytes 8k..8k+7].
func (g *gen) pairChunks(d, a0, a1, b0, b1 int) {
	g.zip1d(d, a0, b0)
	g.zip2d(d+1, a0, b0)
	g.zip1d(d+2, a1, b1)
	g.zip2d(d+3, a1, b1)
}

// genQ0MM writes the MM form (I8MM) for T = 2 to 4 tokens: per block,
// each pair of rows and pair of tokens is one 2×2 tile of int32 sums,
// SMMLA adding 8 bytes of each row times 8 of each token per instruction
// (four per block), on operands ZIP1/ZIP2 interleave from the blocks as
// loaded: the tokens once a block, each row pair once for all the tokens
// (Q4_0 zips the packed bytes, whose nibbles then give the element pairs
// 0..7 and 16..23, 8..15 and 24..31). Tile (q, p) holds [t0·r0, t0·r1,
// t1·r0, t1·r1] of token pair q and row pair p; a ZIP of the two row
// pairs' tiles gives each token's four row sums in row order. An odd last
// token (T = 3) is zipped with itself and SDOT'd against the same row
// pairs, [r0 ×2, r1 ×2] partial sums a row pair, which one ADDP puts in row
// order. The sums are the Dot form's, exact, and take its float steps.
func genQ0MM(g *gen, k q0Kind, T int) {
	r := q0Regs{dw: 22, dx: 23, dd: 24, mask: 25, eight: 26, facc: func(t int) int { return 28 + t }}
	const (
		raw    = 0 // V0-V3: one block of two tokens or two rows, as loaded
		w      = 4 // V4-V7: the row pair's block, in 8-byte pairs
		s0, s1 = 20, 21
	)
	tok := func(q, k int) int { return 8 + 4*q + k }   // V8-V15
	tile := func(q, p int) int { return 16 + 2*q + p } // V16-V19
	odd := func(q int) bool { return 2*q+1 == T }      // token 2q alone
	g.q0Kernel(k, "MM", T, r, func() {
		for q := range (T + 1) / 2 {
			t := 2 * q
			if odd(q) {
				g.c("token %d, each 8 bytes twice", t)
				g.q0TokLoad(k, q0TokPtrs[t], r.dx, t, raw, raw+1)
				g.pairChunks(tok(q, 0), raw, raw+1, raw, raw+1)
				continue
			}
			g.c("tokens %d and %d, in 8-byte pairs", t, t+1)
			g.q0TokLoad(k, q0TokPtrs[t], r.dx, t, raw, raw+1)
			g.q0TokLoad(k, q0TokPtrs[t+1], r.dx, t+1, raw+2, raw+3)
			g.pairChunks(tok(q, 0), raw, raw+1, raw+2, raw+3)
		}
		if !k.off() {
			g.o2("fcvtl", r.dx, r.dx)
		}
		for p := range 2 {
			g.c("rows %d and %d, in 8-byte pairs", 2*p, 2*p+1)
			a, b := q0RowPtrs[2*p], q0RowPtrs[2*p+1]
			if k.packed() {
				g.q0Load(a, r.dw, 2*p, raw)
				g.q0Load(b, r.dw, 2*p+1, raw+1)
				g.zip1d(raw+2, raw, raw+1)
				g.zip2d(raw+3, raw, raw+1)
				g.nibbles(k, r, w, w+2, raw+2)
				g.nibbles(k, r, w+1, w+3, raw+3)
			} else {
				g.q0Load(a, r.dw, 2*p, raw, raw+1)
				g.q0Load(b, r.dw, 2*p+1, raw+2, raw+3)
				g.pairChunks(w, raw, raw+1, raw+2, raw+3)
			}
			for q := range (T + 1) / 2 {
				op := "smmla"
				if odd(q) {
					op = "sdot"
				}
				g.zero(tile(q, p))
				for k := range 4 {
					g.o3(op, tile(q, p), tok(q, k), w+k)
				}
			}
		}
		g.o2("fcvtl", r.dw, r.dw)
		for q := range (T + 1) / 2 {
			t := 2 * q
			if odd(q) {
				g.c("token %d: the four rows' block sums, in row order", t)
				g.o3("addp.4s", s0, tile(q, 0), tile(q, 1))
				g.q0Off(k, t, s0)
				g.q0Scale(r, t, s0)
				continue
			}
			g.c("tokens %d and %d: the four rows' block sums, in row order", t, t+1)
			g.zip1d(s0, tile(q, 0), tile(q, 1))
			g.zip2d(s1, tile(q, 0), tile(q, 1))
			g.q0Off(k, t, s0)
			g.q0Off(k, t+1, s1)
			g.q0Scale(r, t, s0)
			g.q0Scale(r, t+1, s1)
		}
		g.q0TokEnd(k, T)
	})
}

// ---- Q4_K and Q6_K ------------------------------------------------------

// dot32 adds the 32 products of a0:a1 and b0:b1 (bytes, |a| ≤ 63, so four
// products fit an int16 lane) into the four lanes of acc, which it first
// clears: SDOT, or SMULL/SMLAL and a pairwise widening add. tmp is scratch
// for the NEON form.
func (g *gen) dot32(dot bool, acc, a0, a1, b0, b1, tmp int) {
	if dot {
		g.zero(acc)
		g.o3("sdot", acc, a0, b0)
		g.o3("sdot", acc, a1, b1)
		return
	}
	g.o3("smull.8h", tmp, a0, b0)
	g.o3("smlal2.8h", tmp, a0, b0)
	g.o3("smlal.8h", tmp, a1, b1)
	g.o3("smlal2.8h", tmp, a1, b1)
	g.o2("saddlp.4s", acc, tmp)
}

// kRowStart begins a weight row of the K-quant kernels: R8 the row (and
// R13 the next one, for kernels that take rows in pairs), the tokens'
// blocks in xb from R3 on (R4 apart), R17 the blocks left; clear sets the
// accumulators; a row without blocks goes straight to "store".
func (g *gen) kRowStart(xb []string, T int, pair bool, clear func()) {
	g.label("row")
	g.p("MOVD R0, R8")
	if pair {
		g.p("ADD R1, R8, R13")
	}
	g.p("MOVD R3, R9")
	for t := 1; t < T; t++ {
		g.p("ADD R4, %s, %s", xb[t-1], xb[t])
	}
	g.p("MOVD R5, R17")
	clear()
	g.p("CBZ R17, store")
	g.label("block")
}

// genQ4K writes q4KRows<T><form>: T Q8_K activation rows (1 to 4) against
// rows Q4_K rows, dotQ4KRef's operations for every (row, token) pair. Each
// weight block's scales and nibbles are unpacked once for the T tokens;
// each sub-block's 32-product sum is scaled into the token's int32 isum
// lanes by MLA (by element), so the sums are grouped differently from the
// reference's, exactly (modulo 2^32, as its int32 are).
func genQ4K(g *gen) {
	for _, dot := range []bool{false, true} {
		for T := 1; T <= 6; T++ {
			genQ4KT(g, dot, T)
		}
	}
	for T := 2; T <= 4; T++ {
		genQ4KMM(g, T)
	}
}

func genQ4KT(g *gen, dot bool, T int) {
	// Past four tokens (wide) the tokens' quants are read from their block
	// pointers at each load (the general registers run out), tokens 4 and
	// 5 keep acc and accm in a 16-byte frame slot each, and the bsums'
	// scratch moves to V2, V3 (V11, V12 hold isum of tokens 4 and 5).
	wide := T > 4
	locals := 0
	if wide {
		locals = 16 * (T - 4)
	}
	g.rowsTStartFrame("q4KRows", "rows", formName(dot), T, locals)
	const (
		mask       = 15
		scLo, scHi = 22, 23 // the eight scales as int32
		mnLo, mnHi = 20, 21 // the eight mins
		dd         = 18     // f16(d), f16(dmin) in lanes 0, 1
		p, tmp     = 6, 14
	)
	xb := []string{"R9", "R10", "R11", "R12", "R13", "R14"} // each token's block
	qp := []string{"R13", "R14", "R15", "R16"}              // each token's quants
	bs0, bs1 := 11, 12
	if wide {
		bs0, bs1 = 2, 3
	}
	isum := func(t int) int { return 7 + t }
	acc := func(t int) int { return 24 + t }
	accm := func(t int) int { return 28 + t }
	inRegs := func(t int) bool { return t < 4 }
	slot := func(t int) { g.p("MOVD $acc-%d(SP), R15", locals-16*(t-4)) }
	g.movi(mask, 15)
	g.kRowStart(xb, T, false, func() {
		for t := range T {
			if inRegs(t) {
				g.p("FMOVS ZR, F%d", acc(t))
				g.p("FMOVS ZR, F%d", accm(t))
				continue
			}
			slot(t)
			g.p("MOVD ZR, (R15)") // acc at 0, accm at 4
		}
	})
	g.c("the scales and mins (get_scale_min_k4, as llama.cpp's utmp shuffle)")
	g.q4KScalesMins("R8", q4KScratch)
	g.p("FMOVD R19, F16")
	g.p("FMOVD R23, F17")
	g.widen8(16, scLo, scHi)
	g.widen8(17, mnLo, mnHi)
	for t := range T {
		if !wide {
			g.p("ADD $4, %s, %s", xb[t], qp[t])
		}
		g.zero(isum(t))
	}
	g.p("ADD $16, R8, R19")
	for j := range 4 {
		g.c("sub-blocks %d and %d", 2*j, 2*j+1)
		g.ld1b16("R19", 32, 0, 1)
		g.vand(2, 0, mask)
		g.vand(3, 1, mask)
		g.ushr16b(0, 0, 4)
		g.ushr16b(1, 1, 4)
		for h := range 2 {
			s := 2*j + h
			a0, a1 := 2, 3
			if h == 1 {
				a0, a1 = 0, 1
			}
			sc := scLo
			if s >= 4 {
				sc = scHi
			}
			for t := range T {
				if wide {
					g.p("ADD $%d, %s, R20", 4+32*s, xb[t])
					g.ld1b16("R20", 0, 4, 5)
				} else {
					g.ld1b16(qp[t], 32, 4, 5)
				}
				g.dot32(dot, p, a0, a1, 4, 5, tmp)
				g.oe("mla.e", isum(t), p, sc, s%4)
			}
		}
	}
	g.c("per token: isum, imin = Σ (bsums[2k]+bsums[2k+1])·mn[k], and the float accumulation")
	g.p("FMOVS (R8), F%d", dd)
	g.o2("fcvtl", dd, dd)
	for t := range T {
		g.addv(isum(t), isum(t))
		g.o2("scvtf.s", isum(t), isum(t))
		if wide {
			g.p("ADD $260, %s, R20", xb[t])
			g.ld1("H8", "R20", 0, bs0, bs1)
		} else {
			g.ld1("H8", qp[t], 0, bs0, bs1)
		}
		g.o2("saddlp.4s", bs0, bs0)
		g.o2("saddlp.4s", bs1, bs1)
		g.o3("mul.4s", bs0, bs0, mnLo)
		g.o3("mla.4s", bs0, bs1, mnHi)
		g.addv(bs0, bs0)
		g.o2("scvtf.s", bs0, bs0)
		g.p("FMOVS (%s), F16", xb[t])
		g.oe("fmul.e", 19, dd, 16, 0) // f16(d)·x.d, f16(dmin)·x.d
		a, am := acc(t), accm(t)
		if !inRegs(t) {
			a, am = 0, 1
			slot(t)
			g.p("FMOVS (R15), F0")
			g.p("FMOVS 4(R15), F1")
		}
		g.p("FMADDS F19, F%d, F%d, F%d", a, isum(t), a)
		g.oe("fmla.es", am, bs0, 19, 1)
		if !inRegs(t) {
			g.p("FMOVS F0, (R15)")
			g.p("FMOVS F1, 4(R15)")
		}
		g.p("ADD $292, %s, %s", xb[t], xb[t])
	}
	g.p("ADD $144, R8, R8")
	g.p("SUBS $1, R17, R17")
	g.p("BNE block")
	g.label("store")
	g.storeRow(T, "R19", func(t int) {
		if inRegs(t) {
			g.p("FSUBS F%d, F%d, F0", accm(t), acc(t))
			return
		}
		slot(t)
		g.p("FMOVS (R15), F0")
		g.p("FMOVS 4(R15), F1")
		g.p("FSUBS F1, F0, F0")
	})
}

// q4KScratch are the general registers q4KScalesMins takes.
var q4KScratch = [7]string{"R19", "R20", "R21", "R22", "R23", "R24", "R25"}

// q4KScalesMins unpacks the scales and mins of the Q4_K block at base
// (get_scale_min_k4, as llama.cpp's utmp shuffle), with the seven general
// registers r: the eight 6-bit scales end in r[0], one a byte in
// sub-block order, and the eight mins in r[4]; the others are scratch.
func (g *gen) q4KScalesMins(base string, r [7]string) {
	g.p("MOVWU 4(%s), %s", base, r[0])
	g.p("MOVWU 8(%s), %s", base, r[1])
	g.p("MOVWU 12(%s), %s", base, r[2])
	g.p("LSRW $4, %s, %s", r[2], r[3])
	g.p("ANDW $0x0f0f0f0f, %s, %s", r[3], r[3])
	g.p("LSRW $6, %s, %s", r[1], r[4])
	g.p("ANDW $0x03030303, %s, %s", r[4], r[4])
	g.p("ORRW %s<<4, %s, %s", r[4], r[3], r[3]) // mins 4..7
	g.p("ANDW $0x3f3f3f3f, %s, %s", r[1], r[4]) // mins 0..3
	g.p("ANDW $0x0f0f0f0f, %s, %s", r[2], r[5])
	g.p("LSRW $6, %s, %s", r[0], r[6])
	g.p("ANDW $0x03030303, %s, %s", r[6], r[6])
	g.p("ORRW %s<<4, %s, %s", r[6], r[5], r[5]) // scales 4..7
	g.p("ANDW $0x3f3f3f3f, %s, %s", r[0], r[0]) // scales 0..3
	g.p("ORR %s<<32, %s, %s", r[5], r[0], r[0])
	g.p("ORR %s<<32, %s, %s", r[3], r[4], r[4])
}

// widen8 widens the eight bytes in the low half of V<r> to int32: the
// first four into V<lo>, the others into V<hi> (V<r> is left as int16).
func (g *gen) widen8(r, lo, hi int) {
	g.uxtl8h(r, r)
	g.uxtl4s(lo, r)
	g.uxtl2_4s(hi, r)
}

// pairChunksInPlace interleaves two 32-byte operands, a (a0:a1) and b
// (b0:b1), as pairChunks does but over their own registers and x, y: the
// four SMMLA operands [a's bytes 8k..8k+7, b's bytes 8k..8k+7] end in x,
// a0, y, a1 (k = 0..3). y may be b0; b may be a (an operand zipped with
// itself), and then y must be another register.
func (g *gen) pairChunksInPlace(x, y, a0, a1, b0, b1 int) [4]int {
	g.zip1d(x, a0, b0)
	g.zip2d(a0, a0, b0)
	g.zip1d(y, a1, b1)
	g.zip2d(a1, a1, b1)
	return [4]int{x, a0, y, a1}
}

// genQ4KMM writes q4KRows<T>MM (I8MM), T = 2 to 4 tokens, for pairs of
// rows: per block and sub-block of 32 elements each pair of tokens and the
// two rows are one SMMLA tile of int32 sums, [t0·r0, t0·r1, t1·r0, t1·r1],
// four SMMLA on operands ZIP1/ZIP2 interleave in registers (the rows'
// packed bytes once per block for all the tokens, before the nibbles are
// split; the tokens' quants once per sub-block); an odd last token is
// zipped with itself, its tile [t·r0, t·r1, t·r0, t·r1]. Each tile is
// scaled by the sub-block's scales, [sc0, sc1, sc0, sc1], into the token
// pair's isum lanes by MLA. imin is Σ of the bsum pairs times each row's
// mins, as the Dot form's, its four sums put in tile order by ADDP; then
// per lane the Dot form's float steps, in its order: f16(d)·x.d and
// f16(dmin)·x.d, both FMAs, acc − accm at the end. Every lane holds a
// (row, token) pair's exact sums and single-rounded floats, so the bits
// are the Dot form's. Its third argument counts pairs of rows (q4KRows
// runs an odd last row in the Dot form).
func genQ4KMM(g *gen, T int) {
	g.rowsTStart("q4KRows", "pairs", "MM", T)
	const (
		mask = 16
		vs   = 21 // the sub-block's scales, [sc0, sc1, sc0, sc1]
	)
	xb := []string{"R9", "R10", "R11", "R12"} // each token's block, moved along it
	npair := (T + 1) / 2
	odd := func(q int) bool { return 2*q+1 == T } // token 2q alone
	tile := func(q int) int { return 14 + q }
	z := func(j int) int { return 17 + j } // sub-blocks 2j, 2j+1's scales: [sc0, sc1] each
	isum := func(q int) int { return 22 + q }
	xd := func(q int) int { return 24 + q }
	acc := func(q int) int { return 26 + q }
	accm := func(q int) int { return 28 + q }
	g.movi(mask, 15)
	g.kRowStart(xb, T, true, func() {
		for q := range npair {
			g.zero(acc(q))
			g.zero(accm(q))
		}
	})
	g.c("the tokens' x.d: lanes [t0, t1] of a pair, all four of an odd token")
	for q := range npair {
		if odd(q) {
			g.p("VLD1R.P 4(%s), [V%d.S4]", xb[2*q], xd(q))
			continue
		}
		g.p("VLD1.P 4(%s), V%d.S[0]", xb[2*q], xd(q))
		g.p("VLD1.P 4(%s), V%d.S[1]", xb[2*q+1], xd(q))
	}
	g.c("both rows' scales and mins; the scales as int32 pairs [sc0[s], sc1[s]], two sub-blocks a register")
	g.q4KScalesMins("R8", q4KScratch)
	g.p("FMOVD R19, F30")
	g.p("MOVD R23, R16")
	g.q4KScalesMins("R13", q4KScratch)
	g.p("FMOVD R19, F31")
	g.p("VZIP1 V31.B16, V30.B16, V30.B16")
	g.uxtl8h(31, 30)
	g.p("VUXTL2 V30.B16, V30.H8")
	g.uxtl4s(z(0), 31)
	g.uxtl2_4s(z(1), 31)
	g.uxtl4s(z(2), 30)
	g.uxtl2_4s(z(3), 30)
	for q := range npair {
		g.zero(isum(q))
	}
	g.p("ADD $16, R8, R14")
	g.p("ADD $16, R13, R15")
	for j := range 4 {
		g.c("sub-blocks %d and %d: both rows' packed bytes, in 8-byte pairs", 2*j, 2*j+1)
		g.ld1b16("R14", 32, 5, 6)
		g.ld1b16("R15", 32, 7, 8)
		w := g.pairChunksInPlace(9, 7, 5, 6, 7, 8)
		for h := range 2 {
			s := 2*j + h
			g.c("sub-block %d", s)
			nib := w
			if h == 0 {
				nib = [4]int{10, 11, 12, 13}
				for k := range 4 {
					g.vand(nib[k], w[k], mask)
				}
			} else {
				for k := range 4 {
					g.ushr16b(w[k], w[k], 4)
				}
			}
			g.p("VDUP V%d.D[%d], V%d.D2", z(j), h, vs)
			for q := range npair {
				t := 2 * q
				var x [4]int
				if odd(q) {
					g.ld1b16(xb[t], 32, 0, 1)
					x = g.pairChunksInPlace(4, 2, 0, 1, 0, 1)
				} else {
					g.ld1b16(xb[t], 32, 0, 1)
					g.ld1b16(xb[t+1], 32, 2, 3)
					x = g.pairChunksInPlace(4, 2, 0, 1, 2, 3)
				}
				g.zero(tile(q))
				for k := range 4 {
					g.o3("smmla", tile(q), x[k], nib[k])
				}
				g.o3("mla.4s", isum(q), tile(q), vs)
			}
		}
	}
	g.c("per token pair: imin, then d = f16(d)·x.d, dmin = f16(dmin)·x.d and the FMAs, lane by lane")
	g.p("VLD1 (R8), V0.S[0]")
	g.p("VLD1 (R13), V0.S[1]")
	g.o2("fcvtl", 1, 0)
	g.p("VUZP1 V1.S4, V1.S4, V2.S4") // [d0, d1, d0, d1]
	g.p("VUZP2 V1.S4, V1.S4, V3.S4") // [dmin0, dmin1, dmin0, dmin1]
	mn := [2][2]int{{5, 6}, {8, 9}}  // each row's mins as int32
	g.p("FMOVD R16, F4")
	g.widen8(4, mn[0][0], mn[0][1])
	g.p("FMOVD R23, F7")
	g.widen8(7, mn[1][0], mn[1][1])
	for q := range npair {
		toks := []int{2 * q, 2*q + 1}
		if odd(q) {
			toks = toks[:1]
		} else {
			g.p("VZIP1 V%d.S4, V%d.S4, V%d.S4", xd(q), xd(q), xd(q))
		}
		g.o3("fmul", 10, 2, xd(q))
		g.o3("fmul", 11, 3, xd(q))
		g.o2("scvtf", isum(q), isum(q))
		bs := [2][2]int{{12, 13}, {14, 15}}
		prod := [2][2]int{{0, 1}, {4, 7}}
		for i, t := range toks {
			g.ld1("H8", xb[t], 32, bs[i][0], bs[i][1])
			g.o2("saddlp.4s", bs[i][0], bs[i][0])
			g.o2("saddlp.4s", bs[i][1], bs[i][1])
			for r := range 2 {
				g.o3("mul.4s", prod[i][r], bs[i][0], mn[r][0])
				g.o3("mla.4s", prod[i][r], bs[i][1], mn[r][1])
			}
			g.o3("addp.4s", prod[i][0], prod[i][0], prod[i][1])
		}
		if odd(q) {
			g.o3("addp.4s", 0, 0, 0)
		} else {
			g.o3("addp.4s", 0, 0, 4)
		}
		g.o2("scvtf", 0, 0)
		g.fmla(acc(q), isum(q), 10)
		g.fmla(accm(q), 0, 11)
	}
	g.p("ADD $144, R8, R8")
	g.p("ADD $144, R13, R13")
	g.p("SUBS $1, R17, R17")
	g.p("BNE block")
	g.label("store")
	g.c("acc − accm: lanes 0, 1 the rows of token 2q, lanes 2, 3 of token 2q+1")
	g.p("MOVD R6, R19")
	for q := range npair {
		g.o3("fsub", 0, acc(q), accm(q))
		g.p("FMOVD F0, (R19)")
		if !odd(q) {
			g.p("ADD R7, R19, R19")
			g.p("VST1 V0.D[1], (R19)")
		}
		if 2*q+2 < T {
			g.p("ADD R7, R19, R19")
		}
	}
	g.p("ADD $8, R6, R6")
	g.p("ADD R1<<1, R0, R0")
	g.p("SUBS $1, R2, R2")
	g.p("BNE row")
	g.p("RET")
}

// genQ6K writes q6KRows<T><form>: T Q8_K activation rows (1 to 3) against
// rows Q6_K rows, dotQ6KRef's operations for every (row, token) pair: the
// eight int32 lanes of q6KLanes (lane L of group g sums elements
// 32g+4L..32g+4L+3), converted and FMA'd into eight float lanes, reduced
// as hsum8. Each weight block's 6-bit values are built once for the T
// tokens; the groups of a half are visited in the order 0, 2, 1, 3 (they
// share ql registers), which changes nothing: each lane's int32 sum is
// exact (modulo 2^32, as the reference's). There is no SMMLA form: a lane
// sums four consecutive products, and an SMMLA tile's four int32 sums each
// take eight consecutive bytes, so holding lanes in a tile leaves half of
// each operand zero, 16 useful products an instruction, SDOT's rate, with
// the zips and masks on top.
func genQ6K(g *gen) {
	for _, dot := range []bool{false, true} {
		for T := 1; T <= q6KMaxT; T++ {
			genQ6KT(g, dot, T)
		}
	}
}

// q6KMaxT is the most tokens a Q6_K kernel takes: their int32 lanes fill
// V18 up, the float accumulators of the first 7−T tokens the registers
// after them, and the others' live in the frame, loaded and stored once a
// block.
const q6KMaxT = 6

func genQ6KT(g *gen, dot bool, T int) {
	regT := min(T, 7-T) // tokens whose float accumulators stay in registers
	locals := 32 * (T - regT)
	g.rowsTStartFrame("q6KRows", "rows", formName(dot), T, locals)
	const (
		y0, y1   = 4, 5
		q0, q1   = 6, 7
		p0, p1   = 8, 9
		t0, t1   = 10, 11
		m3f, m30 = 12, 13
		scale0   = 14 // sc[4i..4i+3] as int32 in V(14+i)
	)
	// The scales as int16: in V30 and V31 for the block up to three tokens;
	// past three those hold accumulators, and the scales are widened into
	// V2 and V3 at the block's start and again at its end.
	sc16a, sc16b := 30, 31
	if T > 3 {
		sc16a, sc16b = 2, 3
	}
	xb := []string{"R9", "R10", "R11", "R20", "R21", "R22"}
	lLo := func(t int) int { return 18 + 2*t }
	lHi := func(t int) int { return 19 + 2*t }
	aLo := func(t int) int { return 18 + 2*T + 2*t }
	aHi := func(t int) int { return 19 + 2*T + 2*t }
	// slot points R15 at token t's accumulators in the frame (t ≥ regT);
	// loadSlot also loads them into y0:y1.
	slot := func(t int) { g.p("MOVD $acc-%d(SP), R15", locals-32*(t-regT)) }
	loadSlot := func(t int) {
		slot(t)
		g.ld1("S4", "R15", 0, y0, y1)
	}
	// scales16 widens the block's sixteen int8 scales (at R8+192, through
	// the pointer register r) to int16 in sc16a:sc16b.
	scales16 := func(r string) {
		g.p("ADD $192, R8, %s", r)
		g.ld1b16(r, 0, 0)
		g.o2("sxtl.8h", sc16a, 0)
		g.o2("sxtl2.8h", sc16b, 0)
	}
	g.movi(m3f, 0x3f)
	g.movi(m30, 0x30)
	g.kRowStart(xb, T, false, func() {
		for t := range regT {
			g.zero(aLo(t))
			g.zero(aHi(t))
		}
		if T > regT {
			g.zero(y0)
			g.zero(y1)
			for t := regT; t < T; t++ {
				slot(t)
				g.p("VST1 [V%d.S4, V%d.S4], (R15)", y0, y1)
			}
		}
	})
	g.c("the scales as int16 and int32")
	scales16("R12")
	g.o2("sxtl.4s", scale0, sc16a)
	g.o2("sxtl2.4s", scale0+1, sc16a)
	g.o2("sxtl.4s", scale0+2, sc16b)
	g.o2("sxtl2.4s", scale0+3, sc16b)
	for t := range T {
		g.zero(lLo(t))
		g.zero(lHi(t))
	}
	g.p("MOVD R8, R12")      // ql
	g.p("ADD $128, R8, R13") // qh
	for h := range 2 {
		g.c("half %d: qh[%d:%d]", h, 32*h, 32*h+32)
		g.ld1b16("R13", 32, 2, 3)
		// Each ql pair's high nibbles (groups 2, 3) first: SRI reads
		// the ql bytes, SLI (the low nibbles' groups 0, 1) overwrites
		// them. u = nibble | ((qh >> 2k) & 3) << 4.
		for _, k := range []int{2, 0, 3, 1} {
			gi := 4*h + k
			if k >= 2 {
				g.c("ql[%d:%d]", 64*h+32*(k-2), 64*h+32*(k-2)+32)
				g.ld1b16("R12", 32, 0, 1)
			}
			g.c("group %d: elements %d..%d", gi, 32*gi, 32*gi+31)
			for i, y := range []int{y0, y1} {
				l, hq, t := i, 2+i, t0+i
				switch k {
				case 2: // (qh & 0x30) | ql >> 4
					g.vand(y, hq, m30)
					g.p("VSRI $4, V%d.B16, V%d.B16", l, y)
				case 3: // (qh >> 2: bits 6, 7 at 4, 5, zero above) | ql >> 4
					g.ushr16b(y, hq, 2)
					g.p("VSRI $4, V%d.B16, V%d.B16", l, y)
				case 0: // (qh << 4 | ql & 0x0f) & 0x3f
					g.p("VSLI $4, V%d.B16, V%d.B16", hq, l)
					g.vand(y, l, m3f)
				case 1: // ((qh >> 2) << 4 | ql & 0x0f) & 0x3f
					g.ushr16b(t, hq, 2)
					g.p("VSLI $4, V%d.B16, V%d.B16", t, l)
					g.vand(y, l, m3f)
				}
			}
			sc := 2 * gi
			for tk := range T {
				g.p("ADD $%d, %s, R19", 4+32*gi, xb[tk])
				g.ld1b16("R19", 0, q0, q1)
				if dot {
					g.zero(p0)
					g.zero(p1)
					g.o3("sdot", p0, y0, q0)
					g.o3("sdot", p1, y1, q1)
				} else {
					// Sums of four consecutive products (|u·q| ≤ 63·128).
					g.o3("smull.8h", p0, y0, q0)
					g.o3("smull2.8h", p1, y0, q0)
					g.o2("saddlp.4s", p0, p0)
					g.o2("saddlp.4s", p1, p1)
					g.o3("addp.4s", p0, p0, p1)
					g.o3("smull.8h", t0, y1, q1)
					g.o3("smull2.8h", t1, y1, q1)
					g.o2("saddlp.4s", t0, t0)
					g.o2("saddlp.4s", t1, t1)
					g.o3("addp.4s", p1, t0, t1)
				}
				g.oe("mla.e", lLo(tk), p0, scale0+sc/4, sc%4)
				g.oe("mla.e", lHi(tk), p1, scale0+(sc+1)/4, (sc+1)%4)
			}
		}
	}
	g.c("per token: lane -= 32·(sc[2L]·bs[2L] + sc[2L+1]·bs[2L+1]); acc[L] = fma(x.d·f16(w.d), lane[L], acc[L])")
	if T > 3 {
		scales16("R19")
	}
	g.p("MOVHU 208(R8), R19")
	g.p("FMOVS R19, F7")
	g.p("FCVTHS F7, F7")
	for t := range T {
		g.p("ADD $260, %s, R19", xb[t])
		g.ld1("H8", "R19", 0, p0, p1)
		g.o3("smull.4s", t0, sc16a, p0)
		g.o3("smull2.4s", t1, sc16a, p0)
		g.o3("addp.4s", t0, t0, t1)
		g.o3("smull.4s", t1, sc16b, p1)
		g.o3("smull2.4s", p0, sc16b, p1)
		g.o3("addp.4s", t1, t1, p0)
		g.o2("shl5.4s", t0, t0)
		g.o2("shl5.4s", t1, t1)
		g.vsub4s(lLo(t), lLo(t), t0)
		g.vsub4s(lHi(t), lHi(t), t1)
		g.o2("scvtf", lLo(t), lLo(t))
		g.o2("scvtf", lHi(t), lHi(t))
		g.p("FMOVS (%s), F6", xb[t])
		g.p("FMULS F7, F6, F6")
		if t < regT {
			g.oe("fmla.e", aLo(t), lLo(t), 6, 0)
			g.oe("fmla.e", aHi(t), lHi(t), 6, 0)
		} else {
			loadSlot(t)
			g.oe("fmla.e", y0, lLo(t), 6, 0)
			g.oe("fmla.e", y1, lHi(t), 6, 0)
			g.p("VST1 [V%d.S4, V%d.S4], (R15)", y0, y1)
		}
		g.p("ADD $292, %s, %s", xb[t], xb[t])
	}
	g.p("ADD $210, R8, R8")
	g.p("SUBS $1, R17, R17")
	g.p("BNE block")
	g.label("store")
	g.storeRow(T, "R19", func(t int) {
		g.c("token %d, hsum8: (a[l]+a[l+4]), then lanes 0+2 and 1+3, then those two", t)
		if t < regT {
			g.o3("fadd", 0, aLo(t), aHi(t))
		} else {
			loadSlot(t)
			g.o3("fadd", 0, y0, y1)
		}
		g.o3("ext8", 1, 0, 0)
		g.o3("fadd", 0, 0, 1)
		g.o2("faddp.s", 0, 0)
	})
}

// genQ5K writes q5KRows<T><form>: dotQ5KRef row by row for T = 1 to 3
// tokens, in the eight int32 lanes of kLanes8 (lane L of group g sums
// sc[g] times the four products 32g+4L.. (L < 4) or 32g+16+4(L−4)..),
// converted and FMA'd with x.d·f16(w.d) into eight float lanes; the mins
// as summs = fma(float32(Σ mn[s]·int16(bsums[2s]+bsums[2s+1])),
// −x.d·f16(w.dmin), summs), the 16-bit pair sums by ADDP on halfwords
// (wrapping as the reference's int16); hsum8 + summs at the end. Each
// weight block's 5-bit values are built once for the T tokens: group 2j
// is qs[32j..]'s low nibbles, 2j+1 their high ones, each with bit g of
// qh[0..31] as its fifth bit. The int32 sums are exact (modulo 2^32, as
// the reference's).
func genQ5K(g *gen) {
	for _, dot := range []bool{false, true} {
		for T := 1; T <= q5KMaxT; T++ {
			genQ5KT(g, dot, T)
		}
	}
}

// q5KMaxT is the most tokens a Q5_K kernel takes (kWide, each token's
// summs beside its accumulators).
const q5KMaxT = 6

func genQ5KT(g *gen, dot bool, T int) {
	r := kLanesStd(T)
	r.xb = append(r.xb[:5:5], "R16") // q4KScalesMins takes R21
	const (
		qsA, qsB   = 0, 1 // qs[32j..32j+31]
		qhA, qhB   = 2, 3 // qh[0..31]
		m0f, m10   = 12, 13
		scLo, scHi = 14, 15 // the eight scales as int32
		mins       = 31     // the eight mins as int16
	)
	r.summs = func(t int) int { return 28 + t }
	if T > 3 {
		kWide(&r, 28, 29, 30)
	}
	g.rowsTStartFrame("q5KRows", "rows", formName(dot), T, r.locals)
	g.movi(m0f, 15)
	g.movi(m10, 0x10)
	g.kLanesStart(r, func(t int) { g.zero(r.summs(t)) })
	g.c("the scales and mins (get_scale_min_k4, as Q4_K's)")
	g.q4KScalesMins("R8", q4KScratch)
	g.p("FMOVD R19, F%d", r.q0)
	g.p("FMOVD R23, F%d", r.q1)
	g.widen8(r.q0, scLo, scHi)
	g.uxtl8h(mins, r.q1)
	g.kLanesClear(r)
	g.p("ADD $16, R8, R12")
	g.ld1b16("R12", 0, qhA, qhB)
	g.p("ADD $48, R8, R12")
	for j := range 4 {
		g.c("qs[%d:%d]", 32*j, 32*j+32)
		g.ld1b16("R12", 32, qsA, qsB)
		for h := range 2 {
			gi := 2*j + h
			g.c("group %d: elements %d..%d, fifth bit qh>>%d", gi, 32*gi, 32*gi+31, gi)
			// y = bit gi of qh moved to bit 4 (and masked, unless USHR
			// left nothing above it), then the nibbles put under it: the
			// low ones by BIT, the high ones by SRI.
			for i, y := range []int{r.y0, r.y1} {
				qs, qh := qsA+i, qhA+i
				switch {
				case gi < 4:
					g.shl16b(y, qh, 4-gi)
				case gi == 4:
					y = qh
				default:
					g.ushr16b(y, qh, gi-4)
				}
				if gi != 7 {
					g.vand([]int{r.y0, r.y1}[i], y, m10)
					y = []int{r.y0, r.y1}[i]
				}
				if h == 0 {
					g.p("VBIT V%d.B16, V%d.B16, V%d.B16", m0f, qs, y)
				} else {
					g.p("VSRI $4, V%d.B16, V%d.B16", qs, y)
				}
			}
			sc := [2]int{scLo + gi/4, gi % 4}
			g.kLanesGroup(dot, r, gi, [2][2]int{sc, sc})
		}
	}
	g.c("per token: summs = fma(imin, -(x.d·f16(w.dmin)), summs); acc[L] = fma(x.d·f16(w.d), lane[L], acc[L])")
	g.p("FMOVS (R8), F%d", r.p0)
	g.o2("fcvtl", r.p0, r.p0) // f16(d), f16(dmin) in lanes 0, 1
	for t := range T {
		g.p("ADD $260, %s, R19", r.xb[t])
		g.ld1("H8", "R19", 0, r.q0, r.q1)
		g.o3("addp.8h", r.q0, r.q0, r.q1)
		g.o3("smull.4s", r.t0, r.q0, mins)
		g.o3("smlal2.4s", r.t0, r.q0, mins)
		g.addv(r.t0, r.t0)
		g.o2("scvtf.s", r.t0, r.t0)
		g.p("FMOVS (%s), F%d", r.xb[t], r.q1)
		g.oe("fmul.e", r.t1, r.p0, r.q1, 0) // x.d·f16(d), x.d·f16(dmin)
		sm := g.kSummsLoad(r, t, qsA)
		g.oe("fmls.es", sm, r.t0, r.t1, 1)
		g.kSummsStore(r, t, qsA)
		g.kLanesFMA(r, t, r.t1)
		g.p("ADD $292, %s, %s", r.xb[t], r.xb[t])
	}
	g.p("ADD $176, R8, R8")
	g.p("SUBS $1, R17, R17")
	g.p("BNE block")
	g.label("store")
	g.kLanesStore(r, func(t int) { g.p("FADDS F%d, F0, F0", g.kSummsLoad(r, t, 1)) })
}

// kLanes are the registers of the K-quant lanes kernels (Q5_K, Q3_K,
// Q2_K) for T tokens: each token's block pointer (xb), a group's values
// (y0:y1), scratch (t0, t1), a token's group of quants (q0:q1), its lane
// sums (p0, p1), and token t's int32 lanes (lLo, lHi) and float
// accumulators (aLo, aHi).
type kLanes struct {
	T                              int
	xb                             []string
	y0, y1, t0, t1, q0, q1, p0, p1 int
	lLo, lHi, aLo, aHi             func(t int) int
	// sgn0 and sgn1 (IQ4_XS; −1: none) hold 0xff where an element of y0
	// and y1 (the levels' magnitudes) stands for a negative level: the
	// token's quants there are negated (wrapping, as VPSIGNB) before the
	// products.
	sgn0, sgn1 int
	// summs (Q5_K; nil: none) is token t's register of the mins' float
	// sum.
	summs func(t int) int
	// Past three tokens (kWide): the first regT tokens' accumulators (and
	// summs) are registers, the others' frame slots of slot bytes
	// (locals in all: the accumulators at 0, the summs at 32), loaded and
	// stored back where they are used.
	regT, slot, locals int
}

// kWideMaxT is the most tokens the Q3_K, Q2_K and IQ4_XS kernels take.
const kWideMaxT = 6

// kWide lays r out for T > 3 tokens: the int32 lanes from V16 up as
// kLanesStd's, the float accumulators (and summs, where r has them) of as
// many tokens as the registers after them (to V27) and extra hold, the
// others' frame slots.
func kWide(r *kLanes, extra ...int) {
	var free []int
	for v := 16 + 2*r.T; v <= 27; v++ {
		free = append(free, v)
	}
	free = append(free, extra...)
	per, slot := 2, 32
	if r.summs != nil {
		per, slot = 3, 48
		r.summs = func(t int) int { return free[3*t+2] }
	}
	r.regT = min(r.T, len(free)/per)
	r.aLo = func(t int) int { return free[per*t] }
	r.aHi = func(t int) int { return free[per*t+1] }
	r.slot, r.locals = slot, slot*(r.T-r.regT)
}

// inRegs reports whether token t's accumulators are registers.
func (r kLanes) inRegs(t int) bool { return r.locals == 0 || t < r.regT }

// kAccLoad returns token t's accumulator registers: aLo, aHi, or y0:y1
// loaded from its frame slot (R15 left pointing at it).
func (g *gen) kAccLoad(r kLanes, t int) (lo, hi int) {
	if r.inRegs(t) {
		return r.aLo(t), r.aHi(t)
	}
	g.kAccLoadAddr(r, t)
	g.ld1("S4", "R15", 0, r.y0, r.y1)
	return r.y0, r.y1
}

// kAccLoadAddr points R15 at token t's frame slot.
func (g *gen) kAccLoadAddr(r kLanes, t int) {
	g.p("MOVD $acc-%d(SP), R15", r.locals-r.slot*(t-r.regT))
}

// kSummsLoad returns token t's summs register: r.summs(t), or V<tmp>
// loaded from its frame slot.
func (g *gen) kSummsLoad(r kLanes, t, tmp int) int {
	if r.inRegs(t) {
		return r.summs(t)
	}
	g.kAccLoadAddr(r, t)
	g.p("FMOVS 32(R15), F%d", tmp)
	return tmp
}

// kSummsStore stores V<tmp> back to token t's slot, if it has one (after
// kSummsLoad).
func (g *gen) kSummsStore(r kLanes, t, tmp int) {
	if !r.inRegs(t) {
		g.p("FMOVS F%d, 32(R15)", tmp)
	}
}

// kAccStore stores y0:y1 back to token t's frame slot, if it has one
// (after kAccLoad).
func (g *gen) kAccStore(r kLanes, t int) {
	if !r.inRegs(t) {
		g.p("VST1 [V%d.S4, V%d.S4], (R15)", r.y0, r.y1)
	}
}

// kLanesStd is the register plan the three kernels share: V4-V11, the
// lanes in V16-V21 and the accumulators in V22-V27.
func kLanesStd(T int) kLanes {
	// The tokens' pointers: R16 is vconst's, R19-R25 Q4_K's and Q5_K's
	// scale decoding's (Q5_K takes R16 for its sixth token).
	return kLanes{T: T, xb: []string{"R9", "R10", "R11", "R13", "R14", "R21"},
		y0: 4, y1: 5, t0: 6, t1: 7, q0: 8, q1: 9, p0: 10, p1: 11,
		lLo: func(t int) int { return 16 + 2*t }, lHi: func(t int) int { return 17 + 2*t },
		aLo: func(t int) int { return 22 + 2*t }, aHi: func(t int) int { return 23 + 2*t },
		sgn0: -1, sgn1: -1}
}

// kLanesGroup adds group gi (elements 32gi..32gi+31, its values in
// y0:y1) to every token's lanes: lane L (< 4) gets the sum of the four
// products 32gi+4L.. times the scale in register sc[0][0], lane
// sc[0][1]; lane L+4 those of 32gi+16+4L.. times sc[1]. The products'
// magnitudes must fit an int16 (|y| ≤ 63): the NEON form adds them
// pairwise from SMULL's.
func (g *gen) kLanesGroup(dot bool, r kLanes, gi int, sc [2][2]int) {
	for tk := range r.T {
		g.p("ADD $%d, %s, R19", 4+32*gi, r.xb[tk])
		g.ld1b16("R19", 0, r.q0, r.q1)
		if r.sgn0 >= 0 {
			g.c("q = (q ^ m) - m: the quants negated (wrapping) under the negative levels")
			for _, p := range [][2]int{{r.q0, r.sgn0}, {r.q1, r.sgn1}} {
				g.p("VEOR V%d.B16, V%d.B16, V%d.B16", p[1], p[0], p[0])
				g.vsub16b(p[0], p[0], p[1])
			}
		}
		if dot {
			g.zero(r.p0)
			g.zero(r.p1)
			g.o3("sdot", r.p0, r.y0, r.q0)
			g.o3("sdot", r.p1, r.y1, r.q1)
		} else {
			g.o3("smull.8h", r.p0, r.y0, r.q0)
			g.o3("smull2.8h", r.p1, r.y0, r.q0)
			g.o2("saddlp.4s", r.p0, r.p0)
			g.o2("saddlp.4s", r.p1, r.p1)
			g.o3("addp.4s", r.p0, r.p0, r.p1)
			g.o3("smull.8h", r.t0, r.y1, r.q1)
			g.o3("smull2.8h", r.t1, r.y1, r.q1)
			g.o2("saddlp.4s", r.t0, r.t0)
			g.o2("saddlp.4s", r.t1, r.t1)
			g.o3("addp.4s", r.p1, r.t0, r.t1)
		}
		g.oe("mla.e", r.lLo(tk), r.p0, sc[0][0], sc[0][1])
		g.oe("mla.e", r.lHi(tk), r.p1, sc[1][0], sc[1][1])
	}
}

// kLanesFMA ends token t's block: its lanes converted and FMA'd with the
// float in lane 0 of V<d> into its accumulators.
func (g *gen) kLanesFMA(r kLanes, t, d int) {
	g.o2("scvtf", r.lLo(t), r.lLo(t))
	g.o2("scvtf", r.lHi(t), r.lHi(t))
	lo, hi := g.kAccLoad(r, t)
	g.oe("fmla.e", lo, r.lLo(t), d, 0)
	g.oe("fmla.e", hi, r.lHi(t), d, 0)
	g.kAccStore(r, t)
}

// kLanesBlockEnd ends a block of the lanes kernels without mins (Q3_K,
// Q2_K's second half, IQ4_XS): per token acc[L] = fma(x.d·f16(w.d),
// lane[L], acc[L]) with w.d at dOff in the block, the token moved to its
// next block; then the weights by bsize, and the block loop's end.
func (g *gen) kLanesBlockEnd(r kLanes, dOff, bsize int) {
	g.c("per token: acc[L] = fma(x.d·f16(w.d), lane[L], acc[L])")
	g.p("MOVHU %d(R8), R19", dOff)
	g.p("FMOVS R19, F%d", r.p0)
	g.p("FCVTHS F%d, F%d", r.p0, r.p0)
	for t := range r.T {
		g.p("FMOVS (%s), F%d", r.xb[t], r.p1)
		g.p("FMULS F%d, F%d, F%d", r.p0, r.p1, r.p1)
		g.kLanesFMA(r, t, r.p1)
		g.p("ADD $292, %s, %s", r.xb[t], r.xb[t])
	}
	g.p("ADD $%d, R8, R8", bsize)
	g.p("SUBS $1, R17, R17")
	g.p("BNE block")
	g.label("store")
}

// kLanesStore writes each token's hsum8 of its accumulators (and then
// whatever extra adds to F0) and ends the row loop.
func (g *gen) kLanesStore(r kLanes, extra func(t int)) {
	g.storeRow(r.T, "R19", func(t int) {
		g.c("token %d, hsum8: (a[l]+a[l+4]), then lanes 0+2 and 1+3, then those two", t)
		lo, hi := g.kAccLoad(r, t)
		g.o3("fadd", 0, lo, hi)
		g.o3("ext8", 1, 0, 0)
		g.o3("fadd", 0, 0, 1)
		g.o2("faddp.s", 0, 0)
		if extra != nil {
			extra(t)
		}
	})
}

// kLanesStart begins a lanes kernel: the row loop, each token's
// accumulators (and clear's) zeroed at the row's start.
func (g *gen) kLanesStart(r kLanes, clear func(t int)) {
	g.kRowStart(r.xb, r.T, false, func() {
		for t := range r.T {
			if !r.inRegs(t) {
				continue
			}
			g.zero(r.aLo(t))
			g.zero(r.aHi(t))
			if clear != nil {
				clear(t)
			}
		}
		if r.locals > 0 {
			g.zero(r.y0)
			g.zero(r.y1)
			for t := r.regT; t < r.T; t++ {
				g.kAccLoadAddr(r, t)
				g.kAccStore(r, t)
				if r.summs != nil {
					g.kSummsStore(r, t, r.y0)
				}
			}
		}
	})
}

// kLanesClear zeroes every token's int32 lanes (at a block's start).
func (g *gen) kLanesClear(r kLanes) {
	for t := range r.T {
		g.zero(r.lLo(t))
		g.zero(r.lHi(t))
	}
}

// widenScales16 sign-extends the sixteen int8 scales in V<src> to int32
// in V<d[0..3]> (scale s in V<d[s/4]>, lane s%4), through tmp.
func (g *gen) widenScales16(src, tmp int, d [4]int) {
	g.o2("sxtl.8h", tmp, src)
	g.o2("sxtl2.8h", src, src)
	g.o2("sxtl.4s", d[0], tmp)
	g.o2("sxtl2.4s", d[1], tmp)
	g.o2("sxtl.4s", d[2], src)
	g.o2("sxtl2.4s", d[3], src)
}

// kScale16 is where widenScales16 leaves sub-block scale s of kScales16.
func kScale16(s int) [2]int { return [2]int{kScales16[s/4], s % 4} }

// kScales16 holds the Q3_K and Q2_K kernels' sixteen scales as int32.
var kScales16 = [4]int{14, 15, 28, 29}

// genQ3K writes q3KRows<T><form>: dotQ3KRef row by row for T = 1 to 3
// tokens, in kLanes8's lanes with the sixteen scales (lane L of group g
// sums sc[2g] times the four products 32g+4L.., lane L+4 sc[2g+1] times
// those of 32g+16+4L..), converted and FMA'd with x.d·f16(w.d); hsum8 at
// the end. Group g = 4j+k takes bits 2k of qs[32j..32j+31] and bit g of
// hmask: ((qs>>2k)&3 | (hmask>>g&1)<<2) − 4. The scales, 4 low bits from
// bytes 0..7 (low nibbles, then high) and 2 high bits from bytes 8..11
// (shifted per scale by USHL), less 32, are unpacked once a block.
func genQ3K(g *gen) {
	for _, dot := range []bool{false, true} {
		for T := 1; T <= kWideMaxT; T++ {
			genQ3KT(g, dot, T)
		}
	}
}

func genQ3KT(g *gen, dot bool, T int) {
	r := kLanesStd(T)
	if T > 3 {
		kWide(&r, 30, 31)
	}
	g.rowsTStartFrame("q3KRows", "rows", formName(dot), T, r.locals)
	const (
		qsA, qsB = 0, 1   // qs[32j..32j+31]
		hmA, hmB = 2, 3   // hmask, inverted
		m03, bit = 12, 13 // bit: 1 << g in every byte
	)
	g.movi(m03, 3)
	g.kLanesStart(r, nil)
	g.c("the sixteen scales, less 32")
	g.p("FMOVD %d(R8), F%d", q3KScalesOff, r.y0)
	g.p("FMOVS %d(R8), F%d", q3KScalesOff+8, r.y1)
	g.movi(r.t0, 15)
	g.vand(r.t1, r.y0, r.t0)
	g.ushr16b(r.y0, r.y0, 4)
	g.zip1d(r.y0, r.t1, r.y0)
	g.p("VDUP V%d.S[0], V%d.S4", r.y1, r.y1)
	g.vconst(r.t0, 0xfefefefe00000000, 0xfafafafafcfcfcfc)
	g.o3("ushl", r.y1, r.y1, r.t0)
	g.vand(r.y1, r.y1, m03)
	g.shl16b(r.y1, r.y1, 4)
	g.vorr(r.y0, r.y0, r.y1)
	g.movi(r.t0, 32)
	g.vsub16b(r.y0, r.y0, r.t0)
	g.widenScales16(r.y0, r.t1, kScales16)
	g.kLanesClear(r)
	g.ld1b16("R8", 0, hmA, hmB)
	// ((qs >> 2k) & 3 | h << 2) − 4 is the two bits with 0xfc above them
	// where h is clear: CMTST on the inverted hmask gives those masks, and
	// BIT puts the two bits under them.
	g.o2("mvn.16b", hmA, hmA)
	g.o2("mvn.16b", hmB, hmB)
	g.p("ADD $%d, R8, R12", q3KQsOff)
	for gi := range 8 {
		j, k := gi/4, gi%4
		if k == 0 {
			g.c("qs[%d:%d]", 32*j, 32*j+32)
			g.ld1b16("R12", 32, qsA, qsB)
		}
		g.c("group %d: elements %d..%d, bits %d of qs, bit %d of hmask", gi, 32*gi, 32*gi+31, 2*k, gi)
		g.movi(bit, 1<<gi)
		for i, y := range []int{r.y0, r.y1} {
			qs, hm, t := qsA+i, hmA+i, r.t0+i
			src := qs
			if k > 0 {
				g.ushr16b(t, qs, 2*k)
				src = t
			}
			g.o3("cmtst", y, hm, bit)
			g.p("VBIT V%d.B16, V%d.B16, V%d.B16", m03, src, y)
		}
		g.kLanesGroup(dot, r, gi, [2][2]int{kScale16(2 * gi), kScale16(2*gi + 1)})
	}
	g.kLanesBlockEnd(r, q3KDOff, q3KBlock)
	g.kLanesStore(r, nil)
}

// Q3_K's block: hmask @0, qs @32, scales @96, d @108, 110 bytes.
const q3KQsOff, q3KScalesOff, q3KDOff, q3KBlock = 32, 96, 108, 110

// genQ2K writes q2KRows<T><form>: dotQ2KRef (the Q2KLanes order) row by
// row for T = 1 to 3 tokens: per block each token's lanes first take the
// mins, acc[L] = fma(−x.d·f16(w.dmin), float32(m[2L]·bsums[2L] +
// m[2L+1]·bsums[2L+1]), acc[L]), then kLanes8's lanes with the sixteen
// scales (low nibbles of bytes 0..15), acc[L] = fma(x.d·f16(w.d),
// float32(lane[L]), acc[L]); hsum8 at the end. Group g = 4j+k is bits 2k
// of qs[32j..32j+31].
func genQ2K(g *gen) {
	for _, dot := range []bool{false, true} {
		for T := 1; T <= kWideMaxT; T++ {
			genQ2KT(g, dot, T)
		}
	}
}

func genQ2KT(g *gen, dot bool, T int) {
	r := kLanesStd(T)
	if T > 3 {
		kWide(&r, 30, 31, 13)
	}
	g.rowsTStartFrame("q2KRows", "rows", formName(dot), T, r.locals)
	const (
		qsA, qsB = 0, 1 // qs[32j..32j+31]
		mLo, mHi = 2, 3 // the sixteen mins as int16
		m03      = 12
	)
	g.movi(m03, 3)
	g.kLanesStart(r, nil)
	g.c("the sixteen scales (int32) and mins (int16)")
	g.ld1b16("R8", 0, r.y0)
	g.ushr16b(r.y1, r.y0, 4)
	g.uxtl8h(mLo, r.y1)
	g.p("VUXTL2 V%d.B16, V%d.H8", r.y1, mHi)
	g.movi(r.t0, 15)
	g.vand(r.y0, r.y0, r.t0)
	g.widenScales16(r.y0, r.t1, kScales16)
	g.kLanesClear(r)
	g.c("per token: acc[L] = fma(-(x.d·f16(w.dmin)), m[2L]·bs[2L] + m[2L+1]·bs[2L+1], acc[L])")
	g.p("MOVHU %d(R8), R19", q2KDOff+2)
	g.p("FMOVS R19, F%d", r.p0)
	g.p("FCVTHS F%d, F%d", r.p0, r.p0)
	for t := range T {
		g.p("ADD $260, %s, R19", r.xb[t])
		g.ld1("H8", "R19", 0, r.q0, r.q1)
		g.o3("smull.4s", r.t0, r.q0, mLo)
		g.o3("smull2.4s", r.t1, r.q0, mLo)
		g.o3("addp.4s", r.t0, r.t0, r.t1)
		g.o3("smull.4s", r.t1, r.q1, mHi)
		g.o3("smull2.4s", r.q0, r.q1, mHi)
		g.o3("addp.4s", r.t1, r.t1, r.q0)
		g.o2("scvtf", r.t0, r.t0)
		g.o2("scvtf", r.t1, r.t1)
		g.p("FMOVS (%s), F%d", r.xb[t], r.p1)
		g.p("FMULS F%d, F%d, F%d", r.p0, r.p1, r.p1)
		g.p("FNEGS F%d, F%d", r.p1, r.p1)
		lo, hi := g.kAccLoad(r, t)
		g.oe("fmla.e", lo, r.t0, r.p1, 0)
		g.oe("fmla.e", hi, r.t1, r.p1, 0)
		g.kAccStore(r, t)
	}
	g.p("ADD $%d, R8, R12", q2KQsOff)
	for gi := range 8 {
		j, k := gi/4, gi%4
		if k == 0 {
			g.c("qs[%d:%d]", 32*j, 32*j+32)
			g.ld1b16("R12", 32, qsA, qsB)
		}
		g.c("group %d: elements %d..%d, bits %d of qs", gi, 32*gi, 32*gi+31, 2*k)
		for i, y := range []int{r.y0, r.y1} {
			src := qsA + i
			if k > 0 {
				g.ushr16b(y, src, 2*k)
				src = y
			}
			g.vand(y, src, m03)
		}
		g.kLanesGroup(dot, r, gi, [2][2]int{kScale16(2 * gi), kScale16(2*gi + 1)})
	}
	g.kLanesBlockEnd(r, q2KDOff, q2KBlock)
	g.kLanesStore(r, nil)
}

// Q2_K's block: scales @0, qs @16, d @80, dmin @82, 84 bytes.
const q2KQsOff, q2KDOff, q2KBlock = 16, 80, 84

// genIQ4XS writes iq4XSRows<T><form>: dotIQ4XSRef row by row for T = 1
// to 3 tokens, in kLanes8's lanes with each sub-block's scale on both
// halves of its group. Group s is the 16 bytes qs[16s..16s+15], their low
// nibbles elements 0..15 and high nibbles 16..31, each a level of
// kvalues_iq4nl; as ggml's mul_add_epi8 the products are |level| times
// the token's quant negated (wrapping) where the level is negative, so
// TBL gives the magnitudes and a sign mask, and the tokens' quants are
// flipped by the mask. The eight 6-bit scales, less 32, are unpacked once a
// block in general registers (the nibbles of scales_l and the 2-bit fields
// of scales_h spread to a byte each).
func genIQ4XS(g *gen) {
	for _, dot := range []bool{false, true} {
		for T := 1; T <= kWideMaxT; T++ {
			genIQ4XST(g, dot, T)
		}
	}
}

func genIQ4XST(g *gen, dot bool, T int) {
	r := kLanesStd(T)
	if T > 3 {
		kWide(&r, 29, 30, 31)
	}
	g.rowsTStartFrame("iq4XSRows", "rows", formName(dot), T, r.locals)
	r.sgn0, r.sgn1 = 2, 3
	const (
		raw        = 0 // a group's 16 bytes
		m0f        = 12
		mag, neg   = 13, 14 // |kvalues_iq4nl|, and 0xff where negative
		scLo, scHi = 15, 28 // the eight scales as int32
	)
	var mags, negs [16]int8
	for i, v := range iq4nlLevels {
		mags[i] = v
		if v < 0 {
			mags[i], negs[i] = -v, -1
		}
	}
	g.movi(m0f, 15)
	g.vconst(mag, bytesDword(mags[:8]), bytesDword(mags[8:]))
	g.vconst(neg, bytesDword(negs[:8]), bytesDword(negs[8:]))
	g.kLanesStart(r, nil)
	g.c("the scales: nibble s of scales_l | (scales_h>>2s & 3)<<4, less 32")
	g.p("MOVWU 4(R8), R19")
	g.p("ORR R19<<16, R19, R19")
	g.p("AND $0x0000ffff0000ffff, R19, R19")
	g.p("ORR R19<<8, R19, R19")
	g.p("AND $0x00ff00ff00ff00ff, R19, R19")
	g.p("ORR R19<<4, R19, R19")
	g.p("AND $0x0f0f0f0f0f0f0f0f, R19, R19")
	g.p("MOVHU 2(R8), R20")
	g.p("ORR R20<<24, R20, R20")
	g.p("AND $0x000000ff000000ff, R20, R20")
	g.p("ORR R20<<12, R20, R20")
	g.p("AND $0x000f000f000f000f, R20, R20")
	g.p("ORR R20<<6, R20, R20")
	g.p("AND $0x0303030303030303, R20, R20")
	g.p("ORR R20<<4, R19, R19")
	g.p("FMOVD R19, F%d", r.y0)
	g.movi(r.t0, 32)
	g.vsub16b(r.y0, r.y0, r.t0)
	g.o2("sxtl.8h", r.y0, r.y0)
	g.o2("sxtl.4s", scLo, r.y0)
	g.o2("sxtl2.4s", scHi, r.y0)
	g.kLanesClear(r)
	g.p("ADD $%d, R8, R12", iq4XSQsOff)
	for gi := range 8 {
		g.c("group %d: qs[%d:%d]", gi, 16*gi, 16*gi+16)
		g.ld1b16("R12", 16, raw)
		g.vand(r.t0, raw, m0f)
		g.ushr16b(r.t1, raw, 4)
		g.o3("tbl", r.y0, mag, r.t0)
		g.o3("tbl", r.y1, mag, r.t1)
		g.o3("tbl", r.sgn0, neg, r.t0)
		g.o3("tbl", r.sgn1, neg, r.t1)
		sc := [2]int{[2]int{scLo, scHi}[gi/4], gi % 4}
		g.kLanesGroup(dot, r, gi, [2][2]int{sc, sc})
	}
	g.kLanesBlockEnd(r, 0, iq4XSBlock)
	g.kLanesStore(r, nil)
}

// IQ4_XS's block: d @0, scales_h @2, scales_l @4, qs @8, 136 bytes.
const iq4XSQsOff, iq4XSBlock = 8, 136

// ---- activation converters ----------------------------------------------

func genAct(g *gen) {
	f := fn{name: "quantizeQ8_0NEON", args: []string{"dst", "src", "nb"},
		doc: "func quantizeQ8_0NEON(dst *byte, src *float32, nb int)"}
	g.text(f)
	g.loadArgs(f, "R0", "R1", "R2")
	const (
		two31, intMin = 29, 28
		id            = 26
	)
	g.p("MOVW $0x4f000000, R9") // 2^31
	g.dupR(two31, "R9")
	g.p("MOVW $0x80000000, R9")
	g.dupR(intMin, "R9")
	g.p("MOVW $0x42fe0000, R9") // 127
	g.p("FMOVS R9, F30")
	g.p("CBZ R2, done")
	g.label("block")
	g.ld1("S4", "R1", 64, 0, 1, 2, 3)
	g.ld1("S4", "R1", 64, 4, 5, 6, 7)
	g.c("amax over the block, NaNs left out as the reference's a > amax does")
	for k := range 8 {
		g.o2("fabs", 8+k, k)
		g.o3("fcmeq", 16+k, 8+k, 8+k)
		g.vand(8+k, 8+k, 16+k)
	}
	g.o3("fmax", 8, 8, 9)
	g.o3("fmax", 10, 10, 11)
	g.o3("fmax", 12, 12, 13)
	g.o3("fmax", 14, 14, 15)
	g.o3("fmax", 8, 8, 10)
	g.o3("fmax", 12, 12, 14)
	g.o3("fmax", 8, 8, 12)
	g.o2("fmaxv", 8, 8)
	g.c("d = f16(amax/127); id = 127/amax, or 0 for an all-zero block")
	g.p("FDIVS F30, F8, F9")
	g.p("FCVTSH F9, F9")
	g.p("FMOVS F9, R10")
	g.p("MOVH.P R10, 2(R0)")
	g.p("FDIVS F8, F30, F%d", id)
	g.p("FCMPS $(0.0), F8")
	g.p("FMOVS ZR, F31")
	g.p("FCSELS EQ, F31, F%d, F%d", id, id)
	g.c("q = round-half-even(x·id); NaN or |x·id| ≥ 2^31 gives -128 as cvtps2dq's indefinite does")
	for k := range 8 {
		g.oe("fmul.e", k, k, id, 0)
		g.o3("facgt", 16+k, two31, k)
		g.o2("fcvtns", k, k)
		g.bif(k, intMin, 16+k)
	}
	g.o2("sqxtn.4h", 16, 0)
	g.o2("sqxtn2.8h", 16, 1)
	g.o2("sqxtn.4h", 17, 2)
	g.o2("sqxtn2.8h", 17, 3)
	g.o2("sqxtn.4h", 18, 4)
	g.o2("sqxtn2.8h", 18, 5)
	g.o2("sqxtn.4h", 19, 6)
	g.o2("sqxtn2.8h", 19, 7)
	g.o2("sqxtn.8b", 20, 16)
	g.o2("sqxtn2.16b", 20, 17)
	g.o2("sqxtn.8b", 21, 18)
	g.o2("sqxtn2.16b", 21, 19)
	g.p("VST1.P [V20.B16, V21.B16], 32(R0)")
	g.p("SUBS $1, R2, R2")
	g.p("BNE block")
	g.label("done")
	g.p("RET")

	f = fn{name: "f32ToF16sNEON", args: []string{"dst", "src", "n"},
		doc: "func f32ToF16sNEON(dst *uint16, src *float32, n int)"}
	g.text(f)
	g.loadArgs(f, "R0", "R1", "R2")
	g.p("LSR $3, R2, R2")
	g.p("CBZ R2, done")
	g.label("loop")
	g.ld1("S4", "R1", 32, 0, 1)
	g.o2("fcvtn", 2, 0)
	g.o2("fcvtn2", 2, 1)
	g.p("VST1.P [V2.H8], 16(R0)")
	g.p("SUBS $1, R2, R2")
	g.p("BNE loop")
	g.label("done")
	g.p("RET")

	f = fn{name: "f16ToF32sNEON", args: []string{"dst", "src", "n"},
		doc: "func f16ToF32sNEON(dst *float32, src *uint16, n int)"}
	g.text(f)
	g.loadArgs(f, "R0", "R1", "R2")
	g.p("LSR $3, R2, R2")
	g.p("CBZ R2, done")
	g.label("loop")
	g.ld1("H8", "R1", 16, 0)
	g.o2("fcvtl", 1, 0)
	g.o2("fcvtl2", 2, 0)
	g.p("VST1.P [V1.S4, V2.S4], 32(R0)")
	g.p("SUBS $1, R2, R2")
	g.p("BNE loop")
	g.label("done")
	g.p("RET")
}

// genQ8K writes quantizeQ8KNEON: quantizeRowQ8K block by block. The value
// of largest magnitude is found from the largest and smallest values (NaNs
// read as 0, as the reference's a > amax skips them); only when both +amax
// and -amax occur does a scalar scan find which comes first. The quants
// are nearestInt's own operations (the add of 1.5·2^23, the mask and the
// subtraction, then min 127), so out-of-range and NaN products give its
// bits too; the bytes keep the low 8 bits, as byte(q) does.
func genQ8K(g *gen) {
	f := fn{name: "quantizeQ8KNEON", args: []string{"dst", "src", "nb"},
		doc: "func quantizeQ8KNEON(dst *byte, src *float32, nb int)"}
	g.text(f)
	g.loadArgs(f, "R0", "R1", "R2")
	const (
		smax, smin  = 24, 25
		magic, mant = 20, 21
		half, q127  = 22, 23
		iscale, bs0 = 29, 16
	)
	g.p("MOVW $0x4b400000, R9") // 12582912 = 1.5·2^23
	g.dupR(magic, "R9")
	g.p("MOVW $0x007fffff, R9")
	g.dupR(mant, "R9")
	g.p("MOVW $0x00400000, R9")
	g.dupR(half, "R9")
	g.p("MOVW $127, R9")
	g.dupR(q127, "R9")
	g.p("CBZ R2, done")
	g.label("block")
	g.c("the largest and smallest values, NaNs as 0")
	g.p("MOVD R1, R10")
	g.zero(smax)
	g.zero(smin)
	g.p("MOVD $8, R11")
	g.label("scan")
	g.ld1("S4", "R10", 64, 0, 1, 2, 3)
	g.ld1("S4", "R10", 64, 4, 5, 6, 7)
	for k := range 8 {
		g.o3("fcmeq", 8+k, k, k)
		g.vand(k, k, 8+k)
	}
	for k := 0; k < 8; k += 2 {
		g.o3("fmax", 8+k, k, k+1)
		g.o3("fmin", 9+k, k, k+1)
	}
	g.o3("fmax", 8, 8, 10)
	g.o3("fmax", 12, 12, 14)
	g.o3("fmin", 9, 9, 11)
	g.o3("fmin", 13, 13, 15)
	g.o3("fmax", 8, 8, 12)
	g.o3("fmin", 9, 9, 13)
	g.o3("fmax", smax, smax, 8)
	g.o3("fmin", smin, smin, 9)
	g.p("SUBS $1, R11, R11")
	g.p("BNE scan")
	g.o2("fmaxv", smax, smax)
	g.o2("fminv", smin, smin)
	g.p("FNEGS F%d, F26", smin)
	g.p("FMAXS F26, F%d, F27", smax) // amax
	g.p("FCMPS $(0.0), F27")
	g.p("BEQ zero")
	g.c("max: +amax or -amax, whichever occurs; the first of them if both do")
	g.p("FCMPS F26, F%d", smax)
	g.p("BEQ tie")
	g.p("FCSELS GT, F%d, F%d, F28", smax, smin)
	g.p("B scale")
	g.label("tie")
	g.p("MOVD R1, R12")
	g.label("first")
	g.p("FMOVS.P 4(R12), F0")
	g.p("FABSS F0, F1")
	g.p("FCMPS F27, F1")
	g.p("BNE first")
	g.p("FMOVS F0, F28")
	g.label("scale")
	g.c("iscale = -127/max; d = 1/iscale")
	g.p("MOVW $0xc2fe0000, R9")
	g.p("FMOVS R9, F%d", iscale)
	g.p("FDIVS F28, F%d, F%d", iscale, iscale)
	g.p("FMOVS $(1.0), F30")
	g.p("FDIVS F%d, F30, F30", iscale)
	g.p("FMOVS.P F30, 4(R0)")
	g.p("VDUP V%d.S[0], V%d.S4", iscale, iscale)
	g.p("MOVD R1, R10")
	for j := range 16 {
		g.c("elements %d..%d", 16*j, 16*j+15)
		g.ld1("S4", "R10", 64, 0, 1, 2, 3)
		for k := range 4 {
			g.o3("fmul", k, k, iscale)
			g.o3("fadd", k, k, magic)
			g.vand(k, k, mant)
			g.o3("sub.4s", k, k, half)
			g.o3("smin.4s", k, k, q127)
		}
		g.o2("xtn.4h", 4, 0)
		g.o2("xtn2.8h", 4, 1)
		g.o2("xtn.4h", 5, 2)
		g.o2("xtn2.8h", 5, 3)
		g.o2("xtn.8b", 6, 4)
		g.o2("xtn2.16b", 6, 5)
		g.p("VST1.P [V6.B16], 16(R0)")
		g.o2("saddlv.16b", 7, 6)
		g.p("VMOV V7.H[0], V%d.H[%d]", bs0+j/8, j%8)
	}
	g.p("VST1.P [V%d.H8, V%d.H8], 32(R0)", bs0, bs0+1)
	g.p("B next")
	g.label("zero")
	for k := range 4 {
		g.zero(k)
	}
	g.p("VST1.P [V0.B16, V1.B16, V2.B16, V3.B16], 64(R0)")
	g.p("VST1.P [V0.B16, V1.B16, V2.B16, V3.B16], 64(R0)")
	g.p("VST1.P [V0.B16, V1.B16, V2.B16, V3.B16], 64(R0)")
	g.p("VST1.P [V0.B16, V1.B16, V2.B16, V3.B16], 64(R0)")
	g.p("VST1.P [V0.B16, V1.B16], 32(R0)")
	g.p("MOVW.P ZR, 4(R0)")
	g.label("next")
	g.p("ADD $1024, R1, R1")
	g.p("SUBS $1, R2, R2")
	g.p("BNE block")
	g.label("done")
	g.p("RET")
}

// ---- F32 rows and the attention vector kernels --------------------------

// genVec writes f32Rows1NEON (dotF32Generic and dotRowsF32Generic without
// their tails: the F16 kernel's accumulators and reduction on float32
// data), axpyF32NEON, axpyRoundF16NEON and scaleRoundF16NEON.
func genVec(g *gen) {
	acc := [8]int{16, 17, 18, 19, 20, 21, 22, 23}
	g.floatRows1Start("f32Rows1NEON", acc)
	g.ld1("S4", "R6", 64, 0, 1, 2, 3)
	g.ld1("S4", "R6", 64, 4, 5, 6, 7)
	g.ld1("S4", "R7", 64, 24, 25, 26, 27)
	g.ld1("S4", "R7", 64, 28, 29, 30, 31)
	for k := range 8 {
		g.fmla(acc[k], k, 24+k)
	}
	g.floatRows1End(acc, g.f16Reduce)

	for _, round := range []bool{false, true} {
		name := "axpyF32NEON"
		if round {
			name = "axpyRoundF16NEON"
		}
		f := fn{name: name, args: []string{"y", "x", "n"}, frame: 28,
			doc: "func " + name + "(y, x *float32, n int, a float32)"}
		g.text(f)
		g.loadArgs(f, "R0", "R1", "R2")
		g.p("FMOVS a+24(FP), F31")
		g.p("LSR $3, R2, R2")
		g.p("CBZ R2, done")
		g.label("loop")
		g.ld1("S4", "R0", 0, 0, 1)
		g.ld1("S4", "R1", 32, 2, 3)
		g.oe("fmla.e", 0, 2, 31, 0)
		g.oe("fmla.e", 1, 3, 31, 0)
		if round {
			g.o2("fcvtn", 4, 0)
			g.o2("fcvtn2", 4, 1)
			g.o2("fcvtl", 0, 4)
			g.o2("fcvtl2", 1, 4)
		}
		g.p("VST1.P [V0.S4, V1.S4], 32(R0)")
		g.p("SUBS $1, R2, R2")
		g.p("BNE loop")
		g.label("done")
		g.p("RET")
	}

	f := fn{name: "scaleRoundF16NEON", args: []string{"y", "n"}, frame: 20,
		doc: "func scaleRoundF16NEON(y *float32, n int, s float32)"}
	g.text(f)
	g.loadArgs(f, "R0", "R1")
	g.p("FMOVS s+16(FP), F31")
	g.p("LSR $3, R1, R1")
	g.p("CBZ R1, done")
	g.label("loop")
	g.ld1("S4", "R0", 0, 0, 1)
	g.oe("fmul.e", 0, 0, 31, 0)
	g.oe("fmul.e", 1, 1, 31, 0)
	g.o2("fcvtn", 4, 0)
	g.o2("fcvtn2", 4, 1)
	g.o2("fcvtl", 0, 4)
	g.o2("fcvtl2", 1, 4)
	g.p("VST1.P [V0.S4, V1.S4], 32(R0)")
	g.p("SUBS $1, R1, R1")
	g.p("BNE loop")
	g.label("done")
	g.p("RET")
}

// ---- -stats: instruction counts for docs/performance.md -----------------

// class sorts an instruction into the issue classes the arm64 speed
// estimate uses (docs/performance.md): "V" any of the four 128-bit vector
// pipes, "V02" and "V13" one of two (multiplies and conversions; shifts,
// widening pairwise adds, narrows and reductions), "L" one 128-bit load,
// "S" a store, "I" integer and branch work (not a bottleneck there).
func class(line string) map[string]int {
	line = strings.TrimSpace(line)
	if m := regexp.MustCompile(`^WORD \$0x[0-9a-f]+ // (\S+)`).FindStringSubmatch(line); m != nil {
		switch m[1] {
		case "smull", "smull2", "smlal", "smlal2", "mul", "mla", "fcvtl", "fcvtl2", "fcvtn", "fcvtn2", "scvtf", "fcvtns":
			return map[string]int{"V02": 1}
		case "sadalp", "saddlp", "sxtl", "sxtl2", "uxtl", "uxtl2", "shl", "ushr", "ushl", "shll", "shll2", "sqxtn", "sqxtn2", "xtn", "xtn2", "addv", "saddlv":
			return map[string]int{"V13": 1}
		}
		return map[string]int{"V": 1}
	}
	op := strings.Fields(line)[0]
	switch {
	case op == "VLD1" || op == "VLD1.P":
		if strings.Contains(line, "[") {
			return map[string]int{"L": strings.Count(line, ",")}
		}
		return map[string]int{"L": 1, "V": 1} // one lane
	case op == "VLD1R" || op == "VLD1R.P":
		return map[string]int{"L": 1, "V": 1} // one element to every lane
	case strings.HasPrefix(op, "VST1"):
		return map[string]int{"S": strings.Count(line, ",")}
	case op == "VUSHR" || op == "VSHL" || op == "VSRI" || op == "VSLI" || op == "VUXTL" || op == "VUXTL2" || op == "VADDV":
		return map[string]int{"V13": 1}
	case strings.HasPrefix(op, "V"):
		return map[string]int{"V": 1}
	case op == "FCVTHS" || op == "FDIVS":
		return map[string]int{"V02": 1}
	case (strings.HasPrefix(op, "FMOVS") || strings.HasPrefix(op, "FMOVD")) && strings.Contains(line, "("):
		if strings.HasPrefix(strings.Fields(line)[1], "F") {
			return map[string]int{"S": 1}
		}
		return map[string]int{"L": 1}
	case strings.HasPrefix(op, "F"):
		return map[string]int{"V": 1}
	case strings.TrimSuffix(op, ".P") == "MOVHU" || strings.TrimSuffix(op, ".P") == "MOVWU":
		return map[string]int{"L": 1}
	}
	return map[string]int{"I": 1}
}

// printStats prints, for each kernel in the file, the instructions of its
// innermost loop (the last label before the first backward branch), by
// class.
func printStats(file, text string) {
	fmt.Printf("%s\n", file)
	for _, part := range strings.Split(text, "\nTEXT ·")[1:] {
		name := part[:strings.Index(part, "(")]
		lines := strings.Split(part, "\n")
		var label string
		start := -1
		for i, l := range lines {
			if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, "\t") {
				label, start = strings.TrimSuffix(l, ":"), i
			}
			if start >= 0 && strings.TrimSpace(l) == "BNE "+label {
				n := map[string]int{}
				for _, b := range lines[start+1 : i] {
					if b = strings.TrimSpace(b); b == "" || strings.HasPrefix(b, "//") {
						continue
					}
					for k, v := range class(b) {
						n[k] += v
					}
				}
				var keys []string
				for k := range n {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				var f []string
				for _, k := range keys {
					f = append(f, fmt.Sprintf("%s %d", k, n[k]))
				}
				fmt.Printf("  %-20s loop %-6s %s\n", name, label, strings.Join(f, ", "))
				break
			}
		}
	}
}

// genQ8Lanes writes q8_0LanesRows1<form>: dotQ8_0LanesGeneric row by row
// for one token. Per block, lane l of the eight sums the four products
// 4l..4l+3 (what SDOT's lanes hold; the NEON form adds them up pairwise
// from SMULL's), converted and FMA'd with f16(w.d)·f16(x.d) into float
// lane l; hsum8 at the end.
func genQ8Lanes(g *gen) {
	for _, dot := range []bool{false, true} {
		form := "NEON"
		if dot {
			form = "Dot"
		}
		name := "q8_0LanesRows1" + form
		f := fn{name: name, args: []string{"w", "wstride", "rows", "x", "nb", "out"},
			doc: "func " + name + "(w *byte, wstride, rows int, x *byte, nb int, out *float32)"}
		g.text(f)
		g.loadArgs(f, "R0", "R1", "R2", "R3", "R4", "R5")
		const aLo, aHi = 16, 17
		g.label("row")
		g.p("MOVD R0, R6")
		g.p("MOVD R3, R7")
		g.p("MOVD R4, R8")
		g.zero(aLo)
		g.zero(aHi)
		g.p("CBZ R8, done")
		g.label("block")
		g.p("MOVHU.P 2(R6), R9")
		g.p("MOVHU.P 2(R7), R10")
		g.ld1b16("R6", 32, 0, 1)
		g.ld1b16("R7", 32, 2, 3)
		g.p("FMOVS R9, F20")
		g.p("FMOVS R10, F21")
		g.p("FCVTHS F20, F20")
		g.p("FCVTHS F21, F21")
		g.p("FMULS F21, F20, F20")
		for i, p := range []int{4, 5} {
			a, b := i, 2+i
			if dot {
				g.zero(p)
				g.o3("sdot", p, a, b)
				continue
			}
			g.o3("smull.8h", 6, a, b)
			g.o3("smull2.8h", 7, a, b)
			g.o2("saddlp.4s", 6, 6)
			g.o2("saddlp.4s", 7, 7)
			g.o3("addp.4s", p, 6, 7)
		}
		g.o2("scvtf", 4, 4)
		g.o2("scvtf", 5, 5)
		g.oe("fmla.e", aLo, 4, 20, 0)
		g.oe("fmla.e", aHi, 5, 20, 0)
		g.p("SUBS $1, R8, R8")
		g.p("BNE block")
		g.label("done")
		g.c("hsum8: (a[l]+a[l+4]), then lanes 0+2 and 1+3, then those two")
		g.o3("fadd", 0, aLo, aHi)
		g.o3("ext8", 1, 0, 0)
		g.o3("fadd", 0, 0, 1)
		g.o2("faddp.s", 0, 0)
		g.p("FMOVS.P F0, 4(R5)")
		g.p("ADD R1, R0, R0")
		g.p("SUBS $1, R2, R2")
		g.p("BNE row")
		g.p("RET")
	}
}

// ---- Q5_0, Q4_1 and Q5_1: the lanes order -------------------------------

// q32Lanes is a 32-element block type dotted in the lanes order (qlanes.go)
// row by row: its block's bytes, the offset of its quants' high bits (0:
// none), whether it has an offset m (and so Q8_1 activations, whose s the
// kernel takes) and whether its 5-bit quants are signed (minus 16).
type q32Lanes struct {
	name          string
	bsize, qh     int
	min, signed16 bool
}

var q32LanesTypes = []q32Lanes{
	{name: "q5_0", bsize: 22, qh: 2, signed16: true},
	{name: "q4_1", bsize: 20, min: true},
	{name: "q5_1", bsize: 24, qh: 4, min: true},
}

// genQ32Lanes writes <type>RowsT<T><form> for Q5_0, Q4_1 and Q5_1, T = 1
// to 8 tokens against each row (Q4_1 and Q5_1 up to 4 in the NEON form):
// per block the row's quants are unpacked once (the nibbles, and from
// the 32 high bits a byte each by TBL and CMTST) for all T tokens; lane l
// of a (row, token) pair's eight sums the four products 4l..4l+3 (SDOT's
// lanes; the NEON form adds SMULL's up pairwise), converted and FMA'd with f16(w.d)·f16(x.d) into float lane
// l, and for Q4_1 and Q5_1 summs = fma(f16(w.m), f16(x.s), summs); at the
// end hsum8 (+ summs): dotQ5_0Generic and dotMinGeneric exactly.
//
// Past four tokens (Q5_0 in both forms, Q4_1 and Q5_1 in the SDOT form)
// the accumulators fill V16-V31, and the high bits' TBL indices and bit
// masks are loaded again every block (q32LanesConsts) into registers the
// tokens' work reuses. From two tokens on, Q4_1's and Q5_1's summs live
// in the lanes of vectors: per block each token's f16(x.s) goes into lane
// t of V11's halfwords, and after the tokens an FCVTL and an FMLA by
// element (f16(w.m)) for each four tokens do their fma at once, the same
// fused operation in each lane.
func genQ32Lanes(g *gen) {
	for _, ty := range q32LanesTypes {
		if ty.qh > 0 {
			lo, hi := ty.qhIndex()
			fmt.Fprintf(&g.b, `
// %[1]sLanesConsts: the TBL indices that spread the block's qh bytes 0,1
// and 2,3 (bytes %[2]d-%[3]d of its first eight) eight times each, and
// 1 << (j %% 8) in byte j.
DATA %[1]sLanesConsts<>+0(SB)/8, $0x%016[4]x
DATA %[1]sLanesConsts<>+8(SB)/8, $0x%016[5]x
DATA %[1]sLanesConsts<>+16(SB)/8, $0x%016[6]x
DATA %[1]sLanesConsts<>+24(SB)/8, $0x%016[7]x
DATA %[1]sLanesConsts<>+32(SB)/8, $0x8040201008040201
DATA %[1]sLanesConsts<>+40(SB)/8, $0x8040201008040201
GLOBL %[1]sLanesConsts<>(SB), RODATA|NOPTR, $48
`, ty.name, ty.qh, ty.qh+3, lo[0], lo[1], hi[0], hi[1])
		}
	}
	for _, ty := range q32LanesTypes {
		for _, dot := range []bool{false, true} {
			for T := 1; T <= ty.maxT(dot); T++ {
				genQ32LanesT(g, ty, dot, T)
			}
		}
	}
}

// qhIndex is the TBL indices (two doublewords each) that spread the
// block's qh bytes 0,1 (lo) and 2,3 (hi) eight times each, as they sit in
// a register loaded with the block's first eight bytes.
func (ty q32Lanes) qhIndex() (lo, hi [2]uint64) {
	rep := func(b int) uint64 { return 0x0101010101010101 * uint64(b) }
	return [2]uint64{rep(ty.qh), rep(ty.qh + 1)}, [2]uint64{rep(ty.qh + 2), rep(ty.qh + 3)}
}

// maxT is the most tokens a pass of the type's kernels takes in the SDOT
// form (dot) or the NEON one: eight, but four for Q4_1 and Q5_1 in the
// NEON form, whose products' registers leave none for more tokens' summs.
func (ty q32Lanes) maxT(dot bool) int {
	if ty.min && !dot {
		return 4
	}
	return 8
}

func genQ32LanesT(g *gen, ty q32Lanes, dot bool, T int) {
	const (
		wlo, whi = 0, 1   // the row's quant bytes; Q4_1: its values, elements 0..15, 16..31
		hlo, hhi = 2, 3   // its high bits, a byte each; then (Q5_0, Q5_1) its values
		xlo, xhi = 4, 5   // a token's block
		slo, shi = 6, 7   // its lane sums
		dw       = 8      // the row's d (lane 0) and m (lane 1)
		dd, sx   = 10, 11 // f16(w.d)·f16(x.d); Q4_1, Q5_1: the token's d and s
		n0, n1   = 12, 13 // NEON products
		sixteen  = 14
	)
	// mask: 0x0f bytes; idxLo, idxHi: TBL indices, qh's bytes 0,1 and 2,3
	// eight times each; bits: 1 << (j % 8) in byte j. Past four tokens the
	// accumulators take V16-V31, and idxLo, idxHi and bits take V9-V11
	// (free while a block is decoded), loaded again every block.
	mask, idxLo, idxHi, bits := 28, 29, 30, 31
	reload := T > 4
	if reload {
		mask, idxLo, idxHi, bits = 15, 9, 10, 11
	}
	acc := func(t, k int) int { return 16 + 2*t + k } // V16-V23 (V31)
	// Q4_1's and Q5_1's summs, from two tokens on, in the lanes of summsLo
	// (tokens 0-3) and summsHi (4-7): V24 up to four tokens, V12 and V13
	// past four (in the SDOT form, whose products leave them free); with
	// one token in lane 1 of V24.
	vsumms := ty.min && T >= 2
	const sxs = 11
	summsLo, summsHi := 24, 25
	if reload {
		summsLo, summsHi = 12, 13
	}
	vlo, vhi := wlo, whi // the values SDOT (SMULL) takes
	if ty.qh > 0 {
		vlo, vhi = hlo, hhi
	}
	xp := []string{"R9", "R10", "R11", "R12", "R20", "R21", "R22", "R23"}
	g.rowsTStart(ty.name+"RowsT", "rows", formName(dot), T)
	g.movi(mask, 15)
	if ty.qh > 0 {
		if ty.min {
			g.movi(sixteen, 16)
		}
		if reload {
			g.p("MOVD $%sLanesConsts<>(SB), R24", ty.name)
		} else {
			lo, hi := ty.qhIndex()
			g.vconst(idxLo, lo[0], lo[1])
			g.vconst(idxHi, hi[0], hi[1])
			g.vconst(bits, 0x8040201008040201, 0x8040201008040201)
		}
	}
	g.label("row")
	g.p("MOVD R0, R8")
	g.p("MOVD R3, %s", xp[0])
	for t := 1; t < T; t++ {
		g.p("ADD R4, %s, %s", xp[t-1], xp[t])
	}
	for t := range T {
		g.zero(acc(t, 0))
		g.zero(acc(t, 1))
	}
	if ty.min {
		g.zero(summsLo) // V24 with one token
		if T > 4 {
			g.zero(summsHi)
		}
	}
	g.p("MOVD R5, R13")
	g.p("CBZ R13, store")
	g.label("block")
	// The block's first bytes in one load: d (Q4_1, Q5_1: d, m) and, with
	// high bits, qh, whose bytes TBL takes from the same register.
	head := dw
	switch {
	case ty.qh > 0:
		head = hlo
		g.p("FMOVD (R8), F%d", hlo)
	default:
		g.p("FMOVS (R8), F%d", dw)
	}
	g.p("ADD $%d, R8", ty.bsize-16)
	if ty.min {
		g.o2("fcvtl", dw, head) // lane 0 d, lane 1 m
	} else {
		g.p("FCVTHS F%d, F%d", head, dw)
	}
	if reload && ty.qh > 0 {
		g.p("VLD1 (R24), [V%d.B16, V%d.B16, V%d.B16]", idxLo, idxHi, bits)
	}
	g.ld1b16("R8", 16, wlo)
	switch {
	case ty.qh == 0:
		g.ushr16b(whi, wlo, 4)
		g.vand(wlo, wlo, mask)
	case ty.signed16:
		// nibble | bit<<4 - 16 is the nibble with 0xf0 above it where
		// the bit is clear: the masks are taken of the bits inverted, and
		// BIT and SRI put the nibbles under them.
		g.c("the high bits: byte j of hlo (hhi) is 0xff where bit j (j+16) is clear")
		g.o2("mvn.8b", hlo, hlo)
		g.o3("tbl", hhi, hlo, idxHi)
		g.o3("tbl", hlo, hlo, idxLo)
		g.o3("cmtst", hlo, hlo, bits)
		g.o3("cmtst", hhi, hhi, bits)
		g.c("the values: the low (high) nibbles under the masks' high four bits")
		g.p("VBIT V%d.B16, V%d.B16, V%d.B16", mask, wlo, hlo)
		g.p("VSRI $4, V%d.B16, V%d.B16", wlo, hhi)
	default:
		g.c("the high bits: byte j of hlo (hhi) is 16 where bit j (j+16) is set")
		g.o3("tbl", hhi, hlo, idxHi)
		g.o3("tbl", hlo, hlo, idxLo)
		g.o3("cmtst", hlo, hlo, bits)
		g.o3("cmtst", hhi, hhi, bits)
		g.vand(hlo, hlo, sixteen)
		g.vand(hhi, hhi, sixteen)
		g.c("the values: the low (high) nibbles put under bit 4")
		g.p("VBIT V%d.B16, V%d.B16, V%d.B16", mask, wlo, hlo)
		g.p("VSRI $4, V%d.B16, V%d.B16", wlo, hhi)
	}
	for t := range T {
		g.c("token %d", t)
		if ty.min {
			// d and s: one load, then s into its summs lane.
			g.p("FMOVS (%s), F%d", xp[t], dd)
			g.p("ADD $4, %s", xp[t])
			if vsumms {
				g.p("VMOV V%d.H[1], V%d.H[%d]", dd, sxs, t)
				g.p("FCVTHS F%d, F%d", dd, dd)
				g.p("FMULS F%d, F%d, F%d", dd, dw, dd)
			} else {
				// Lane 1 of V24 takes fma(f16(x.s), f16(w.m), summs)
				// (the other lanes' products are not read).
				g.o2("fcvtl", sx, dd) // lane 0 d, lane 1 s
				g.oe("fmla.e", summsLo, sx, dw, 1)
				g.p("FMULS F%d, F%d, F%d", sx, dw, dd)
			}
		} else {
			g.p("FMOVS (%s), F%d", xp[t], dd)
			g.p("ADD $2, %s", xp[t])
			g.p("FCVTHS F%d, F%d", dd, dd)
			g.p("FMULS F%d, F%d, F%d", dd, dw, dd)
		}
		g.ld1b16(xp[t], 32, xlo, xhi)
		for i, s := range []int{slo, shi} {
			w, x := []int{vlo, vhi}[i], xlo+i
			if dot {
				g.zero(s)
				g.o3("sdot", s, w, x)
				continue
			}
			// |q·y| ≤ 31·128: each product fits an int16.
			g.o3("smull.8h", n0, w, x)
			g.o3("smull2.8h", n1, w, x)
			g.o2("saddlp.4s", n0, n0)
			g.o2("saddlp.4s", n1, n1)
			g.o3("addp.4s", s, n0, n1)
		}
		g.o2("scvtf", slo, slo)
		g.o2("scvtf", shi, shi)
		g.oe("fmla.e", acc(t, 0), slo, dd, 0)
		g.oe("fmla.e", acc(t, 1), shi, dd, 0)
	}
	if vsumms {
		g.c("every token: summs = fma(f16(x.s), f16(w.m), summs), lane t of V%d-V%d", summsLo, summsHi)
		g.o2("fcvtl", slo, sxs)
		g.oe("fmla.e", summsLo, slo, dw, 1)
		if T > 4 {
			g.o2("fcvtl2", shi, sxs)
			g.oe("fmla.e", summsHi, shi, dw, 1)
		}
	}
	g.p("SUBS $1, R13, R13")
	g.p("BNE block")
	g.label("store")
	g.storeRow(T, "R19", func(t int) {
		g.c("token %d: hsum8: (a[l]+a[l+4]), then lanes 0+2 and 1+3, then those two", t)
		g.o3("fadd", 0, acc(t, 0), acc(t, 1))
		g.o3("ext8", 1, 0, 0)
		g.o3("fadd", 0, 0, 1)
		g.o2("faddp.s", 0, 0)
		if ty.min {
			reg, lane := summsLo+t/4, t%4
			if !vsumms {
				lane = 1
			}
			g.p("VMOV V%d.S[%d], R14", reg, lane)
			g.p("FMOVS R14, F1")
			g.p("FADDS F1, F0, F0")
		}
	})
}
