package main

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestResidentPages(t *testing.T) {
	ps := os.Getpagesize()
	b, err := syscall.Mmap(-1, 0, 64*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal("mmap:", err)
	}
	defer syscall.Munmap(b)
	p, n, err := residentPages(b)
	if err != nil {
		t.Fatal("pagemap:", err)
	}
	if n != 64 || p != 0 {
		t.Fatalf("fresh mapping: %d of %d pages present, want 0 of 64", p, n)
	}
	for i := 0; i < 10*ps; i += ps {
		b[i] = 1
	}
	if p, n, _ = residentPages(b); p != 10 || n != 64 {
		t.Fatalf("after writing 10 pages: %d of %d present", p, n)
	}
	var w bytes.Buffer
	memReport(&w, b[:10*ps])
	for _, want := range []string{"VmHWM ", "RssFile ", "10 of 10 pages resident"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("report %q lacks %q", w.String(), want)
		}
	}
}
