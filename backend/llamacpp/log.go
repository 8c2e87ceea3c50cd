package llamacpp

import (
	"io"
	"strings"
	"sync"
)

// What llama.cpp logs (through llama_log_set, which also sets ggml's
// logger): every line goes to the writer SetLog gave (none by default), and
// the last error lines are kept so that the error of a failed call can
// quote them.
var logs struct {
	mu    sync.Mutex
	w     io.Writer
	line  strings.Builder // the line being assembled (CONT continues it)
	level int32           // of the line being assembled
	errs  []string        // recent error lines, oldest first
	seq   int             // error lines seen so far
}

// ggml_log_level values.
const (
	logDebug = 1
	logError = 4
	logCont  = 5
)

const maxErrLines = 8

// SetLog sends llama.cpp's log (model loading, devices, warnings) to w;
// nil discards it, the default. Error lines are also quoted in this
// package's errors either way.
func SetLog(w io.Writer) {
	logs.mu.Lock()
	logs.w = w
	logs.mu.Unlock()
}

// logText records one piece of log text at level.
func logText(level int32, text string) {
	logs.mu.Lock()
	defer logs.mu.Unlock()
	if level != logCont {
		logs.level = level
	}
	if logs.w != nil && level != logDebug {
		io.WriteString(logs.w, text)
	}
	if logs.level != logError {
		return
	}
	logs.line.WriteString(text)
	s := logs.line.String()
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		if l := strings.TrimSpace(s[:i]); l != "" {
			logs.errs = append(logs.errs, l)
			if len(logs.errs) > maxErrLines {
				logs.errs = logs.errs[1:]
			}
			logs.seq++
		}
		s = s[i+1:]
	}
	logs.line.Reset()
	logs.line.WriteString(s)
}

// logMark returns a mark for logTail: the count of error lines so far.
func logMark() int {
	logs.mu.Lock()
	defer logs.mu.Unlock()
	return logs.seq
}

// logTail returns the error lines logged since mark as ": line; line", or
// "" if there were none.
func logTail(mark int) string {
	logs.mu.Lock()
	defer logs.mu.Unlock()
	n := min(logs.seq-mark, len(logs.errs))
	if n <= 0 {
		return ""
	}
	return " (llama.cpp: " + strings.Join(logs.errs[len(logs.errs)-n:], "; ") + ")"
}
