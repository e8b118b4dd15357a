package ratelimit_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/ratelimit"
)

func ExampleNew() {
	app := fx.New()
	// Two requests per minute per API key name, Auth first so the key is
	// the verified principal's, never the secret.
	keys, _ := middleware.NewAPIKeys(map[string]middleware.Principal{
		"ak_live_2f9c0e4b7d1a8c3e": {Subject: "billing-service"},
	})
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys}))
	app.Use(ratelimit.New(ratelimit.Config{
		Limit: ratelimit.Limit{Name: "per-key", Requests: 2, Period: time.Minute},
		Key:   ratelimit.KeyByAPIKey,
	}))
	app.Get("/orders", func(c *fx.Ctx) error { return c.String(200, "orders") })

	for i := range 3 {
		req := httptest.NewRequest("GET", "/orders", nil)
		req.Header.Set("X-API-Key", "ak_live_2f9c0e4b7d1a8c3e")
		resp, _ := app.Test(req)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d RateLimit-Policy: %s RateLimit: %s Retry-After: %q\n", resp.StatusCode,
			resp.Header.Get("RateLimit-Policy"), resp.Header.Get("RateLimit"), resp.Header.Get("Retry-After"))
		if i == 2 {
			fmt.Printf("%s\n", body)
		}
	}
	// Output:
	// 200 RateLimit-Policy: "per-key";q=2;w=60 RateLimit: "per-key";r=1;t=30 Retry-After: ""
	// 200 RateLimit-Policy: "per-key";q=2;w=60 RateLimit: "per-key";r=0;t=60 Retry-After: ""
	// 429 RateLimit-Policy: "per-key";q=2;w=60 RateLimit: "per-key";r=0;t=30 Retry-After: "30"
	// {"error":{"code":"FX_RATE_LIMITED","message":"Too many requests: the rate limit is exceeded; retry after the time in Retry-After","details":{"reason":"rate_limited"}}}
}
