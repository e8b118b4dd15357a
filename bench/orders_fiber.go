package bench

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/gofiber/fiber/v3"
	"github.com/gofiber/fiber/v3/extractors"
	"github.com/gofiber/fiber/v3/middleware/idempotency"
	"github.com/gofiber/fiber/v3/middleware/keyauth"
	"github.com/gofiber/fiber/v3/middleware/limiter"
)

// The flagship (examples/orders) in Fiber v3: keyauth, limiter and
// idempotency from Fiber's middleware, validator/v10 as the
// StructValidator of c.Bind(), a tenant check by hand. Fiber has no
// OpenAPI generator, so there is no document; its idempotency middleware
// neither requires a key (checked by hand here) nor compares the request
// (a reused key with another body replays the first response instead of
// answering 422), and it waits for a request in flight instead of
// answering 409.

type fiberLine struct {
	SKU string `json:"sku" validate:"required,min=3,max=32,sku"`
	Qty int    `json:"qty" validate:"gte=1,lte=100"`
}

type fiberNewOrder struct {
	Customer string      `json:"customer" validate:"required,max=80"`
	Email    string      `json:"email,omitempty" validate:"omitempty,email"`
	Lines    []fiberLine `json:"lines" validate:"required,min=1,max=50,dive"`
}

type fiberListQuery struct {
	Status   string `query:"status" json:"status" validate:"omitempty,oneof=open paid shipped"`
	Customer string `query:"customer" json:"customer" validate:"omitempty,max=80"`
	Limit    int    `query:"limit" json:"limit" validate:"omitempty,min=1,max=100"`
}

var fiberOrderID = regexp.MustCompile(flagIDPattern)

// init registers "sku", the pattern of a SKU, which validator/v10 has no
// word for.
func init() {
	sku := regexp.MustCompile(`^[A-Z0-9-]+$`)
	if err := structValidator.RegisterValidation("sku", func(fl validator.FieldLevel) bool {
		return sku.MatchString(fl.Field().String())
	}); err != nil {
		panic(err)
	}
}

// NewFiberOrders is the flagship in Fiber v3: keys maps an API key to its
// tenant; limit is the requests per minute of a tenant.
func NewFiberOrders(keys map[string]string, limit int) Impl {
	db := newFlagStore[fiberLine]()
	app := fiber.New(fiber.Config{ErrorHandler: fiberV3ErrorHandler, StructValidator: fiberValidator{}})
	orders := app.Group("/orders",
		keyauth.New(keyauth.Config{
			Extractor: extractors.FromHeader("X-API-Key"),
			Validator: func(c fiber.Ctx, key string) (bool, error) {
				tenant, ok := keys[key]
				c.Locals("tenant", tenant)
				return ok, nil
			},
			ErrorHandler: func(fiber.Ctx, error) error { return errFlagUnauth },
		}),
		func(c fiber.Ctx) error {
			switch t := c.Get("X-Tenant-ID"); {
			case t == "":
				return errFlagNoTenant
			case t != c.Locals("tenant"):
				return errFlagForbidden
			}
			return c.Next()
		},
		limiter.New(limiter.Config{
			Max: limit, Expiration: time.Minute,
			KeyGenerator: func(c fiber.Ctx) string { return c.Get("X-Tenant-ID") },
			LimitReached: func(fiber.Ctx) error { return errFlagRateLimited },
		}),
	)
	orders.Post("", func(c fiber.Ctx) error {
		if c.Get("Idempotency-Key") == "" {
			return errFlagKeyRequired
		}
		return c.Next()
	}, idempotency.New(idempotency.Config{
		KeyHeader:         "Idempotency-Key",
		KeyHeaderValidate: func(string) error { return nil },
	}), func(c fiber.Ctx) error {
		var in fiberNewOrder
		if err := c.Bind().Body(&in); err != nil {
			return validationFailure(err)
		}
		// A copy: c.Get's string lives in fasthttp's buffer, reused after the request.
		o := db.create(strings.Clone(c.Get("X-Tenant-ID")), in.Customer, in.Email, in.Lines)
		c.Set("Location", "/orders/"+o.ID)
		return c.Status(201).JSON(o)
	})
	orders.Get("/:id", func(c fiber.Ctx) error {
		id := c.Params("id")
		if !fiberOrderID.MatchString(id) {
			return NewValidationError([]Issue{{"path", []string{"id"}, "Must match " + flagIDPattern}})
		}
		o, ok := db.get(c.Get("X-Tenant-ID"), id)
		if !ok {
			return errFlagNotFound
		}
		return c.JSON(o)
	})
	orders.Get("", func(c fiber.Ctx) error {
		var q fiberListQuery
		if err := c.Bind().Query(&q); err != nil {
			return queryFailure(err)
		}
		return c.JSON(flagList[fiberLine]{Orders: db.list(c.Get("X-Tenant-ID"), q.Status, q.Customer, q.Limit)})
	})
	return Impl{FastHTTP: app.Handler()}
}

// queryFailure is validationFailure for a query: its issues are at
// location "query"; a value that does not parse is one issue too.
func queryFailure(err error) *AppError {
	issues := IssuesFromValidator(err)
	if issues == nil {
		issues = []Issue{{"query", []string{}, "Invalid query: " + strconv.Quote(err.Error())}}
	}
	for i := range issues {
		issues[i].Location = "query"
	}
	return NewValidationError(issues)
}
