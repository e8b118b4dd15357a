// Command kit is one small service that uses fx's production kit end to
// end: request IDs, security headers, CORS for a browser front end, a rate
// limit per client IP, a deadline per API request, compression, a route
// contract, health probes, static files, trusted-proxy client IPs and a
// graceful shutdown.
//
//	go run ./examples/kit                    # listens on 127.0.0.1:8082
//
//	curl -i localhost:8082/                                  # public/index.html (static files)
//	curl -i localhost:8082/livez                             # 200 {"status":"ok"}
//	curl -i localhost:8082/readyz                            # 200 with the "store" check
//	curl -i -X OPTIONS -H 'Origin: https://app.example.com' \
//	     -H 'Access-Control-Request-Method: POST' localhost:8082/api/notes   # 204 preflight
//	curl -i -H 'Content-Type: application/json' -d '{"text":""}' localhost:8082/api/notes  # 422
//	curl -i -H 'Content-Type: application/json' -d '{"text":"hi"}' localhost:8082/api/notes # 201
//	for i in $(seq 12); do curl -s -o /dev/null -w '%{http_code} ' localhost:8082/api/notes; done  # ... 429
//
// Every refusal (422, 429, 504, 404, 503 while draining) is the fx envelope.
package main

import (
	"cmp"
	"context"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/fxhq/fx"
	_ "github.com/fxhq/fx/compression/brotli" // Compression offers br and zstd besides gzip
	_ "github.com/fxhq/fx/compression/zstd"
	"github.com/fxhq/fx/health"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/static"
	"github.com/fxhq/fx/validate"
)

func main() {
	app := newApp(publicDir())
	addr := cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8082")
	if err := app.Run(context.Background(), addr); err != nil {
		log.Fatal(err)
	}
}

// publicDir is the public/ folder beside this file, wherever the command
// is run from.
func publicDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "public")
}

// note is the body of POST /api/notes.
var note = validate.Object(validate.Fields{
	"text": validate.String().MinLen(1).MaxLen(280),
})

// newApp builds the service (shared with main_test.go).
func newApp(public string) *fx.App {
	app := fx.New(fx.Config{
		// Behind a load balancer on the private network, its
		// X-Forwarded-For names the client (c.ClientAddr, KeyByIP).
		TrustedProxies: []string{"10.0.0.0/8"},
		// Responses of 1 KiB and more, error envelopes included, are
		// compressed with zstd, brotli or gzip as the client accepts.
		Compression: &fx.CompressionConfig{},
	})
	app.Use(
		middleware.RequestID(middleware.RequestIDConfig{}),
		middleware.SecurityHeaders(middleware.SecurityHeadersConfig{}),
		middleware.CORS(middleware.CORSConfig{
			AllowOrigins: []string{"https://app.example.com", "https://*.preview.example.com"},
		}),
	)

	// Probes: readiness fails (503 envelope) as soon as Shutdown begins, so
	// the load balancer stops sending traffic before connections close.
	store := &notes{}
	probes := health.New(health.Config{Timeout: 500 * time.Millisecond})
	probes.AddReadiness("store", func(ctx context.Context) error { return store.ping(ctx) })
	probes.Register(app)

	api := app.Group("/api",
		ratelimit.New(ratelimit.Config{
			Limit: ratelimit.Limit{Name: "api", Requests: 10, Period: time.Minute},
			Key:   ratelimit.KeyByIP,
		}),
		// A handler that overruns answers 504 FX_TIMEOUT; c.Context()
		// carries the deadline to the store.
		middleware.Timeout(2*time.Second),
	)
	api.Get("/notes", func(c *fx.Ctx) error { return c.JSON(200, store.list()) })
	api.Route(fx.Route{Method: "POST", Path: "/notes", Body: note, Handler: func(c *fx.Ctx) error {
		body, _ := fx.ValidBody[map[string]any](c)
		text, _ := body["text"].(string)
		return c.JSON(201, store.add(text, c.ClientAddr().String()))
	}})

	static.Mount(app, "/", public, static.Config{MaxAge: time.Hour})
	return app
}

// notes is an in-memory store standing in for a database.
type notes struct {
	mu    sync.Mutex
	items []map[string]string
}

func (n *notes) add(text, ip string) map[string]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	item := map[string]string{"text": text, "from": ip}
	n.items = append(n.items, item)
	return item
}

func (n *notes) list() []map[string]string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]map[string]string{}, n.items...)
}

func (n *notes) ping(ctx context.Context) error { return ctx.Err() }
