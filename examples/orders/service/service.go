// Package service is the flagship service of fx (examples/orders): a
// multi-tenant order API whose every contract is declared once, as Go
// types with constraint tags. The orders command serves it; bench's load
// test serves the same App, built by New with its own keys and rate
// limit.
package service

import (
	"cmp"
	"strconv"
	"sync"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/openapi"
)

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

// Config is what the service is built from; the zero value is the one
// the orders command serves.
type Config struct {
	// Keys maps an API key to its principal; nil: the demo keys (one per
	// tenant, acme and globex).
	Keys map[string]middleware.Principal
	// Limit is each tenant's rate limit; zero: 600 requests a minute.
	Limit ratelimit.Limit
	// Idem keeps the idempotency keys; nil: a memory store.
	Idem idempotency.Store
	// Store keeps the orders; nil: an empty one.
	Store *Store
}

// demoKeys are main's API keys, one per tenant.
var demoKeys = map[string]middleware.Principal{
	"ak_demo_acme_0123456789":   {Subject: "acme-shop", Tenant: "acme"},
	"ak_demo_globex_0123456789": {Subject: "globex-shop", Tenant: "globex"},
}

// New builds the service: the orders command serves New(Config{}), its
// tests build it with their own keys, limit and stores, and bench's load
// test serves it with a limit no run reaches.
func New(cfg Config) (*fx.App, error) {
	if cfg.Keys == nil {
		cfg.Keys = demoKeys
	}
	keys, err := middleware.NewAPIKeys(cfg.Keys)
	if err != nil {
		return nil, err
	}
	if cfg.Limit.Requests == 0 {
		cfg.Limit = ratelimit.Limit{Name: "tenant", Requests: 600, Period: time.Minute}
	}
	db := cfg.Store
	if db == nil {
		db = NewStore()
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
		ratelimit.New(ratelimit.Config{Limit: cfg.Limit, Key: ratelimit.KeyByTenant}),
	).Tags("orders")
	idem := idempotency.New(idempotency.Config{Required: true, Store: cfg.Idem})

	fx.Op(orders, "POST", "/orders", func(c *fx.Ctx, in *createOrder) (*Order, error) {
		tenant, _ := middleware.TenantFrom(c)
		o := db.create(tenant, in.Body)
		c.SetHeader("Location", "/orders/"+o.ID)
		return o, nil
	}, func(r *fx.Route) {
		r.Doc = fx.RouteDoc{Summary: "Create an order"}
		r.Responses = []fx.ResponseDoc{{Status: 201, Headers: []fx.HeaderDoc{
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

// Store keeps the orders of every tenant in memory.
type Store struct {
	mu       sync.Mutex
	last     int
	byTenant map[string][]Order
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{byTenant: map[string][]Order{}} }

// Lock holds every request that reads or writes the store (the three
// operations) in its handler until Unlock: the tests use it to keep a
// request in flight.
func (s *Store) Lock() { s.mu.Lock() }

// Unlock releases the requests Lock holds.
func (s *Store) Unlock() { s.mu.Unlock() }

func (s *Store) create(tenant string, in NewOrder) *Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last++
	o := Order{ID: "ord_" + strconv.Itoa(s.last), Status: "open", Customer: in.Customer,
		Email: in.Email, Lines: in.Lines, Created: time.Now().UTC()}
	s.byTenant[tenant] = append(s.byTenant[tenant], o)
	return &o
}

func (s *Store) get(tenant, id string) (*Order, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.byTenant[tenant] {
		if o.ID == id {
			return &o, true
		}
	}
	return nil, false
}

func (s *Store) list(tenant string, q listOrders) []Order {
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
