package fx_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fxhq/fx"
)

// A panic value that fmt cannot print (a map or slice containing itself)
// must not crash the process through logging or Development messages.
func TestCyclicPanicValue(t *testing.T) {
	cycMap := map[string]any{"k": 1}
	cycMap["self"] = cycMap
	cycSlice := []any{1, nil}
	cycSlice[1] = cycSlice
	type holder struct {
		Name string
		M    map[string]any
	}
	values := map[string]any{
		"map": cycMap, "slice": cycSlice, "struct": holder{"h", cycMap}, "pointer": &holder{"p", cycMap},
	}
	for name, v := range values {
		for _, dev := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s dev=%v", name, dev), func(t *testing.T) {
				lb := &logBuffer{}
				// A text handler formats with fmt, like slog.Default().
				app := fx.New(fx.Config{Development: dev, Logger: slog.New(slog.NewTextHandler(lb, nil))})
				app.OnError(func(c *fx.Ctx, err any) bool { panic(err) }) // the hook-failure log too
				app.Get("/", func(c *fx.Ctx) error { panic(v) })
				check := mustEnvelope
				if dev {
					check = wireEnvelope
				}
				env := check(t, do(t, app, "GET", "/", ""), 500, fx.ErrorCodes.InternalError)
				if dev && !strings.Contains(env.Message, "cyclic") {
					t.Errorf("message %q", env.Message)
				}
				if !strings.Contains(lb.String(), "cyclic") {
					t.Errorf("log: %s", lb)
				}
				pe := &fx.PanicError{Value: v}
				if !strings.Contains(pe.Error(), "cyclic") {
					t.Errorf("PanicError.Error() = %q", pe.Error())
				}
			})
		}
	}
	// Printable composite values are still shown in full.
	pe := &fx.PanicError{Value: map[string][]int{"a": {1, 2}}}
	if pe.Error() != "panic: map[a:[1 2]]" {
		t.Errorf("PanicError.Error() = %q", pe.Error())
	}
	// And a Setup that panics with one.
	app := quiet()
	app.Register(fx.Plugin{Name: "p", Setup: func(*fx.App) error { panic(cycMap) }})
	if err := app.Boot(); err == nil || !strings.Contains(err.Error(), "cyclic") {
		t.Errorf("Boot = %v", err)
	}
}

type cyclicPanicMarshaler struct{}

func (cyclicPanicMarshaler) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	m["m"] = m
	panic(m)
}

// A MarshalJSON that panics with an unprintable value, in details or in
// c.JSON: still an envelope, still running.
func TestMarshalerPanicsWithCyclicValue(t *testing.T) {
	lb := &logBuffer{}
	app := fx.New(fx.Config{Logger: slog.New(slog.NewTextHandler(lb, nil))})
	app.Get("/details", func(c *fx.Ctx) error { return fx.NewError(400, "APP_D", "d", cyclicPanicMarshaler{}) })
	app.Get("/json", func(c *fx.Ctx) error { return c.JSON(200, cyclicPanicMarshaler{}) })
	mustEnvelope(t, do(t, app, "GET", "/details", ""), 400, "APP_D")
	mustEnvelope(t, do(t, app, "GET", "/json", ""), 500, fx.ErrorCodes.InternalError)
	if !strings.Contains(lb.String(), "cyclic") {
		t.Errorf("log: %s", lb)
	}
}

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
	wantLine := "panicformat_test.go:" + strconv.Itoa(int(panicLine.Load())+2)
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
