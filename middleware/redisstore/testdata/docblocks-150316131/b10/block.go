//line docs/idempotency.md:17
package main

import (
	"context"
	"log"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/redisstore"
	"github.com/redis/go-redis/v9"
)

func main() {
	rdb := redis.NewClient(&redis.Options{
		Addr:                  "redis:6379",
		ContextTimeoutEnabled: true, // each call ends at idempotency.Config.StoreTimeout
		MaxRetries:            1,
	})
	defer rdb.Close()

	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"ak_live_4f8a0c2e9b7d4e1f": {Subject: "billing-service"},
	})
	if err != nil {
		log.Fatal(err)
	}

	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys})) // the default scope is the principal
	app.Use(idempotency.New(idempotency.Config{
		Store:       redisstore.NewIdempotencyStore(rdb, redisstore.IdempotencyStoreConfig{}),
		Required:    true,             // POST and PATCH without a key: 400
		LockTimeout: 30 * time.Second, // longer than the slowest handler
	}))
	app.Post("/orders", func(c *fx.Ctx) error {
		o, err := createOrder(c) // runs once per key, whatever the retries
		if err != nil {
			return err
		}
		c.SetHeader("Location", "/orders/"+o.ID)
		return c.JSON(201, o)
	})
	if err := app.Run(context.Background(), ":8080"); err != nil {
		log.Fatal(err)
	}
}

type order struct {
	ID string `json:"id"`
}

// createOrder stands for the application's own code.
func createOrder(c *fx.Ctx) (order, error) { return order{ID: "o_1"}, nil }
