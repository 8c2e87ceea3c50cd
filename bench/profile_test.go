package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/specd-dev/specd/model"
)

func TestMeasureBandwidth(t *testing.T) {
	bw := MeasureBandwidth(1<<20, 2)
	if !(bw.CopyGBs > 0 && bw.TriadGBs > 0 && bw.ReadGBs > 0) || bw.ArrayBytes != 1<<20 || bw.Peak() < float64(bw.TriadGBs) {
		t.Errorf("%+v", bw)
	}
	a, b, c := make([]float64, 5), []float64{1, 2, 3, 4, 5}, []float64{1, 1, 1, 1, 2}
	triad(a, b, c, 3)
	if a[0] != 4 || a[4] != 11 || sum(b) != 15 {
		t.Errorf("triad %v sum %v", a, sum(b))
	}
}

// TestProfileEngine profiles the bundled pair: every stage timed, the
// stages within the whole pass, the bytes of the matrices counted once.
func TestProfileEngine(t *testing.T) {
	e, o := openBundled(t)
	ps, _ := Builtin(SetBrown)
	r, err := NewEngineRunner(e, RunnerOptions{Base: o, Prompts: ps[:1], N: 8, Seed: 1, MaxK: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Profile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 2 || p.Steps[0].Model != "target" || p.Steps[1].Model != "draft" || !(p.PlainStepMs > 0 && p.PlainVerifyMs > 0) {
		t.Fatalf("%+v", p)
	}
	for _, s := range p.Steps {
		if len(s.Ops) != int(model.NumOps) || !(s.ForwardMs > 0 && s.GreedyMs > 0 && s.SampleMs > 0 && s.GBs > 0) {
			t.Errorf("%s: %+v", s.Model, s)
		}
		var sum float64
		var bytes int64
		for _, op := range s.Ops {
			sum += float64(op.Ms)
			bytes += op.Bytes
		}
		// Medians of the parts need not add up to the median whole, but
		// not far beyond it.
		if sum <= 0 || sum > 1.5*float64(s.ForwardMs) || bytes != s.Bytes {
			t.Errorf("%s: stages %v ms of %v, bytes %d of %d", s.Model, sum, s.ForwardMs, bytes, s.Bytes)
		}
	}
	// The matrices' bytes: every tensor of the target but the embedding
	// table (one row of it is read) and its norms, the output head tied.
	m := e.Target
	wb := weightBytes(m)
	var mats int64
	for _, ti := range m.File.Tensors {
		if strings.HasSuffix(ti.Name, "_q.weight") || strings.HasSuffix(ti.Name, "_k.weight") || strings.HasSuffix(ti.Name, "_v.weight") {
			mats += int64(len(ti.Data))
		}
	}
	if wb[model.OpQKV] != mats || wb[model.OpOutput] == 0 || wb[model.OpDown] == 0 || wb[model.OpEmbed] == 0 {
		t.Errorf("weight bytes %v (QKV matrices %d)", wb, mats)
	}
	res := &Results{Profile: p}
	var b strings.Builder
	res.writeProfile(&b)
	for _, want := range []string{"## Profile of one step", "| attention |", "| **forward pass** |", "Pipeline overhead"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("profile report lacks %q:\n%s", want, b.String())
		}
	}
}
