package fx_test

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/validate"
)

// seen is what an OnResponse observer saw of one request.
type seen struct {
	method, path, route, code string
	status                    int
	dur                       time.Duration
	ip                        string
	body                      string
	attrs                     string
}

// recordResponses registers an observer that sends what it sees on the
// returned channel.
func recordResponses(app *fx.App) chan seen {
	ch := make(chan seen, 128)
	app.OnResponse(func(c *fx.Ctx) {
		var attrs []string
		for _, a := range c.LogAttrs() {
			attrs = append(attrs, a.String())
		}
		ch <- seen{
			method: c.Method(), path: c.Path(), route: c.Route(), code: c.ErrorCode(),
			status: c.Status(), dur: c.Duration(), ip: c.RequestCtx().RemoteIP().String(),
			body: string(c.RequestCtx().Response.Body()), attrs: strings.Join(attrs, " "),
		}
	})
	return ch
}

// observedA returns an App of cfg, quiet, with the one route GET /a
// answering "a", shut down at the end of the test, and the channel of its
// observations (recordResponses).
func observedA(t *testing.T, cfg fx.Config) (*fx.App, chan seen) {
	app := quietFor(t, cfg)
	ch := recordResponses(app)
	app.Get("/a", func(c *fx.Ctx) error { return c.String(200, "a") })
	return app, ch
}

// nextSeen returns the next observation, failing after a bound.
func nextSeen(t *testing.T, ch chan seen) seen {
	t.Helper()
	return kittest.Within(t, ch, "no OnResponse observation")
}

// noMoreSeen fails if another observation arrives within a short while
// (the once-per-request guarantee).
func noMoreSeen(t *testing.T, ch chan seen) {
	t.Helper()
	select {
	case s := <-ch:
		t.Fatalf("request observed twice; extra observation %+v", s)
	case <-time.After(50 * time.Millisecond):
	}
}

// Observation: Resolve reports, after next(), exactly the status and code the
// boundary then sends, for every shape of failure, in production and in
// development mode.
func TestResolveAgreesWithTheBoundary(t *testing.T) {
	appErr := fx.NewError(409, "APP_CONFLICT", "taken")
	var typedNil *fx.Error
	cases := map[string]func(*fx.Ctx) error{
		"error-value":       func(*fx.Ctx) error { return appErr },
		"wrapped":           func(*fx.Ctx) error { return fmt.Errorf("ctx: %w", appErr) },
		"joined":            func(*fx.Ctx) error { return errors.Join(errors.New("a"), appErr) },
		"as-method":         func(*fx.Ctx) error { return asOnlyErr{appErr} },
		"plain":             func(*fx.Ctx) error { return errors.New("db down") },
		"typed-nil":         func(*fx.Ctx) error { return typedNil },
		"status-200":        func(*fx.Ctx) error { return fx.NewError(200, "APP_ODD", "not an error status") },
		"status-600":        func(*fx.Ctx) error { return fx.NewError(600, "APP_ODD", "out of range") },
		"catalog-503":       func(*fx.Ctx) error { return fx.NewError(503, fx.ErrorCodes.ServiceUnavailable, "busy") },
		"panic-string":      func(*fx.Ctx) error { panic("boom") },
		"panic-error-value": func(*fx.Ctx) error { panic(appErr) },
		"panic-wrapped":     func(*fx.Ctx) error { panic(fmt.Errorf("x: %w", appErr)) },
		"validation-422":    nil, // a Route contract, below
	}
	for _, dev := range []bool{false, true} {
		app := quiet(fx.Config{Development: dev})
		var status atomic.Int64
		var code atomic.Value
		app.Use(func(c *fx.Ctx, next fx.Next) error {
			err := next()
			s, cd := fx.Resolve(err)
			status.Store(int64(s))
			code.Store(cd)
			return err
		})
		for name, h := range cases {
			if h == nil {
				app.Route(fx.Route{Method: "POST", Path: "/validation-422", Body: validate.Object(validate.Fields{"name": validate.String()}),
					Handler: func(c *fx.Ctx) error { return nil }})
				continue
			}
			app.Get("/"+name, h)
		}
		for name := range cases {
			method := "GET"
			body := ""
			if cases[name] == nil {
				method, body = "POST", "{}"
			}
			r := do(t, app, method, "/"+name, body)
			env := checkEnvelopeBody(t, r.body, "")
			if int(status.Load()) != r.status || code.Load() != env.Code {
				t.Errorf("dev=%v %s: Resolve gave %d %v, the boundary sent %d %s", dev, name, status.Load(), code.Load(), r.status, env.Code)
			}
		}
		_ = app.Shutdown()
	}
	if s, c := fx.Resolve(nil); s != 0 || c != "" {
		t.Errorf("Resolve(nil) = %d %q, want 0 \"\"", s, c)
	}
}

// asOnlyErr finds its *Error only through an As method.
type asOnlyErr struct{ e *fx.Error }

func (a asOnlyErr) Error() string { return "as" }
func (a asOnlyErr) As(target any) bool {
	if p, ok := target.(**fx.Error); ok {
		*p = a.e
		return true
	}
	return false
}

// Observation: observers see every request's final status, code and route
// pattern: a success, the 404 (even with no middleware and no hook, where
// fx answers without a Ctx otherwise), a validation failure, a panic, a
// hook-written response (its status, the failure's code), a group route.
func TestOnResponseSeesTheFinalOutcome(t *testing.T) {
	t.Parallel()
	app := quiet()
	ch := recordResponses(app)
	app.Get("/users/:id", func(c *fx.Ctx) error {
		time.Sleep(2 * time.Millisecond)
		return c.JSON(200, c.Param("id"))
	})
	app.Route(fx.Route{Method: "POST", Path: "/items", Body: validate.Object(validate.Fields{"name": validate.String()}),
		Handler: func(c *fx.Ctx) error { return nil }})
	app.Get("/panic", func(*fx.Ctx) error { panic("boom") })
	app.Get("/busy", func(*fx.Ctx) error { return fx.NewError(429, "APP_SLOW_DOWN", "later") })
	app.Group("/v1").Get("/files/*path", func(c *fx.Ctx) error { return c.String(200, "f") })
	app.OnError(func(c *fx.Ctx, err any) bool {
		if e, ok := err.(*fx.Error); ok && e.Code == "APP_SLOW_DOWN" {
			return c.JSON(503, map[string]string{"custom": "replaced"}) == nil
		}
		return false
	})
	t.Cleanup(func() { app.Shutdown() })

	for _, tc := range []struct {
		method, target, body string
		route, code          string
		status               int
	}{
		{"GET", "/users/7", "", "/users/:id", "", 200},
		{"GET", "/nope", "", "", fx.ErrorCodes.NotFound, 404},
		{"POST", "/items", "{}", "/items", fx.ErrorCodes.ValidationError, 422},
		{"GET", "/panic", "", "/panic", fx.ErrorCodes.InternalError, 500},
		{"GET", "/busy", "", "/busy", "APP_SLOW_DOWN", 503},
		{"GET", "/v1/files/a/b", "", "/v1/files/*path", "", 200},
		{"HEAD", "/users/8", "", "/users/:id", "", 200},
	} {
		r := do(t, app, tc.method, tc.target, tc.body)
		s := nextSeen(t, ch)
		if r.status != tc.status || s.status != tc.status || s.code != tc.code || s.route != tc.route || s.method != tc.method {
			t.Errorf("%s %s: client %d; observed %d %q route %q method %s; want %d %q route %q",
				tc.method, tc.target, r.status, s.status, s.code, s.route, s.method, tc.status, tc.code, tc.route)
		}
		if tc.method != "HEAD" && s.body != string(r.body) {
			t.Errorf("%s: observed body %q, client got %q", tc.target, s.body, r.body)
		}
	}
	noMoreSeen(t, ch)
	// The duration covers the handler (which sleeps 2 ms).
	do(t, app, "GET", "/users/1", "")
	if s := nextSeen(t, ch); s.dur < 2*time.Millisecond || s.dur > time.Minute {
		t.Errorf("Duration = %v, want at least the handler's 2ms", s.dur)
	}
}

// Observation: observers run in registration order; one that panics is
// recovered and logged with the request's log attributes, and neither the
// response nor the next observer suffers.
func TestOnResponseOrderAndPanickingObserver(t *testing.T) {
	app, logs := newLogged()
	var order []string
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.AddLogAttrs(slog.String("request_id", "rid-9"))
		return next()
	})
	app.OnResponse(func(c *fx.Ctx) { order = append(order, "first") })
	app.OnResponse(func(c *fx.Ctx) { panic("observer exploded") })
	app.OnResponse(func(c *fx.Ctx) { order = append(order, "third:"+strconv.Itoa(c.Status())) })
	app.Get("/", func(c *fx.Ctx) error { return c.String(201, "made") })
	t.Cleanup(func() { app.Shutdown() })
	r := do(t, app, "GET", "/", "")
	if r.status != 201 || string(r.body) != "made" {
		t.Fatalf("response broken by a panicking observer: %d %q", r.status, r.body)
	}
	if strings.Join(order, ",") != "first,third:201" {
		t.Errorf("observers ran as %v", order)
	}
	found := false
	for _, rec := range logs.Records(t) {
		if rec["level"] == "ERROR" && rec["panic"] == "observer exploded" && rec["request_id"] == "rid-9" {
			found = true
		}
	}
	if !found {
		t.Errorf("observer panic not logged with the request's attributes: %s", logs)
	}
}

// Observation: transport errors (fasthttp never hands them to a handler) and
// framing refusals are observed, with their code, Route "" and Duration 0.
func TestOnResponseSeesTransportErrors(t *testing.T) {
	app := quiet(fx.Config{BodyLimit: 1024, HeaderLimit: 2048})
	ch := recordResponses(app)
	app.Post("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	addr := fxtest.Serve(t, app)
	for _, tc := range []struct {
		name, raw string
		status    int
		code      string
	}{
		{"body too large", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + strings.Repeat("b", 5000), 413, fx.ErrorCodes.PayloadTooLarge},
		{"headers too large", "POST / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("h", 4000) + "\r\n\r\n", 431, fx.ErrorCodes.HeadersTooLarge},
		{"malformed", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: <evil>\r\n\r\n", 400, fx.ErrorCodes.BadRequest},
		{"framing", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, fx.ErrorCodes.BadRequest},
	} {
		r := rawExchange(t, addr, 0, tc.raw)
		mustEnvelope(t, r, tc.status, tc.code)
		s := nextSeen(t, ch)
		if s.status != tc.status || s.code != tc.code || s.route != "" || s.dur != 0 || s.body != string(r.body) {
			t.Errorf("%s: observed %+v; want %d %s, route \"\", duration 0, the envelope sent", tc.name, s, tc.status, tc.code)
		}
		if s.ip != "127.0.0.1" {
			t.Errorf("%s: remote IP %q", tc.name, s.ip)
		}
	}
}

// Observation: the over-capacity 503, written on a refused connection without
// a RequestCtx, is observed with the request head the client sent, the
// connection's address and the 503 envelope.
func TestOnResponseSeesTheOverCapacity503(t *testing.T) {
	t.Parallel()
	app := quiet(fx.Config{Concurrency: 1})
	ch := recordResponses(app)
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	addr := fxtest.Serve(t, app)
	first := dialBounded(t, addr, 10*time.Second) // a bound
	defer first.Close()
	if r := roundTripRaw(t, first, bufio.NewReader(first), "GET", "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); r.status != 200 {
		t.Fatalf("first connection: %d %q", r.status, r.body)
	}
	if s := nextSeen(t, ch); s.status != 200 {
		t.Fatalf("first request observed as %+v", s)
	}
	// first stays open and holds the only slot.
	r := rawExchange(t, addr, 0, "GET /over/there?q=1 HTTP/1.1\r\nHost: x\r\nUser-Agent: probe\r\n\r\n")
	mustEnvelope(t, r, 503, fx.ErrorCodes.ServiceUnavailable)
	s := nextSeen(t, ch)
	if s.status != 503 || s.code != fx.ErrorCodes.ServiceUnavailable || s.route != "" || s.method != "GET" ||
		s.path != "/over/there" || s.ip != "127.0.0.1" || s.body != string(r.body) || s.dur <= 0 {
		t.Errorf("503 observed as %+v", s)
	}
}

// Observation: responses written without a Ctx are observed too, once: a
// router redirect and a failed boot's 500 (with the boot error's code).
func TestOnResponseSeesRedirectsAndFailedBoot(t *testing.T) {
	t.Parallel()
	app, ch := observedA(t, fx.Config{RedirectTrailingSlash: true})
	r := do(t, app, "GET", "/a/", "")
	s := nextSeen(t, ch)
	if r.status != 301 || s.status != 301 || s.code != "" || s.route != "" || s.path != "/a/" {
		t.Errorf("redirect: client %d, observed %+v", r.status, s)
	}
	do(t, app, "GET", "/a", "")
	if s := nextSeen(t, ch); s.route != "/a" || s.status != 200 {
		t.Errorf("route behind the redirect wrapper observed as %+v", s)
	}
	noMoreSeen(t, ch)

	broken := quiet()
	bch := recordResponses(broken)
	broken.Route(fx.Route{Method: "GET", Path: "/x"}) // no handler: boot fails
	t.Cleanup(func() { broken.Shutdown() })
	r = do(t, broken, "GET", "/x", "")
	mustEnvelope(t, r, 500, fx.ErrorCodes.RouteHandlerRequired)
	if s := nextSeen(t, bch); s.status != 500 || s.code != fx.ErrorCodes.RouteHandlerRequired {
		t.Errorf("failed boot observed as %+v", s)
	}
}

// Observation: the automatic OPTIONS answer is observed (fx routes it through
// its chain when observers are registered, even without middleware).
func TestOnResponseSeesAutomaticOptions(t *testing.T) {
	app, ch := observedA(t, fx.Config{HandleOPTIONS: true})
	r := do(t, app, "OPTIONS", "/a", "")
	s := nextSeen(t, ch)
	if r.status != 200 || s.status != 200 || s.method != "OPTIONS" || r.header.Get("Allow") == "" {
		t.Errorf("OPTIONS: client %d %v, observed %+v", r.status, r.header, s)
	}
}

// ServeError (used by transport adapters) is observed, with its code; a
// request already served and observed (the nethttp adapter calls
// ServeError when the response cannot be written) is not observed again.
func TestOnResponseSeesServeError(t *testing.T) {
	t.Parallel()
	app := quiet()
	ch := recordResponses(app)
	app.Get("/ok", func(c *fx.Ctx) error { return c.String(200, "ok") })
	h := app.Handler()
	rc := kittest.RequestCtx("GET", "/upload")
	app.ServeError(rc, fx.NewError(413, fx.ErrorCodes.PayloadTooLarge, "too big"))
	s := nextSeen(t, ch)
	if s.status != 413 || s.code != fx.ErrorCodes.PayloadTooLarge || s.path != "/upload" {
		t.Errorf("ServeError observed as %+v", s)
	}
	noMoreSeen(t, ch)

	rc = kittest.RequestCtx("GET", "/ok")
	h(rc)
	if s := nextSeen(t, ch); s.status != 200 || s.route != "/ok" {
		t.Errorf("served request observed as %+v", s)
	}
	rc.Response.Reset()
	app.ServeError(rc, errors.New("write failed"))
	noMoreSeen(t, ch)
}

// Ctx.Status is the current status everywhere: before next() the default
// 200, after next() what the handler wrote; an error from next() is not
// written yet (Resolve tells its status).
func TestCtxStatusInMiddleware(t *testing.T) {
	app := quiet()
	var before, after, resolved int
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		before = c.Status()
		err := next()
		after = c.Status()
		resolved, _ = fx.Resolve(err)
		return err
	})
	app.Get("/ok", func(c *fx.Ctx) error { return c.String(202, "accepted") })
	app.Get("/fail", func(c *fx.Ctx) error { return fx.NewError(404, "APP_GONE", "gone") })
	t.Cleanup(func() { app.Shutdown() })
	do(t, app, "GET", "/ok", "")
	if before != 200 || after != 202 || resolved != 0 {
		t.Errorf("ok: before %d after %d resolved %d", before, after, resolved)
	}
	do(t, app, "GET", "/fail", "")
	if after != 200 || resolved != 404 {
		t.Errorf("fail: after %d resolved %d", after, resolved)
	}
}

// Without an observer, serving costs no allocation and with one that does
// nothing neither (the benchmarks give the time).
func TestOnResponseAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, observers := range []int{0, 1} {
		app := quiet()
		for range observers {
			app.OnResponse(func(*fx.Ctx) {})
		}
		app.Get("/hello", func(c *fx.Ctx) error { return c.String(200, "hi") })
		app.Get("/fail", func(c *fx.Ctx) error { return errPrebuilt })
		h := app.Handler()
		for _, path := range []string{"/hello", "/fail", "/nope"} {
			_, serve := benchCtx(h, "GET", path)
			if n := testing.AllocsPerRun(200, serve); n != 0 {
				t.Errorf("%d observers, %s: %.1f allocations per request", observers, path, n)
			}
		}
	}
}

// The declining hook (docs/errors.md): a hook that returns false without writing a
// body keeps the headers it set on the default envelope; Content-Type,
// Content-Length, Content-Encoding and status stay the envelope's.
func TestHookFalseDecoratesTheEnvelope(t *testing.T) {
	app := quiet()
	app.OnError(func(c *fx.Ctx, err any) bool {
		c.SetHeader("X-Request-Id", "rid-1")
		c.SetHeader("Retry-After", "7")
		c.SetHeader("Content-Type", "text/html")
		c.SetHeader("Content-Encoding", "gzip")
		c.SetHeader("Content-Length", "3")
		c.RequestCtx().Response.SetStatusCode(299)
		return false
	})
	app.Get("/", func(c *fx.Ctx) error { return fx.NewError(503, fx.ErrorCodes.ServiceUnavailable, "busy") })
	t.Cleanup(func() { app.Shutdown() })
	r := do(t, app, "GET", "/", "")
	env := mustEnvelope(t, r, 503, fx.ErrorCodes.ServiceUnavailable)
	if env.Message != "busy" {
		t.Errorf("message %q", env.Message)
	}
	if r.header.Get("X-Request-Id") != "rid-1" || r.header.Get("Retry-After") != "7" {
		t.Errorf("decorating headers dropped: %v", r.header)
	}
	if r.header.Get("Content-Encoding") != "" || r.header.Get("Content-Length") != strconv.Itoa(len(r.body)) {
		t.Errorf("body headers leaked: %v (body %d bytes)", r.header, len(r.body))
	}
}

// The declining hook: a hook that wrote a body and then returned false leaks nothing:
// not a byte of its body, not its Content-Type, not its headers.
func TestHookFalseAfterWritingLeaksNothing(t *testing.T) {
	app := quiet()
	app.OnError(func(c *fx.Ctx, err any) bool {
		c.SetHeader("X-Hook", "half")
		_ = c.Send(299, "text/html", []byte("<half-written>"))
		return false
	})
	app.Get("/", func(c *fx.Ctx) error {
		c.SetHeader("X-Request-Id", "rid-2")
		return fx.NewError(409, "APP_CONFLICT", "taken")
	})
	t.Cleanup(func() { app.Shutdown() })
	r := do(t, app, "GET", "/", "")
	mustEnvelope(t, r, 409, "APP_CONFLICT") // checks Content-Type application/json
	if strings.Contains(string(r.body), "half") || r.header.Get("X-Hook") != "" {
		t.Errorf("the declining hook's response leaked: %q %v", r.body, r.header)
	}
	if r.header.Get("X-Request-Id") != "rid-2" {
		t.Error("header set before the failure dropped")
	}
}

// WriteError writes the boundary's default envelope (production rules
// included) from a hook that then returns true, so the hook can decorate
// it; ErrorCode is the code written.
func TestWriteErrorFromHookAndMiddleware(t *testing.T) {
	app := quiet()
	ch := recordResponses(app)
	app.OnError(func(c *fx.Ctx, err any) bool {
		c.SetHeader("X-Decorated", "1")
		c.WriteError(err)
		return true
	})
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		err := next()
		if c.Path() == "/swallowed" && err != nil {
			c.WriteError(err)
			return nil
		}
		return err
	})
	app.Get("/panic", func(*fx.Ctx) error { panic("secret internals") })
	app.Get("/conflict", func(*fx.Ctx) error { return fx.NewError(409, "APP_CONFLICT", "taken", map[string]int{"id": 3}) })
	app.Get("/swallowed", func(*fx.Ctx) error { return fmt.Errorf("x: %w", fx.NewError(402, "APP_PAY", "pay")) })
	t.Cleanup(func() { app.Shutdown() })

	r := do(t, app, "GET", "/panic", "")
	env := mustEnvelope(t, r, 500, fx.ErrorCodes.InternalError)
	if env.Message != "Internal server error" || r.header.Get("X-Decorated") != "1" {
		t.Errorf("panic: %q %v", r.body, r.header)
	}
	if s := nextSeen(t, ch); s.code != fx.ErrorCodes.InternalError {
		t.Errorf("panic observed with code %q", s.code)
	}
	r = do(t, app, "GET", "/conflict", "")
	env = mustEnvelope(t, r, 409, "APP_CONFLICT")
	if string(env.Details) != `{"id":3}` {
		t.Errorf("details %s", env.Details)
	}
	nextSeen(t, ch)
	r = do(t, app, "GET", "/swallowed", "")
	mustEnvelope(t, r, 402, "APP_PAY")
	if s := nextSeen(t, ch); s.code != "APP_PAY" || s.status != 402 {
		t.Errorf("swallowed error observed as %+v", s)
	}
}

// Request log attributes reach the boundary's 5xx line and the hook
// failure line.
func TestLogAttrsOnBoundaryLines(t *testing.T) {
	app, logs := newLogged()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.AddLogAttrs(slog.String("request_id", "rid-3"), slog.Int("shard", 4))
		return next()
	})
	app.OnError(func(c *fx.Ctx, err any) bool { panic("hook down") })
	app.Get("/", func(*fx.Ctx) error { return errors.New("db down") })
	t.Cleanup(func() { app.Shutdown() })
	do(t, app, "GET", "/", "")
	var failed, hook bool
	for _, rec := range logs.Records(t) {
		if rec["request_id"] != "rid-3" || rec["shard"] != 4.0 {
			continue
		}
		switch {
		case rec["msg"] == "fx: request failed":
			failed = true
		case strings.Contains(fmt.Sprint(rec["msg"]), "hook panicked"):
			hook = true
		}
	}
	if !failed || !hook {
		t.Errorf("request attributes missing (5xx line %v, hook line %v): %s", failed, hook, logs)
	}
}
