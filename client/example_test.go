package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/client"
)

// A call that fails comes back as an *fx.Error: branch on its code.
func Example() {
	app := fx.New()
	app.Get("/users/:id", func(c *fx.Ctx) error {
		return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found")
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go app.Serve(ln)
	defer app.Shutdown()

	c := client.New(client.Config{BaseURL: "http://" + ln.Addr().String()})
	defer c.CloseIdleConnections() // before the Shutdown above: it need not wait for them
	var user struct{ Name string }
	err := c.Call(context.Background(), "GET", "/users/7", nil, &user)

	var e *fx.Error
	if errors.As(err, &e) && e.Code == "APP_USER_NOT_FOUND" {
		fmt.Println(e.Status, e.Message)
	}
	// Output: 404 User not found
}

// A net/http caller (or a generated client: ogen's WithClient,
// oapi-codegen's WithHTTPClient) gets the Client's retries through
// HTTPClient: here a 503 with Retry-After: 0 is retried, the POST with one
// Idempotency-Key on both attempts.
func ExampleClient_HTTPClient() {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	var mu sync.Mutex
	keys := map[string]int{} // attempts per Idempotency-Key
	app.Post("/orders", func(c *fx.Ctx) error {
		mu.Lock()
		defer mu.Unlock()
		key := c.Header("Idempotency-Key")
		if keys[key]++; keys[key] == 1 {
			c.SetHeader("Retry-After", "0")
			return fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "busy")
		}
		return c.JSON(201, map[string]string{"id": "o-1"})
	})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go app.Serve(ln)
	defer app.Shutdown()
	base := "http://" + ln.Addr().String()

	c := client.New(client.Config{BaseURL: base})
	defer c.CloseIdleConnections() // before the Shutdown above: it need not wait for them
	hc := c.HTTPClient()
	resp, err := hc.Post(base+"/orders", "application/json", strings.NewReader(`{"qty":1}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(resp.StatusCode, string(body), len(keys))
	// Output: 201 {"id":"o-1"} 1
}
