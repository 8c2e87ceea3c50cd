package sample

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/specd-dev/specd/internal/libm"
)

func TestGreedy(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		logits []float32
		want   int
	}{
		{nil, -1},
		{[]float32{1}, 0},
		{[]float32{1, 3, 2}, 1},
		{[]float32{3, 1, 3}, 0}, // tie: lowest id
		{[]float32{-5, -2, -2, -9}, 1},
		{[]float32{nan, 1, 2}, 2},
		{[]float32{1, nan, 0}, 0},
	} {
		if got := Greedy(tc.logits); got != tc.want {
			t.Errorf("Greedy(%v) = %d, want %d", tc.logits, got, tc.want)
		}
	}
}

func TestSplitMix64(t *testing.T) {
	// Published SplitMix64 outputs for seed 0.
	s := New(Params{Seed: 0})
	for i, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := s.Uint64(); got != want {
			t.Fatalf("output %d: %#x, want %#x", i, got, want)
		}
	}
	a, b := New(Params{Seed: 42}), New(Params{Seed: 42})
	for range 100 {
		x, y := a.Float(), b.Float()
		if x != y || x < 0 || x >= 1 {
			t.Fatalf("Float: %v, %v", x, y)
		}
	}
}

// softmax is the textbook softmax in float64 over the indices in keep.
func softmax(logits []float32, temp float64, keep []int) []float64 {
	out := make([]float64, len(logits))
	mx := math.Inf(-1)
	for _, i := range keep {
		mx = math.Max(mx, float64(logits[i])/temp)
	}
	var sum float64
	for _, i := range keep {
		out[i] = math.Exp(float64(logits[i])/temp - mx)
		sum += out[i]
	}
	for _, i := range keep {
		out[i] /= sum
	}
	return out
}

func TestProbs(t *testing.T) {
	logits := []float32{1.0, 3.0, 2.5, -1.0, 0.5, 2.9}
	// Sorted: 1 (3.0), 5 (2.9), 2 (2.5), 0 (1.0), 4 (0.5), 3 (-1.0).
	all := []int{0, 1, 2, 3, 4, 5}
	p1 := softmax(logits, 1, all)
	for _, tc := range []struct {
		name string
		p    Params
		keep []int
	}{
		{"temp 1", Params{Temp: 1}, all},
		{"temp 0.5", Params{Temp: 0.5}, all},
		{"temp 2", Params{Temp: 2}, all},
		{"top-k 3", Params{Temp: 0.7, TopK: 3}, []int{1, 5, 2}},
		{"top-k 1", Params{Temp: 1, TopK: 1}, []int{1}},
		{"top-k > n", Params{Temp: 1, TopK: 100}, all},
		// Top-p uses the temperature-1 distribution: the first two
		// tokens hold p1[1]+p1[5] < 0.8, three reach it.
		{"top-p 0.8", Params{Temp: 3, TopP: float32(p1[1] + p1[5] + 1e-3)}, []int{1, 5, 2}},
		{"top-p tiny", Params{Temp: 1, TopP: 1e-6}, []int{1}},
		{"top-k then top-p", Params{Temp: 1, TopK: 2, TopP: 0.99}, []int{1, 5}},
	} {
		got := make([]float32, len(logits))
		Probs(got, logits, tc.p)
		want := softmax(logits, float64(tc.p.Temp), tc.keep)
		var sum float64
		for i := range got {
			sum += float64(got[i])
			if math.Abs(float64(got[i])-want[i]) > 1e-6 {
				t.Errorf("%s: p[%d] = %v, want %v", tc.name, i, got[i], want[i])
			}
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Errorf("%s: sum %v", tc.name, sum)
		}
	}
	// Greedy parameters give a one-hot distribution.
	for _, p := range []Params{{}, {Temp: -1, TopK: 3}} {
		got := make([]float32, len(logits))
		Probs(got, logits, p)
		for i, v := range got {
			if (i == 1) != (v == 1) || (i != 1 && v != 0) {
				t.Fatalf("%+v: %v, want one-hot at 1", p, got)
			}
		}
	}
}

// TestSampleDistribution draws many tokens and checks the frequencies
// against Probs with a chi-square bound (fixed seed, so it cannot flake).
func TestSampleDistribution(t *testing.T) {
	logits := []float32{0.2, 1.5, -0.3, 1.1, 0.9, -2, 0.0, 1.4}
	p := Params{Temp: 0.8, TopK: 6, TopP: 0.95, Seed: 12345}
	probs := make([]float32, len(logits))
	Probs(probs, logits, p)
	s := New(p)
	const draws = 200000
	counts := make([]int, len(logits))
	for range draws {
		counts[s.Sample(logits)]++
	}
	var chi2 float64
	df := -1
	for i, c := range counts {
		if probs[i] == 0 {
			if c != 0 {
				t.Fatalf("token %d drawn %d times with probability 0", i, c)
			}
			continue
		}
		e := float64(probs[i]) * draws
		chi2 += (float64(c) - e) * (float64(c) - e) / e
		df++
	}
	// 99.9th percentile of chi-square with <= 7 degrees of freedom is 24.3.
	if chi2 > 24.3 {
		t.Errorf("chi-square %.1f with %d degrees of freedom: counts %v, probs %v", chi2, df, counts, probs)
	}
	// Same seed, same tokens.
	a, b := New(p), New(p)
	for range 50 {
		if x, y := a.Sample(logits), b.Sample(logits); x != y {
			t.Fatal("same seed gave different tokens")
		}
	}
}

func TestSampleGreedyAndAllocs(t *testing.T) {
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(math.Sin(float64(i)))
	}
	s := New(Params{Seed: 1})
	if got, want := s.Sample(logits), Greedy(logits); got != want {
		t.Fatalf("greedy sampler chose %d, argmax %d", got, want)
	}
	s = New(Params{Temp: 0.9, TopK: 40, TopP: 0.9, Seed: 1})
	s.Sample(logits)
	if a := testing.AllocsPerRun(50, func() { s.Sample(logits) }); a != 0 {
		t.Errorf("Sample allocates %v times per call", a)
	}
}

func TestDraw(t *testing.T) {
	s := New(Params{Seed: 3})
	if got := s.Draw([]float32{0, 0}); got != -1 {
		t.Errorf("Draw of zeros = %d", got)
	}
	for range 100 {
		if got := s.Draw([]float32{0, 2, 0, 0}); got != 1 {
			t.Fatalf("Draw chose %d with all mass on 1", got)
		}
	}
}

// TestPeekFloat: PeekFloat(n) is the n-th next Float, and peeking draws
// nothing.
func TestPeekFloat(t *testing.T) {
	s := New(Params{Temp: 1, Seed: 42})
	s.Float()
	want := []float64{s.PeekFloat(1), s.PeekFloat(2), s.PeekFloat(5)}
	got := []float64{s.Float(), s.Float(), 0}
	s.Float()
	s.Float()
	got[2] = s.Float()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("peek %d: %v, then drew %v", i, want[i], got[i])
		}
	}
}

// TestFloatAt: FloatAt(i) is the (i+1)-th number a fresh sampler's Float
// returns, before and after other numbers are drawn.
func TestFloatAt(t *testing.T) {
	fresh := New(Params{Temp: 1, Seed: 7})
	var seq []float64
	for range 10 {
		seq = append(seq, fresh.Float())
	}
	s := New(Params{Temp: 1, Seed: 7})
	for _, draws := range []int{0, 3, 11} {
		for range draws {
			s.Float()
		}
		for i, want := range seq {
			if got := s.FloatAt(uint64(i)); got != want {
				t.Fatalf("after %d draws: FloatAt(%d) = %v, the stream's number %v", draws, i, got, want)
			}
		}
	}
}

// TestSoftmaxDense: Probs without a filter (softmaxAll) gives the bits of the
// candidate-list softmax over every token, for logits of every magnitude
// (and -Inf) and several temperatures.
func TestSoftmaxDense(t *testing.T) {
	x := uint64(5)
	logits := make([]float32, 32000)
	for i := range logits {
		x = x*6364136223846793005 + 1442695040888963407
		logits[i] = float32(int64(x>>33)%400_000-200_000) / 997
	}
	logits[17] = float32(math.Inf(-1))
	all := make([]int32, len(logits))
	for i := range all {
		all[i] = int32(i)
	}
	got, want := make([]float32, len(logits)), make([]float32, len(logits))
	for _, temp := range []float32{0.1, 0.7, 1, 1.3, 7} {
		Probs(got, logits, Params{Temp: temp})
		softmaxOver(want, logits, all, temp)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("temp %g: token %d: %g, over the candidates %g", temp, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkProbs: the distribution a sampled token is drawn from, over a
// vocabulary of 32,000 (the 58M reference model's), unfiltered (the
// default), with top-k 40 and with top-p 0.95; and unfiltered and with
// top-p 0.95 over Qwen2's 151,936. The logits are flat (uniform over 20 units), which
// gives top-p a nucleus of about a seventh of the vocabulary.
func BenchmarkProbs(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
		p    Params
	}{
		{"", 32000, Params{Temp: 0.8}},
		{"", 32000, Params{Temp: 0.8, TopK: 40}},
		{"", 32000, Params{Temp: 0.8, TopP: 0.95}},
		{"vocab=151936/", 151936, Params{Temp: 0.8}},
		{"vocab=151936/", 151936, Params{Temp: 0.8, TopP: 0.95}},
	} {
		logits := make([]float32, c.n)
		x := uint64(1)
		for i := range logits {
			x = x*6364136223846793005 + 1442695040888963407
			logits[i] = float32(int64(x>>33)%2000) / 100
		}
		dst := make([]float32, len(logits))
		b.Run(fmt.Sprintf("%stop-k=%d/top-p=%g", c.name, c.p.TopK, c.p.TopP), func(b *testing.B) {
			for b.Loop() {
				Probs(dst, logits, c.p)
			}
		})
	}
}

// TestTopK: the heap selection gives the first k of a sort of every
// token, in order, on logits with many ties and NaNs.
func TestTopK(t *testing.T) {
	x := uint64(9)
	for _, n := range []int{2, 7, 100, 1000} {
		logits := make([]float32, n)
		for i := range logits {
			x = x*6364136223846793005 + 1442695040888963407
			switch v := int(x>>33) % 50; {
			case v == 0:
				logits[i] = float32(math.NaN())
			case v == 1:
				logits[i] = float32(math.Inf(-1))
			default:
				logits[i] = float32(v % 12) // ties
			}
		}
		before := func(a, b int32) int {
			if c := cmp.Compare(logits[b], logits[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		}
		all := make([]int32, n)
		for i := range all {
			all[i] = int32(i)
		}
		slices.SortFunc(all, before)
		for _, k := range []int{1, 2, 3, n / 2, n - 1} {
			if k < 1 || k >= n {
				continue
			}
			got := topK(make([]int32, 0, n), n, k, before)
			if !slices.Equal(got, all[:k]) {
				t.Fatalf("n %d k %d: %v, sorted prefix %v", n, k, got, all[:k])
			}
		}
	}
}

// TestNucleus: top-p over every token, found by buckets, keeps the tokens
// of the plain rule (sort every token, sum the softmax in token order,
// cumulate in sorted order) in the same order, on peaked and flat logits,
// ties at the buckets' edges, -Inf, and cumulative targets that rounding
// leaves short; with a NaN or +Inf logit, or only -Inf, it keeps what
// sorting every token keeps.
func TestNucleus(t *testing.T) {
	x := uint64(5)
	next := func() float64 {
		x = x*6364136223846793005 + 1442695040888963407
		return float64(x>>11) / (1 << 53)
	}
	gens := map[string]func(i int) float32{
		"peaked": func(int) float32 { return float32(math.Pow(next(), 8) * 30) },
		"flat":   func(int) float32 { return float32(next() * 20) },
		"edges":  func(int) float32 { return float32(int(next()*40)) / nucleusScale }, // ties on bucket edges
		"wide":   func(int) float32 { return float32(next()*200 - 100) },
		"-inf": func(i int) float32 {
			if i%3 == 0 {
				return float32(math.Inf(-1))
			}
			return float32(next() * 5)
		},
	}
	for name, gen := range gens {
		for _, n := range []int{2, 3, 50, 1000, 40000} {
			logits := make([]float32, n)
			for i := range logits {
				logits[i] = gen(i)
			}
			for _, topP := range []float32{1e-6, 0.1, 0.5, 0.9, 0.95, 0.999, 0.99999994} {
				want := nucleusRef(logits, topP, false)
				got := kept(new(buffers), logits, Params{Temp: 1, TopP: topP})
				if !slices.Equal(got, want) {
					t.Fatalf("%s n %d top-p %v: kept %d tokens %v…, want %d %v…", name, n, topP,
						len(got), got[:min(len(got), 8)], len(want), want[:min(len(want), 8)])
				}
			}
		}
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, logits := range [][]float32{{1, 2, nan, 0.5, 2}, {1, 2, inf, 0.5, 2}, {-inf, -inf, -inf}} {
		want := nucleusRef(logits, 0.5, true)
		if got := kept(new(buffers), logits, Params{Temp: 1, TopP: 0.5}); !slices.Equal(got, want) {
			t.Errorf("%v: kept %v, want %v", logits, got, want)
		}
	}
}

// nucleusRef is top-p over every token by sorting them all; the softmax's
// denominator is summed in token order, or in sorted order if sortedSum.
func nucleusRef(logits []float32, topP float32, sortedSum bool) []int32 {
	before := func(a, b int32) int {
		if c := cmp.Compare(logits[b], logits[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	all := make([]int32, len(logits))
	for i := range all {
		all[i] = int32(i)
	}
	slices.SortFunc(all, before)
	maxl := logits[all[0]]
	var sum float32
	for k := range all {
		i := int32(k)
		if sortedSum {
			i = all[k]
		}
		sum += libm.Expf(logits[i] - maxl)
	}
	var cum float32
	for k, i := range all {
		cum += libm.Expf(logits[i]-maxl) / sum
		if cum >= topP {
			return all[:k+1]
		}
	}
	return all
}
