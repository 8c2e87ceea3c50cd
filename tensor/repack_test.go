package tensor

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestRepack: an interleaved matrix gives MatMul the same outputs, bit for
// bit, as the row-major one, for 1 to 17 tokens and 1 to 3 threads, and
// unpacks back to the same bytes; where no interleaved kernel is in use,
// Repack returns its argument.
func TestRepack(t *testing.T) {
	r := rand.New(rand.NewPCG(57, 58))
	pools := []*Pool{NewPool(1), NewPool(2), NewPool(3)}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	for _, typ := range []Type{Q4_0, Q8_0, F16, Q4_1} {
		for _, shape := range [][2]int{{8, 32}, {16, 96}, {72, 896}, {7, 64}, {12, 64}} {
			rows, cols := shape[0], shape[1]
			m := randMatrix(t, r, typ, rows, cols)
			orig := bytes.Clone(m.Data)
			p := Repack(m)
			_, want := repackTarget(typ)
			want = want && rows%8 == 0
			name := fmt.Sprintf("%v %d×%d", typ, rows, cols)
			if !want {
				if p != m {
					t.Errorf("%s: repacked to %v with no interleaved kernel in use", name, p.Type)
				}
				continue
			}
			if p == m || !Interleaved(p) || Interleaved(m) || p.Rows != rows || p.Cols != cols || len(p.Data) != len(m.Data) {
				t.Fatalf("%s: Repack gave %v %d×%d of %d bytes", name, p.Type, p.Rows, p.Cols, len(p.Data))
			}
			if !bytes.Equal(m.Data, orig) {
				t.Fatalf("%s: Repack changed its argument", name)
			}
			back := make([]byte, len(p.Data))
			interleave8(p.Data, back, typ, rows, cols, true)
			if !bytes.Equal(back, orig) {
				t.Fatalf("%s: unpacking does not give the rows back", name)
			}
			for _, n := range []int{1, 2, 4, 5, 8, 9, 17} {
				x := randFloats(r, n*cols, 1)
				for ti, pool := range pools {
					// Guard values past the outputs must survive.
					a := make([]float32, n*rows+3)
					b := make([]float32, n*rows+3)
					for i := n * rows; i < len(a); i++ {
						a[i], b[i] = float32(math.NaN()), float32(math.NaN())
					}
					pool.MatMul(a[:n*rows], m, x, n)
					pool.MatMul(b[:n*rows], p, x, n)
					for i := range a {
						if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
							t.Fatalf("%s n=%d threads=%d: out[%d] = %v interleaved, %v row-major", name, n, ti+1, i, b[i], a[i])
						}
					}
				}
			}
		}
	}
}

// TestRepackRow: an interleaved matrix refuses Row, whose bytes are not a
// row of it.
func TestRepackRow(t *testing.T) {
	m := Repack(randMatrix(t, rand.New(rand.NewPCG(1, 2)), Q4_0, 8, 64))
	if !Interleaved(m) {
		t.Skipf("no interleaved kernel in the %s set", KernelSet())
	}
	defer func() {
		if recover() == nil {
			t.Error("Row of an interleaved matrix did not panic")
		}
	}()
	m.Row(0)
}

// BenchmarkRepack compares one-token and five-token MatMul over a
// row-major and an interleaved matrix of FFN shape (width 896, 2560 rows)
// at one thread: run the two sub-benchmarks side by side and quote their
// ratio.
func BenchmarkRepack(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	pool := NewPool(1)
	defer pool.Close()
	for _, typ := range []Type{Q4_0, Q8_0} {
		m := randMatrix(b, r, typ, 2560, 896)
		p := Repack(m)
		if !Interleaved(p) {
			b.Skipf("no interleaved kernel in the %s set", KernelSet())
		}
		for _, n := range []int{1, 5} {
			x := randFloats(r, n*m.Cols, 1)
			out := make([]float32, n*m.Rows)
			for _, c := range []struct {
				name string
				m    *Matrix
			}{{"rowmajor", m}, {"interleaved", p}} {
				b.Run(fmt.Sprintf("%v/n=%d/%s", typ, n, c.name), func(b *testing.B) {
					b.SetBytes(int64(len(c.m.Data)))
					for b.Loop() {
						pool.MatMul(out, c.m, x, n)
					}
				})
			}
		}
	}
}

// TestRepackDequantizeRow: Matrix.DequantizeRow reads every row of an
// interleaved matrix as the row-major one's.
func TestRepackDequantizeRow(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []Type{Q4_0, Q8_0} {
		m := randMatrix(t, r, typ, 16, 96)
		p := Repack(m)
		a, b := make([]float32, m.Cols), make([]float32, m.Cols)
		for row := range m.Rows {
			m.DequantizeRow(a, row)
			p.DequantizeRow(b, row)
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("%v row %d [%d]: %v from %v, %v row-major", typ, row, i, b[i], p.Type, a[i])
				}
			}
		}
	}
}

// BenchmarkRepackLoad is the load-time cost of interleaving a 32000×896
// Q8_0 output head (Repack: the copy, over every CPU).
func BenchmarkRepackLoad(b *testing.B) {
	m := randMatrix(b, rand.New(rand.NewPCG(7, 8)), Q8_0, 32000, 896)
	b.SetBytes(int64(len(m.Data)))
	for b.Loop() {
		if !Interleaved(Repack(m)) {
			b.Skipf("no interleaved kernel in the %s set", KernelSet())
		}
	}
}

// TestRepackParallel: a matrix large enough for Repack to split over
// goroutines gets the bytes of one interleave8 over the whole of it.
func TestRepackParallel(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one CPU: Repack does not split")
	}
	r := rand.New(rand.NewPCG(9, 10))
	rows, cols := 8*((2*repackPart/(8*RowSize(Q8_0, 1024)))+3), 1024
	m := &Matrix{Type: Q8_0, Rows: rows, Cols: cols, Data: make([]byte, rows*RowSize(Q8_0, cols))}
	for i := range m.Data {
		m.Data[i] = byte(r.Uint32())
	}
	p := Repack(m)
	if !Interleaved(p) {
		t.Skipf("no interleaved kernel in the %s set", KernelSet())
	}
	want := make([]byte, len(m.Data))
	interleave8(want, m.Data, Q8_0, rows, cols, false)
	if !bytes.Equal(p.Data, want) {
		t.Fatal("the split copy differs from one interleave8 over the matrix")
	}
}
