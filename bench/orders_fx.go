package bench

import (
	"time"

	"github.com/fxhq/fx/examples/orders/service"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/ratelimit"
)

// NewFXOrders is the flagship in fx: the App examples/orders serves
// (its service package), built with the keys and limit passed in, each
// key's principal named as the peers name it. keys maps an API key to
// its tenant; limit is the requests per minute of a tenant.
func NewFXOrders(keys map[string]string, limit int) Impl {
	principals := map[string]middleware.Principal{}
	for k, tenant := range keys {
		principals[k] = middleware.Principal{Subject: tenant + "-shop", Tenant: tenant}
	}
	app, err := service.New(service.Config{Keys: principals,
		Limit: ratelimit.Limit{Name: "tenant", Requests: limit, Period: time.Minute}})
	if err != nil {
		panic(err)
	}
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
