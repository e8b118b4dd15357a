package bench

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/redistest"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/redisstore"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"
)

// BenchmarkIdempotencyAdded is what the idempotency middleware adds to a
// POST that is not a retry (a fresh Idempotency-Key each time), through
// fx's handler: without it (Bare), with the MemoryStore, with the Redis
// store completing before the response (RedisSync, two round trips on
// the request's path) and after it (RedisAfter,
// Config.CompleteAfterResponse, one), beside one plain Redis round trip
// measured in the same run (RedisSETPX: SET key value PX). Besides ns/op
// each reports med-ns/req, the median of the per-request times. Redis
// runs on a redis-server this benchmark starts on loopback; without
// redis-server on PATH the Redis cases are skipped. See
// docs/performance.md for the command and the table.
func BenchmarkIdempotencyAdded(b *testing.B) {
	b.Run("Bare", func(b *testing.B) { benchOrders(b, nil) })
	b.Run("Memory", func(b *testing.B) {
		benchOrders(b, idempotency.New(idempotency.Config{ShareAnonymous: true, Store: idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{MaxKeys: 1 << 16})}))
	})
	addr := redistest.Start(b).Addr
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, PoolSize: 16})
	b.Cleanup(func() { client.Close() })
	store := redisstore.NewIdempotencyStore(client, redisstore.IdempotencyStoreConfig{})
	b.Run("RedisSync", func(b *testing.B) {
		benchOrders(b, idempotency.New(idempotency.Config{ShareAnonymous: true, Store: store}))
	})
	b.Run("RedisAfter", func(b *testing.B) {
		benchOrders(b, idempotency.New(idempotency.Config{ShareAnonymous: true, Store: store, CompleteAfterResponse: true}))
	})
	b.Run("RedisSETPX", func(b *testing.B) {
		ctx := context.Background()
		times := make([]time.Duration, 0, b.N)
		for i := 0; b.Loop(); i++ {
			start := time.Now()
			if err := client.Set(ctx, "bench:"+strconv.Itoa(i), "v", time.Minute).Err(); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(start))
		}
		reportMedian(b, times)
	})
}

// benchOrders sends non-retried POST /orders through an app using mw (none
// when nil) and reports the median time per request.
func benchOrders(b *testing.B, mw fx.Middleware) {
	app := fx.New(fx.Config{})
	if mw != nil {
		app.Use(mw)
	}
	app.Post("/orders", func(c *fx.Ctx) error { return c.Send(201, "application/json", []byte(`{"id":1}`)) })
	h := app.Handler()
	var rc fasthttp.RequestCtx
	key := make([]byte, 0, 48)
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rc.Request.Reset()
		rc.Response.Reset()
		rc.Request.Header.SetMethod("POST")
		rc.Request.SetRequestURI("/orders")
		key = append(strconv.AppendInt(key[:0], time.Now().UnixNano(), 36), '-')
		key = strconv.AppendInt(key, int64(i), 10)
		rc.Request.Header.SetBytesV(idempotency.HeaderKey, key)
		rc.Request.SetBodyString(`{"item":"book","qty":1}`)
		start := time.Now()
		h(&rc)
		times = append(times, time.Since(start))
		if rc.Response.StatusCode() != 201 {
			b.Fatalf("status %d: %s", rc.Response.StatusCode(), rc.Response.Body())
		}
	}
	b.StopTimer()
	if err := app.Shutdown(); err != nil { // waits for RedisAfter's completions
		b.Fatal(err)
	}
	reportMedian(b, times)
}

// reportMedian reports the median of times as med-ns/req.
func reportMedian(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "med-ns/req")
}
