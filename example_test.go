package fx_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"

	"github.com/fxhq/fx"
)

// show prints the status and body of one in-memory request.
func show(app *fx.App, method, target, body string) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	resp, err := app.Test(httptest.NewRequest(method, target, rd))
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(b))
}

// silentLogger keeps the examples' output to the responses.
var silentLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// A route that answers JSON, and what every unmatched route gets.
func Example() {
	app := fx.New()
	app.Get("/hello/:name", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"hello": c.Param("name")})
	})

	show(app, "GET", "/hello/gopher", "")
	show(app, "GET", "/nope", "")
	// Output:
	// 200 {"hello":"gopher"}
	// 404 {"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}
}

// Expected failures are *fx.Error values: status, a stable code, a message
// and optional details. Keep fixed ones in variables (no allocation when
// returned); wrapping with %w keeps them.
func ExampleNewError() {
	errOutOfStock := fx.NewError(409, "SHOP_OUT_OF_STOCK", "The item is out of stock")

	app := fx.New(fx.Config{Logger: silentLogger})
	app.Get("/items/:id", func(c *fx.Ctx) error {
		if c.Param("id") == "7" {
			return fmt.Errorf("reserving item 7: %w", errOutOfStock)
		}
		return fx.NewError(404, "SHOP_NO_ITEM", "No such item", map[string]string{"id": c.Param("id")})
	})
	app.Get("/crash", func(c *fx.Ctx) error { panic("nil map somewhere") })

	show(app, "GET", "/items/7", "")
	show(app, "GET", "/items/9", "")
	show(app, "GET", "/crash", "")
	// Output:
	// 409 {"error":{"code":"SHOP_OUT_OF_STOCK","message":"The item is out of stock"}}
	// 404 {"error":{"code":"SHOP_NO_ITEM","message":"No such item","details":{"id":"9"}}}
	// 500 {"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}
}

// The error hook sees the raw failure (here the very value passed to
// panic). Return true after writing a response yourself; return false to
// send the default envelope.
func ExampleApp_OnError() {
	app := fx.New(fx.Config{Logger: silentLogger})
	app.OnError(func(c *fx.Ctx, err any) bool {
		if err == "maintenance" {
			c.SetHeader("Retry-After", "60")
			_ = c.JSON(503, map[string]string{"status": "down for maintenance"})
			return true
		}
		fmt.Printf("hook saw %T\n", err)
		return false
	})
	app.Get("/a", func(c *fx.Ctx) error { panic("maintenance") })
	app.Get("/b", func(c *fx.Ctx) error { return fx.NewError(400, "APP_BAD", "Bad input") })

	show(app, "GET", "/a", "")
	show(app, "GET", "/b", "")
	// Output:
	// 503 {"status":"down for maintenance"}
	// hook saw *fx.Error
	// 400 {"error":{"code":"APP_BAD","message":"Bad input"}}
}

// Middleware wraps the rest of the chain through next, which returns the
// inner failure (a panic arrives as *fx.PanicError), so middleware can
// translate it.
func ExampleApp_Use() {
	errBusy := errors.New("pool exhausted")

	app := fx.New(fx.Config{Logger: silentLogger})
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("X-Request-Id", "req-1") // kept on error responses too
		err := next()
		if errors.Is(err, errBusy) {
			c.SetHeader("Retry-After", "1")
			return fx.NewError(429, "APP_BUSY", "Try again shortly")
		}
		return err
	})
	app.Get("/work", func(c *fx.Ctx) error { return errBusy })

	resp, _ := app.Test(httptest.NewRequest("GET", "/work", nil))
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("X-Request-Id"))
	fmt.Println(string(b))
	// Output:
	// 429 1 req-1
	// {"error":{"code":"APP_BUSY","message":"Try again shortly"}}
}

// Plugins may be registered in any order; Boot runs Setup dependencies
// first. A Setup can register routes, middleware and the hook.
func ExampleApp_Register() {
	app := fx.New()
	app.Register(fx.Plugin{
		Name:      "api",
		DependsOn: []string{"db"},
		Setup: func(a *fx.App) error {
			fmt.Println("setup api")
			a.Get("/ping", func(c *fx.Ctx) error { return c.JSON(200, "pong") })
			return nil
		},
	})
	app.Register(fx.Plugin{Name: "db", Setup: func(a *fx.App) error {
		fmt.Println("setup db")
		return nil
	}})

	if err := app.Boot(); err != nil {
		fmt.Println(err)
		return
	}
	show(app, "GET", "/ping", "")

	broken := fx.New(fx.Config{Logger: silentLogger})
	broken.Register(fx.Plugin{Name: "billing", DependsOn: []string{"payments"}})
	fmt.Println(broken.Boot())
	// Output:
	// setup db
	// setup api
	// 200 "pong"
	// FX_PLUGIN_MISSING_DEPENDENCY (500): Plugin "billing" depends on "payments", which is not registered
}

// Route registers a route contract; a missing handler is a configuration
// error reported by Boot (and Listen refuses to start).
func ExampleApp_Route() {
	app := fx.New(fx.Config{Logger: silentLogger})
	app.Route(fx.Route{Method: "POST", Path: "/orders", Handler: func(c *fx.Ctx) error {
		return c.JSON(201, map[string]bool{"created": true})
	}})
	show(app, "POST", "/orders", "")

	bad := fx.New(fx.Config{Logger: silentLogger})
	bad.Route(fx.Route{Method: "POST", Path: "/orders"})
	fmt.Println(bad.Boot())
	// Output:
	// 201 {"created":true}
	// FX_ROUTE_HANDLER_REQUIRED (500): Route POST /orders has no handler
}

// JSONBody decodes the request body; anything that is not the expected JSON
// is a 422 with one issue at location "body".
func ExampleJSONBody() {
	type order struct {
		Qty int `json:"qty"`
	}
	app := fx.New()
	app.Post("/orders", func(c *fx.Ctx) error {
		o, err := fx.JSONBody[order](c)
		if err != nil {
			return err
		}
		return c.JSON(201, o)
	})
	show(app, "POST", "/orders", `{"qty":2}`)
	show(app, "POST", "/orders", `{"qty":"two"}`)
	// Output:
	// 201 {"qty":2}
	// 422 {"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[{"location":"body","path":["qty"],"message":"Expected an integer, got a string"}]}}}
}

// app.Test runs a request through the real server in memory: no port.
func ExampleApp_Test() {
	app := fx.New()
	app.Get("/health", func(c *fx.Ctx) error { return c.JSON(200, map[string]string{"status": "ok"}) })

	resp, err := app.Test(httptest.NewRequest("GET", "/health", nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"), string(b))
	// Output:
	// 200 application/json {"status":"ok"}
}

// A typed operation: the input struct's tags bind the path and the body
// and state the constraints; every failing field is one issue of one 422.
func ExampleOp() {
	type NewOrder struct {
		SKU string `json:"sku" validate:"required"`
		Qty int    `json:"qty" validate:"min=1,max=99"`
	}
	type CreateOrder struct {
		Shop string `path:"shop"`
		Body NewOrder
	}
	type Order struct {
		Shop string `json:"shop"`
		SKU  string `json:"sku"`
		Qty  int    `json:"qty"`
	}
	app := fx.New()
	fx.Op(app, "POST", "/shops/:shop/orders", func(c *fx.Ctx, in *CreateOrder) (*Order, error) {
		return &Order{Shop: in.Shop, SKU: in.Body.SKU, Qty: in.Body.Qty}, nil
	})
	show(app, "POST", "/shops/north/orders", `{"sku":"A-1","qty":2}`)
	show(app, "POST", "/shops/north/orders", `{"qty":0}`)
	// Output:
	// 200 {"shop":"north","sku":"A-1","qty":2}
	// 422 {"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[{"location":"body","path":["qty"],"message":"Must be at least 1"},{"location":"body","path":["sku"],"message":"Required"}]}}}
}

// A declared error answered with this request's details: With copies it
// (same status, code and message), leaving the declared value unchanged.
func ExampleError_With() {
	type OrderRef struct {
		ID string `json:"id"`
	}
	errOrderNotFound := fx.NewError(404, "APP_ORDER_NOT_FOUND", "No such order", OrderRef{})

	app := fx.New(fx.Config{Logger: silentLogger})
	app.Route(fx.Route{Method: "GET", Path: "/orders/:id", Errors: []*fx.Error{errOrderNotFound},
		Handler: func(c *fx.Ctx) error {
			return errOrderNotFound.With(OrderRef{ID: c.Param("id")})
		}})

	show(app, "GET", "/orders/ord_9", "")
	fmt.Println(errOrderNotFound.Details)
	// Output:
	// 404 {"error":{"code":"APP_ORDER_NOT_FOUND","message":"No such order","details":{"id":"ord_9"}}}
	// {}
}
