package nethttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/nethttp"
)

// Serve an fx App from net/http: here through httptest, in production
// through an http.Server (HTTP/2 and TLS included).
func ExampleHandler() {
	app := fx.New()
	app.Get("/hello/:name", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"hello": c.Param("name")})
	})

	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()

	for _, path := range []string{"/hello/ada", "/nope"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(body))
	}
	// Output:
	// 200 {"hello":"ada"}
	// 404 {"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}
}

// Mount an existing net/http handler inside an fx App: it runs behind fx's
// middleware, and its failures reach fx's boundary.
func ExampleWrap() {
	app := fx.New()
	legacy := http.NewServeMux()
	legacy.HandleFunc("GET /legacy/ping", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "pong")
	})
	legacy.HandleFunc("GET /legacy/conflict", func(w http.ResponseWriter, r *http.Request) {
		nethttp.Fail(r, fx.NewError(409, "APP_CONFLICT", "Already exists"))
	})
	app.Get("/legacy/*rest", nethttp.Wrap(legacy))

	for _, path := range []string{"/legacy/ping", "/legacy/conflict"} {
		resp, err := app.Test(httptest.NewRequest("GET", path, nil))
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, string(body))
	}
	// Output:
	// 200 pong
	// 409 {"error":{"code":"APP_CONFLICT","message":"Already exists"}}
}

// Bound a handler's work with the client: under Handler, Context(c) is
// done when the client goes away; on fasthttp it is c.Context().
func ExampleContext() {
	app := fx.New()
	app.Get("/report", func(c *fx.Ctx) error {
		ctx := nethttp.Context(c)
		select {
		case <-ctx.Done(): // the client left: stop working
			return ctx.Err()
		default:
		}
		return c.String(200, "report ready")
	})
	w := httptest.NewRecorder()
	nethttp.Handler(app).ServeHTTP(w, httptest.NewRequest("GET", "/report", nil))
	fmt.Println(w.Code, w.Body.String())
	// Output: 200 report ready
}
