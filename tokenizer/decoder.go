package tokenizer

import "unicode/utf8"

// Decoder turns a stream of token ids into text, returning only complete
// UTF-8: a character whose bytes are spread over several byte-fallback or
// byte-level tokens is held back until its last byte arrives. A Decoder is
// used by one goroutine at a time.
//
// By default it renders control tokens as nothing (llama.cpp's
// token_to_piece with special=false) and, like llama_detokenize, removes the
// leading space of the first token when the vocabulary adds a space prefix
// (SentencePiece), so decoding Encode(s)'s ids streams s back. To stream the
// continuation of a prompt, where the first token's space is real text,
// call SetStripLeadingSpace(false).
type Decoder struct {
	t       *Tokenizer
	special bool
	strip   bool
	started bool
	pending []byte
}

// NewDecoder returns a streaming decoder for t.
func (t *Tokenizer) NewDecoder() *Decoder {
	return &Decoder{t: t, strip: t.addSpacePrefix}
}

// SetSpecial sets whether control tokens are rendered as their text.
func (d *Decoder) SetSpecial(on bool) { d.special = on }

// SetStripLeadingSpace sets whether the first token's leading space is
// removed (default: when the vocabulary adds a space prefix). It only has an
// effect before the first Add.
func (d *Decoder) SetStripLeadingSpace(on bool) { d.strip = on && d.t.addSpacePrefix }

// Add appends token id and returns the text that is now complete; it may be
// empty. Out-of-range ids add nothing.
func (d *Decoder) Add(id int32) string {
	p := d.t.Piece(id)
	if !d.special && d.t.TokenAttr(id)&(AttrUnknown|AttrControl) != 0 {
		p = ""
	}
	if !d.started {
		d.started = true
		if d.strip && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
	}
	d.pending = append(d.pending, p...)
	cut := completeUTF8(d.pending)
	if cut == 0 {
		return ""
	}
	out := string(d.pending[:cut])
	d.pending = append(d.pending[:0], d.pending[cut:]...)
	return out
}

// Flush returns the bytes held back (an incomplete UTF-8 sequence, emitted
// as is) and resets the decoder for a new stream.
func (d *Decoder) Flush() string {
	out := string(d.pending)
	d.pending = d.pending[:0]
	d.started = false
	return out
}

// completeUTF8 returns the length of the longest prefix of b that does not
// end inside an incomplete (but so far valid) multi-byte sequence.
func completeUTF8(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		c := b[i]
		if c < 0x80 {
			return len(b)
		}
		if c >= 0xC0 { // lead byte of the last sequence
			if !utf8.FullRune(b[i:]) {
				return i
			}
			return len(b)
		}
	}
	return len(b)
}
