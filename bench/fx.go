package bench

import (
	json "github.com/goccy/go-json"
	"log/slog"
	"math"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

// fxUserNotFound is GET /users/missing's error, kept in a variable and
// prebuilt (its envelope encoded once).
var fxUserNotFound = fx.NewError(404, CodeUserNotFound, UserNotFoundMsg,
	&UserNotFoundDetails{Resource: "user", ID: MissingUserID}).Prebuild()

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
			o, _ := fx.ValidBody[*Order](c)
			return c.JSON(201, o)
		},
	})
	if err := app.Boot(); err != nil {
		panic(err)
	}
	return Impl{FastHTTP: app.Handler(), serve: app.Serve}
}

// orderSchema is a hand-written validate.Schema for Order with the rules
// and messages of CheckOrder. It implements validate.Decoder, the fast
// path fx offers a schema: the body bytes are decoded straight into an
// Order (as the peers bind into a struct) instead of into a generic tree.
// Result.Value is an *Order either way.
type orderSchema struct{}

// ValidateJSON decodes body into an Order and checks it.
func (orderSchema) ValidateJSON(body []byte) validate.Result {
	o := new(Order)
	if err := json.Unmarshal(body, o); err != nil {
		// A type mismatch: let the tree path report it.
		tree, err := validate.DecodeJSON(body)
		if err != nil {
			return validate.Result{Issues: []validate.Issue{{Path: []string{}, Message: MsgBadJSON}}}
		}
		return orderSchema{}.Validate(tree)
	}
	return orderResult(o)
}

// Validate checks the decoded JSON tree (what fx passes a schema that is
// not a Decoder, and an empty body as nil).
func (orderSchema) Validate(value any) validate.Result {
	m, ok := value.(map[string]any)
	if !ok {
		return validate.Result{Issues: []validate.Issue{{Path: []string{}, Message: "Expected an object"}}}
	}
	o := new(Order)
	var typeIssues []validate.Issue
	str := func(k string, dst *string) {
		switch v := m[k].(type) {
		case nil:
		case string:
			*dst = v
		default:
			typeIssues = append(typeIssues, validate.Issue{Path: []string{k}, Message: "Expected a string"})
		}
	}
	str("email", &o.Email)
	str("item", &o.Item)
	switch q := m["quantity"].(type) {
	case nil:
	case float64:
		if q != math.Trunc(q) || math.Abs(q) > 1<<53 {
			typeIssues = append(typeIssues, validate.Issue{Path: []string{"quantity"}, Message: "Expected an integer"})
		} else {
			o.Quantity = int(q)
		}
	default:
		typeIssues = append(typeIssues, validate.Issue{Path: []string{"quantity"}, Message: "Expected an integer"})
	}
	if len(typeIssues) > 0 {
		return validate.Result{Issues: typeIssues}
	}
	return orderResult(o)
}

func orderResult(o *Order) validate.Result {
	issues := CheckOrder(o)
	if len(issues) == 0 {
		return validate.Result{Value: o}
	}
	out := make([]validate.Issue, len(issues))
	for i, is := range issues {
		out[i] = validate.Issue{Path: is.Path, Message: is.Message}
	}
	return validate.Result{Issues: out}
}
