package nethttp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	_ "net/http/pprof" // registers its handlers on http.DefaultServeMux
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/nethttp"
)

// transports runs f against app served by fasthttp (app.Test) and by the
// adapter (httptest server), so Wrap is proven on both.
func transports(t *testing.T, app *fx.App, f func(t *testing.T, do func(*http.Request) *http.Response)) {
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	t.Run("fasthttp", func(t *testing.T) {
		f(t, func(r *http.Request) *http.Response {
			resp, err := app.Test(r)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		})
	})
	t.Run("net/http", func(t *testing.T) {
		f(t, func(r *http.Request) *http.Response {
			u := *r.URL
			u.Scheme, u.Host = "http", strings.TrimPrefix(srv.URL, "http://")
			r2 := r.Clone(r.Context())
			r2.URL, r2.RequestURI = &u, ""
			resp, err := srv.Client().Do(r2)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		})
	})
}

func TestWrapTranslation(t *testing.T) {
	app := quietApp()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("X-Fx-Mw", "yes")
		c.RequestCtx().Response.Header.Add("Set-Cookie", "fx=1; Path=/")
		return next()
	})
	var got *http.Request
	var gotBody string
	app.Post("/legacy/*rest", nethttp.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		b, _ := io.ReadAll(r.Body)
		gotBody = string(b)
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		w.Header().Set("X-Fx-Mw", "replaced")
		http.SetCookie(w, &http.Cookie{Name: "legacy", Value: "2", Path: "/"})
		w.WriteHeader(201)
		w.Header().Set("X-Late", "ignored") // after WriteHeader, as in net/http
		_, _ = io.WriteString(w, "<p>legacy</p>")
	})))
	transports(t, app, func(t *testing.T, do func(*http.Request) *http.Response) {
		req := httptest.NewRequest("POST", "http://example.com/legacy/a/b?x=1&x=2", strings.NewReader("payload"))
		req.Header.Add("X-In", "1")
		req.Header.Add("X-In", "2")
		req.AddCookie(&http.Cookie{Name: "c", Value: "3"})
		resp := do(req)
		body := readAll(t, resp)

		if got.Method != "POST" || got.URL.Path != "/legacy/a/b" || got.URL.Query()["x"][1] != "2" ||
			got.RequestURI != "/legacy/a/b?x=1&x=2" || got.ProtoMajor != 1 {
			t.Errorf("request: %s %v %q %s", got.Method, got.URL, got.RequestURI, got.Proto)
		}
		if strings.Join(got.Header.Values("X-In"), ",") != "1,2" || got.Header.Get("Host") != "" {
			t.Errorf("headers: %v", got.Header)
		}
		if c, err := got.Cookie("c"); err != nil || c.Value != "3" {
			t.Errorf("cookie: %v %v", c, err)
		}
		if gotBody != "payload" || got.ContentLength != 7 || !strings.HasPrefix(got.RemoteAddr, "") || got.RemoteAddr == "" {
			t.Errorf("body %q length %d remote %q", gotBody, got.ContentLength, got.RemoteAddr)
		}
		if resp.StatusCode != 201 || body != "<p>legacy</p>" {
			t.Errorf("response %d %q", resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("sniffed Content-Type %q", ct)
		}
		if strings.Join(resp.Header.Values("X-Multi"), ",") != "a,b" || resp.Header.Get("X-Fx-Mw") != "replaced" || resp.Header.Get("X-Late") != "" {
			t.Errorf("response headers: %v", resp.Header)
		}
		names := []string{}
		for _, c := range resp.Cookies() {
			names = append(names, c.Name+"="+c.Value)
		}
		if strings.Join(names, ",") != "fx=1,legacy=2" {
			t.Errorf("cookies: %v", names)
		}
	})
}

type panicValue struct{ id int }

// TestWrapPanicRawValue: a panic in the wrapped handler reaches the fx hook
// as the very value panicked (fasthttpadaptor would lose it).
func TestWrapPanicRawValue(t *testing.T) {
	app := quietApp()
	hook := hookChan(app)
	want := &panicValue{id: 7}
	app.Get("/", nethttp.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Before", "kept")
		w.WriteHeader(200)
		_, _ = io.WriteString(w, "half a body")
		panic(want)
	})))
	transports(t, app, func(t *testing.T, do func(*http.Request) *http.Response) {
		resp := do(httptest.NewRequest("GET", "http://example.com/", nil))
		body := readAll(t, resp)
		if resp.StatusCode != 500 || body != `{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}` ||
			resp.Header.Get("X-Before") != "kept" {
			t.Errorf("%d %q %v", resp.StatusCode, body, resp.Header)
		}
		if raw := kittest.Within(t, hook, "the hook"); raw != any(want) {
			t.Errorf("hook saw %T %v, want the panicked pointer", raw, raw)
		}
	})
}

// derivedKey is the context key of a value a net/http middleware adds.
type derivedKey struct{}

// TestWrapFail: an error reported with Fail is what the fx handler returns.
func TestWrapFail(t *testing.T) {
	app := quietApp()
	hook := hookChan(app)
	conflict := fx.NewError(409, "APP_CONFLICT", "Taken", map[string]string{"id": "1"})
	plain := errors.New("legacy failure")
	app.Get("/:kind", nethttp.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error = plain
		if r.URL.Path == "/conflict" {
			err = conflict
		}
		// behind net/http middleware that derives the request
		r = r.WithContext(context.WithValue(r.Context(), derivedKey{}, 1))
		if !nethttp.Fail(r, err) {
			http.Error(w, "not under fx", 500)
			return
		}
		_, _ = io.WriteString(w, "discarded")
	})))
	transports(t, app, func(t *testing.T, do func(*http.Request) *http.Response) {
		resp := do(httptest.NewRequest("GET", "http://example.com/conflict", nil))
		if body := readAll(t, resp); resp.StatusCode != 409 || body != `{"error":{"code":"APP_CONFLICT","message":"Taken","details":{"id":"1"}}}` {
			t.Errorf("%d %q", resp.StatusCode, body)
		}
		if raw := kittest.Within(t, hook, "the hook"); raw != any(conflict) {
			t.Errorf("hook saw %v", raw)
		}
		resp = do(httptest.NewRequest("GET", "http://example.com/plain", nil))
		if body := readAll(t, resp); resp.StatusCode != 500 || !strings.Contains(body, "FX_INTERNAL_ERROR") {
			t.Errorf("%d %q", resp.StatusCode, body)
		}
		if raw := kittest.Within(t, hook, "the hook"); raw != any(plain) {
			t.Errorf("hook saw %v", raw)
		}
	})
	if nethttp.Fail(httptest.NewRequest("GET", "/", nil), plain) {
		t.Error("Fail outside Wrap reported success")
	}
}

// TestWrapDetails: net/http semantics the wrapped handler may rely on.
func TestWrapDetails(t *testing.T) {
	app := quietApp()
	var ctxErrAfter error
	var lateWrite error
	var saved http.ResponseWriter
	var savedCtx context.Context
	app.Get("/implicit", nethttp.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	app.Get("/nocontent", nethttp.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(204)
		if _, err := w.Write([]byte("x")); err != http.ErrBodyNotAllowed {
			panic("write on 204 gave " + err.Error())
		}
	})))
	app.Get("/informational", nethttp.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no Content-Type, no sniffing
		w.WriteHeader(103)
		w.WriteHeader(202)
		w.WriteHeader(500) // superfluous, ignored
		_, _ = w.Write([]byte("<html>"))
	})))
	app.Get("/noflush", nethttp.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		saved, savedCtx = w, r.Context()
		if err := http.NewResponseController(w).Flush(); !errors.Is(err, http.ErrNotSupported) {
			panic("Flush did not report ErrNotSupported")
		}
		_, _ = w.Write([]byte("ok"))
	})))
	h := nethttp.Handler(app)
	serve := func(target string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		return w
	}
	if w := serve("/implicit"); w.Code != 200 || w.Body.Len() != 0 {
		t.Errorf("implicit: %d %q", w.Code, w.Body)
	}
	if w := serve("/nocontent"); w.Code != 204 || w.Body.Len() != 0 {
		t.Errorf("204: %d %q", w.Code, w.Body)
	}
	if w := serve("/informational"); w.Code != 202 || w.Body.String() != "<html>" || w.Header().Get("Content-Type") != "" {
		t.Errorf("informational: %d %q %v", w.Code, w.Body, w.Header())
	}
	if w := serve("/noflush"); w.Code != 200 || w.Body.String() != "ok" {
		t.Errorf("noflush: %d %q", w.Code, w.Body)
	}
	_, lateWrite = saved.Write([]byte("late"))
	ctxErrAfter = savedCtx.Err()
	if lateWrite == nil {
		t.Error("a write after the wrapped handler returned succeeded")
	}
	if ctxErrAfter == nil {
		t.Error("the wrapped request's context outlived the request")
	}
}

func TestWrapNil(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Wrap(nil) did not panic")
		}
	}()
	nethttp.Wrap(nil)
}

// pprofApp mounts net/http/pprof behind API-key authentication: the one
// line of the README's pprof section. Wrap hands pprof the full request
// path, so its own routing under /debug/pprof/ (pprof.Index and the
// cmdline, profile, symbol and trace handlers) works unchanged.
func pprofApp(keys *middleware.APIKeys) *fx.App {
	app := fx.New()
	app.Group("/debug/pprof", middleware.Auth(middleware.AuthConfig{APIKeys: keys})).Get("/*path", nethttp.Wrap(http.DefaultServeMux))
	return app
}

// ExampleWrap_pprof serves Go's profiler from an fx App, behind
// middleware.Auth, with the import _ "net/http/pprof".
func ExampleWrap_pprof() {
	keys, _ := middleware.NewAPIKeys(map[string]middleware.Principal{
		"example-operator-key-0123456789": {Subject: "operator"},
	})
	app := fx.New()
	app.Group("/debug/pprof", middleware.Auth(middleware.AuthConfig{APIKeys: keys})).Get("/*path", nethttp.Wrap(http.DefaultServeMux))

	req := httptest.NewRequest("GET", "/debug/pprof/heap?debug=1", nil)
	resp, _ := app.Test(req)
	fmt.Println("without a key:", resp.StatusCode)

	req.Header.Set("X-API-Key", "example-operator-key-0123456789")
	resp, _ = app.Test(req)
	body, _ := io.ReadAll(resp.Body)
	fmt.Println("with the key:", resp.StatusCode, strings.HasPrefix(string(body), "heap profile:"))
	// Output:
	// without a key: 401
	// with the key: 200 true
}

// TestPprofBehindAuth fetches profiles through the fx App (in memory,
// through its real server) with a valid key, in the text and the binary
// formats, and gets the 401 envelope without one or with a wrong one.
func TestPprofBehindAuth(t *testing.T) {
	t.Parallel() // waits in real time (a 1 s CPU profile)
	const key = "operator-key-0123456789abcdef"
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{key: {Subject: "operator"}})
	if err != nil {
		t.Fatal(err)
	}
	c := fxtest.New(t, pprofApp(keys))
	get := func(target string) *fxtest.Response {
		return c.Get(target).Header(middleware.DefaultAPIKeyHeader, key).Do().AssertStatus(200)
	}

	if body := string(get("/debug/pprof/").Body); !strings.Contains(body, "heap") || !strings.Contains(body, "goroutine") {
		t.Errorf("index does not list the profiles: %.200s", body)
	}
	heap := string(get("/debug/pprof/heap?debug=1").Body)
	if !strings.HasPrefix(heap, "heap profile: ") || !strings.Contains(heap, "# runtime.MemStats") {
		t.Errorf("heap?debug=1 is not the text heap profile: %.200s", heap)
	}
	if g := string(get("/debug/pprof/goroutine?debug=1").Body); !strings.HasPrefix(g, "goroutine profile: total ") {
		t.Errorf("goroutine?debug=1 is not the text goroutine profile: %.200s", g)
	}
	// The default format is a gzipped protocol buffer (what go tool pprof
	// reads); a 1 s CPU profile is one too (a second of waiting: with
	// FX_SLOW_TESTS=1, which .ci/run sets).
	profiles := map[string]string{"/debug/pprof/heap": "inuse_space"}
	if os.Getenv("FX_SLOW_TESTS") != "" {
		profiles["/debug/pprof/profile?seconds=1"] = "cpu"
	}
	for target, sampleType := range profiles {
		r := get(target)
		if ct := r.Header().Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("%s: Content-Type %q", target, ct)
		}
		zr, err := gzip.NewReader(bytes.NewReader(r.Body))
		if err != nil {
			t.Fatalf("%s: not gzip: %v", target, err)
		}
		proto, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: gunzip: %v", target, err)
		}
		strs, err := profileStrings(proto)
		if err != nil {
			t.Fatalf("%s: not a protocol buffer: %v", target, err)
		}
		if !slices.Contains(strs, sampleType) {
			t.Errorf("%s: string table %q lacks the sample type %q", target, strs, sampleType)
		}
	}

	c.Get("/debug/pprof/heap?debug=1").Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
	c.Get("/debug/pprof/").Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
	c.Get("/debug/pprof/cmdline").Header(middleware.DefaultAPIKeyHeader, "fxtest_wrong-key-0123456789abcdef").Do().
		AssertError(401, fx.ErrorCodes.Unauthenticated)
}

// profileStrings walks a pprof Profile message in the protocol buffer wire
// format and returns its string table (field 6), failing on any malformed
// field.
func profileStrings(b []byte) ([]string, error) {
	var strs []string
	varint := func() (uint64, error) {
		var v uint64
		for shift := 0; shift < 64; shift += 7 {
			if len(b) == 0 {
				return 0, errors.New("truncated varint")
			}
			c := b[0]
			b = b[1:]
			v |= uint64(c&0x7f) << shift
			if c < 0x80 {
				return v, nil
			}
		}
		return 0, errors.New("varint too long")
	}
	for len(b) > 0 {
		tag, err := varint()
		if err != nil {
			return nil, err
		}
		switch tag & 7 {
		case 0:
			_, err = varint()
		case 1, 5:
			n := 8
			if tag&7 == 5 {
				n = 4
			}
			if len(b) < n {
				return nil, errors.New("truncated fixed field")
			}
			b = b[n:]
		case 2:
			var n uint64
			if n, err = varint(); err == nil && n > uint64(len(b)) {
				err = errors.New("truncated bytes field")
			}
			if err == nil {
				if tag>>3 == 6 {
					strs = append(strs, string(b[:n]))
				}
				b = b[n:]
			}
		default:
			err = fmt.Errorf("wire type %d", tag&7)
		}
		if err != nil {
			return nil, err
		}
	}
	return strs, nil
}
