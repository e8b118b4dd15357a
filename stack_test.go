package fx_test

import (
	"bytes"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fxhq/fx"
)

// panicLine is the line of the panic in panickingHandler, for the frame
// the development log must start with. Parallel tests store the same
// value: an atomic, so that the race detector has nothing to report.
var panicLine atomic.Int64

func panickingHandler(c *fx.Ctx) error {
	_, _, line, _ := runtime.Caller(0)
	panicLine.Store(int64(line))
	panic("kaboom") // must stay two lines after runtime.Caller
}

// In Development mode a panic's stack is logged as an array, one
// "function file:line" element per frame, starting at the panicking frame
// (no goroutine header, no recovery frames, no pc offsets).
func TestPanicStackDevelopmentIsFrames(t *testing.T) {
	t.Parallel()
	app, logs := newLogged(fx.Config{Development: true})
	app.Get("/panic", panickingHandler)
	do(t, app, "GET", "/panic", "")
	var frames []any
	for _, rec := range logs.Records(t) {
		if rec["msg"] == "fx: request failed" {
			frames, _ = rec["stack"].([]any)
		}
	}
	if len(frames) < 2 {
		t.Fatalf("stack is not an array of frames: %s", logs)
	}
	want := "github.com/fxhq/fx_test.panickingHandler "
	wantLine := "stack_test.go:" + strconv.Itoa(int(panicLine.Load())+2)
	if first, _ := frames[0].(string); !strings.HasPrefix(first, want) || !strings.HasSuffix(first, wantLine) {
		t.Errorf("first frame %q, want %q...%q", first, want, wantLine)
	}
	for _, f := range frames {
		s, _ := f.(string)
		if strings.ContainsAny(s, "\n\t") || strings.Contains(s, "+0x") || strings.Contains(s, "debug.Stack") || strings.HasPrefix(s, "goroutine") {
			t.Errorf("frame %q is not one clean frame", s)
		}
	}
}

// In production the stack stays one string: one line in a text log.
func TestPanicStackProductionIsOneLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	app := fx.New(fx.Config{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	app.Get("/panic", panickingHandler)
	do(t, app, "GET", "/panic", "")
	out := strings.TrimSuffix(buf.String(), "\n")
	if strings.Count(out, "\n") != 0 || !strings.Contains(out, `stack="goroutine `) || !strings.Contains(out, `\n\t`) {
		t.Errorf("production stack is not the raw stack on one line: %s", out)
	}
}
