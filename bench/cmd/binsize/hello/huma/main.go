// Command huma is the hello world of cmd/binsize in Huma v2 (chi
// adapter): a typed operation, with its OpenAPI document and docs page.
package main

import (
	"context"
	"log"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humachi"
	"github.com/go-chi/chi/v5"
)

type greeting struct {
	Name string `query:"name" maxLength:"40"`
}

type message struct {
	Body struct {
		Message string `json:"message"`
	}
}

func main() {
	router := chi.NewMux()
	api := humachi.New(router, huma.DefaultConfig("Hello", "1.0.0"))
	huma.Get(api, "/hello", func(ctx context.Context, in *greeting) (*message, error) {
		out := &message{}
		out.Body.Message = "Hello, " + in.Name + "!"
		return out, nil
	})
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", router))
}
