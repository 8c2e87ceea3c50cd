package tokenizer

import "fmt"

// Vocabulary check for speculative decoding, as llama.cpp's
// common_speculative_are_compatible.
const (
	maxVocabSizeDiff = 128 // SPEC_VOCAB_MAX_SIZE_DIFFERENCE
	checkStartID     = 5   // SPEC_VOCAB_CHECK_START_TOKEN_ID
)

// IncompatibleError says why a draft vocabulary cannot be used with a target.
type IncompatibleError struct {
	Reason string
	// ID and the two texts, for a token whose text differs (ID >= 0).
	ID                    int32
	TargetText, DraftText string
}

func (e *IncompatibleError) Error() string {
	if e.ID >= 0 {
		return fmt.Sprintf("tokenizer: draft vocabulary differs from target at token %d: target %q, draft %q", e.ID, e.TargetText, e.DraftText)
	}
	return "tokenizer: draft vocabulary incompatible with target: " + e.Reason
}

// CheckCompatible reports whether draft can propose tokens for target: same
// tokenizer type, same add_bos/add_eos and (when added) the same BOS/EOS ids,
// vocabulary sizes within 128 of each other, and identical token texts from
// id 5 up to the smaller vocabulary. The error is an *IncompatibleError
// naming the first mismatch.
func CheckCompatible(target, draft *Tokenizer) error {
	fail := func(format string, args ...any) error {
		return &IncompatibleError{Reason: fmt.Sprintf(format, args...), ID: -1}
	}
	if target.typ != draft.typ {
		return fail("tokenizer type %v (target) vs %v (draft)", target.typ, draft.typ)
	}
	if target.addBOS != draft.addBOS || (target.addBOS && target.bos != draft.bos) {
		return fail("BOS: add %v, id %d (target) vs add %v, id %d (draft)", target.addBOS, target.bos, draft.addBOS, draft.bos)
	}
	if target.addEOS != draft.addEOS || (target.addEOS && target.eos != draft.eos) {
		return fail("EOS: add %v, id %d (target) vs add %v, id %d (draft)", target.addEOS, target.eos, draft.addEOS, draft.eos)
	}
	nt, nd := len(target.tokens), len(draft.tokens)
	if diff := max(nt-nd, nd-nt); diff > maxVocabSizeDiff {
		return fail("vocabulary sizes %d (target) and %d (draft) differ by %d, more than %d", nt, nd, diff, maxVocabSizeDiff)
	}
	for i := checkStartID; i < min(nt, nd); i++ {
		if target.tokens[i] != draft.tokens[i] {
			return &IncompatibleError{ID: int32(i), TargetText: target.tokens[i], DraftText: draft.tokens[i]}
		}
	}
	return nil
}
