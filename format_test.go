package fx_test

import (
	"fmt"
	"log/slog"
	"strings"
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
