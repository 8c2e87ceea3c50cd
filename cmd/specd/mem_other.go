//go:build !linux

package main

import "errors"

var errNoProc = errors.New("needs Linux's /proc")

func procStatus() (string, error) { return "", errNoProc }

func residentPages(b []byte) (present, total int, err error) { return 0, 0, errNoProc }
