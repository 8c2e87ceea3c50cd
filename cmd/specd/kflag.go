package main

import (
	"fmt"
	"strconv"

	"github.com/specd-dev/specd/engine"
)

// adaptiveK is the largest draft length of --adaptive without -k.
const adaptiveK = 4

// kFlag is -k: a fixed draft length N (the largest with --adaptive), or
// "auto" (the default): each step's k in [0, engine.AutoK] from measured
// costs and acceptance (engine.Options.Auto).
type kFlag struct{ o *engine.Options }

func (f kFlag) String() string {
	switch {
	case f.o == nil:
		return ""
	case f.o.Auto:
		return "auto"
	}
	return strconv.Itoa(f.o.K)
}

func (f kFlag) Set(v string) error {
	if v == "auto" {
		f.o.Auto, f.o.K = true, engine.AutoK
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("want a draft length or auto")
	}
	f.o.Auto, f.o.K = false, n
	return nil
}
