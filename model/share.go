package model

import (
	"bytes"
	"fmt"

	"github.com/specd-dev/specd/tensor"
)

// SharedEmbdKey is the GGUF metadata key under which a file records the
// SHA-256 (lower-case hex) of its token_embd.weight data. A draft and a
// target that record the same value have the same embedding table, which
// ShareEmbeddings then shares without reading the draft's copy.
const SharedEmbdKey = "specd.shared_embd_sha256"

// Sharing is what ShareEmbeddings did: whether the draft now uses the
// target's token embedding table (Embd) and the target's matrix as its
// output projection (Output), and how that was decided or why not.
type Sharing struct {
	Embd, Output bool
	EmbdHow      string // "equal specd.shared_embd_sha256", "byte comparison", or why not shared
	OutputHow    string
}

// String is a one-line summary for logs and the CLI.
func (s Sharing) String() string {
	return fmt.Sprintf("token_embd %s (%s), output %s (%s)", yesNo(s.Embd), s.EmbdHow, yesNo(s.Output), s.OutputHow)
}

func yesNo(b bool) string {
	if b {
		return "shared"
	}
	return "not shared"
}

// ShareEmbeddings makes m (a draft model) use target's token embedding
// table, and target's output projection, where they are identical to m's
// own, so draft and target keep one copy in memory; it reports whether the
// embedding table was shared. Share says why or why not. Call it before
// creating States of m.
func (m *Model) ShareEmbeddings(target *Model) bool { return m.Share(target).Embd }

// Share is ShareEmbeddings with the details. Tables are shared only when
// their type, shape and contents are equal:
//
//   - token_embd.weight: when both files record the same non-empty
//     SharedEmbdKey the contents are taken as equal without reading either
//     table (the recorded hash is trusted: a file that records a wrong one
//     gets the other file's table); when the files record different
//     values they are taken as different; otherwise the two tables are
//     compared byte for byte, which reads the draft's table once (its
//     pages become resident, though they are clean file pages the kernel
//     may drop again).
//   - The output projection: a tied one (m has no output.weight) follows
//     token_embd; an untied one is shared when it is byte for byte equal
//     to the target's output projection (tied or not), which reads it once.
func (m *Model) Share(target *Model) Sharing {
	var s Sharing
	switch {
	case m == target:
		s.EmbdHow, s.OutputHow = "the draft is the target", "the draft is the target"
		return s
	case m.Config.Vocab != target.Config.Vocab || m.Config.Dim != target.Config.Dim:
		why := fmt.Sprintf("draft vocab %d × dim %d, target %d × %d", m.Config.Vocab, m.Config.Dim, target.Config.Vocab, target.Config.Dim)
		s.EmbdHow, s.OutputHow = why, why
		return s
	}
	s.Embd, s.EmbdHow = sameEmbd(m, target)
	if m.w.tiedEmbd {
		s.Output, s.OutputHow = s.Embd, "tied to token_embd"
	} else {
		s.Output, s.OutputHow = sameMatrix(m.w.output, target.w.output, "output.weight")
	}
	if s.Embd {
		m.w.tokEmbd = target.w.tokEmbd
	}
	if s.Output {
		m.w.output = target.w.output
		if m.w.tiedEmbd {
			m.w.output = target.w.tokEmbd
		}
	}
	return s
}

// sameEmbd decides whether m's and target's token_embd.weight are equal.
func sameEmbd(m, target *Model) (bool, string) {
	if ok, why := sameShape(m.w.tokEmbd, target.w.tokEmbd); !ok {
		return false, "token_embd.weight: " + why
	}
	dh, _ := m.File.String(SharedEmbdKey)
	th, _ := target.File.String(SharedEmbdKey)
	switch {
	case dh != "" && dh == th:
		return true, "equal " + SharedEmbdKey
	case dh != "" && th != "":
		return false, "different " + SharedEmbdKey
	}
	return sameMatrix(m.w.tokEmbd, target.w.tokEmbd, "token_embd.weight")
}

// sameMatrix compares a and b by type, shape and bytes.
func sameMatrix(a, b *tensor.Matrix, name string) (bool, string) {
	if ok, why := sameShape(a, b); !ok {
		return false, name + ": " + why
	}
	if !bytes.Equal(a.Data, b.Data) {
		return false, name + ": contents differ (byte comparison)"
	}
	return true, "byte comparison"
}

func sameShape(a, b *tensor.Matrix) (bool, string) {
	switch {
	case a == nil || b == nil:
		return false, "missing"
	case a.Type != b.Type:
		return false, fmt.Sprintf("type %v, the target's %v", a.Type, b.Type)
	case a.Rows != b.Rows || a.Cols != b.Cols:
		return false, fmt.Sprintf("%d×%d, the target's %d×%d", a.Rows, a.Cols, b.Rows, b.Cols)
	}
	return true, ""
}

// ForceShareEmbeddings makes m use target's token embedding table (and, if
// m's output is tied, as output projection) whenever type and shape agree,
// whatever the contents: m then computes with a table it was not trained
// with. For tests and experiments that need a sharing draft of random
// weights; a runtime uses ShareEmbeddings.
func (m *Model) ForceShareEmbeddings(target *Model) bool {
	if m == target || m.Config.Vocab != target.Config.Vocab || m.Config.Dim != target.Config.Dim {
		return false
	}
	if ok, _ := sameShape(m.w.tokEmbd, target.w.tokEmbd); !ok {
		return false
	}
	m.w.tokEmbd = target.w.tokEmbd
	if m.w.tiedEmbd {
		m.w.output = target.w.tokEmbd
	}
	return true
}
