package bench

import (
	"log/slog"
	"net"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// ScaleVariants are servers for attributing cost in the scale test
// (scale.sh, FRAMEWORKS=...): each turns one of fx's safe defaults off,
// or raw fasthttp's equivalent on, so that the difference to "fx" or to
// "raw-fasthttp" in the same run is the cost of that one default. They are
// not frameworks at their defaults, so they are not in Frameworks (the
// comparison tables and the equivalence tests); cmd/server serves them.
// The fx variants answer GET /hello only (the scale test's endpoint), with
// the same handler as NewFX; raw-timeouts is the whole raw service.
var ScaleVariants = []Framework{
	// fx without ReadTimeout, WriteTimeout and IdleTimeout: its
	// connections follow no phase deadline (internal/conn/deadline.go);
	// the connection limit stays.
	{"fx-notimeouts", func(int) Impl {
		return fxHello(fx.Config{ReadTimeout: -1, WriteTimeout: -1, IdleTimeout: -1}, false)
	}},
	// fx with neither its timeouts nor its connection limit: its
	// fasthttp.Server serves the listener directly (both live in the
	// connection wrapper App.Serve puts on the listener, so they cannot be
	// turned off one without the other's wrapper).
	{"fx-bare", func(int) Impl { return fxHello(fx.Config{}, true) }},
	// fx with HeaderLimit 4096, fasthttp's and Fiber's read buffer size
	// instead of fx's 8 KiB: the memory an idle connection holds (cmd/idle).
	{"fx-header4k", func(int) Impl { return fxHello(fx.Config{HeaderLimit: 4096}, false) }},
	// fx with fasthttp's ReduceMemoryUsage: a connection waiting for its
	// next request holds no read buffer and no RequestCtx (cmd/idle), at
	// the price of pool round trips and a one-byte read per request.
	{"fx-reducemem", func(int) Impl {
		app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
		app.Get("/hello", func(c *fx.Ctx) error {
			return c.JSON(200, Hello{Message: HelloMessage})
		})
		if err := app.Boot(); err != nil {
			panic(err)
		}
		app.Server().ReduceMemoryUsage = true
		return Impl{FastHTTP: app.Handler(), serve: app.Serve}
	}},
	// raw fasthttp with fx's default timeouts.
	{"raw-timeouts", func(mw int) Impl {
		h := NewRaw(mw).FastHTTP
		return Impl{FastHTTP: h, serve: func(ln net.Listener) error {
			s := &fasthttp.Server{Handler: h, NoDefaultServerHeader: true,
				ReadTimeout:  fx.DefaultReadTimeout,
				WriteTimeout: fx.DefaultWriteTimeout,
				IdleTimeout:  fx.DefaultIdleTimeout}
			return s.Serve(ln)
		}}
	}},
}

// fxHello is an fx App with cfg answering GET /hello as NewFX does, served
// by App.Serve, or, when bare, by its fasthttp.Server on the bare listener
// (fx's connection limit and timeouts are in App.Serve's listener
// wrapper).
func fxHello(cfg fx.Config, bare bool) Impl {
	cfg.Logger = slog.New(slog.DiscardHandler)
	app := fx.New(cfg)
	app.Get("/hello", func(c *fx.Ctx) error {
		return c.JSON(200, Hello{Message: HelloMessage})
	})
	if err := app.Boot(); err != nil {
		panic(err)
	}
	serve := app.Serve
	if bare {
		serve = app.Server().Serve
	}
	return Impl{FastHTTP: app.Handler(), serve: serve}
}
