package main

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
)

// TestHello checks the four routes the README promises.
func TestHello(t *testing.T) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the panic route logs a 500
	app := newApp()
	defer app.Shutdown()
	cases := []struct {
		path   string
		status int
		body   string
	}{
		{"/hello", 200, `{"message":"Hello, fx!"}`},
		{"/users/missing", 404, `{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"id":"missing"}}}`},
		{"/users/7", 200, `{"id":"7","name":"Ada"}`},
		{"/panic", 500, `{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}`},
		{"/nope", 404, `{"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}`},
	}
	for _, tc := range cases {
		resp, err := app.Test(httptest.NewRequest("GET", tc.path, nil))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.status || string(b) != tc.body {
			t.Errorf("GET %s = %d %s, want %d %s", tc.path, resp.StatusCode, b, tc.status, tc.body)
		}
	}
}
