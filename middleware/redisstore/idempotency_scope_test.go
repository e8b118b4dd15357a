package redisstore_test

import (
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/redistest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/redisstore"
	"github.com/valyala/fasthttp"
)

// Principals without a string subject do not share one scope on the
// Redis store either: two API keys configured without a Subject, and
// bearer principals whose "sub" claim is the number 1001 or 1002 (what
// middleware/jwt decodes from such a token), each run the handler and get
// their own response for the same key and body; each one's retry is its
// own replay.
func TestIdempotencyRedisScopeWithoutStringSubject(t *testing.T) {
	srv := redistest.Start(t)
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"key-one-0123456789abcdef": {}, "key-two-0123456789abcdef": {},
	})
	if err != nil {
		t.Fatal(err)
	}
	numericSub := middleware.VerifierFunc(func(_ *fx.Ctx, tok string) (*middleware.Principal, error) {
		sub := map[string]float64{"tok1001": 1001, "tok1002": 1002}[tok]
		return &middleware.Principal{Scheme: middleware.SchemeBearer, Claims: map[string]any{"sub": sub}}, nil
	})
	var runs atomic.Int64
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys, Bearer: numericSub}),
		idempotency.New(idempotency.Config{Store: redisstore.NewIdempotencyStore(idemClient(t, srv.Addr), redisstore.IdempotencyStoreConfig{})}))
	app.Post("/orders", func(c *fx.Ctx) error { return c.JSON(201, map[string]int64{"run": runs.Add(1)}) })
	send := func(name, value string) (status int, body, replayed string) {
		var rc fasthttp.RequestCtx
		rc.Request.Header.SetMethod("POST")
		rc.Request.SetRequestURI("/orders")
		rc.Request.Header.Set(idempotency.HeaderKey, "shared-key")
		rc.Request.Header.Set(name, value)
		rc.Request.SetBodyString("{}")
		app.Handler()(&rc)
		return rc.Response.StatusCode(), string(rc.Response.Body()), string(rc.Response.Header.Peek(idempotency.HeaderReplayed))
	}
	for _, pair := range [][2][2]string{
		{{"X-API-Key", "key-one-0123456789abcdef"}, {"X-API-Key", "key-two-0123456789abcdef"}},
		{{"Authorization", "Bearer tok1001"}, {"Authorization", "Bearer tok1002"}},
	} {
		_, a, _ := send(pair[0][0], pair[0][1])
		status, b, replayed := send(pair[1][0], pair[1][1])
		if status != 201 || replayed != "" || b == a {
			t.Fatalf("%v: B got %d %s (replayed %q), A got %s", pair, status, b, replayed, a)
		}
		for i, first := range []string{a, b} {
			if _, again, replayed := send(pair[i][0], pair[i][1]); again != first || replayed != "true" {
				t.Fatalf("%v retry: %s (replayed %q), want %s", pair[i], again, replayed, first)
			}
		}
	}
	if runs.Load() != 4 {
		t.Fatalf("handler ran %d times, want 4", runs.Load())
	}
}
