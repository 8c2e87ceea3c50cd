package verify_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/sample"
	"github.com/specd-dev/specd/verify"
	"github.com/specd-dev/specd/verify/verifytest"
)

// rowSampler returns the fixed distribution dist[r] for a logits row whose
// first value is r, so tests choose p per block position explicitly.
type rowSampler struct {
	dist [][]float32
	rng  verifytest.Softmax // only its Float
}

func (s *rowSampler) Probs(dst, logits []float32) { copy(dst, s.dist[int(logits[0])]) }
func (s *rowSampler) Float() float64              { return s.rng.Float() }

// Explicit small-vocabulary distributions. q proposes token 9, which p
// never emits (as after a top-k filter), and never proposes token 0, p's
// most likely one.
var (
	pDist = []float32{0.30, 0.20, 0.15, 0.10, 0.08, 0.07, 0.05, 0.03, 0.02, 0}
	qDist = []float32{0, 0.05, 0.10, 0.30, 0.05, 0.20, 0.10, 0.05, 0.05, 0.10}
	p2    = []float32{0.05, 0.05, 0.10, 0.10, 0.10, 0.10, 0.10, 0.10, 0.10, 0.20}
	q2    = []float32{0.20, 0.20, 0.10, 0.10, 0.10, 0.10, 0.05, 0.05, 0.05, 0.05}
)

// chiSquare returns the statistic of counts against the distribution want
// (cells where want is 0 must be empty, else +Inf).
func chiSquare(counts []int, want []float32) float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	var x float64
	for i, c := range counts {
		e := float64(want[i]) * float64(n)
		if e == 0 {
			if c != 0 {
				return math.Inf(1)
			}
			continue
		}
		d := float64(c) - e
		x += d * d / e
	}
	return x
}

// critical and critical9 are the chi-square 0.999 quantiles for 8 and 9
// degrees of freedom (pDist has 9 non-empty cells, p2 10): a correct rule
// fails with probability 0.001, and the seed is fixed, so the test is
// deterministic.
const (
	critical  = 26.12
	critical9 = 27.88
)

// wrongAccept is a deliberately wrong rule: like AcceptSample, but after a
// rejection it resamples from p instead of from the residual max(0, p−q).
func wrongAccept(draft []int32, logits, q []float32, vocab int, s backend.Sampler, p []float32) (int, int32) {
	for i, x := range draft {
		s.Probs(p, logits[i*vocab:(i+1)*vocab])
		qx := q[i*vocab+int(x)]
		if u := s.Float(); qx > 0 && u*float64(qx) < float64(p[x]) {
			continue
		}
		return i, int32(sample.DrawFrom(p, s.Float()))
	}
	k := len(draft)
	s.Probs(p, logits[k*vocab:(k+1)*vocab])
	return k, int32(sample.DrawFrom(p, s.Float()))
}

// TestSpeculativeSamplingDistribution draws blocks of k = 2 draft tokens
// from q and checks by chi-square that the first emitted token follows p
// and the second (emitted when the first is accepted, by the next draft
// position or the bonus) follows p2; the same test rejects the wrong rule.
func TestSpeculativeSamplingDistribution(t *testing.T) {
	const vocab, n = 10, 200000
	type rule func(draft []int32, logits, q []float32, s backend.Sampler, p, r []float32) (int, int32)
	right := func(draft []int32, logits, q []float32, s backend.Sampler, p, r []float32) (int, int32) {
		return verify.AcceptSample(draft, logits, q, vocab, s, p, r)
	}
	wrong := func(draft []int32, logits, q []float32, s backend.Sampler, p, r []float32) (int, int32) {
		return wrongAccept(draft, logits, q, vocab, s, p)
	}
	run := func(acc rule) (first, second []int, accepted int) {
		s := &rowSampler{dist: [][]float32{pDist, p2, p2}, rng: verifytest.Softmax{State: 42}}
		logits := make([]float32, 3*vocab)
		for r := 0; r < 3; r++ {
			logits[r*vocab] = float32(r)
		}
		q := append(append([]float32{}, qDist...), q2...)
		p, r := make([]float32, vocab), make([]float32, vocab)
		first, second = make([]int, vocab), make([]int, vocab)
		draft := make([]int32, 2)
		for i := 0; i < n; i++ {
			draft[0] = int32(sample.DrawFrom(qDist, s.Float()))
			draft[1] = int32(sample.DrawFrom(q2, s.Float()))
			a, next := acc(draft, logits, q, s, p, r)
			emitted := append(append([]int32{}, draft[:a]...), next)
			first[emitted[0]]++
			if len(emitted) > 1 {
				second[emitted[1]]++
			}
			accepted += a
		}
		return first, second, accepted
	}

	first, second, accepted := run(right)
	if x := chiSquare(first, pDist); x > critical {
		t.Errorf("exact rule: first token chi-square %.1f > %.1f; counts %v", x, critical, first)
	}
	if x := chiSquare(second, p2); x > critical9 {
		t.Errorf("exact rule: second token chi-square %.1f > %.1f; counts %v", x, critical9, second)
	}
	// Expected acceptance of the first position: sum min(p, q).
	var alpha float64
	for i := range pDist {
		alpha += float64(min(pDist[i], qDist[i]))
	}
	if math.Abs(float64(sumInts(second))/n-alpha) > 0.01 {
		t.Errorf("first-position acceptance %.3f, want %.3f", float64(sumInts(second))/n, alpha)
	}
	t.Logf("exact rule: %d accepted draft tokens in %d blocks", accepted, n)

	wfirst, _, _ := run(wrong)
	if x := chiSquare(wfirst, pDist); !(x > critical) {
		t.Errorf("wrong rule passed the chi-square test (%.1f <= %.1f); the test has no power", x, critical)
	} else {
		t.Logf("wrong rule rejected: chi-square %.0f", x)
	}
}

func sumInts(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// TestDeterministicDraft checks the rule with q = nil (one-hot on the draft
// token, an n-gram draft): the emitted token still follows p.
func TestDeterministicDraft(t *testing.T) {
	const vocab, n = 10, 100000
	s := &rowSampler{dist: [][]float32{pDist, p2}, rng: verifytest.Softmax{State: 7}}
	logits := make([]float32, 2*vocab)
	logits[vocab] = 1
	p, r := make([]float32, vocab), make([]float32, vocab)
	for _, d := range []int32{0, 3, 9} {
		counts := make([]int, vocab)
		for i := 0; i < n; i++ {
			a, next := verify.AcceptSample([]int32{d}, logits, nil, vocab, s, p, r)
			if a == 1 {
				counts[d]++
			} else {
				counts[next]++
			}
		}
		if x := chiSquare(counts, pDist); x > critical {
			t.Errorf("draft %d: chi-square %.1f > %.1f; counts %v", d, x, critical, counts)
		}
	}
}

func TestAcceptGreedy(t *testing.T) {
	const vocab = 4
	// argmaxes per row: 2, 1, 3, 0
	logits := []float32{
		0, 1, 5, 2,
		0, 9, 5, 2,
		1, 1, 1, 7,
		3, 1, 1, 1,
	}
	for _, tc := range []struct {
		draft    []int32
		accepted int
		next     int32
	}{
		{[]int32{}, 0, 2},
		{[]int32{0}, 0, 2},
		{[]int32{2}, 1, 1},
		{[]int32{2, 1}, 2, 3},
		{[]int32{2, 1, 3}, 3, 0},
		{[]int32{2, 0, 3}, 1, 1},
		{[]int32{2, 1, 2}, 2, 3},
	} {
		t.Run(fmt.Sprint(tc.draft), func(t *testing.T) {
			a, next := verify.AcceptGreedy(tc.draft, logits, vocab)
			if a != tc.accepted || next != tc.next {
				t.Fatalf("got (%d, %d), want (%d, %d)", a, next, tc.accepted, tc.next)
			}
		})
	}
	if got := sample.Greedy([]float32{1, 3, 3, 2}); got != 1 {
		t.Errorf("Argmax tie = %d, want the first, 1", got)
	}
	if got := sample.Greedy([]float32{float32(math.NaN()), -1, 0}); got != 2 {
		t.Errorf("Argmax with NaN = %d, want 2", got)
	}
}
