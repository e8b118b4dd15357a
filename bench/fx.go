package bench

import (
	"log/slog"
	"math"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

// fxUserNotFound is GET /users/missing's error, kept in a variable.
var fxUserNotFound = fx.NewError(404, CodeUserNotFound, UserNotFoundMsg,
	&UserNotFoundDetails{Resource: "user", ID: MissingUserID})

// NewFX is the service in fx: handlers return errors (or panic), the error
// boundary writes every envelope, POST /orders is a route contract with a
// Body schema. Logging is discarded.
func NewFX(middleware int) Impl {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	for range middleware {
		app.Use(func(c *fx.Ctx, next fx.Next) error { return next() })
	}
	app.Get("/hello", func(c *fx.Ctx) error {
		return c.JSON(200, Hello{Message: HelloMessage})
	})
	app.Get("/users/:id", func(c *fx.Ctx) error {
		id := c.Param("id")
		if id == MissingUserID {
			return fxUserNotFound
		}
		return c.JSON(200, NewUser(id))
	})
	app.Get("/error", func(c *fx.Ctx) error { return fxUserNotFound })
	app.Get("/panic", func(c *fx.Ctx) error {
		panic(ErrBoom)
	})
	app.Route(fx.Route{
		Method: "POST",
		Path:   "/orders",
		Body:   orderSchema{},
		Handler: func(c *fx.Ctx) error {
			o, _ := fx.ValidBody[map[string]any](c)
			return c.JSON(201, o)
		},
	})
	if err := app.Boot(); err != nil {
		panic(err)
	}
	return Impl{FastHTTP: app.Handler(), serve: app.Serve}
}

// orderSchema is a hand-written validate.Schema for Order: the rules and
// messages of CheckOrder, over the decoded JSON fx hands to Validate.
type orderSchema struct{}

func (orderSchema) Validate(value any) validate.Result {
	m, ok := value.(map[string]any)
	if !ok {
		return validate.Result{Issues: []validate.Issue{{Path: []string{}, Message: "Expected an object"}}}
	}
	var issues []validate.Issue
	email, _ := m["email"].(string)
	switch {
	case email == "":
		issues = append(issues, validate.Issue{Path: []string{"email"}, Message: MsgRequired})
	case !ValidEmail(email):
		issues = append(issues, validate.Issue{Path: []string{"email"}, Message: MsgEmail})
	}
	if item, _ := m["item"].(string); item == "" {
		issues = append(issues, validate.Issue{Path: []string{"item"}, Message: MsgRequired})
	}
	if q, _ := m["quantity"].(float64); q < 1 || q != math.Trunc(q) {
		issues = append(issues, validate.Issue{Path: []string{"quantity"}, Message: MsgMinOne})
	}
	return validate.Result{Value: m, Issues: issues}
}
