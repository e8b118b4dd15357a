// Command orders is fx's flagship service, the one to read first: a
// multi-tenant order API whose every contract is declared once, as Go
// types with constraint tags, and drives binding, validation (every issue
// in one 422), the OpenAPI document and the tests (main_test.go holds the
// server to its own document with fxtest's strict mode). The service is
// package service (service/service.go), so that bench's load test serves
// this very App; main serves service.New(service.Config{}).
//
//	POST /orders       create an order (Idempotency-Key required) → 201 with Location
//	GET  /orders/:id   one order; 404 APP_ORDER_NOT_FOUND
//	GET  /orders       the tenant's orders, filtered by ?status=, ?customer=, ?limit=
//	GET  /openapi.json the document; GET /docs renders it
//
// Every /orders route authenticates an API key (middleware.Auth), resolves
// the tenant from X-Tenant-ID and checks it is the key's (middleware.Tenant),
// and counts against the tenant's rate limit (ratelimit.New, a
// memory store); POST is idempotent (middleware/idempotency). Run it:
//
//	go run ./examples/orders              # 127.0.0.1:8080; -addr or ADDR to change
//
//	K='X-API-Key: ak_demo_acme_0123456789'; T='X-Tenant-ID: acme'; J='Content-Type: application/json'
//	curl -i localhost:8080/orders -H "$K" -H "$T" -H "$J" -H 'Idempotency-Key: 3f0c5a1e-0001' \
//	  -d '{"customer":"Ada Lovelace","lines":[{"sku":"BOOK-1","qty":2}]}'      # 201, Location: /orders/ord_1
//	# the same line again: the same 201, Idempotent-Replayed: true
//	curl -i localhost:8080/orders/ord_1 -H "$K" -H "$T"                       # 200
//	curl -i localhost:8080/orders/ord_9 -H "$K" -H "$T"                       # 404 APP_ORDER_NOT_FOUND
//	curl -i 'localhost:8080/orders?status=open&limit=10' -H "$K" -H "$T"      # 200
//	curl -i 'localhost:8080/orders?limit=500' -H "$K" -H "$T"                 # 422 FX_VALIDATION_ERROR
//	curl -i localhost:8080/orders -H "$K" -H "$T" -H "$J" -H 'Idempotency-Key: 3f0c5a1e-0002' \
//	  -d '{"customer":"","email":"nope","lines":[{"sku":"b","qty":0}]}'      # 422, four issues
//	curl -i localhost:8080/orders -H "$T"                                     # 401 FX_UNAUTHENTICATED
//	curl -i localhost:8080/orders -H "$K"                                     # 400 FX_TENANT_REQUIRED
//	curl -i localhost:8080/orders -H "$K" -H 'X-Tenant-ID: globex'            # 403 FX_FORBIDDEN
//	open http://localhost:8080/docs
//
// The orders live in memory; so do the idempotency keys and the rate-limit
// buckets (several instances need the Redis stores: docs/idempotency.md).
package main

import (
	"cmp"
	"context"
	"flag"
	"log"
	"net"
	"os"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/examples/orders/service"
)

func main() {
	addr := flag.String("addr", cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080"), "listen address (default: $ADDR, else 127.0.0.1:8080)")
	flag.Parse()
	app, err := service.New(service.Config{})
	if err != nil {
		log.Fatal(err)
	}
	err = app.Run(context.Background(), *addr, fx.RunConfig{
		OnListen: func(a net.Addr) { log.Printf("orders on http://%s (docs at /docs)", a) },
	})
	if err != nil {
		log.Fatal(err)
	}
}
