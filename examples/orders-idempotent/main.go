// Command orders-idempotent is a small order service whose POST /orders
// is safe to retry: a client sends an Idempotency-Key, and however often
// the request is retried (after a timeout, a reset, a 503), one order is
// created and every retry gets the same 201 back.
//
//	go run ./examples/orders-idempotent     # listens on 127.0.0.1:8080
//
//	curl -i localhost:8080/orders -H 'X-API-Key: ak_demo_alice_0123456789' \
//	  -H 'Idempotency-Key: 6f1c0d2e-7c1a-4e8f-9b1e-2d3c4b5a6978' -d '{"item":"book","qty":1}'
//	# the same line again: the same order, with Idempotent-Replayed: true
//	# the same key with another body: 422 FX_IDEMPOTENCY_KEY_REUSED
//	# no Idempotency-Key: 400 FX_IDEMPOTENCY_KEY_REQUIRED
//
// The keys live in this process's memory (idempotency.MemoryStore). With
// several instances behind a load balancer, give idempotency.Config a
// shared store: redisstore.NewIdempotencyStore from the module
// github.com/fxhq/fx/middleware/redisstore (docs/idempotency.md).
package main

import (
	"cmp"
	"context"
	"log"
	"os"
	"strconv"
	"sync"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
)

func main() {
	app, err := newApp()
	if err != nil {
		log.Fatal(err)
	}
	if err := app.Run(context.Background(), cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080")); err != nil {
		log.Fatal(err)
	}
}

// order is what POST /orders creates.
type order struct {
	ID    int    `json:"id"`
	Owner string `json:"owner"`
	Item  string `json:"item"`
	Qty   int    `json:"qty"`
}

// orders is the demo's database.
type orders struct {
	mu   sync.Mutex
	list []order
}

func (o *orders) create(owner, item string, qty int) order {
	o.mu.Lock()
	defer o.mu.Unlock()
	created := order{ID: len(o.list) + 1, Owner: owner, Item: item, Qty: qty}
	o.list = append(o.list, created)
	return created
}

func (o *orders) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.list)
}

// newApp builds the service (shared with main_test.go).
func newApp() (*fx.App, error) {
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{
		"ak_demo_alice_0123456789": {Subject: "alice"},
		"ak_demo_bob_0123456789ab": {Subject: "bob"},
	})
	if err != nil {
		return nil, err
	}
	db := &orders{}
	app := fx.New()
	// Auth first: the default idempotency scope is the principal, so one
	// caller's key never replays another caller's order.
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys}))
	app.Use(idempotency.New(idempotency.Config{Required: true}))

	app.Post("/orders", func(c *fx.Ctx) error {
		in, err := fx.JSONBody[struct {
			Item string `json:"item"`
			Qty  int    `json:"qty"`
		}](c)
		if err != nil {
			return err
		}
		if in.Qty < 1 {
			return fx.NewError(422, "APP_BAD_QUANTITY", "qty must be at least 1")
		}
		p, _ := middleware.PrincipalFrom(c)
		o := db.create(p.Subject, in.Item, in.Qty)
		c.SetHeader("Location", "/orders/"+strconv.Itoa(o.ID))
		return c.JSON(201, o)
	})
	app.Get("/orders/count", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]int{"count": db.count()})
	})
	return app, nil
}
