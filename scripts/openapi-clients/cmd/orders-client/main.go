//go:build clients

// Command orders-client calls examples/orders through the client ogen
// generates from the service's document (package orders), sending through
// fx/client: the generated client keeps its typed operations and its typed
// error responses, fx/client adds safe retries, Retry-After and the retry
// budget underneath. docs/clients.md shows this file whole.
//
//	go run ./examples/orders &    # from the repository's root
//	bash check.sh                              # from scripts/openapi-clients: generates package orders
//	go run -tags clients ./cmd/orders-client   # ORDERS_URL to change
package main

import (
	"cmp"
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/fxhq/fx/client"
	orders "github.com/fxhq/fx/scripts/openapi-clients/gen/ogen/orders"
)

// apiKey is the credential the document asks for (its X-API-Key scheme).
type apiKey string

func (k apiKey) ApiKeyAuth(context.Context, orders.OperationName) (orders.ApiKeyAuth, error) {
	return orders.ApiKeyAuth{APIKey: string(k)}, nil
}

func main() {
	base := cmp.Or(os.Getenv("ORDERS_URL"), "http://127.0.0.1:8080")
	c := client.New(client.Config{BaseURL: base})
	api, err := orders.NewClient(base, apiKey("ak_demo_acme_0123456789"), orders.WithClient(c.HTTPClient()))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	const tenant = "acme"

	// The document requires an Idempotency-Key on POST /orders: one per
	// logical call, which fx/client sends unchanged on every retry.
	order := &orders.PostOrdersReq{Customer: "Ada Lovelace",
		Lines: []orders.PostOrdersReqLinesItem{{Sku: "BOOK-1", Qty: 2}}}
	res, err := api.PostOrders(ctx, order, orders.PostOrdersParams{XTenantID: tenant, IdempotencyKey: client.NewIdempotencyKey()})
	if err != nil {
		log.Fatal(err) // no answer, or one the document does not declare
	}
	created, ok := res.(*orders.PostOrdersCreatedHeaders)
	if !ok {
		log.Fatalf("create: %T", res)
	}
	fmt.Println("created", created.Response.ID, "at", created.Location)

	// Every declared answer is a type of its own: the order, or the 404
	// whose code is the enum of the codes declared for it.
	got, err := api.GetOrdersById(ctx, orders.GetOrdersByIdParams{ID: "ord_999", XTenantID: tenant})
	if err != nil {
		log.Fatal(err)
	}
	switch r := got.(type) {
	case *orders.GetOrdersByIdOKHeaders:
		fmt.Println("found", r.Response.ID)
	case *orders.GetOrdersById404ErrorHeaders:
		fmt.Println("not found:", r.Response.Error.Code, r.Response.Error.Message)
	default:
		fmt.Printf("other answer: %T\n", r)
	}

	// A 422 carries the validation issues, typed.
	bad, err := api.PostOrders(ctx, &orders.PostOrdersReq{Customer: ""},
		orders.PostOrdersParams{XTenantID: tenant, IdempotencyKey: client.NewIdempotencyKey()})
	if err != nil {
		log.Fatal(err)
	}
	if r, ok := bad.(*orders.PostOrders422ErrorHeaders); ok {
		if v, ok := r.Response.Error.GetPostOrders422ErrorFxValidationError(); ok {
			for _, is := range v.Details.Issues {
				fmt.Printf("invalid: %s %s: %s\n", is.Location, strings.Join(is.Path, "."), is.Message)
			}
		}
	}
}
