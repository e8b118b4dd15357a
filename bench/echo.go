package bench

import (
	"errors"
	"io"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
)

// NewEcho is the service in Echo v4: a custom HTTPErrorHandler writing
// the envelope, the Recover middleware (stack printing off), c.Bind and
// c.Validate with validator/v10. Banner, port message and logger output
// are discarded.
func NewEcho(middleware int) Impl {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = echoErrorHandler
	e.Validator = echoValidator{}
	e.Use(echomw.RecoverWithConfig(echomw.RecoverConfig{DisablePrintStack: true, DisableStackAll: true}))
	for range middleware {
		e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error { return next(c) }
		})
	}
	e.GET("/hello", func(c echo.Context) error {
		return c.JSON(200, Hello{Message: HelloMessage})
	})
	e.GET("/users/:id", func(c echo.Context) error {
		id := c.Param("id")
		if id == MissingUserID {
			return ErrUserNotFound
		}
		return c.JSON(200, NewUser(id))
	})
	e.GET("/error", func(c echo.Context) error { return ErrUserNotFound })
	e.GET("/panic", func(c echo.Context) error {
		panic(ErrBoom)
	})
	e.POST("/orders", func(c echo.Context) error {
		var o Order
		if err := c.Bind(&o); err != nil {
			return BadJSONError()
		}
		if err := c.Validate(&o); err != nil {
			return validationFailure(err)
		}
		return c.JSON(201, &o)
	})
	return Impl{HTTP: e}
}

type echoValidator struct{}

func (echoValidator) Validate(i any) error { return structValidator.Struct(i) }

func echoErrorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) && (he.Code == 404 || he.Code == 405) {
		_ = c.JSON(404, NotFoundEnvelope(c.Request().Method, c.Request().URL.Path))
		return
	}
	status, env := ToEnvelope(err)
	_ = c.JSON(status, env)
}
