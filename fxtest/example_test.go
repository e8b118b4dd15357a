package fxtest_test

import (
	"fmt"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/validate"
)

// t stands for the *testing.T of a test function in these examples. It
// prints failures, so that a failing assertion changes an example's output
// (and fails it).
var t testing.TB = kittest.PrintTB{}

func newUserApp() *fx.App {
	app := fx.New()
	app.Get("/users/:id", func(c *fx.Ctx) error {
		if c.Param("id") != "1" {
			return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found")
		}
		return c.JSON(200, map[string]string{"id": "1", "name": "Ada"})
	})
	app.Route(fx.Route{
		Method: "POST", Path: "/orders",
		Body: validate.Object(validate.Fields{
			"items": validate.Array(validate.Object(validate.Fields{"qty": validate.Integer().Min(1)})),
		}),
		Handler: func(c *fx.Ctx) error { return c.JSON(201, map[string]bool{"created": true}) },
	})
	return app
}

func Example() {
	c := fxtest.New(t, newUserApp()) // shut down by t.Cleanup

	c.Get("/users/1").Do().AssertJSON(200, `{"id":"1","name":"Ada"}`)
	c.Get("/users/2").Do().AssertError(404, "APP_USER_NOT_FOUND")
	c.Post("/orders").JSON(map[string]any{"items": []any{map[string]int{"qty": 1}, map[string]int{"qty": 0}}}).Do().
		AssertIssues(fxtest.Issue{Location: "body", Path: "items.1.qty"})

	resp := c.Get("/users/2").Query("verbose", "1").Header("Accept", "application/json").Do()
	env := resp.Envelope()
	fmt.Println(resp.Status, env.Code, env.Message)
	// Output: 404 APP_USER_NOT_FOUND User not found
}

// Strict mode: the App documents its routes (Responses, Errors), so every
// response the client receives is held to its route's declared responses.
// Here the handler answers a 409 its route never declared, and the test
// fails with the contract in the message. Coverage lists what no request
// exercised.
func Example_strict() {
	type Order struct {
		ID string `json:"id"`
	}
	app := fx.New()
	app.Route(fx.Route{
		Method: "POST", Path: "/orders",
		Responses: []fx.ResponseDoc{{Status: 201, Body: Order{}}},
		Errors:    []*fx.Error{fx.NewError(404, "APP_SKU_UNKNOWN", "")},
		Handler: func(c *fx.Ctx) error {
			if c.RequestCtx().QueryArgs().Has("again") {
				return fx.NewError(409, "APP_CONFLICT", "Order exists") // not declared
			}
			return c.JSON(201, Order{ID: "o1"})
		},
	})
	c := fxtest.New(t, app) // strict: the App has a document

	c.Post("/orders").JSON(`{}`).Do().AssertStatus(201) // declared: passes
	c.Post("/orders?again=1").JSON(`{}`).Do()           // undeclared: fails the test
	fmt.Println(c.Coverage())

	// Output:
	// FAIL: POST /orders?again=1 answered 409 APP_CONFLICT, which the contract of POST /orders does not declare (declared: 201, 404 APP_SKU_UNKNOWN, 413 FX_PAYLOAD_TOO_LARGE, 431 FX_HEADERS_TOO_LARGE, 500 FX_INTERNAL_ERROR)
	// response: 409 application/json
	// {"error":{"code":"APP_CONFLICT","message":"Order exists"}}
	// fxtest coverage: 1 of 2 declared responses exercised; not exercised:
	// 	POST /orders 404 APP_SKU_UNKNOWN
}

// RequireFullCoverage: a test that walks a whole contract fails at its end
// when a declared response was never answered. Here neither the 404 the
// operation declares nor the 422 of its bound path parameter is provoked;
// TotalCoverage, read from TestMain, reports the same over every strict
// client of the test binary.
func ExampleRequireFullCoverage() {
	type getOrder struct {
		ID string `path:"id"`
	}
	type Order struct {
		ID string `json:"id"`
	}
	notFound := fx.NewError(404, "APP_ORDER_NOT_FOUND", "No such order")
	app := fx.New()
	fx.Op(app, "GET", "/orders/:id", func(c *fx.Ctx, in *getOrder) (*Order, error) {
		if in.ID != "1" {
			return nil, notFound
		}
		return &Order{ID: in.ID}, nil
	}, func(r *fx.Route) { r.Errors = []*fx.Error{notFound} })

	test := func(t testing.TB) {
		c := fxtest.New(t, app, fxtest.RequireFullCoverage()) // strict: a typed operation is a document
		c.Get("/orders/1").Do().AssertStatus(200)
		fmt.Println(c.Coverage().Full())
	}
	rec := &kittest.RecordTB{} // a t that records failures
	rec.Run(test)
	rec.End() // the test function returns: its Cleanup runs the check
	for _, failure := range rec.Errors() {
		fmt.Println("FAIL:", failure)
	}

	// Output:
	// false
	// FAIL: fxtest coverage: 1 of 2 declared responses exercised; not exercised:
	// 	GET /orders/:id 404 APP_ORDER_NOT_FOUND
}
