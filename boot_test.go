package fx_test

import (
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// recorder builds plugins that append their name to a shared log when
// their Setup runs.
type recorder struct {
	mu  sync.Mutex
	ran []string
}

func (r *recorder) plugin(name string, deps ...string) fx.Plugin {
	return fx.Plugin{Name: name, DependsOn: deps, Setup: func(*fx.App) error {
		r.mu.Lock()
		r.ran = append(r.ran, name)
		r.mu.Unlock()
		return nil
	}}
}

// Plugins registered in any order run dependencies first, ties in
// registration order.
func TestPluginOrder(t *testing.T) {
	cases := []struct {
		name    string
		plugins func(r *recorder) []fx.Plugin
		want    string
	}{
		{"dependents first", func(r *recorder) []fx.Plugin {
			return []fx.Plugin{r.plugin("app", "auth", "db"), r.plugin("auth", "db"), r.plugin("db")}
		}, "db,auth,app"},
		{"already ordered", func(r *recorder) []fx.Plugin {
			return []fx.Plugin{r.plugin("db"), r.plugin("auth", "db"), r.plugin("app", "auth", "db")}
		}, "db,auth,app"},
		{"ties in registration order", func(r *recorder) []fx.Plugin {
			return []fx.Plugin{r.plugin("c"), r.plugin("b"), r.plugin("a")}
		}, "c,b,a"},
		{"independent chains interleave by registration", func(r *recorder) []fx.Plugin {
			return []fx.Plugin{r.plugin("x2", "x1"), r.plugin("y1"), r.plugin("x1"), r.plugin("y2", "y1")}
		}, "y1,x1,x2,y2"},
		{"diamond", func(r *recorder) []fx.Plugin {
			return []fx.Plugin{r.plugin("top", "left", "right"), r.plugin("right", "base"), r.plugin("left", "base"), r.plugin("base")}
		}, "base,right,left,top"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			app := quiet()
			for _, p := range tc.plugins(r) {
				app.Register(p)
			}
			if err := app.Boot(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(r.ran, ","); got != tc.want {
				t.Errorf("Setup order %s, want %s", got, tc.want)
			}
		})
	}
}

func TestMissingDependency(t *testing.T) {
	r := &recorder{}
	app := quiet()
	app.Register(r.plugin("db"))
	app.Register(r.plugin("billing", "db", "payments"))
	err := app.Boot()
	var fe *fx.Error
	if !errors.As(err, &fe) || fe.Code != fx.ErrorCodes.PluginMissingDependency || fe.Status != 500 {
		t.Fatalf("Boot = %v", err)
	}
	if !strings.Contains(fe.Message, "billing") || !strings.Contains(fe.Message, "payments") {
		t.Errorf("message %q does not name both plugins", fe.Message)
	}
	if len(r.ran) != 0 {
		t.Errorf("Setup ran for %v despite the missing dependency", r.ran)
	}
}

func TestCycle(t *testing.T) {
	for name, plugins := range map[string][][]string{
		"three": {{"a", "b"}, {"b", "c"}, {"c", "a"}, {"d"}},
		"self":  {{"solo", "solo"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := &recorder{}
			app := quiet()
			for _, p := range plugins {
				app.Register(r.plugin(p[0], p[1:]...))
			}
			err := app.Boot()
			var fe *fx.Error
			if !errors.As(err, &fe) || fe.Code != fx.ErrorCodes.PluginDependencyCycle || fe.Status != 500 {
				t.Fatalf("Boot = %v", err)
			}
			want := "a -> b -> c -> a"
			if name == "self" {
				want = "solo -> solo"
			}
			if !strings.Contains(fe.Message, want) {
				t.Errorf("cycle message %q does not name the cycle %s", fe.Message, want)
			}
			if len(r.ran) != 0 {
				t.Errorf("Setup ran: %v", r.ran)
			}
		})
	}
}

func TestSetupErrorAbortsBoot(t *testing.T) {
	boom := errors.New("cannot connect")
	r := &recorder{}
	app := quiet()
	app.Register(r.plugin("later", "db"))
	app.Register(fx.Plugin{Name: "db", Setup: func(*fx.App) error { return boom }})
	err := app.Boot()
	if !errors.Is(err, boom) {
		t.Fatalf("Boot = %v, want the Setup error", err)
	}
	if len(r.ran) != 0 {
		t.Errorf("Setup after the failing one ran: %v", r.ran)
	}
	if app.Listen("127.0.0.1:0") == nil {
		t.Error("Listen started after a failed Setup")
	}
}

func TestSetupPanic(t *testing.T) {
	app := quiet()
	app.Register(fx.Plugin{Name: "wild", Setup: func(*fx.App) error { panic("setup exploded") }})
	err := app.Boot()
	var fe *fx.Error
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "wild") {
		t.Fatalf("Boot = %v", err)
	}
	mustEnvelope(t, do(t, app, "GET", "/", ""), 500, fe.Code)
}

// Setup may register routes, middleware and the hook; they behave as if
// registered before boot.
func TestSetupRegisters(t *testing.T) {
	var hooked atomic.Int32
	app := quiet()
	app.Get("/early", func(c *fx.Ctx) error { return c.String(200, "early") })
	app.Register(fx.Plugin{Name: "web", DependsOn: []string{"mw"}, Setup: func(a *fx.App) error {
		a.Get("/plugin", func(c *fx.Ctx) error { return c.String(200, "plugin") })
		a.Route(fx.Route{Method: "GET", Path: "/route", Handler: func(c *fx.Ctx) error { return errors.New("x") }})
		a.OnError(func(c *fx.Ctx, err any) bool { hooked.Add(1); return false })
		return nil
	}})
	app.Register(fx.Plugin{Name: "mw", Setup: func(a *fx.App) error {
		a.Use(func(c *fx.Ctx, next fx.Next) error { c.SetHeader("X-Plugin-MW", "1"); return next() })
		return nil
	}})
	for _, p := range []string{"/early", "/plugin"} {
		r := do(t, app, "GET", p, "")
		if r.status != 200 || r.header.Get("X-Plugin-MW") != "1" {
			t.Errorf("%s: %d %v", p, r.status, r.header)
		}
	}
	r := do(t, app, "GET", "/route", "")
	mustEnvelope(t, r, 500, fx.ErrorCodes.InternalError)
	if hooked.Load() != 1 || r.header.Get("X-Plugin-MW") != "1" {
		t.Errorf("hook ran %d times; headers %v", hooked.Load(), r.header)
	}
}

// Configuration errors are recorded and all returned by Boot.
func TestConfigurationErrorsJoined(t *testing.T) {
	app := quiet()
	app.Route(fx.Route{Method: "GET", Path: "/a"})
	app.Route(fx.Route{Method: "POST", Path: "/b"})
	app.Handle("GET", "/c", nil)
	app.Get("/ok", func(c *fx.Ctx) error { return c.String(200, "ok") })
	app.Register(fx.Plugin{Name: "p", DependsOn: []string{"ghost"}})
	codes := map[string]int{}
	var msgs []string
	for _, fe := range bootErrors(t, app) {
		msgs = append(msgs, fe.Error())
		codes[fe.Code]++
		if fe.Code == fx.ErrorCodes.RouteHandlerRequired && fe.Status != 500 {
			t.Errorf("status %d", fe.Status)
		}
	}
	if codes[fx.ErrorCodes.RouteHandlerRequired] != 3 || codes[fx.ErrorCodes.PluginMissingDependency] != 1 {
		t.Errorf("codes %v", codes)
	}
	for _, want := range []string{"GET /a", "POST /b", "GET /c"} {
		if !strings.Contains(strings.Join(msgs, "\n"), want) {
			t.Errorf("Boot error does not name %s: %q", want, msgs)
		}
	}
	// Listen refuses to start; Serve closes the listener.
	if err := app.Listen("127.0.0.1:0"); err == nil {
		t.Error("Listen started")
	}
	ln, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	if err := app.Serve(ln); err == nil {
		t.Error("Serve started")
	}
	if _, aerr := ln.Accept(); aerr == nil {
		t.Error("Serve left the listener open")
	}
	// The handler of a failed boot answers every request, even a valid
	// route, with the 500 envelope of the boot error.
	for _, p := range []string{"/ok", "/a", "/nope"} {
		r := do(t, app, "GET", p, "")
		env := mustEnvelope(t, r, 500, "")
		if env.Code != fx.ErrorCodes.RouteHandlerRequired && env.Code != fx.ErrorCodes.PluginMissingDependency {
			t.Errorf("%s: code %s", p, env.Code)
		}
	}
}

// A failed boot whose error is not an *fx.Error answers the production 500.
func TestFailedBootPlainError(t *testing.T) {
	app := quiet()
	app.Register(fx.Plugin{Name: "db", Setup: func(*fx.App) error { return errors.New("password=hunter2") }})
	r := do(t, app, "GET", "/", "")
	env := mustEnvelope(t, r, 500, fx.ErrorCodes.InternalError)
	if env.Message != "Internal server error" || strings.Contains(string(r.body), "hunter2") {
		t.Errorf("body %s", r.body)
	}
}

// Boot is idempotent and safe from many goroutines: Setup runs once, every
// caller gets the same result.
func TestBootIdempotentConcurrent(t *testing.T) {
	for _, fail := range []bool{false, true} {
		var setups atomic.Int32
		app := quiet()
		app.Register(fx.Plugin{Name: "p", Setup: func(a *fx.App) error {
			setups.Add(1)
			a.Get("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
			if fail {
				return errors.New("fail")
			}
			return nil
		}})
		var wg sync.WaitGroup
		errs := make([]error, 16)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if i%2 == 0 {
					errs[i] = app.Boot()
				} else {
					app.Handler()
					errs[i] = app.Boot()
				}
			}()
		}
		wg.Wait()
		if setups.Load() != 1 {
			t.Errorf("Setup ran %d times", setups.Load())
		}
		for _, err := range errs {
			if (err != nil) != fail || err != errs[0] {
				t.Errorf("fail=%v: Boot results differ: %v vs %v", fail, err, errs[0])
			}
		}
		if fail {
			continue
		}
		if r := do(t, app, "GET", "/", ""); r.status != 200 {
			t.Errorf("status %d", r.status)
		}
	}
}

// Registering after Boot panics with a clear message (the route table is
// immutable).
func TestRegisterAfterBootPanics(t *testing.T) {
	app := quiet()
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		r := recover()
		if s, _ := r.(string); !strings.Contains(s, "after the app booted") {
			t.Errorf("recover() = %v", r)
		}
	}()
	app.Get("/late", func(c *fx.Ctx) error { return nil })
}

// A Setup may register further plugins: they are set up in the same Boot,
// after the plugin that registered them and their own dependencies.
func TestSetupRegistersPlugin(t *testing.T) {
	r := &recorder{}
	app := quiet()
	app.Register(r.plugin("db"))
	app.Register(fx.Plugin{Name: "bundle", Setup: func(a *fx.App) error {
		r.plugin("bundle")
		a.Register(r.plugin("child", "db", "grandchild"))
		a.Register(r.plugin("grandchild"))
		return nil
	}})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.ran, ","); got != "db,grandchild,child" {
		t.Errorf("Setup order %s", got)
	}
	// A plugin registered during Setup with a missing dependency is
	// reported like any other.
	app = quiet()
	app.Register(fx.Plugin{Name: "bundle", Setup: func(a *fx.App) error {
		a.Register(fx.Plugin{Name: "child", DependsOn: []string{"ghost"}})
		return nil
	}})
	var fe *fx.Error
	if err := app.Boot(); !errors.As(err, &fe) || fe.Code != fx.ErrorCodes.PluginMissingDependency {
		t.Errorf("Boot = %v", err)
	}
}

// A nil middleware is a configuration error reported by Boot, not a 500 on
// every request.
func TestNilMiddlewareIsBootError(t *testing.T) {
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error { return next() }, nil)
	err := app.Boot()
	var fe *fx.Error
	if !errors.As(err, &fe) || !strings.Contains(fe.Message, "nil middleware") {
		t.Fatalf("Boot = %v", err)
	}
}

// A Setup may reach the server (to adjust a fasthttp field) or the handler
// without deadlocking Boot.
func TestSetupUsesServerAndHandler(t *testing.T) {
	app := quiet()
	var h fasthttp.RequestHandler
	app.Register(fx.Plugin{Name: "tuning", Setup: func(a *fx.App) error {
		a.Server().MaxRequestsPerConn = 1000
		h = a.Handler()
		a.Get("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
		return nil
	}})
	done := make(chan error, 1)
	go func() { done <- app.Boot() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // a bound, not a timing assertion
		t.Fatal("Boot deadlocked")
	}
	if r := do(t, app, "GET", "/", ""); string(r.body) != "ok" {
		t.Errorf("body %q", r.body)
	}
	rc := serveRaw(h, "GET", "/")
	if string(rc.Response.Body()) != "ok" {
		t.Errorf("handler from Setup: %q", rc.Response.Body())
	}
}

// TestConfigErrorsShareOneWording: every configuration error Boot reports
// (other than a nil handler) is an FX_INTERNAL_ERROR worded "<what>:
// <problem>", with what named as the application wrote it.
func TestConfigErrorsShareOneWording(t *testing.T) {
	ok := func(c *fx.Ctx) error { return c.NoContent(204) }
	app := quiet()
	app.Register(fx.Plugin{Name: "twice"})
	app.Register(fx.Plugin{Name: "twice"})
	app.Use(nil)
	app.Group("/x", nil).Get("/a", ok)
	app.Handle("G T", "/m", ok)
	app.Get("nope", ok)
	app.Get("/p/:id/:id", ok)
	app.Get("/d", ok)
	app.Get("/d", ok)
	want := []string{
		`Plugin "twice": registered twice`,
		`App.Use: nil middleware at position 0`,
		`Group "/x": nil middleware at position 0`,
		`Route "G T" "/m": invalid method`,
		`Route GET nope: the path must begin with '/'`,
		`Route GET /p/:id/:id: parameter "id" appears twice`,
		`Route GET /d: registered twice`,
	}
	errs := bootErrors(t, app)
	if len(errs) != len(want) {
		t.Fatalf("Boot joined %d configuration errors, want %d", len(errs), len(want))
	}
	for i, fe := range errs {
		if fe.Code != fx.ErrorCodes.InternalError || fe.Message != want[i] {
			t.Errorf("error %d = %v, want FX_INTERNAL_ERROR %q", i, fe, want[i])
		}
	}

	app = quiet()
	app.Register(fx.Plugin{Name: "p", Setup: func(*fx.App) error { panic("boom") }})
	var fe *fx.Error
	if err := app.Boot(); !errors.As(err, &fe) || fe.Message != `Plugin "p": Setup panicked: boom` {
		t.Errorf("Boot = %v, want the Setup panic worded as a configuration error", err)
	}
}

func TestPluginSetupPanics(t *testing.T) {
	app, logs := newLogged()
	app.Register(fx.Plugin{Name: "db", Setup: func(*fx.App) error {
		panic(&os.PathError{Op: "open", Path: "/etc/app/secret.pem", Err: os.ErrPermission})
	}})
	app.Register(fx.Plugin{Name: "api", DependsOn: []string{"db"}, Setup: func(a *fx.App) error {
		a.Get("/x", func(c *fx.Ctx) error { return nil })
		return nil
	}})
	var bootErr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Boot let the Setup panic through: %v", r)
			}
		}()
		bootErr = app.Boot()
	}()
	var fe *fx.Error
	if !errors.As(bootErr, &fe) {
		t.Fatalf("boot error %v is not an *fx.Error", bootErr)
	}
	if !strings.Contains(bootErr.Error(), "secret.pem") {
		t.Fatalf("the boot error (for the operator) should name the cause: %v", bootErr)
	}
	if err := app.Listen("127.0.0.1:0"); err == nil {
		t.Fatalf("Listen started after a failed boot")
	}
	for _, p := range []string{"/x", "/"} {
		w := do(t, app, "GET", p, "")
		mustEnvelope(t, w, 500, fx.ErrorCodes.InternalError)
	}
	if !strings.Contains(logs.String(), "secret.pem") {
		t.Fatalf("boot failure not logged")
	}
}
