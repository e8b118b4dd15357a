package nethttp_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/nethttp"
	"github.com/fxhq/fx/validate"
)

// nameSchema requires an object with a non-empty string "name"; it is the
// Route contract of the parity app (a schema of its own, so this test does
// not depend on the builder's messages).
type nameSchema struct{}

func (nameSchema) Validate(v any) validate.Result {
	m, ok := v.(map[string]any)
	if !ok {
		return validate.Result{Issues: []validate.Issue{{Message: "Expected an object"}}}
	}
	if s, _ := m["name"].(string); s == "" {
		return validate.Result{Issues: []validate.Issue{{Path: []string{"name"}, Message: "Required"}}}
	}
	return validate.Result{Value: v}
}

type item struct {
	Name  string `json:"name"`
	Price int    `json:"price"`
}

// hookLog records, per case (the X-Case request header), what the error
// hook received, so both transports can be compared on it too.
type hookLog struct {
	mu  sync.Mutex
	got map[string][]string
}

func (h *hookLog) add(c *fx.Ctx, err any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := c.Header("X-Case")
	h.got[k] = append(h.got[k], fmt.Sprintf("%T %v", err, err))
}

func (h *hookLog) take(k string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.got[k]
	delete(h.got, k)
	return v
}

// parityApp is one App with every behaviour the core tests cover: success,
// params, *fx.Error with details, panics, plain errors, 404, unknown
// methods, middleware (headers, short-circuit, next twice), the hook
// (declining and handling), validation (JSONBody and a Route contract),
// HEAD, cookies, multi-valued headers and the body limit.
func parityApp(t testing.TB) (*fx.App, *hookLog) {
	t.Helper()
	hooks := &hookLog{got: map[string][]string{}}
	app := fx.New(fx.Config{
		Logger:       slog.New(slog.DiscardHandler),
		BodyLimit:    256,
		ServerHeader: "fx-parity",
	})
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("X-Mw", "outer")
		if c.Header("X-Block") != "" {
			return fx.NewError(429, "APP_RATE_LIMITED", "Slow down", map[string]any{"retryAfter": 3})
		}
		if c.Header("X-Twice") != "" {
			_ = next()
			return next()
		}
		return next()
	})
	app.OnError(func(c *fx.Ctx, err any) bool {
		hooks.add(c, err)
		if c.Path() == "/hooked" {
			_ = c.JSON(418, map[string]any{"hooked": true, "err": fmt.Sprint(err)})
			return true
		}
		return false
	})
	app.Get("/ok", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]any{"ok": true, "href": c.Href(), "method": c.Method()})
	})
	app.Get("/users/:id/files/*rest", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"id": c.Param("id"), "rest": c.Param("rest"), "q": c.Query("q")})
	})
	app.Get("/fxerr", func(c *fx.Ctx) error {
		return fx.NewError(409, "APP_CONFLICT", "Already \"exists\"\n", map[string]any{"id": "42", "fields": []string{"a", "b"}})
	})
	app.Get("/plain-error", func(c *fx.Ctx) error { return errors.New("db down: secret dsn") })
	app.Get("/panic", func(c *fx.Ctx) error { panic("boom \x00 secret") })
	app.Get("/panic-fxerr", func(c *fx.Ctx) error { panic(fx.NewError(403, fx.ErrorCodes.Forbidden, "No")) })
	app.Get("/hooked", func(c *fx.Ctx) error { return errors.New("hook me") })
	app.Post("/items", func(c *fx.Ctx) error {
		it, err := fx.JSONBody[item](c)
		if err != nil {
			return err
		}
		return c.JSON(201, it)
	})
	app.Route(fx.Route{Method: "POST", Path: "/contract", Body: nameSchema{}, Handler: func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"status": "valid"})
	}})
	app.Get("/text", func(c *fx.Ctx) error { return c.String(200, "plain text") })
	app.Get("/empty", func(c *fx.Ctx) error { return c.NoContent(204) })
	app.Get("/no-type", func(c *fx.Ctx) error {
		c.RequestCtx().SetBodyString("<html>not sniffed</html>")
		return nil
	})
	app.Get("/headers", func(c *fx.Ctx) error {
		rh := &c.RequestCtx().Response.Header
		rh.Add("X-Multi", "a")
		rh.Add("X-Multi", "b")
		rh.Add("Set-Cookie", "session=abc; Path=/; HttpOnly")
		rh.Add("Set-Cookie", "theme=dark; Path=/")
		return c.JSON(200, map[string]string{"echo": c.Header("X-Echo")})
	})
	app.Put("/echo", func(c *fx.Ctx) error {
		return c.Send(200, "application/octet-stream", c.Body())
	})
	return app, hooks
}

type parityCase struct {
	name, method, target, body string
	header                     map[string]string
	skipHook                   bool // the transports differ on purpose (see the 413 case)
}

var parityCases = []parityCase{
	{name: "success", method: "GET", target: "/ok"},
	{name: "params and query", method: "GET", target: "/users/7/files/a/b%20c.txt?q=x%26y"},
	{name: "fx error with details", method: "GET", target: "/fxerr"},
	{name: "plain error", method: "GET", target: "/plain-error"},
	{name: "panic", method: "GET", target: "/panic"},
	{name: "panic with fx error", method: "GET", target: "/panic-fxerr"},
	{name: "404", method: "GET", target: "/nope"},
	{name: "404 odd bytes", method: "GET", target: "/n%22o%5Cpe%ff?x=1"},
	{name: "unknown method", method: "PURGE", target: "/ok"},
	{name: "known path other method", method: "DELETE", target: "/ok"},
	{name: "hook handles", method: "GET", target: "/hooked"},
	{name: "middleware short-circuit", method: "GET", target: "/ok", header: map[string]string{"X-Block": "1"}},
	{name: "next called twice", method: "GET", target: "/ok", header: map[string]string{"X-Twice": "1"}},
	{name: "json body ok", method: "POST", target: "/items", body: `{"name":"pen","price":3}`, header: map[string]string{"Content-Type": "application/json"}},
	{name: "json body wrong type", method: "POST", target: "/items", body: `{"name":5}`, header: map[string]string{"Content-Type": "application/json"}},
	{name: "json body malformed", method: "POST", target: "/items", body: `{"name":`, header: map[string]string{"Content-Type": "application/json"}},
	{name: "json body empty", method: "POST", target: "/items"},
	{name: "json body wrong content type", method: "POST", target: "/items", body: `{}`, header: map[string]string{"Content-Type": "text/plain"}},
	{name: "contract 422", method: "POST", target: "/contract", body: `{"name":""}`},
	{name: "contract ok", method: "POST", target: "/contract", body: `{"name":"ada"}`},
	{name: "HEAD of GET", method: "HEAD", target: "/ok"},
	{name: "HEAD 404", method: "HEAD", target: "/nope"},
	{name: "text", method: "GET", target: "/text"},
	{name: "204", method: "GET", target: "/empty"},
	{name: "default content type", method: "GET", target: "/no-type"},
	{name: "multi headers and cookies", method: "GET", target: "/headers", header: map[string]string{"X-Echo": "ping"}},
	{name: "body echo", method: "PUT", target: "/echo", body: "0123456789"},
	{name: "body at limit", method: "PUT", target: "/echo", body: strings.Repeat("a", 256)},
	// fasthttp answers an oversized body in its transport, before any
	// handler or hook; the adapter goes through the boundary, so the hook
	// sees it there. The wire is the same.
	{name: "body over limit", method: "PUT", target: "/echo", body: strings.Repeat("a", 257), skipHook: true},
}

// wire is what the parity test compares.
type wire struct {
	status  int
	headers map[string][]string
	body    string
}

var comparedHeaders = []string{"Content-Type", "Content-Length", "X-Mw", "X-Multi", "Set-Cookie", "Server"}

func toWire(t *testing.T, resp *http.Response) wire {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	w := wire{status: resp.StatusCode, headers: map[string][]string{}, body: string(b)}
	for _, h := range comparedHeaders {
		if v := resp.Header.Values(h); len(v) > 0 {
			w.headers[h] = v
		}
	}
	return w
}

func newParityRequest(c parityCase, target string) *http.Request {
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, target, body)
	if err != nil {
		panic(err)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	req.Header.Set("X-Case", c.name)
	req.Host = "example.com" // the same Host on both transports
	return req
}

// TestParity runs every case through fasthttp (app.Test) and through
// Handler behind a real net/http server, and requires the same status,
// headers that matter, body (byte for byte) and hook values.
func TestParity(t *testing.T) {
	app, hooks := parityApp(t)
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	client := srv.Client()

	for _, c := range parityCases {
		t.Run(c.name, func(t *testing.T) {
			fresp, err := app.Test(newParityRequest(c, "http://example.com"+c.target))
			if err != nil {
				t.Fatal(err)
			}
			fast := toWire(t, fresp)
			fastHooks := hooks.take(c.name)

			nresp, err := client.Do(newParityRequest(c, srv.URL+c.target))
			if err != nil {
				t.Fatal(err)
			}
			std := toWire(t, nresp)
			stdHooks := hooks.take(c.name)

			if fast.status != std.status {
				t.Errorf("status: fasthttp %d, net/http %d", fast.status, std.status)
			}
			if fast.body != std.body {
				t.Errorf("body:\nfasthttp %q\nnet/http %q", fast.body, std.body)
			}
			for _, h := range comparedHeaders {
				if !slices.Equal(fast.headers[h], std.headers[h]) {
					t.Errorf("%s: fasthttp %q, net/http %q", h, fast.headers[h], std.headers[h])
				}
			}
			if !c.skipHook && !slices.Equal(fastHooks, stdHooks) {
				t.Errorf("hook saw:\nfasthttp %q\nnet/http %q", fastHooks, stdHooks)
			}
		})
	}
}

// TestParityCasesMeanSomething guards the table against degenerating into
// comparisons of two identical failures: the cases produce the statuses
// and envelopes they are named after.
func TestParityCasesMeanSomething(t *testing.T) {
	app, hooks := parityApp(t)
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	want := map[string]struct {
		status int
		body   string // a substring; "" = empty body
	}{
		"success":                  {200, `"ok":true`},
		"params and query":         {200, `{"id":"7","q":"x&y","rest":"a/b c.txt"}`},
		"fx error with details":    {409, `{"error":{"code":"APP_CONFLICT","message":"Already \"exists\"\n","details":{"fields":["a","b"],"id":"42"}}}`},
		"plain error":              {500, `{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}`},
		"panic":                    {500, `{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}`},
		"panic with fx error":      {403, `"FX_FORBIDDEN"`},
		"404":                      {404, `{"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}`},
		"unknown method":           {404, `Route PURGE /ok not found`},
		"hook handles":             {418, `"hooked":true`},
		"next called twice":        {500, `FX_NEXT_CALLED_MULTIPLE_TIMES`},
		"json body wrong type":     {422, `"location":"body","path":["name"]`},
		"contract 422":             {422, `"path":["name"],"message":"Required"`},
		"HEAD of GET":              {200, ""},
		"body over limit":          {413, `{"error":{"code":"FX_PAYLOAD_TOO_LARGE","message":"The request body is larger than the server accepts"}}`},
		"middleware short-circuit": {429, `"details":{"retryAfter":3}`},
	}
	for _, c := range parityCases {
		w, ok := want[c.name]
		if !ok {
			continue
		}
		resp, err := srv.Client().Do(newParityRequest(c, srv.URL+c.target))
		if err != nil {
			t.Fatal(err)
		}
		got := toWire(t, resp)
		if got.status != w.status || (w.body == "" && got.body != "") || !strings.Contains(got.body, w.body) {
			t.Errorf("%s: got %d %q, want %d containing %q", c.name, got.status, got.body, w.status, w.body)
		}
	}
	if got := hooks.take("panic"); len(got) != 1 || got[0] != "string boom \x00 secret" {
		t.Errorf("hook on panic saw %q, want the raw string", got)
	}
	if got := hooks.take("body over limit"); len(got) != 1 || !strings.Contains(got[0], "FX_PAYLOAD_TOO_LARGE") {
		t.Errorf("hook on 413 saw %q", got)
	}
}
