package fx_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/fxhq/fx"
)

// An observer sees every request once its response is final: the route
// pattern (never the raw path), the status and the code of the error
// behind it — 404s and errors included.
func ExampleApp_OnResponse() {
	app := fx.New(fx.Config{Logger: silentLogger})
	app.Get("/users/:id", func(c *fx.Ctx) error {
		if c.Param("id") == "0" {
			return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found")
		}
		return c.JSON(200, map[string]string{"id": c.Param("id")})
	})
	app.OnResponse(func(c *fx.Ctx) {
		fmt.Printf("route=%q status=%d code=%q\n", c.Route(), c.Status(), c.ErrorCode())
	})

	for _, p := range []string{"/users/7", "/users/0", "/nope"} {
		resp, _ := app.Test(newRequest("GET", p))
		resp.Body.Close()
	}
	// Output:
	// route="/users/:id" status=200 code=""
	// route="/users/:id" status=404 code="APP_USER_NOT_FOUND"
	// route="" status=404 code="FX_NOT_FOUND"
}

// Resolve tells a middleware what the boundary will send for the error
// next() returned, by the same rules.
func ExampleResolve() {
	fmt.Println(fx.Resolve(fx.NewError(409, "APP_CONFLICT", "Taken")))
	fmt.Println(fx.Resolve(fmt.Errorf("saving: %w", fx.NewError(409, "APP_CONFLICT", "Taken"))))
	fmt.Println(fx.Resolve(errors.New("db down")))
	// Output:
	// 409 APP_CONFLICT
	// 409 APP_CONFLICT
	// 500 FX_INTERNAL_ERROR
}

// Compression applies after the error boundary, so error envelopes are
// compressed too; small responses (under MinSize) are sent as they are.
func ExampleCompressionConfig() {
	app := fx.New(fx.Config{Compression: &fx.CompressionConfig{}})
	app.Get("/big", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"text": string(make([]byte, 4096))})
	})
	req := newRequest("GET", "/big")
	req.Header.Set("Accept-Encoding", "gzip;q=0.5, br")
	resp, _ := app.Test(req)
	resp.Body.Close()
	fmt.Println(resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
	// Output: br Accept-Encoding
}

// newRequest is an in-memory request for app.Test.
func newRequest(method, target string) *http.Request {
	return httptest.NewRequest(method, target, nil)
}
