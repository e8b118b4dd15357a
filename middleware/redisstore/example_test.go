package redisstore_test

import (
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/middleware/redisstore"
	"github.com/redis/go-redis/v9"
)

// Every instance of the app shares one limit of 100 requests per minute
// per client IP. The client fails fast when Redis is down, so requests get
// their 503 quickly instead of waiting out go-redis's default retries.
// (No Output: it needs a Redis server; the tests run one.)
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{
		Addr:        "localhost:6379",
		DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 200 * time.Millisecond,
		MaxRetries:  1,
	})
	defer rdb.Close()

	app := fx.New()
	app.Use(ratelimit.New(ratelimit.Config{
		Limit: ratelimit.Limit{Requests: 100, Period: time.Minute},
		Store: redisstore.NewRateLimitStore(rdb, redisstore.RateLimitStoreConfig{}),
	}))
	app.Get("/orders", func(c *fx.Ctx) error { return c.String(200, "orders") })
	_ = app.Listen(":8080")
}
