package stages_test

import (
	"fmt"
	"testing"

	"github.com/specd-dev/specd/backend"
	"github.com/specd-dev/specd/draft"
	"github.com/specd-dev/specd/verify"
	"github.com/specd-dev/specd/verify/verifytest"
)

// TestKVRuleEveryPosition runs the two halves of the KV rule as the
// pipeline runs them (verify.Verify for the target, draft.Model's Draft
// and Accept for the draft) through steps with every draft length k =
// 1..8 and every number of accepted tokens a = 0..k, and checks the rule
// after each: the target holds exactly the committed tokens but the last,
// the draft a prefix of them (everything it fed that was accepted), and
// the other slot is untouched.
func TestKVRuleEveryPosition(t *testing.T) {
	const vocab, slot = 16, 1
	for k := 1; k <= 8; k++ {
		for a := 0; a <= k; a++ {
			t.Run(fmt.Sprintf("k%d_a%d", k, a), func(t *testing.T) {
				// Draft and target are the same fake model, so the draft
				// proposes the target's own tokens; changing proposal a
				// in the block makes the target accept exactly a.
				target := verifytest.NewFake(vocab, 2, 128, 16, 0)
				dbe := verifytest.NewFake(vocab, 2, 128, 16, 0)
				d := draft.NewModel(dbe, 0)
				v := verify.New(target)
				committed := []int32{3, 1, 4} // prompt
				var b backend.Batch
				for i, tok := range committed[:len(committed)-1] {
					b.Add(tok, int32(i), slot, false)
				}
				if err := target.Forward(&b, nil); err != nil {
					t.Fatal(err)
				}
				if err := d.Reset(slot); err != nil {
					t.Fatal(err)
				}
				r := &draft.Request{Slot: slot, K: k, Out: make([]int32, 0, k)}
				blk := &verify.Block{Seq: slot, Draft: make([]int32, 0, k), Tokens: make([]int32, 0, k+1)}
				for step := 0; step < 3; step++ {
					n := len(committed)
					r.Tokens = committed
					if err := d.Draft(r); err != nil {
						t.Fatal(err)
					}
					if len(r.Out) != k {
						t.Fatalf("step %d: %d proposals, want %d", step, len(r.Out), k)
					}
					blk.Pos, blk.Last = int32(n-1), committed[n-1]
					blk.Draft = append(blk.Draft[:0], r.Out...)
					if a < k {
						blk.Draft[a] = (blk.Draft[a] + 1) % vocab
					}
					if err := v.Verify([]*verify.Block{blk}); err != nil {
						t.Fatal(err)
					}
					if blk.Accepted != a {
						t.Fatalf("step %d: accepted %d, want %d", step, blk.Accepted, a)
					}
					committed = append(committed, blk.Tokens...)
					if err := d.Accept(slot, len(committed)); err != nil {
						t.Fatal(err)
					}
					tc := held(target, slot)
					if len(tc) != len(committed)-1 {
						t.Fatalf("step %d: target holds %d positions, want %d", step, len(tc), len(committed)-1)
					}
					if i := differ(tc, committed); i >= 0 {
						t.Fatalf("step %d: target position %d holds %d, want %d", step, i, tc[i], committed[i])
					}
					// The draft fed t[n-1], d1..d(k-1) (positions up to
					// n+k-2) and keeps the accepted ones.
					dc := held(dbe, slot)
					if want := min(n+a, n+k-1); len(dc) != want {
						t.Fatalf("step %d: draft holds %d positions, want %d", step, len(dc), want)
					}
					if i := differ(dc, committed); i >= 0 {
						t.Fatalf("step %d: draft position %d holds %d, want %d", step, i, dc[i], committed[i])
					}
					if target.Len(0) != 0 || dbe.Len(0) != 0 {
						t.Fatal("another slot changed")
					}
				}
			})
		}
	}
}

// held returns the tokens slot s of a fake's cache holds (the fake stores
// each position's token as its key).
func held(f *verifytest.Fake, s int) []int32 {
	k, _ := f.KV.Head32(0, s, 0)
	out := make([]int32, f.Len(s))
	for i := range out {
		out[i] = int32(k[i])
	}
	return out
}

// differ returns the first position where got and want differ, or -1.
func differ(got, want []int32) int {
	for i, g := range got {
		if i >= len(want) || g != want[i] {
			return i
		}
	}
	return -1
}
