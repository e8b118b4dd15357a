package main

import (
	"os"
	"testing"
	"time"

	"github.com/fxhq/fx/examples/orders/service"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/middleware/idempotency"
)

// TestServeForClients serves the service on 127.0.0.1 for the clients
// generated from its document (scripts/openapi-clients runs it with
// FX_SERVE_FOR_CLIENTS=1; plain go test skips it), built by service.New as
// main builds it but with what makes every declared answer reachable
// from outside, as TestContract does in memory: an idempotency store of
// one key (a second request while one is in flight gets the 503 of a
// full store) and the orders store's lock, which the caller holds and
// releases with lines on stdin:
//
//	hold      lock the orders store: POST /orders stays in its handler
//	claimed   wait until a request holds the idempotency store's key
//	release   unlock the orders store
//
// The lines are answered as fxtest.ServeForClients says.
func TestServeForClients(t *testing.T) {
	db := service.NewStore()
	idem := idempotency.NewMemoryStore(idempotency.MemoryStoreConfig{MaxKeys: 1})
	app, err := service.New(service.Config{Idem: idem, Store: db})
	if err != nil {
		t.Fatal(err)
	}
	held := false
	fxtest.ServeForClients(t, app, os.Stdin, os.Stdout, map[string]func(){
		"hold": func() {
			db.Lock()
			held = true
		},
		"claimed": func() {
			for deadline := time.Now().Add(10 * time.Second); idem.Len() == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
		},
		"release": func() {
			if held {
				db.Unlock()
				held = false
			}
		},
	})
	if held {
		db.Unlock()
	}
}
