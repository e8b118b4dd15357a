package main

import (
	"log/slog"
	"testing"

	"github.com/fxhq/fx/fxtest"
)

// TestHello checks the routes the README promises.
func TestHello(t *testing.T) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the panic route logs a 500
	c := fxtest.New(t, newApp())

	c.Get("/hello").Do().AssertJSON(200, `{"message":"Hello, fx!"}`)
	c.Get("/users/7").Do().AssertJSON(200, `{"id":"7","name":"Ada"}`)
	r := c.Get("/users/missing").Do().AssertError(404, "APP_USER_NOT_FOUND")
	if env := r.Envelope(); env.Message != "User not found" || string(env.Details) != `{"id":"missing"}` {
		t.Errorf("envelope %+v", env)
	}
	c.Get("/panic").Do().AssertJSON(500, `{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}`)
	c.Get("/nope").Do().AssertJSON(404, `{"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}`)
}
