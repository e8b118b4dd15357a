package fx_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/valyala/fasthttp"
)

// FuzzBoundaryEnvelope: whatever the request path and whatever the failure
// value (panicked or returned, as a string, an error or an *fx.Error with
// that text as code, message and details), in production and Development
// mode, with and without middleware, the response is an error status with
// Content-Type application/json and a body that is an envelope in the
// wire format (fxtest.CheckEnvelopeBody). The seed corpus runs in plain `go test`.
func FuzzBoundaryEnvelope(f *testing.F) {
	for _, seed := range []struct {
		mode      byte
		path, val string
	}{
		{0, "users/1", "boom"},
		{1, "a b", "db: password=\"x\""},
		{2, "ctl\x00\x1f", "line\nbreak\ttab\x7f"},
		{3, "\xff\xfe", "\xff invalid utf8 \xc3"},
		{4, "%E2%80%A8", "\u2028\u2029"},
		{5, "../../etc/passwd", "</script><script>alert(1)</script>"},
		{6, "?q=1#frag", `\u0000 \" \\`},
		{7, "", ""},
		{2, strings.Repeat("é", 300), strings.Repeat("\xed\xa0\x80", 50)},
		{8, "*", "{\"error\":1}"},
	} {
		f.Add(seed.mode, seed.path, seed.val)
	}

	mk := func(dev, mw bool) fasthttp.RequestHandler {
		app := quiet(fx.Config{Development: dev})
		if mw {
			app.Use(func(c *fx.Ctx, next fx.Next) error { return next() })
		}
		app.Post("/p/*rest", func(c *fx.Ctx) error {
			val := string(c.Body())
			switch c.Header("X-Mode") {
			case "0":
				panic(val)
			case "1":
				return errors.New(val)
			case "2":
				return fx.NewError(400, "APP_"+val, val, map[string]string{val: c.Param("rest")})
			case "3":
				panic(fx.NewError(422, val, val, []any{val, []byte(val)}))
			case "4":
				panic(errors.New(val))
			case "5":
				return c.JSON(200, map[string]string{"ok": val}) // success: not checked as an envelope
			}
			panic([]byte(val))
		})
		return app.Handler()
	}
	handlers := []fasthttp.RequestHandler{mk(false, false), mk(true, false), mk(false, true), mk(true, true)}

	f.Fuzz(func(t *testing.T, mode byte, path, val string) {
		for i, h := range handlers {
			rc := kittest.RequestCtx("GET", "/")
			method := "POST"
			if mode%4 == 3 {
				method = "GET" // no GET routes: the 404, raw path in the message
			}
			rc.Request.Header.SetMethod(method)
			rc.Request.SetRequestURI("/p/" + path)
			rc.Request.Header.Set("X-Mode", string('0'+rune(mode%7)))
			rc.Request.SetBodyString(val)
			h(rc)

			resp := &rc.Response
			body := resp.Body()
			if resp.StatusCode() == 200 {
				if !json.Valid(body) {
					t.Fatalf("handler %d: success body not JSON: %q", i, body)
				}
				continue
			}
			if s := resp.StatusCode(); s < 400 || s > 599 {
				t.Fatalf("handler %d: status %d", i, s)
			}
			if ct := string(resp.Header.ContentType()); ct != "application/json" {
				t.Fatalf("handler %d: Content-Type %q", i, ct)
			}
			env, err := fxtest.CheckEnvelopeBody(body)
			if err != nil {
				t.Fatalf("handler %d (mode %d, path %q, val %q): %v", i, mode, path, val, err)
			}
			if env.Code == fx.ErrorCodes.InternalError && i%2 == 0 && env.Message != "Internal server error" {
				t.Fatalf("production 500 message %q", env.Message)
			}
		}
	})
}
