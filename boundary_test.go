package fx_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// Returned errors and panics reach the same boundary; an *fx.Error
// anywhere in the chain gives its own status, code, message and details.
func TestRule1ReturnedAndPanickedErrorsAreTheSame(t *testing.T) {
	teapot := fx.NewError(418, "APP_TEAPOT", "short and stout", map[string]any{"spout": true})
	app := quiet()
	app.Get("/return", func(c *fx.Ctx) error { return teapot })
	app.Get("/panic", func(c *fx.Ctx) error { panic(teapot) })
	app.Get("/wrapped", func(c *fx.Ctx) error { return fmt.Errorf("loading: %w", teapot) })
	app.Get("/joined", func(c *fx.Ctx) error { return errors.Join(errors.New("other"), teapot) })
	app.Get("/panic-wrapped", func(c *fx.Ctx) error { panic(fmt.Errorf("deep: %w", teapot)) })
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		if c.Path() == "/mw-return" {
			return teapot
		}
		if c.Path() == "/mw-panic" {
			panic(teapot)
		}
		return next()
	})
	app.Get("/mw-return", func(c *fx.Ctx) error { return nil })
	app.Get("/mw-panic", func(c *fx.Ctx) error { return nil })

	for _, p := range []string{"/return", "/panic", "/wrapped", "/joined", "/panic-wrapped", "/mw-return", "/mw-panic"} {
		t.Run(p, func(t *testing.T) {
			env := mustEnvelope(t, do(t, app, "GET", p, ""), 418, "APP_TEAPOT")
			if env.Error.Message != "short and stout" {
				t.Errorf("message = %q", env.Error.Message)
			}
			if string(env.Error.Details) != `{"spout":true}` {
				t.Errorf("details = %s", env.Error.Details)
			}
		})
	}
}

func TestRule1AnythingElseIsInternalError(t *testing.T) {
	app := quiet()
	app.Get("/err", func(c *fx.Ctx) error { return errors.New("db password=hunter2") })
	app.Get("/str", func(c *fx.Ctx) error { panic("secret string") })
	app.Get("/int", func(c *fx.Ctx) error { panic(42) })
	app.Get("/nilmap", func(c *fx.Ctx) error {
		var m map[string]int
		//lint:ignore SA5000 the nil-map panic is the runtime error under test
		m["x"] = 1
		return nil
	})
	app.Get("/internal", func(c *fx.Ctx) error {
		return fx.NewError(500, fx.ErrorCodes.InternalError, "leaky detail", map[string]string{"dsn": "x"})
	})
	for _, p := range []string{"/err", "/str", "/int", "/nilmap", "/internal"} {
		t.Run(p, func(t *testing.T) {
			r := do(t, app, "GET", p, "")
			env := mustEnvelope(t, r, 500, fx.ErrorCodes.InternalError)
			if env.Error.Message != "Internal server error" {
				t.Errorf("production message = %q", env.Error.Message)
			}
			if env.Error.Details != nil {
				t.Errorf("production 500 carries details %s", env.Error.Details)
			}
			for _, leak := range []string{"hunter2", "secret", "42", "nil map", "leaky", "goroutine"} {
				if strings.Contains(string(r.body), leak) {
					t.Errorf("body %q leaks %q", r.body, leak)
				}
			}
		})
	}
}

// A handler returning a typed nil *fx.Error (a classic Go mistake) must not
// crash the server: it is an internal error.
func TestTypedNilErrorIsInternalError(t *testing.T) {
	app := quiet()
	app.Get("/", func(c *fx.Ctx) error {
		var e *fx.Error
		return e
	})
	mustEnvelope(t, do(t, app, "GET", "/", ""), 500, fx.ErrorCodes.InternalError)
	// The server still serves.
	mustEnvelope(t, do(t, app, "GET", "/", ""), 500, fx.ErrorCodes.InternalError)
}

// Development mode shows the raw text of a 500.
func TestRule5DevelopmentShowsErrorText(t *testing.T) {
	app := quiet(fx.Config{Development: true})
	app.Get("/err", func(c *fx.Ctx) error { return errors.New("db is down") })
	app.Get("/str", func(c *fx.Ctx) error { panic("boom \"quoted\"") })
	app.Get("/int", func(c *fx.Ctx) error { panic(42) })
	for p, want := range map[string]string{"/err": "db is down", "/str": `boom "quoted"`, "/int": "42"} {
		env := mustEnvelope(t, do(t, app, "GET", p, ""), 500, fx.ErrorCodes.InternalError)
		if !strings.Contains(env.Error.Message, want) {
			t.Errorf("%s: message %q does not contain %q", p, env.Error.Message, want)
		}
	}
}

// The hook sees the raw value: the same pointer, the same string.
func TestRule2HookSeesRawValue(t *testing.T) {
	sentinel := errors.New("sentinel")
	fxErr := fx.NewError(409, "APP_CONFLICT", "conflict")
	type custom struct{ n int }
	cv := &custom{7}

	cases := []struct {
		name string
		h    fx.Handler
		want func(any) bool
	}{
		{"returned error", func(*fx.Ctx) error { return sentinel }, func(v any) bool { return v == sentinel }},
		{"returned *Error", func(*fx.Ctx) error { return fxErr }, func(v any) bool { e, ok := v.(*fx.Error); return ok && e == fxErr }},
		{"panic string", func(*fx.Ctx) error { panic("x") }, func(v any) bool { s, ok := v.(string); return ok && s == "x" }},
		{"panic error", func(*fx.Ctx) error { panic(sentinel) }, func(v any) bool { return v == sentinel }},
		{"panic *Error", func(*fx.Ctx) error { panic(fxErr) }, func(v any) bool { return v == fxErr }},
		{"panic pointer", func(*fx.Ctx) error { panic(cv) }, func(v any) bool { p, ok := v.(*custom); return ok && p == cv }},
		{"panic int", func(*fx.Ctx) error { panic(42) }, func(v any) bool { n, ok := v.(int); return ok && n == 42 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got any
			app := quiet()
			app.OnError(func(c *fx.Ctx, err any) bool { got = err; return false })
			app.Get("/", tc.h)
			do(t, app, "GET", "/", "")
			if !tc.want(got) {
				t.Errorf("hook got %#v (%T)", got, got)
			}
			if _, wrapped := got.(*fx.PanicError); wrapped {
				t.Error("hook got a *PanicError wrapper")
			}
		})
	}
}

// A middleware that passes next()'s error through unchanged: the
// hook still gets the raw panic value, not the PanicError.
func TestRule2HookSeesRawValueThroughMiddleware(t *testing.T) {
	sentinel := errors.New("sentinel")
	for name, h := range map[string]fx.Handler{
		"panic string": func(*fx.Ctx) error { panic("x") },
		"panic error":  func(*fx.Ctx) error { panic(sentinel) },
	} {
		t.Run(name, func(t *testing.T) {
			var got, seenByMW any
			app := quiet()
			app.Use(func(c *fx.Ctx, next fx.Next) error {
				err := next()
				seenByMW = err
				return err // passed through unchanged
			})
			app.OnError(func(c *fx.Ctx, err any) bool { got = err; return false })
			app.Get("/", h)
			mustEnvelope(t, do(t, app, "GET", "/", ""), 500, fx.ErrorCodes.InternalError)
			var pe *fx.PanicError
			if !errors.As(seenByMW.(error), &pe) {
				t.Fatalf("middleware got %T, want *fx.PanicError", seenByMW)
			}
			if got != pe.Value {
				t.Errorf("hook got %#v, want the raw panic value %#v", got, pe.Value)
			}
			if name == "panic error" && got != sentinel {
				t.Errorf("hook got %#v, want sentinel", got)
			}
		})
	}
}

// For an unmatched route the hook gets an *fx.Error FX_NOT_FOUND.
func TestRule2HookSeesNotFound(t *testing.T) {
	var got any
	app := quiet()
	app.OnError(func(c *fx.Ctx, err any) bool { got = err; return false })
	mustEnvelope(t, do(t, app, "GET", "/nope", ""), 404, fx.ErrorCodes.NotFound)
	e, ok := got.(*fx.Error)
	if !ok || e.Code != fx.ErrorCodes.NotFound || e.Status != 404 {
		t.Fatalf("hook got %#v", got)
	}
}

// A hook returning true has written the response; it is sent as is.
func TestRule4HookTrueSendsItsResponse(t *testing.T) {
	app := quiet()
	app.OnError(func(c *fx.Ctx, err any) bool {
		c.SetHeader("X-Hook", "yes")
		_ = c.JSON(503, map[string]string{"custom": fmt.Sprint(err)})
		return true
	})
	app.Get("/", func(c *fx.Ctx) error { return errors.New("down") })
	r := do(t, app, "GET", "/", "")
	if r.status != 503 || string(r.body) != `{"custom":"down"}` || r.header.Get("X-Hook") != "yes" {
		t.Fatalf("got %d %q %v", r.status, r.body, r.header)
	}
}

// A hook that handles the failure writes a fresh body: a Content-Encoding
// the handler set for the body it had begun (now discarded) must not label
// the hook's response, or the client would try to decompress plain JSON.
func TestHookResponseDropsStaleContentEncoding(t *testing.T) {
	app := quiet()
	app.OnError(func(c *fx.Ctx, err any) bool {
		_ = c.JSON(503, map[string]string{"custom": "busy"})
		return true
	})
	app.Get("/", func(c *fx.Ctx) error {
		c.SetHeader("Content-Encoding", "gzip")
		c.SetHeader("X-Request-Id", "req-3")
		return errors.New("down")
	})
	r := do(t, app, "GET", "/", "")
	if r.status != 503 || string(r.body) != `{"custom":"busy"}` {
		t.Fatalf("got %d %q", r.status, r.body)
	}
	if ce := r.header.Get("Content-Encoding"); ce != "" {
		t.Errorf("Content-Encoding %q of the discarded body labels the hook's response", ce)
	}
	if r.header.Get("X-Request-Id") != "req-3" {
		t.Error("request ID set before the failure was dropped")
	}
}

// A hook returning false discards what the hook wrote (body and headers); headers
// the handler set before failing are kept.
func TestRule4HookFalseDiscardsWhatItWrote(t *testing.T) {
	app := quiet()
	app.OnError(func(c *fx.Ctx, err any) bool {
		c.SetHeader("X-Hook", "half")
		c.SetHeader("X-Request-Id", "overwritten-by-hook")
		_ = c.JSON(299, map[string]string{"half": "written"})
		return false
	})
	app.Get("/", func(c *fx.Ctx) error {
		c.SetHeader("X-Request-Id", "req-1")
		c.SetHeader("Access-Control-Allow-Origin", "*")
		_ = c.JSON(200, map[string]string{"partial": "success"})
		return fx.NewError(400, "APP_BAD", "bad")
	})
	r := do(t, app, "GET", "/", "")
	mustEnvelope(t, r, 400, "APP_BAD")
	if r.header.Get("X-Hook") != "" {
		t.Error("header added by a declining hook leaked")
	}
	if got := r.header.Get("X-Request-Id"); got != "req-1" {
		t.Errorf("X-Request-Id = %q, want the handler's req-1", got)
	}
	if r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Error("CORS header set before the failure was dropped")
	}
	if strings.Contains(string(r.body), "half") || strings.Contains(string(r.body), "partial") {
		t.Errorf("body leaks earlier writes: %q", r.body)
	}
}

// Without a hook, an error response still keeps headers set before the
// failure and replaces status, body and content type.
func TestErrorResponseKeepsEarlierHeaders(t *testing.T) {
	app := quiet()
	app.Get("/", func(c *fx.Ctx) error {
		c.SetHeader("X-Request-Id", "req-2")
		_ = c.String(200, "half a success")
		panic("late")
	})
	r := do(t, app, "GET", "/", "")
	mustEnvelope(t, r, 500, fx.ErrorCodes.InternalError)
	if r.header.Get("X-Request-Id") != "req-2" {
		t.Error("request ID dropped")
	}
}

// A hook that panics falls back to the default envelope of the
// original error and is logged at error level.
func TestRule3HookPanicFallsBackToOriginal(t *testing.T) {
	app, logs := newLogged()
	app.OnError(func(c *fx.Ctx, err any) bool {
		c.SetHeader("X-Hook", "dying")
		_ = c.JSON(200, "half")
		panic("hook exploded")
	})
	app.Get("/", func(c *fx.Ctx) error { return fx.NewError(409, "APP_CONFLICT", "taken") })
	r := do(t, app, "GET", "/", "")
	env := mustEnvelope(t, r, 409, "APP_CONFLICT")
	if env.Error.Message != "taken" || r.header.Get("X-Hook") != "" {
		t.Errorf("got %q %v", r.body, r.header)
	}
	found := false
	for _, rec := range logs.records(t) {
		if rec["level"] == "ERROR" && strings.Contains(fmt.Sprint(rec), "hook exploded") {
			found = true
		}
	}
	if !found {
		t.Errorf("hook panic not logged at error level: %s", logs)
	}
}

// A second next() returns FX_NEXT_CALLED_MULTIPLE_TIMES and never
// re-runs the inner chain; unhandled, the request ends in that 500.
func TestRule6SecondNextCall(t *testing.T) {
	var handlerRuns, innerRuns int
	var second error
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		if err := next(); err != nil {
			return err
		}
		second = next()
		return second
	})
	app.Use(func(c *fx.Ctx, next fx.Next) error { innerRuns++; return next() })
	app.Get("/", func(c *fx.Ctx) error { handlerRuns++; return c.JSON(200, "ok") })
	r := do(t, app, "GET", "/", "")
	env := mustEnvelope(t, r, 500, fx.ErrorCodes.NextCalledMultipleTimes)
	if env.Error.Message == "" {
		t.Error("empty message")
	}
	if handlerRuns != 1 || innerRuns != 1 {
		t.Errorf("inner chain ran %d/%d times, want 1/1", innerRuns, handlerRuns)
	}
	var fe *fx.Error
	if !errors.As(second, &fe) || fe.Code != fx.ErrorCodes.NextCalledMultipleTimes || fe.Status != 500 {
		t.Errorf("second next() = %v", second)
	}
	// The guard is per request: a fresh request runs the chain again.
	handlerRuns = 0
	do(t, app, "GET", "/", "")
	if handlerRuns != 1 {
		t.Errorf("next request ran the handler %d times", handlerRuns)
	}
}

// The next() guard holds when the second call is in an inner middleware
// and when the middleware handles the guard error itself.
func TestRule6GuardHandledByMiddleware(t *testing.T) {
	var runs int
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error { return next() })
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		_ = next()
		if err := next(); err != nil {
			return c.JSON(200, map[string]string{"guard": err.(*fx.Error).Code})
		}
		return nil
	})
	app.Get("/", func(c *fx.Ctx) error { runs++; return nil })
	r := do(t, app, "GET", "/", "")
	if r.status != 200 || string(r.body) != `{"guard":"FX_NEXT_CALLED_MULTIPLE_TIMES"}` || runs != 1 {
		t.Fatalf("got %d %q, handler ran %d times", r.status, r.body, runs)
	}
}

// Middleware can catch an inner panic or error via next() and answer with
// its own response, e.g. 429 with Retry-After.
func TestMiddlewareCatchesInnerFailure(t *testing.T) {
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		err := next()
		var pe *fx.PanicError
		var fe *fx.Error
		switch {
		case errors.As(err, &pe) && pe.Value == "rate":
			c.SetHeader("Retry-After", "30")
			return fx.NewError(429, "APP_RATE_LIMITED", "slow down")
		case errors.As(err, &fe) && fe.Code == "APP_RATE":
			c.SetHeader("Retry-After", "5")
			return c.JSON(429, map[string]string{"retry": "later"})
		}
		return err
	})
	app.Get("/panic", func(c *fx.Ctx) error { panic("rate") })
	app.Get("/error", func(c *fx.Ctx) error { return fx.NewError(400, "APP_RATE", "x") })
	r := do(t, app, "GET", "/panic", "")
	mustEnvelope(t, r, 429, "APP_RATE_LIMITED")
	if r.header.Get("Retry-After") != "30" {
		t.Errorf("Retry-After = %q", r.header.Get("Retry-After"))
	}
	r = do(t, app, "GET", "/error", "")
	if r.status != 429 || string(r.body) != `{"retry":"later"}` || r.header.Get("Retry-After") != "5" {
		t.Errorf("got %d %q %v", r.status, r.body, r.header)
	}
}

// Unmatched routes get the 404 envelope, a known path with another method
// included.
func TestRule7NotFound(t *testing.T) {
	for _, withMW := range []bool{false, true} {
		app := quiet()
		if withMW {
			app.Use(func(c *fx.Ctx, next fx.Next) error { return next() })
		}
		app.Get("/users", func(c *fx.Ctx) error { return nil })
		for _, tc := range []struct{ method, path string }{
			{"GET", "/nope"}, {"POST", "/users"}, {"DELETE", "/users"}, {"PURGE", "/users"}, {"GET", "/users/x"},
		} {
			r := do(t, app, tc.method, tc.path, "")
			env := mustEnvelope(t, r, 404, fx.ErrorCodes.NotFound)
			want := "Route " + tc.method + " " + tc.path + " not found"
			if env.Error.Message != want {
				t.Errorf("mw=%v: message = %q, want %q", withMW, env.Error.Message, want)
			}
			if r.header.Get("Allow") != "" || r.header.Get("Location") != "" {
				t.Errorf("404 carries Allow/Location: %v", r.header)
			}
		}
	}
}

// 5xx are logged with method, path, code and the raw error,
// whether or not a hook is set; 4xx are not logged as failures.
func TestRule5FailuresAreLogged(t *testing.T) {
	for _, withHook := range []bool{false, true} {
		app, logs := newLogged()
		if withHook {
			app.OnError(func(c *fx.Ctx, err any) bool { return c.JSON(500, "hooked") == nil })
		}
		app.Post("/save/:id", func(c *fx.Ctx) error { return errors.New("disk full") })
		app.Get("/panic", func(c *fx.Ctx) error { panic("kaboom") })
		app.Get("/bad", func(c *fx.Ctx) error { return fx.NewError(400, "APP_BAD", "bad") })
		do(t, app, "POST", "/save/7", "")
		do(t, app, "GET", "/panic", "")
		do(t, app, "GET", "/bad", "")

		var failures []map[string]any
		for _, rec := range logs.records(t) {
			if rec["msg"] == "fx: request failed" {
				failures = append(failures, rec)
			}
		}
		if len(failures) != 2 {
			t.Fatalf("hook=%v: %d failure records, want 2: %s", withHook, len(failures), logs)
		}
		f := failures[0]
		if f["level"] != "ERROR" || f["method"] != "POST" || f["path"] != "/save/7" ||
			f["code"] != fx.ErrorCodes.InternalError || f["error"] != "disk full" {
			t.Errorf("hook=%v: record %v", withHook, f)
		}
		f = failures[1]
		if f["method"] != "GET" || f["path"] != "/panic" || f["panic"] != "kaboom" {
			t.Errorf("hook=%v: panic record %v", withHook, f)
		}
		if s, _ := f["stack"].(string); !strings.Contains(s, "goroutine") {
			t.Errorf("hook=%v: panic record has no stack", withHook)
		}
	}
}

// Misuse of the reserved prefix: an unknown FX_ code still works and is reported once.
func TestReservedCodeMisuseReportedOnce(t *testing.T) {
	app, logs := newLogged()
	app.Get("/", func(c *fx.Ctx) error { return fx.NewError(400, "FX_MADE_UP", "mine") })
	for range 3 {
		mustEnvelope(t, do(t, app, "GET", "/", ""), 400, "FX_MADE_UP")
	}
	if n := strings.Count(logs.String(), "FX_MADE_UP"); n != 1 {
		t.Errorf("misuse reported %d times, want 1: %s", n, logs)
	}
}

// An *Error with a status outside 400-599 is sent as 500.
func TestOutOfRangeStatusSentAs500(t *testing.T) {
	app := quiet()
	app.Get("/", func(c *fx.Ctx) error { return fx.NewError(200, "APP_OK", "not an error") })
	mustEnvelope(t, do(t, app, "GET", "/", ""), 500, "APP_OK")
}

// Envelope exactness: details only when present; the exact bytes.
func TestEnvelopeExactBytes(t *testing.T) {
	app := quiet()
	app.Get("/plain", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m") })
	app.Get("/nil", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", nil) })
	app.Get("/emptymap", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", map[string]any{}) })
	app.Get("/emptystruct", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", struct{}{}) })
	app.Get("/nilslice", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", []string(nil)) })
	app.Get("/nilptr", func(c *fx.Ctx) error { return fx.NewError(400, "APP_X", "m", (*struct{ A int })(nil)) })
	app.Get("/details", func(c *fx.Ctx) error {
		return fx.NewError(400, "APP_X", "m", map[string]any{"a": []int{1}})
	})
	plain := `{"error":{"code":"APP_X","message":"m"}}`
	for p, want := range map[string]string{
		"/plain": plain, "/nil": plain, "/emptymap": plain, "/emptystruct": plain,
		"/nilslice": plain, "/nilptr": plain,
		"/details": `{"error":{"code":"APP_X","message":"m","details":{"a":[1]}}}`,
	} {
		r := do(t, app, "GET", p, "")
		mustEnvelope(t, r, 400, "APP_X")
		if string(r.body) != want {
			t.Errorf("%s: body %s, want %s", p, r.body, want)
		}
	}
	if got := string(fx.AppendEnvelope(nil, fx.NewError(404, "FX_NOT_FOUND", "Route GET / not found"))); got != `{"error":{"code":"FX_NOT_FOUND","message":"Route GET / not found"}}` {
		t.Errorf("AppendEnvelope = %s", got)
	}
}

// The body is always valid JSON whatever the message, path or panic value
// holds: quotes, control characters, invalid UTF-8, U+2028.
func TestEnvelopeEscaping(t *testing.T) {
	nasty := []string{
		`"quoted" \back\slash`, "ctl\x00\x01\x1f\x7f\n\r\t", "bad\xff\xfeutf8", "ls\u2028ps\u2029",
		"</script><!--", "emoji 😀 and \xed\xa0\x80 surrogate",
	}
	for _, s := range nasty {
		e := fx.NewError(400, "APP_"+s, s, map[string]string{s: s})
		b := fx.AppendEnvelope(nil, e)
		env := checkEnvelopeBody(t, b, "")
		if strings.Contains(string(b), "\u2028") || strings.Contains(string(b), "\u2029") {
			t.Errorf("%q: raw U+2028/2029 in %q", s, b)
		}
		if strings.ToValidUTF8(s, "\uFFFD") == s && env.Error.Message != s {
			t.Errorf("message round trip %q -> %q", s, env.Error.Message)
		}
	}

	for _, dev := range []bool{false, true} {
		app := quiet(fx.Config{Development: dev})
		app.Use(func(c *fx.Ctx, next fx.Next) error { return next() }) // 404 via the chain too
		app.Get("/panic/:i", func(c *fx.Ctx) error {
			i, _ := strconv.Atoi(c.Param("i"))
			panic(nasty[i])
		})
		app.Get("/err/:i", func(c *fx.Ctx) error {
			i, _ := strconv.Atoi(c.Param("i"))
			return errors.New(nasty[i])
		})
		h := app.Handler()
		for i, s := range nasty {
			for _, p := range []string{"/panic/" + strconv.Itoa(i), "/err/" + strconv.Itoa(i)} {
				rc := serveRaw(h, "GET", p)
				checkEnvelopeBody(t, rc.Response.Body(), fx.ErrorCodes.InternalError)
			}
			// The request path itself, raw, in the 404 message (a path with
			// a backslash is refused before routing: 400, see path.go).
			rc := serveRaw(h, "GET", "/nf/"+s)
			env := checkEnvelopeBody(t, rc.Response.Body(), nfCode(s))
			if nfCode(s) == fx.ErrorCodes.NotFound &&
				(!strings.HasPrefix(env.Error.Message, "Route GET ") || !strings.HasSuffix(env.Error.Message, " not found")) {
				t.Errorf("404 message %q", env.Error.Message)
			}
			rc = serveRaw(h, s, "/x")
			checkEnvelopeBody(t, rc.Response.Body(), fx.ErrorCodes.NotFound)
		}
	}
	// Without middleware the 404 takes the direct path: same guarantees.
	h := quiet().Handler()
	for _, s := range nasty {
		checkEnvelopeBody(t, serveRaw(h, "GET", "/nf/"+s).Response.Body(), nfCode(s))
		checkEnvelopeBody(t, serveRaw(h, s, "/nf").Response.Body(), fx.ErrorCodes.NotFound)
	}
}

// nfCode is the code of an unmatched GET /nf/+s: 404, or 400 when s holds
// a backslash (refused before routing, see path.go).
func nfCode(s string) string {
	if strings.ContainsRune(s, '\\') {
		return fx.ErrorCodes.BadRequest
	}
	return fx.ErrorCodes.NotFound
}

// serveRaw runs one request with raw method and path bytes through h.
func serveRaw(h fasthttp.RequestHandler, method, path string) *fasthttp.RequestCtx {
	rc := newRequestCtx()
	rc.Request.Header.SetMethod(method)
	rc.Request.SetRequestURI(path)
	h(rc)
	return rc
}

type panickyError struct{}

func (*panickyError) Error() string { panic("Error() exploded") }

// The boundary survives user code that panics inside it (an Error method
// called for logging or Development messages): production 500, logged.
func TestBoundarySurvivesPanickingErrorMethod(t *testing.T) {
	for _, dev := range []bool{false, true} {
		app, logs := newLogged(fx.Config{Development: dev})
		app.Get("/", func(c *fx.Ctx) error { return &panickyError{} })
		r := do(t, app, "GET", "/", "")
		env := mustEnvelope(t, r, 500, fx.ErrorCodes.InternalError)
		if env.Error.Message != "Internal server error" {
			t.Errorf("dev=%v: message %q", dev, env.Error.Message)
		}
		if !strings.Contains(logs.String(), "Error() exploded") {
			t.Errorf("dev=%v: not logged: %s", dev, logs)
		}
	}
}

type badMarshaler struct{ panics bool }

func (b badMarshaler) MarshalJSON() ([]byte, error) {
	if b.panics {
		panic("marshal exploded")
	}
	return nil, errors.New("marshal refused")
}

type cyclic struct {
	Name string
	Next *cyclic
}

// Details that cannot be encoded still give a valid envelope (without
// details) and a log line.
func TestDetailsEncodingFailure(t *testing.T) {
	loop := &cyclic{Name: "a"}
	loop.Next = loop
	cycMap := map[string]any{"k": 1}
	cycMap["self"] = cycMap
	cases := map[string]any{
		"channel":       make(chan int),
		"func":          func() {},
		"cycle":         loop,
		"map cycle":     cycMap,
		"marshal panic": badMarshaler{panics: true},
		"marshal error": badMarshaler{},
		"nested chan":   map[string]any{"ok": 1, "bad": make(chan int)},
	}
	for name, details := range cases {
		t.Run(name, func(t *testing.T) {
			app, logs := newLogged()
			app.Get("/", func(c *fx.Ctx) error { return fx.NewError(400, "APP_D", "with details", details) })
			r := do(t, app, "GET", "/", "")
			mustEnvelope(t, r, 400, "APP_D")
			if string(r.body) != `{"error":{"code":"APP_D","message":"with details"}}` {
				t.Errorf("body %s", r.body)
			}
			if !strings.Contains(logs.String(), "details") {
				t.Errorf("encoding failure not logged: %s", logs)
			}
			// And again: the encoders are still healthy afterwards.
			mustEnvelope(t, do(t, app, "GET", "/", ""), 400, "APP_D")
			if b := fx.AppendEnvelope(nil, fx.NewError(400, "APP_OK", "m", map[string]int{"n": 1})); string(b) != `{"error":{"code":"APP_OK","message":"m","details":{"n":1}}}` {
				t.Errorf("encoder broken after failure: %s", b)
			}
		})
	}
}

// Details with invalid UTF-8 or U+2028 are still valid JSON.
func TestDetailsEscaping(t *testing.T) {
	d := map[string]any{"bad\xff": "v\xfe\u2028", "ctl": "\x00\n"}
	b := fx.AppendEnvelope(nil, fx.NewError(400, "APP_X", "m", d))
	env := checkEnvelopeBody(t, b, "APP_X")
	if env.Error.Details == nil {
		t.Fatalf("details dropped: %s", b)
	}
	if strings.Contains(string(b), "\u2028") {
		t.Errorf("raw U+2028 in %q", b)
	}
	// Valid UTF-8 (the go-json path): U+2028/U+2029 are escaped too.
	b = fx.AppendEnvelope(nil, fx.NewError(400, "APP_X", "m", map[string]string{"k\u2028": "v\u2029"}))
	if string(b) != `{"error":{"code":"APP_X","message":"m","details":{"k\u2028":"v\u2029"}}}` {
		t.Errorf("got %s", b)
	}
}

// ServeError runs the boundary for failures outside handlers (transport
// adapters): hook, log and envelope.
func TestServeError(t *testing.T) {
	var hooked []any
	app, logs := newLogged()
	app.OnError(func(c *fx.Ctx, err any) bool { hooked = append(hooked, err); return false })
	e := fx.NewError(413, fx.ErrorCodes.PayloadTooLarge, "too big")
	rc := newRequestCtx()
	rc.Request.SetRequestURI("/upload")
	rc.Request.Header.SetMethod("PUT")
	app.ServeError(rc, e)
	if rc.Response.StatusCode() != 413 || string(rc.Response.Body()) != `{"error":{"code":"FX_PAYLOAD_TOO_LARGE","message":"too big"}}` {
		t.Errorf("%d %s", rc.Response.StatusCode(), rc.Response.Body())
	}
	rc.Response.Reset()
	app.ServeError(rc, "adapter broke")
	checkEnvelopeBody(t, rc.Response.Body(), fx.ErrorCodes.InternalError)
	if rc.Response.StatusCode() != 500 {
		t.Errorf("status %d", rc.Response.StatusCode())
	}
	if len(hooked) != 2 || hooked[0] != e || hooked[1] != "adapter broke" {
		t.Errorf("hook saw %#v", hooked)
	}
	if !strings.Contains(logs.String(), "adapter broke") || !strings.Contains(logs.String(), `"path":"/upload"`) {
		t.Errorf("not logged: %s", logs)
	}
}

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
				env := mustEnvelope(t, do(t, app, "GET", "/", ""), 500, fx.ErrorCodes.InternalError)
				if dev && !strings.Contains(env.Error.Message, "cyclic") {
					t.Errorf("message %q", env.Error.Message)
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

// asErr converts itself to an *fx.Error through an As method.
type asErr struct{}

func (asErr) Error() string { return "as" }
func (asErr) As(target any) bool {
	if p, ok := target.(**fx.Error); ok {
		*p = fx.NewError(402, "APP_AS", "via As")
		return true
	}
	return false
}

// The *fx.Error lookup follows errors.As: Unwrap chains, joined errors
// (depth first), As methods, panicked errors.
func TestErrorLookupFollowsErrorsAs(t *testing.T) {
	first := fx.NewError(401, "APP_FIRST", "first")
	second := fx.NewError(403, "APP_SECOND", "second")
	cases := map[string]struct {
		err  error
		code string
	}{
		"As method":          {fmt.Errorf("wrapped: %w", asErr{}), "APP_AS"},
		"joined, first wins": {errors.Join(errors.New("x"), fmt.Errorf("a: %w", first), second), "APP_FIRST"},
		"multi %w":           {fmt.Errorf("%w and %w", errors.New("plain"), second), "APP_SECOND"},
		"nested join":        {fmt.Errorf("outer: %w", errors.Join(errors.Join(errors.New("x")), second)), "APP_SECOND"},
		"none":               {fmt.Errorf("outer: %w", errors.Join(errors.New("x"))), fx.ErrorCodes.InternalError},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var want *fx.Error
			if !errors.As(tc.err, &want) {
				want = &fx.Error{Code: fx.ErrorCodes.InternalError}
			}
			if want.Code != tc.code {
				t.Fatalf("errors.As disagrees with the test: %s", want.Code)
			}
			app := quiet()
			app.Get("/", func(c *fx.Ctx) error { return tc.err })
			app.Get("/p", func(c *fx.Ctx) error { panic(tc.err) })
			for _, p := range []string{"/", "/p"} {
				mustEnvelope(t, do(t, app, "GET", p, ""), map[string]int{"APP_AS": 402, "APP_FIRST": 401, "APP_SECOND": 403, fx.ErrorCodes.InternalError: 500}[tc.code], tc.code)
			}
		})
	}
}

// Every byte value at every position of strings around the 8-byte word
// size: the envelope is valid JSON and the message decodes to what
// encoding/json makes of it (exact for valid UTF-8; each invalid byte
// becomes U+FFFD).
func TestEscaperEveryBytePosition(t *testing.T) {
	for n := 1; n <= 19; n++ {
		for pos := range n {
			for b := range 256 {
				buf := []byte(strings.Repeat("a", n))
				buf[pos] = byte(b)
				s := string(buf)
				out := fx.AppendEnvelope(nil, &fx.Error{Code: "C", Message: s})
				var env envelope
				if !json.Valid(out) || !utf8.Valid(out) || json.Unmarshal(out, &env) != nil {
					t.Fatalf("n=%d pos=%d byte=%#x: invalid %q", n, pos, b, out)
				}
				if want := stdDecoded(s); env.Error.Message != want {
					t.Fatalf("n=%d pos=%d byte=%#x: message %q, want %q", n, pos, b, env.Error.Message, want)
				}
				if b < 0x20 || b == '"' || b == '\\' {
					if strings.ContainsRune(string(out), rune(b)) && b != '"' && b != '\\' {
						t.Fatalf("raw control byte %#x in %q", b, out)
					}
				}
			}
		}
	}
	// Multi-byte runes straddling the word boundary.
	for pad := range 9 {
		for _, r := range []string{"é", "€", "😀", "\u2028", "\u2029", "\xed\xa0\x80", "\xf4\x90\x80\x80"} {
			s := strings.Repeat("x", pad) + r + strings.Repeat("y", 9)
			out := fx.AppendEnvelope(nil, &fx.Error{Code: "C", Message: s})
			var env envelope
			if !json.Valid(out) || !utf8.Valid(out) || json.Unmarshal(out, &env) != nil {
				t.Fatalf("pad=%d %q: invalid %q", pad, r, out)
			}
			if want := stdDecoded(s); env.Error.Message != want {
				t.Fatalf("pad=%d %q: message %q, want %q", pad, r, env.Error.Message, want)
			}
			if strings.ContainsAny(string(out), "\u2028\u2029") {
				t.Fatalf("raw U+2028/9 in %q", out)
			}
		}
	}
}

// stdDecoded is s after an encoding/json round trip.
func stdDecoded(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}
