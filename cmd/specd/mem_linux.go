package main

import (
	"bufio"
	"encoding/binary"
	"os"
	"strings"
	"unsafe"
)

// procStatus returns the memory lines of /proc/self/status that
// --mem-stats prints (peak and current resident set, file-backed and
// anonymous parts).
func procStatus() (string, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "", err
	}
	defer f.Close()
	var parts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		switch k {
		case "VmHWM", "VmRSS", "RssAnon", "RssFile":
			if ok {
				parts = append(parts, k+" "+strings.TrimSpace(v))
			}
		}
	}
	return strings.Join(parts, ", "), sc.Err()
}

// residentPages counts the pages of b that are mapped into this process
// (present in its page table, from /proc/self/pagemap): for a view of a
// mapped file or of the executable, the pages this process has touched
// (plus those the kernel mapped around a fault).
func residentPages(b []byte) (present, total int, err error) {
	if len(b) == 0 {
		return 0, 0, nil
	}
	ps := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&b[0])) / ps
	end := (uintptr(unsafe.Pointer(&b[0])) + uintptr(len(b)) + ps - 1) / ps
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, 8*(end-start))
	if _, err := f.ReadAt(buf, int64(start*8)); err != nil {
		return 0, 0, err
	}
	for i := 0; i < len(buf); i += 8 {
		if binary.LittleEndian.Uint64(buf[i:])&(1<<63) != 0 {
			present++
		}
	}
	return present, len(buf) / 8, nil
}
