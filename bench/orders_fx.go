package bench

import (
	"log/slog"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/openapi"
)

// The flagship (examples/orders) in fx, for the load test: examples/orders
// is a main package (nothing can import it) whose rate limit is fixed at
// 600 requests a minute, so bench builds the same service here the way
// its newApp does (the same types and tags, middleware, operations and
// document), over the store the peers share and with the keys and limit
// passed in. TestFlagshipPeers walks it with the same steps as the peers.

type fxLine struct {
	SKU string `json:"sku" validate:"required,min=3,max=32" pattern:"^[A-Z0-9-]+$" doc:"Stock keeping unit" example:"BOOK-1"`
	Qty int    `json:"qty" validate:"gte=1,lte=100" example:"2"`
}

type fxNewOrder struct {
	Customer string   `json:"customer" validate:"required,max=80" doc:"Who pays" example:"Ada Lovelace"`
	Email    string   `json:"email,omitempty" validate:"omitempty,email" example:"ada@example.com"`
	Lines    []fxLine `json:"lines" validate:"required,min=1,max=50,dive"`
}

type (
	fxCreateOrder struct {
		Body fxNewOrder
	}
	fxGetOrder struct {
		ID string `path:"id" pattern:"^ord_[0-9]{1,12}$" example:"ord_1"`
	}
	fxListOrders struct {
		Status   string `query:"status" validate:"omitempty,oneof=open paid shipped"`
		Customer string `query:"customer" validate:"omitempty,max=80" doc:"Only this customer's orders"`
		Limit    int    `query:"limit" validate:"min=0,max=100" doc:"At most this many (0 or absent: 20)"`
	}
)

var fxOrderNotFound = fx.NewError(404, "APP_ORDER_NOT_FOUND", "No such order")

// NewFXOrders is the flagship in fx: keys maps an API key to its tenant;
// limit is the requests per minute of a tenant.
func NewFXOrders(keys map[string]string, limit int) Impl {
	principals := map[string]middleware.Principal{}
	for k, tenant := range keys {
		principals[k] = middleware.Principal{Subject: tenant + "-shop", Tenant: tenant}
	}
	apiKeys, err := middleware.NewAPIKeys(principals)
	if err != nil {
		panic(err)
	}
	db := newFlagStore[fxLine]()
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	orders := app.Group("",
		middleware.Auth(middleware.AuthConfig{APIKeys: apiKeys}),
		middleware.Tenant(middleware.TenantConfig{Required: true, MatchPrincipal: true}),
		ratelimit.New(ratelimit.Config{Limit: ratelimit.Limit{Name: "tenant", Requests: limit, Period: time.Minute},
			Key: ratelimit.KeyByTenant}),
	).Tags("orders")
	idem := idempotency.New(idempotency.Config{Required: true})
	fx.Op(orders, "POST", "/orders", func(c *fx.Ctx, in *fxCreateOrder) (*flagOrder[fxLine], error) {
		tenant, _ := middleware.TenantFrom(c)
		o := db.create(tenant, in.Body.Customer, in.Body.Email, in.Body.Lines)
		c.SetHeader("Location", "/orders/"+o.ID)
		return o, nil
	}, func(r *fx.Route) {
		r.Doc = fx.RouteDoc{Summary: "Create an order"}
		r.Responses = []fx.Response{{Status: 201, Headers: []fx.Header{
			{Name: "Location", Required: true, Description: "The new order's path (/orders/{id})."}}}}
		r.Middleware = append(r.Middleware, idem)
	})
	fx.Op(orders, "GET", "/orders/:id", func(c *fx.Ctx, in *fxGetOrder) (*flagOrder[fxLine], error) {
		tenant, _ := middleware.TenantFrom(c)
		o, ok := db.get(tenant, in.ID)
		if !ok {
			return nil, fxOrderNotFound
		}
		return o, nil
	}, func(r *fx.Route) {
		r.Doc = fx.RouteDoc{Summary: "Get an order"}
		r.Errors = []*fx.Error{fxOrderNotFound}
	})
	fx.Op(orders, "GET", "/orders", func(c *fx.Ctx, in *fxListOrders) (*flagList[fxLine], error) {
		tenant, _ := middleware.TenantFrom(c)
		return &flagList[fxLine]{Orders: db.list(tenant, in.Status, in.Customer, in.Limit)}, nil
	}, func(r *fx.Route) { r.Doc = fx.RouteDoc{Summary: "List orders"} })
	openapi.Mount(app, openapi.Config{Title: "Orders API", Version: "1.0.0"})
	if err := app.Boot(); err != nil {
		panic(err)
	}
	return Impl{FastHTTP: app.Handler(), serve: app.Serve}
}

// FlagshipFramework is one implementation of the flagship service.
type FlagshipFramework struct {
	// Name is the framework's name, as in Frameworks.
	Name string
	// New builds the service: keys maps an API key to its tenant; limit is
	// the requests per minute of a tenant.
	New func(keys map[string]string, limit int) Impl
}

// FlagshipFrameworks lists the flagship's implementations, fx first;
// cmd/server serves them for load.sh's flagship-* endpoints.
var FlagshipFrameworks = []FlagshipFramework{
	{"fx", NewFXOrders},
	{"huma", NewHumaOrders},
	{"fiber-v3", NewFiberOrders},
}

// The flagship as cmd/server serves it for the load test: one API key of
// tenant "load", and a rate limit no run reaches, so that every request
// goes through the limiter and none is refused by it (60 million a
// minute: fx's limiter takes at most one request a microsecond).
const (
	FlagshipLoadKey    = "ak_load_0123456789"
	FlagshipLoadTenant = "load"
	FlagshipLoadLimit  = 60_000_000
)

// LookupFlagship returns the flagship implementation named name.
func LookupFlagship(name string) (FlagshipFramework, bool) {
	for _, f := range FlagshipFrameworks {
		if f.Name == name {
			return f, true
		}
	}
	return FlagshipFramework{}, false
}
