package middleware_test

import (
	"fmt"
	"io"
	"net/http/httptest"
	"strings"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// showHeaders sends method target with the given header pairs and prints
// the status, the named response headers that are present, and the body.
func showHeaders(app *fx.App, method, target string, names []string, header ...string) {
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := app.Test(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(body) == 0 {
		fmt.Println(resp.StatusCode)
	} else {
		fmt.Println(resp.StatusCode, string(body))
	}
	for _, n := range names {
		if v := resp.Header.Values(n); len(v) > 0 {
			fmt.Printf("  %s: %s\n", n, strings.Join(v, ", "))
		}
	}
}

func ExampleCORS() {
	app := fx.New()
	// First, before Auth: preflights carry no credentials.
	app.Use(middleware.CORS(middleware.CORSConfig{
		AllowOrigins:     []string{"https://app.example.com", "https://*.preview.example.com"},
		AllowCredentials: true,
		ExposeHeaders:    []string{"X-Request-ID"},
	}))
	app.Post("/orders", func(c *fx.Ctx) error {
		return fx.NewError(409, "ORDER_EXISTS", "Order already exists")
	})
	names := []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Credentials",
		"Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age",
		"Access-Control-Expose-Headers", "Vary"}

	// The preflight: /orders has no OPTIONS route, CORS answers it.
	showHeaders(app, "OPTIONS", "/orders", names, "Origin", "https://pr-7.preview.example.com",
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	// The actual request fails; its envelope keeps the CORS headers.
	showHeaders(app, "POST", "/orders", names, "Origin", "https://app.example.com")
	// Another origin: served as usual, no CORS headers, so the browser
	// keeps the response from the page's script.
	showHeaders(app, "POST", "/orders", names, "Origin", "https://example.com.evil.io")
	// Output:
	// 204
	//   Access-Control-Allow-Origin: https://pr-7.preview.example.com
	//   Access-Control-Allow-Credentials: true
	//   Access-Control-Allow-Methods: GET, HEAD, POST, PUT, PATCH, DELETE
	//   Access-Control-Allow-Headers: content-type
	//   Access-Control-Max-Age: 600
	//   Vary: Origin, Access-Control-Request-Method, Access-Control-Request-Headers
	// 409 {"error":{"code":"ORDER_EXISTS","message":"Order already exists"}}
	//   Access-Control-Allow-Origin: https://app.example.com
	//   Access-Control-Allow-Credentials: true
	//   Access-Control-Expose-Headers: X-Request-ID
	//   Vary: Origin
	// 409 {"error":{"code":"ORDER_EXISTS","message":"Order already exists"}}
	//   Vary: Origin
}
