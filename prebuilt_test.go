package fx_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/valyala/fasthttp"
)

// newPrebuilt returns a fresh error with map details, prebuilt or not.
func newPrebuilt(pre bool) *fx.Error {
	e := fx.NewError(404, "APP_USER_NOT_FOUND", "User not found", map[string]string{"id": "missing"})
	if pre {
		return e.Prebuild()
	}
	return e
}

// serveErr serves GET /e on a fresh App (with cfg) whose handler returns e,
// and returns the status, content type and body.
func serveErr(t *testing.T, e error, cfg ...fx.Config) (int, string, string) {
	t.Helper()
	app := quiet(cfg...)
	app.Get("/e", func(*fx.Ctx) error { return e })
	rc := serveRaw(app.Handler(), "GET", "/e")
	return rc.Response.StatusCode(), string(rc.Response.Header.ContentType()), string(rc.Response.Body())
}

// TestPrebuildSendsTheSameResponse: a prebuilt error's response is byte for
// byte the one the same error gets without Prebuild, on every request.
func TestPrebuildSendsTheSameResponse(t *testing.T) {
	ws, wct, wb := serveErr(t, newPrebuilt(false))
	pre := newPrebuilt(true)
	for range 3 {
		s, ct, b := serveErr(t, pre)
		if s != ws || ct != wct || b != wb {
			t.Fatalf("prebuilt: %d %q %s; encoded: %d %q %s", s, ct, b, ws, wct, wb)
		}
	}
	if want := `{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"id":"missing"}}}`; wb != want {
		t.Fatalf("body %s, want %s", wb, want)
	}
	if fx.NewError(400, "X", "y").Prebuild() == nil || (*fx.Error)(nil).Prebuild() != nil {
		t.Fatal("Prebuild must return its receiver")
	}
}

// TestPrebuildSeesAssignedFields: assigning a field after Prebuild is sent,
// never the stale bytes (the rule in Prebuild's doc); the content behind
// Details is what Prebuild freezes.
func TestPrebuildSeesAssignedFields(t *testing.T) {
	cases := []struct {
		name   string
		change func(e *fx.Error)
		status int
		want   string
	}{
		{"status", func(e *fx.Error) { e.Status = 410 }, 410,
			`{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"id":"missing"}}}`},
		{"code", func(e *fx.Error) { e.Code = "APP_GONE" }, 404,
			`{"error":{"code":"APP_GONE","message":"User not found","details":{"id":"missing"}}}`},
		{"message", func(e *fx.Error) { e.Message = "No such user" }, 404,
			`{"error":{"code":"APP_USER_NOT_FOUND","message":"No such user","details":{"id":"missing"}}}`},
		{"new details map", func(e *fx.Error) { e.Details = map[string]string{"id": "other"} }, 404,
			`{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"id":"other"}}}`},
		{"details removed", func(e *fx.Error) { e.Details = nil }, 404,
			`{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found"}}`},
		{"details of another type", func(e *fx.Error) { e.Details = []string{"missing"} }, 404,
			`{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":["missing"]}}`},
		{"contents of the details map (frozen)", func(e *fx.Error) { e.Details.(map[string]string)["id"] = "other" }, 404,
			`{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"id":"missing"}}}`},
		{"prebuilt again", func(e *fx.Error) { e.Details.(map[string]string)["id"] = "other"; e.Prebuild() }, 404,
			`{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"id":"other"}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newPrebuilt(true)
			serveErr(t, e) // sent once as prebuilt
			tc.change(e)
			s, _, b := serveErr(t, e)
			if s != tc.status || b != tc.want {
				t.Fatalf("got %d %s, want %d %s", s, b, tc.status, tc.want)
			}
		})
	}
}

// TestPrebuildKeepsTheBoundaryRules: the hook, OnResponse, Development mode
// and the misuse checks treat a prebuilt error exactly as any *Error.
func TestPrebuildKeepsTheBoundaryRules(t *testing.T) {
	t.Run("hook sees it and may write", func(t *testing.T) {
		for _, pre := range []bool{false, true} {
			e := newPrebuilt(pre)
			app := quiet()
			var seen any
			app.OnError(func(c *fx.Ctx, err any) bool {
				seen = err
				return c.JSON(418, map[string]string{"hook": "yes"}) == nil
			})
			var code string
			var status int
			app.OnResponse(func(c *fx.Ctx) { code, status = c.ErrorCode(), c.Status() })
			app.Get("/e", func(*fx.Ctx) error { return e })
			rc := serveRaw(app.Handler(), "GET", "/e")
			if seen != e || rc.Response.StatusCode() != 418 || string(rc.Response.Body()) != `{"hook":"yes"}` ||
				code != "APP_USER_NOT_FOUND" || status != 418 {
				t.Fatalf("prebuilt %v: hook saw %v; %d %s; observed %q %d", pre, seen, rc.Response.StatusCode(), rc.Response.Body(), code, status)
			}
		}
	})
	t.Run("declining hook gets the envelope", func(t *testing.T) {
		app := quiet()
		app.OnError(func(c *fx.Ctx, err any) bool { c.SetHeader("X-Seen", "1"); return false })
		e := newPrebuilt(true)
		app.Get("/e", func(*fx.Ctx) error { return e })
		rc := serveRaw(app.Handler(), "GET", "/e")
		want := `{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"id":"missing"}}}`
		if rc.Response.StatusCode() != 404 || string(rc.Response.Body()) != want {
			t.Fatalf("%d %s", rc.Response.StatusCode(), rc.Response.Body())
		}
	})
	t.Run("internal error rewritten in production only", func(t *testing.T) {
		e := fx.NewError(500, fx.ErrorCodes.InternalError, "db password is hunter2", map[string]string{"k": "v"}).Prebuild()
		_, _, prod := serveErr(t, e)
		if strings.Contains(prod, "hunter2") || strings.Contains(prod, "details") {
			t.Fatalf("production body leaks the message: %s", prod)
		}
		_, _, dev := serveErr(t, e, fx.Config{Development: true})
		if !strings.Contains(dev, "hunter2") {
			t.Fatalf("development body lost the message: %s", dev)
		}
	})
	t.Run("misuse still logged, status still 500", func(t *testing.T) {
		for e, warning := range map[*fx.Error]string{
			fx.NewError(200, "APP_ODD", "odd", map[string]int{"n": 1}).Prebuild():        "outside 400-599",
			fx.NewError(404, "FX_MADE_UP", "made up", map[string]int{"n": 1}).Prebuild(): "reserved FX_ prefix",
		} {
			app, logs := newLogged()
			app.Get("/e", func(*fx.Ctx) error { return e })
			rc := serveRaw(app.Handler(), "GET", "/e")
			want := 404
			if e.Status == 200 {
				want = 500
			}
			if rc.Response.StatusCode() != want || !strings.Contains(logs.String(), warning) {
				t.Fatalf("%s: %d, log %s", e.Code, rc.Response.StatusCode(), logs.String())
			}
		}
	})
	t.Run("wrapped is encoded as usual", func(t *testing.T) {
		e := newPrebuilt(true)
		_, _, b := serveErr(t, wrapErr{e})
		if !strings.Contains(b, `"details":{"id":"missing"}`) {
			t.Fatalf("%s", b)
		}
	})
}

type wrapErr struct{ e error }

func (w wrapErr) Error() string { return "wrapped: " + w.e.Error() }
func (w wrapErr) Unwrap() error { return w.e }

// TestPrebuiltErrorAllocatesNothing: a prebuilt error with map details
// costs no allocation per request (encoding the map does).
func TestPrebuiltErrorAllocatesNothing(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage instrumentation and the race detector change allocation counts")
	}
	app := quiet()
	e := newPrebuilt(true)
	app.Get("/e", func(*fx.Ctx) error { return e })
	rc, serve := benchCtx(app.Handler(), "GET", "/e")
	for range 10 {
		serve()
	}
	if rc.Response.StatusCode() != 404 {
		t.Fatalf("%d %s", rc.Response.StatusCode(), rc.Response.Body())
	}
	if n := testing.AllocsPerRun(1000, serve); n != 0 {
		t.Fatalf("%.1f allocs per request", n)
	}
}

// BenchmarkPrebuiltEnvelope: a kept error with map details on a static
// route. "raw" is a bare fasthttp handler writing the same prebuilt bytes
// (the floor); "fx" returns the prebuilt error; "fx-encoded" returns the
// same error without Prebuild (encoded per request).
func BenchmarkPrebuiltEnvelope(b *testing.B) {
	body := fx.AppendEnvelope(nil, newPrebuilt(false))
	b.Run("raw", func(b *testing.B) {
		raw := func(rc *fasthttp.RequestCtx) {
			rc.SetStatusCode(404)
			rc.SetContentType("application/json")
			rc.SetBody(body)
		}
		kittest.Bench(b, raw, "GET", "/e", 404)
	})
	for _, pre := range []bool{true, false} {
		name := "fx"
		if !pre {
			name = "fx-encoded"
		}
		b.Run(name, func(b *testing.B) {
			app := quiet()
			e := newPrebuilt(pre)
			app.Get("/e", func(*fx.Ctx) error { return e })
			h := app.Handler()
			rc := serveRaw(h, "GET", "/e")
			if !bytes.Equal(rc.Response.Body(), body) {
				b.Fatalf("%s", rc.Response.Body())
			}
			kittest.Bench(b, h, "GET", "/e", 404)
		})
	}
}

// countingDetails counts its encodings.
type countingDetails struct{ n *int }

func (d countingDetails) MarshalJSON() ([]byte, error) {
	*d.n++
	return []byte(`{"id":"missing"}`), nil
}

// TestPrebuildEncodesOnce: the details of a prebuilt error are encoded by
// Prebuild and never again, however many requests send it; without
// Prebuild every request encodes them.
func TestPrebuildEncodesOnce(t *testing.T) {
	for _, pre := range []bool{false, true} {
		n := 0
		e := fx.NewError(404, "APP_USER_NOT_FOUND", "User not found", countingDetails{&n})
		want := 5
		if pre {
			e.Prebuild()
			want = 1
		}
		for range 5 {
			if _, _, b := serveErr(t, e); !strings.Contains(b, `"details":{"id":"missing"}`) {
				t.Fatalf("%s", b)
			}
		}
		if n != want {
			t.Errorf("prebuilt %v: details encoded %d times for 5 requests, want %d", pre, n, want)
		}
	}
}

// TestPrebuiltReplacesWhatTheHandlerWrote: like the encoded envelope, the
// prebuilt one replaces a body stream, a body and a Content-Encoding the
// handler set before failing, and keeps its other headers.
func TestPrebuiltReplacesWhatTheHandlerWrote(t *testing.T) {
	for _, pre := range []bool{false, true} {
		e := newPrebuilt(pre)
		app := quiet()
		app.Get("/e", func(c *fx.Ctx) error {
			c.SetHeader("X-Kept", "1")
			c.SetHeader("Content-Encoding", "gzip")
			c.RequestCtx().Response.SetBodyStream(strings.NewReader("streamed"), -1)
			return e
		})
		app.Get("/b", func(c *fx.Ctx) error {
			c.RequestCtx().Response.SetBodyString("partial")
			return e
		})
		want := `{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"id":"missing"}}}`
		for _, path := range []string{"/e", "/b"} {
			rc := serveRaw(app.Handler(), "GET", path)
			r := &rc.Response
			if r.StatusCode() != 404 || string(r.Body()) != want || r.IsBodyStream() ||
				len(r.Header.ContentEncoding()) != 0 || (path == "/e" && string(r.Header.Peek("X-Kept")) != "1") {
				t.Fatalf("prebuilt %v %s: %d %q stream=%v enc=%q", pre, path, r.StatusCode(), r.Body(), r.IsBodyStream(), r.Header.ContentEncoding())
			}
		}
	}
}
