package bench

import (
	"context"
	"log/slog"
	"net"

	"github.com/labstack/echo/v5"
	echo5mw "github.com/labstack/echo/v5/middleware"
)

// NewEcho5 is the service in Echo v5, written as v5 wants it: the app is
// built with echo.NewWithConfig (an slog.Logger that discards, a custom
// HTTPErrorHandler writing the envelope, validator/v10 as the Validator),
// handlers take a *echo.Context, the Recover middleware (stack capture
// off) turns a panic into an error for the handler, c.Bind and c.Validate
// check orders, and it is served by echo.StartConfig on the listener (no
// banner, no port message).
func NewEcho5(middleware int) Impl {
	e := echo.NewWithConfig(echo.Config{
		Logger:           slog.New(slog.DiscardHandler),
		HTTPErrorHandler: echo5ErrorHandler,
		Validator:        echoValidator{},
	})
	e.Use(echo5mw.RecoverWithConfig(echo5mw.RecoverConfig{DisablePrintStack: true, DisableStackAll: true}))
	for range middleware {
		e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c *echo.Context) error { return next(c) }
		})
	}
	e.GET("/hello", func(c *echo.Context) error {
		return c.JSON(200, Hello{Message: HelloMessage})
	})
	e.GET("/users/:id", func(c *echo.Context) error {
		id := c.Param("id")
		if id == MissingUserID {
			return ErrUserNotFound
		}
		return c.JSON(200, NewUser(id))
	})
	e.GET("/error", func(c *echo.Context) error { return ErrUserNotFound })
	e.GET("/panic", func(c *echo.Context) error {
		panic(ErrBoom)
	})
	e.POST("/orders", func(c *echo.Context) error {
		var o Order
		if err := c.Bind(&o); err != nil {
			return BadJSONError()
		}
		if err := c.Validate(&o); err != nil {
			return validationFailure(err)
		}
		return c.JSON(201, &o)
	})
	return Impl{HTTP: e, serve: func(ln net.Listener) error {
		sc := echo.StartConfig{Listener: ln, HideBanner: true, HidePort: true}
		return sc.Start(context.Background(), e)
	}}
}

// echo5ErrorHandler writes the envelope. The router's 404 and 405 are
// recognised by echo.StatusCode, not by a *echo.HTTPError assertion as in
// v4: in v5 echo.ErrNotFound and echo.ErrMethodNotAllowed are sentinels
// that only implement HTTPStatusCoder, so the v4 test would turn every
// unmatched route into a 500.
func echo5ErrorHandler(c *echo.Context, err error) {
	if r, _ := echo.UnwrapResponse(c.Response()); r != nil && r.Committed {
		return
	}
	if code := echo.StatusCode(err); code == 404 || code == 405 {
		_ = c.JSON(404, NotFoundEnvelope(c.Request().Method, c.Request().URL.Path))
		return
	}
	status, env := ToEnvelope(err)
	_ = c.JSON(status, env)
}
