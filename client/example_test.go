package client_test

import (
	"context"
	"errors"
	"fmt"
	"net"

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
	var user struct{ Name string }
	err := c.Call(context.Background(), "GET", "/users/7", nil, &user)

	var e *fx.Error
	if errors.As(err, &e) && e.Code == "APP_USER_NOT_FOUND" {
		fmt.Println(e.Status, e.Message)
	}
	// Output: 404 User not found
}
