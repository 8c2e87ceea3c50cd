package model

// ShareEmbeddings makes m (a draft model) use target's token embedding
// table, and, when m's output projection is tied to its embeddings, that
// table as output projection too, so draft and target keep one copy. It
// does nothing and returns false unless both have the same vocabulary size
// and embedding width. Call it before creating States of m.
func (m *Model) ShareEmbeddings(target *Model) bool {
	if m == target || m.Config.Vocab != target.Config.Vocab || m.Config.Dim != target.Config.Dim {
		return false
	}
	m.w.tokEmbd = target.w.tokEmbd
	if m.w.tiedEmbd {
		m.w.output = target.w.tokEmbd
	}
	return true
}
