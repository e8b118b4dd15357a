// Command orders is fx's flagship service, the one to read first: a
// multi-tenant order API whose every contract is declared once, as Go
// types with constraint tags, and drives binding, validation (every issue
// in one 422), the OpenAPI document and the tests (main_test.go holds the
// server to its own document with fxtest's strict mode).
//
//	POST /orders       create an order (Idempotency-Key required) → 201 with Location
//	GET  /orders/:id   one order; 404 APP_ORDER_NOT_FOUND
//	GET  /orders       the tenant's orders, filtered by ?status=, ?customer=, ?limit=
//	GET  /openapi.json the document; GET /docs renders it
//
// Every /orders route authenticates an API key (middleware.Auth), resolves
// the tenant from X-Tenant-ID and checks it is the key's (middleware.Tenant),
// and counts against the tenant's rate limit (ratelimit.New, a
// memory store); POST is idempotent (middleware/idempotency). Run it:
//
//	go run ./examples/orders              # 127.0.0.1:8080; -addr or ADDR to change
//
//	K='X-API-Key: ak_demo_acme_0123456789'; T='X-Tenant-ID: acme'; J='Content-Type: application/json'
//	curl -i localhost:8080/orders -H "$K" -H "$T" -H "$J" -H 'Idempotency-Key: 3f0c5a1e-0001' \
//	  -d '{"customer":"Ada Lovelace","lines":[{"sku":"BOOK-1","qty":2}]}'      # 201, Location: /orders/ord_1
//	# the same line again: the same 201, Idempotent-Replayed: true
//	curl -i localhost:8080/orders/ord_1 -H "$K" -H "$T"                       # 200
//	curl -i localhost:8080/orders/ord_9 -H "$K" -H "$T"                       # 404 APP_ORDER_NOT_FOUND
//	curl -i 'localhost:8080/orders?status=open&limit=10' -H "$K" -H "$T"      # 200
//	curl -i 'localhost:8080/orders?limit=500' -H "$K" -H "$T"                 # 422 FX_VALIDATION_ERROR
//	curl -i localhost:8080/orders -H "$K" -H "$T" -H "$J" -H 'Idempotency-Key: 3f0c5a1e-0002' \
//	  -d '{"customer":"","email":"nope","lines":[{"sku":"b","qty":0}]}'      # 422, four issues
//	curl -i localhost:8080/orders -H "$T"                                     # 401 FX_UNAUTHENTICATED
//	curl -i localhost:8080/orders -H "$K"                                     # 400 FX_TENANT_REQUIRED
//	curl -i localhost:8080/orders -H "$K" -H 'X-Tenant-ID: globex'            # 403 FX_FORBIDDEN
//	open http://localhost:8080/docs
//
// The orders live in memory; so do the idempotency keys and the rate-limit
// buckets (several instances need the Redis stores: docs/idempotency.md).
package main

import (
	"cmp"
	"context"
	"flag"
	"log"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/openapi"
)

func main() {
	addr := flag.String("addr", cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080"), "listen address (default: $ADDR, else 127.0.0.1:8080)")
	flag.Parse()
	app, err := newApp(config{})
	if err != nil {
		log.Fatal(err)
	}
	err = app.Run(context.Background(), *addr, fx.RunConfig{
		OnListen: func(a net.Addr) { log.Printf("orders on http://%s (docs at /docs)", a) },
	})
	if err != nil {
		log.Fatal(err)
	}
}

// Line is one line of an order.
type Line struct {
	SKU string `json:"sku" validate:"required,min=3,max=32" pattern:"^[A-Z0-9-]+$" doc:"Stock keeping unit" example:"BOOK-1"`
	Qty int    `json:"qty" validate:"gte=1,lte=100" example:"2"`
}

// NewOrder is the body of POST /orders.
type NewOrder struct {
	Customer string `json:"customer" validate:"required,max=80" doc:"Who pays" example:"Ada Lovelace"`
	Email    string `json:"email,omitempty" validate:"omitempty,email" example:"ada@example.com"`
	Lines    []Line `json:"lines" validate:"required,min=1,max=50,dive"`
}

// Order is an order as the API returns it.
type Order struct {
	ID       string    `json:"id" example:"ord_1"`
	Status   string    `json:"status" validate:"oneof=open paid shipped"`
	Customer string    `json:"customer"`
	Email    string    `json:"email,omitempty"`
	Lines    []Line    `json:"lines"`
	Created  time.Time `json:"created"`
}

// OrderList is the body of GET /orders.
type OrderList struct {
	Orders []Order `json:"orders"`
}

// The inputs of the three operations: body, path and query fields, with
// their constraints.
type (
	createOrder struct {
		Body NewOrder
	}
	getOrder struct {
		ID string `path:"id" pattern:"^ord_[0-9]{1,12}$" example:"ord_1"`
	}
	listOrders struct {
		Status   string `query:"status" validate:"omitempty,oneof=open paid shipped"`
		Customer string `query:"customer" validate:"omitempty,max=80" doc:"Only this customer's orders"`
		Limit    int    `query:"limit" validate:"min=0,max=100" doc:"At most this many (0 or absent: 20)"`
	}
)

// ErrOrderNotFound is GET /orders/:id's answer for an id the tenant has
// no order under.
var ErrOrderNotFound = fx.NewError(404, "APP_ORDER_NOT_FOUND", "No such order")

// config is what the service is built from; the zero value is main's.
type config struct {
	keys  map[string]middleware.Principal // API key → principal; nil: the demo keys
	limit ratelimit.Limit                 // per tenant; zero: 600 a minute
	idem  idempotency.Store               // nil: a memory store
	db    *store                          // nil: an empty one
}

// demoKeys are main's API keys, one per tenant.
var demoKeys = map[string]middleware.Principal{
	"ak_demo_acme_0123456789":   {Subject: "acme-shop", Tenant: "acme"},
	"ak_demo_globex_0123456789": {Subject: "globex-shop", Tenant: "globex"},
}

// newApp builds the service (main_test.go builds it too).
func newApp(cfg config) (*fx.App, error) {
	if cfg.keys == nil {
		cfg.keys = demoKeys
	}
	keys, err := middleware.NewAPIKeys(cfg.keys)
	if err != nil {
		return nil, err
	}
	if cfg.limit.Requests == 0 {
		cfg.limit = ratelimit.Limit{Name: "tenant", Requests: 600, Period: time.Minute}
	}
	db := cfg.db
	if db == nil {
		db = newStore()
	}
	app := fx.New()
	// The group holds the guards and adds no prefix: each operation names
	// its whole path, as the curl lines above do. A prefix works the same
	// with typed operations: under app.Group("/api/v1"), fx.Op(g, "GET",
	// "/orders", ...) serves GET /api/v1/orders, and fx.Op(g, "POST", "",
	// ...) the group's own path.
	orders := app.Group("",
		middleware.Auth(middleware.AuthConfig{APIKeys: keys}),
		middleware.Tenant(middleware.TenantConfig{Required: true, MatchPrincipal: true}),
		ratelimit.New(ratelimit.Config{Limit: cfg.limit, Key: ratelimit.KeyByTenant}),
	).Tags("orders")
	idem := idempotency.New(idempotency.Config{Required: true, Store: cfg.idem})

	fx.Op(orders, "POST", "/orders", func(c *fx.Ctx, in *createOrder) (*Order, error) {
		tenant, _ := middleware.TenantFrom(c)
		o := db.create(tenant, in.Body)
		c.SetHeader("Location", "/orders/"+o.ID)
		return o, nil
	}, func(r *fx.Route) {
		r.Doc = fx.RouteDoc{Summary: "Create an order"}
		r.Responses = []fx.Response{{Status: 201, Headers: []fx.Header{
			{Name: "Location", Required: true, Description: "The new order's path (/orders/{id})."}}}}
		r.Middleware = append(r.Middleware, idem)
	})
	fx.Op(orders, "GET", "/orders/:id", func(c *fx.Ctx, in *getOrder) (*Order, error) {
		tenant, _ := middleware.TenantFrom(c)
		o, ok := db.get(tenant, in.ID)
		if !ok {
			return nil, ErrOrderNotFound
		}
		return o, nil
	}, func(r *fx.Route) {
		r.Doc = fx.RouteDoc{Summary: "Get an order"}
		r.Errors = []*fx.Error{ErrOrderNotFound}
	})
	fx.Op(orders, "GET", "/orders", func(c *fx.Ctx, in *listOrders) (*OrderList, error) {
		tenant, _ := middleware.TenantFrom(c)
		return &OrderList{Orders: db.list(tenant, *in)}, nil
	}, func(r *fx.Route) { r.Doc = fx.RouteDoc{Summary: "List orders"} })

	openapi.Mount(app, openapi.Config{Title: "Orders API", Version: "1.0.0",
		Description: "fx's flagship example: typed operations with constraint tags.",
		License:     &openapi.License{Name: "MIT", Identifier: "MIT"},
		Tags:        []openapi.Tag{{Name: "orders", Description: "Create, read and list a tenant's orders."}}})
	return app, nil
}

// store keeps the orders of every tenant in memory.
type store struct {
	mu       sync.Mutex
	last     int
	byTenant map[string][]Order
}

func newStore() *store { return &store{byTenant: map[string][]Order{}} }

func (s *store) create(tenant string, in NewOrder) *Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last++
	o := Order{ID: "ord_" + strconv.Itoa(s.last), Status: "open", Customer: in.Customer,
		Email: in.Email, Lines: in.Lines, Created: time.Now().UTC()}
	s.byTenant[tenant] = append(s.byTenant[tenant], o)
	return &o
}

func (s *store) get(tenant, id string) (*Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.byTenant[tenant] {
		if o.ID == id {
			return &o, true
		}
	}
	return nil, false
}

func (s *store) list(tenant string, q listOrders) []Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Order{}
	for _, o := range s.byTenant[tenant] {
		if len(out) == cmp.Or(q.Limit, 20) {
			break
		}
		if (q.Status == "" || o.Status == q.Status) && (q.Customer == "" || o.Customer == q.Customer) {
			out = append(out, o)
		}
	}
	return out
}
