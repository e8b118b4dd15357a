package middleware_test

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/validate"
	"github.com/valyala/fasthttp"
)

// accessApp returns an App with RequestID and AccessLog (cfg) logging JSON
// at debug level into the returned buffer, and the routes the tests use.
func accessApp(t *testing.T, cfg middleware.AccessLogConfig) (*fx.App, *syncBuffer) {
	t.Helper()
	app, logs := loggedApp(t, fx.Config{BodyLimit: 64})
	app.Use(middleware.RequestID(middleware.RequestIDConfig{}))
	app.OnResponse(middleware.AccessLog(cfg))
	app.Get("/users/:id", func(c *fx.Ctx) error { return c.JSON(200, map[string]string{"id": c.Param("id")}) })
	app.Route(fx.Route{Method: "POST", Path: "/items", Body: validate.Object(validate.Fields{"name": validate.String()}),
		Handler: func(c *fx.Ctx) error { return c.JSON(201, "made") }})
	app.Get("/panic", func(*fx.Ctx) error { panic("boom") })
	app.Get("/busy", func(*fx.Ctx) error { return fx.NewError(429, "APP_SLOW_DOWN", "later") })
	app.Get("/healthz", func(c *fx.Ctx) error { return c.JSON(200, map[string]bool{"ok": true}) })
	app.OnError(func(c *fx.Ctx, err any) bool {
		if e, ok := err.(*fx.Error); ok && e.Code == "APP_SLOW_DOWN" {
			return c.JSON(503, map[string]string{"custom": "replaced"}) == nil
		}
		return false
	})
	return app, logs
}

// accessLines returns the access log records ("request" lines).
func accessLines(t *testing.T, logs *syncBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, rec := range logs.Records(t) {
		if rec["msg"] == "request" {
			out = append(out, rec)
		}
	}
	return out
}

func TestAccessLogFields(t *testing.T) {
	app, logs := accessApp(t, middleware.AccessLogConfig{})
	type want struct {
		level, route, path, code string
		status                   float64
	}
	for _, tc := range []struct {
		method, target, body string
		want                 want
	}{
		{"GET", "/users/7", "", want{"INFO", "/users/:id", "/users/7", "", 200}},
		{"GET", "/nope", "", want{"WARN", "", "/nope", fx.ErrorCodes.NotFound, 404}},
		{"POST", "/items", `{"name":1}`, want{"WARN", "/items", "/items", fx.ErrorCodes.ValidationError, 422}},
		{"GET", "/panic", "", want{"ERROR", "/panic", "/panic", fx.ErrorCodes.InternalError, 500}},
		{"GET", "/busy", "", want{"ERROR", "/busy", "/busy", "APP_SLOW_DOWN", 503}}, // the hook's 503
	} {
		var rd io.Reader
		if tc.body != "" {
			rd = strings.NewReader(tc.body)
		}
		req, _ := http.NewRequest(tc.method, "http://x"+tc.target, rd)
		req.Header.Set("X-Request-ID", "rid-"+strings.Trim(tc.target, "/"))
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		lines := accessLines(t, logs)
		if len(lines) == 0 {
			t.Fatalf("%s: no access line", tc.target)
		}
		l := lines[len(lines)-1]
		w := tc.want
		code, _ := l["code"].(string)
		if l["level"] != w.level || l["method"] != tc.method || l["route"] != w.route || l["path"] != w.path ||
			l["status"] != w.status || code != w.code || float64(resp.StatusCode) != w.status {
			t.Errorf("%s: line %v; want %+v (client got %d)", tc.target, l, w, resp.StatusCode)
		}
		if ip, _ := l["ip"].(string); l["request_id"] != "rid-"+strings.Trim(tc.target, "/") || ip == "" {
			t.Errorf("%s: request_id/ip %v %v", tc.target, l["request_id"], l["ip"])
		}
		if l["bytes_out"] != float64(len(body)) || l["bytes_in"] != float64(len(tc.body)) {
			t.Errorf("%s: bytes in %v out %v; want %d %d", tc.target, l["bytes_in"], l["bytes_out"], len(tc.body), len(body))
		}
		if _, ok := l["duration"].(float64); !ok {
			t.Errorf("%s: duration %v", tc.target, l["duration"])
		}
	}
	if n := len(accessLines(t, logs)); n != 5 {
		t.Errorf("%d access lines for 5 requests", n)
	}
}

// Transport errors never run middleware; the access log still has them.
func TestAccessLogTransportError(t *testing.T) {
	app, logs := accessApp(t, middleware.AccessLogConfig{})
	conn, err := net.Dial("tcp", fxtest.Serve(t, app))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second)) // a bound
	io.WriteString(conn, "POST /items HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"+strings.Repeat("b", 100))
	b, _ := io.ReadAll(conn)
	if !strings.Contains(string(b), " 413 ") {
		t.Fatalf("response %q", b)
	}
	lines := accessLines(t, logs)
	if len(lines) != 1 || lines[0]["status"] != 413.0 || lines[0]["code"] != fx.ErrorCodes.PayloadTooLarge ||
		lines[0]["level"] != "WARN" || lines[0]["ip"] != "127.0.0.1" || lines[0]["route"] != "" {
		t.Errorf("lines %v", lines)
	}
}

func TestAccessLogSkipSampleAndLevels(t *testing.T) {
	app, logs := accessApp(t, middleware.AccessLogConfig{
		Skip:               func(c *fx.Ctx) bool { return c.Route() == "/healthz" },
		SampleSuccesses:    3,
		ClientErrorsAtInfo: true,
	})
	for range 5 {
		do(t, app, "GET", "/healthz", nil)
	}
	for range 7 {
		do(t, app, "GET", "/users/1", nil)
	}
	do(t, app, "GET", "/nope", nil)
	do(t, app, "GET", "/nope", nil)
	var users, notFound int
	for _, l := range accessLines(t, logs) {
		switch l["path"] {
		case "/healthz":
			t.Errorf("skipped route logged: %v", l)
		case "/users/1":
			users++
		case "/nope":
			notFound++
			if l["level"] != "INFO" {
				t.Errorf("404 at %v with ClientErrorsAtInfo", l["level"])
			}
		}
	}
	if users != 3 || notFound != 2 { // successes 1, 4, 7 of 7; every error
		t.Errorf("logged %d of 7 successes (want 3) and %d of 2 errors", users, notFound)
	}
}

// A disabled level costs no allocation: with the logger at error level, a
// 200 (info) is not even formatted.
func TestAccessLogDisabledAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	app := fx.New(fx.Config{Logger: slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError}))})
	app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{}))
	app.Get("/me", func(c *fx.Ctx) error { return c.String(200, "ok") })
	h := app.Handler()
	var rc fasthttp.RequestCtx
	rc.Request.SetRequestURI("/me")
	serve := func() { rc.Response.Reset(); h(&rc) }
	serve()
	if n := testing.AllocsPerRun(200, serve); n != 0 {
		t.Errorf("%.1f allocations per request with the access log disabled", n)
	}
}
