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
// costs and acceptance (engine.Options.Auto). set records that -k was
// given.
type kFlag struct {
	o   *engine.Options
	set *bool
}

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
	*f.set = true
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

// adaptiveFlag is --adaptive. It replaces the default auto draft length
// (up to adaptiveK tokens, or -k's N); with -k auto it is an error
// (engine.Options.Check).
type adaptiveFlag struct {
	o    *engine.Options
	kSet *bool
}

func (f adaptiveFlag) String() string {
	if f.o == nil {
		return "false"
	}
	return strconv.FormatBool(f.o.Adaptive)
}

func (f adaptiveFlag) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	f.o.Adaptive = b
	if b && !*f.kSet {
		f.o.Auto, f.o.K = false, adaptiveK
	}
	return nil
}

func (f adaptiveFlag) IsBoolFlag() bool { return true }
