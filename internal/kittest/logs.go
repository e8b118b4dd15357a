package kittest

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// LogBuffer is the io.Writer of a slog handler whose output a test reads
// while the App writes (it is safe for concurrent use).
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Reset drops what was written so far, its memory included.
func (l *LogBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = bytes.Buffer{}
}

// Lines returns the lines written so far that hold sub.
func (l *LogBuffer) Lines(sub string) []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

// Records decodes the JSON records written so far (LogRecords).
func (l *LogBuffer) Records(t testing.TB) []map[string]any {
	t.Helper()
	return LogRecords(t, l.String())
}

// LogRecords decodes text, the output of a slog JSON handler, into its
// records (one a line), failing the test at a line that is not JSON.
func LogRecords(t testing.TB, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}
