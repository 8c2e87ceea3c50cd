//go:build race

package stages_test

// raceEnabled trims the model-based test matrix under the race detector,
// which slows the forward pass tenfold; the fake-model tests keep the full
// matrix.
const raceEnabled = true
