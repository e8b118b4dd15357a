package bench

import (
	"errors"
	"net"

	"github.com/gofiber/fiber/v2"
	fiberrecover "github.com/gofiber/fiber/v2/middleware/recover"
)

// NewFiberV2 is the service in Fiber v2, as its documentation recommends:
// a custom ErrorHandler writing the envelope, the recover middleware,
// BodyParser and validator/v10. Default JSON encoder (encoding/json);
// Fiber logs nothing by default and the startup message is disabled.
func NewFiberV2(middleware int) Impl {
	app := fiber.New(fiber.Config{
		DisableStartupMessage: true,
		ErrorHandler:          fiberV2ErrorHandler,
	})
	app.Use(fiberrecover.New())
	for range middleware {
		app.Use(func(c *fiber.Ctx) error { return c.Next() })
	}
	app.Get("/hello", func(c *fiber.Ctx) error {
		return c.JSON(Hello{Message: HelloMessage})
	})
	app.Get("/users/:id", func(c *fiber.Ctx) error {
		id := c.Params("id")
		if id == MissingUserID {
			return ErrUserNotFound
		}
		return c.JSON(NewUser(id))
	})
	app.Get("/error", func(c *fiber.Ctx) error { return ErrUserNotFound })
	app.Get("/panic", func(c *fiber.Ctx) error {
		panic(ErrBoom)
	})
	app.Post("/orders", func(c *fiber.Ctx) error {
		var o Order
		if err := c.BodyParser(&o); err != nil {
			return BadJSONError()
		}
		if err := structValidator.Struct(&o); err != nil {
			return validationFailure(err)
		}
		return c.Status(201).JSON(&o)
	})
	return Impl{FastHTTP: app.Handler(), serve: func(ln net.Listener) error { return app.Listener(ln) }}
}

func fiberV2ErrorHandler(c *fiber.Ctx, err error) error {
	var fe *fiber.Error
	if errors.As(err, &fe) && (fe.Code == 404 || fe.Code == 405) {
		return c.Status(404).JSON(NotFoundEnvelope(c.Method(), c.Path()))
	}
	status, env := ToEnvelope(err)
	return c.Status(status).JSON(env)
}
