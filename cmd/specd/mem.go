package main

import (
	"fmt"
	"io"
)

// memReport prints generate's --mem-stats line: the process's peak and
// current resident memory, and, when the draft is a model, how many pages
// of the draft's own token_embd.weight (in its file or in the executable)
// this process has mapped. With shared embeddings that table is never
// read, so its pages stay out of the resident set.
func memReport(w io.Writer, draftEmbd []byte) {
	st, err := procStatus()
	if err != nil {
		fmt.Fprintf(w, "memory: %v\n", err)
		return
	}
	fmt.Fprintf(w, "memory: %s\n", st)
	if draftEmbd == nil {
		return
	}
	if p, n, err := residentPages(draftEmbd); err != nil {
		fmt.Fprintf(w, "memory: draft token_embd.weight: %v\n", err)
	} else {
		fmt.Fprintf(w, "memory: draft's own token_embd.weight (%d bytes): %d of %d pages resident in this process\n", len(draftEmbd), p, n)
	}
}
