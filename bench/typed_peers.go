package bench

import (
	"log/slog"

	"github.com/gin-gonic/gin"
	"github.com/gofiber/fiber/v3"
	"github.com/labstack/echo/v5"
)

// The typed endpoint in the peers that check structs with validator/v10:
// each binds the body into a TypedOrder with its own binder and
// validator hook, and maps a validator error to the 422 with
// validationFailure, as their POST /orders does.

// NewFiberV3Typed is the typed endpoint in Fiber v3: c.Bind().Body with
// validator/v10 as the app's StructValidator, the errors through the
// service's ErrorHandler.
func NewFiberV3Typed(int) Impl {
	app := fiber.New(fiber.Config{ErrorHandler: fiberV3ErrorHandler, StructValidator: fiberValidator{}})
	app.Post(TypedPath, func(c fiber.Ctx) error {
		var o TypedOrder
		if err := c.Bind().Body(&o); err != nil {
			return validationFailure(err)
		}
		return c.Status(201).JSON(&o)
	})
	return Impl{FastHTTP: app.Handler()}
}

// NewEcho5Typed is the typed endpoint in Echo v5: c.Bind, then c.Validate
// with validator/v10 as the app's Validator.
func NewEcho5Typed(int) Impl {
	e := echo.NewWithConfig(echo.Config{
		Logger:           slog.New(slog.DiscardHandler),
		HTTPErrorHandler: echo5ErrorHandler,
		Validator:        echoValidator{},
	})
	e.POST(TypedPath, func(c *echo.Context) error {
		var o TypedOrder
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

// NewGinTyped is the typed endpoint in Gin: ShouldBindJSON, which runs
// Gin's validator/v10 on the `binding` tags.
func NewGinTyped(int) Impl {
	r := gin.New()
	r.Use(ginErrors)
	r.POST(TypedPath, func(c *gin.Context) {
		var o TypedOrder
		if err := c.ShouldBindJSON(&o); err != nil {
			_ = c.Error(validationFailure(err))
			return
		}
		c.JSON(201, &o)
	})
	return Impl{HTTP: r}
}
