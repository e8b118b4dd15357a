package nethttp_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/nethttp"
	"github.com/valyala/fasthttp"
)

// The benchmarks compare, in process and without a network, the same App
// serving the same request natively (app.Handler() on a prepared
// fasthttp.RequestCtx) and through the adapter (Handler(app).ServeHTTP with
// a prepared *http.Request and a minimal ResponseWriter). The difference is
// the adapter's cost: translating the request in, the response out. The
// native side re-sets the request URI each time, so it pays the URI parse
// a server pays per request (not the wire parsing of the request line and
// headers, which net/http does on the adapter's side before ServeHTTP).
//
//	go test ./nethttp/ -run '^$' -bench . -benchmem

type user struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

var benchPayload = []byte(`{"id":"42","name":"` + strings.Repeat("a", 1000) + `"}`)

func benchApp() *fx.App {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Get("/users/:id", func(c *fx.Ctx) error {
		return c.JSON(200, &user{ID: c.Param("id"), Name: "Ada"})
	})
	app.Post("/users", func(c *fx.Ctx) error {
		u, err := fx.JSONBody[user](c)
		if err != nil {
			return err
		}
		return c.JSON(201, &u)
	})
	notImplemented := fx.NewError(501, "APP_NOT_IMPLEMENTED", "Not implemented")
	app.Get("/fail", func(c *fx.Ctx) error { return notImplemented })
	app.Get("/wrapped", nethttp.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"42","name":"Ada"}`)
	})))
	return app
}

// discardWriter is the cheapest http.ResponseWriter: what the adapter
// writes goes nowhere, so only the adapter is measured.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

type benchCase struct {
	name, method, target string
	body                 []byte
	status               int
}

var benchCases = []benchCase{
	{"GET_json", "GET", "/users/42", nil, 200},
	{"POST_json_1KB", "POST", "/users", benchPayload, 201},
	{"error_envelope", "GET", "/fail", nil, 501},
	{"404", "GET", "/nope", nil, 404},
	{"wrapped_net_http", "GET", "/wrapped", nil, 200},
}

func BenchmarkNative(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			rc := kittest.RequestCtx(bc.method, bc.target)
			rc.Request.Header.SetHost("example.com")
			if bc.body != nil {
				rc.Request.Header.SetContentType("application/json")
				rc.Request.SetBody(bc.body)
			}
			// As a server does per request: the URI is parsed afresh.
			kittest.BenchEach(b, benchApp().Handler(), rc, bc.status, func(rc *fasthttp.RequestCtx, _ int) {
				rc.Request.SetRequestURI(bc.target)
			})
		})
	}
}

func BenchmarkAdapter(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			h := nethttp.Handler(benchApp())
			r := httptest.NewRequest(bc.method, "http://example.com"+bc.target, nil)
			var body *bytes.Reader
			if bc.body != nil {
				r.Header.Set("Content-Type", "application/json")
				body = bytes.NewReader(bc.body)
				r.Body = io.NopCloser(body)
				r.ContentLength = int64(len(bc.body))
			}
			w := &discardWriter{h: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				if body != nil {
					body.Reset(bc.body)
				}
				clear(w.h)
				h.ServeHTTP(w, r)
				if w.status != bc.status {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}
