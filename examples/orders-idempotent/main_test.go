package main

import (
	"testing"

	"github.com/fxhq/fx/fxtest"
)

// TestRetriesCreateOneOrder replays the curl lines of the package comment
// and more: retries create one order, a reused key and a missing key are
// refused, and another caller's identical request is its own order.
func TestRetriesCreateOneOrder(t *testing.T) {
	app, err := newApp()
	if err != nil {
		t.Fatal(err)
	}
	c := fxtest.New(t, app)
	const alice, bob = "ak_demo_alice_0123456789", "ak_demo_bob_0123456789ab"
	const key = "6f1c0d2e-7c1a-4e8f-9b1e-2d3c4b5a6978"
	post := func(apiKey, idemKey, body string) *fxtest.Response {
		r := c.Post("/orders").Header("X-API-Key", apiKey).Body("application/json", []byte(body))
		if idemKey != "" {
			r = r.Header("Idempotency-Key", idemKey)
		}
		return r.Do()
	}

	first := post(alice, key, `{"item":"book","qty":1}`).
		AssertJSON(201, `{"id":1,"owner":"alice","item":"book","qty":1}`).
		AssertHeader("Location", "/orders/1")
	if first.Header().Get("Idempotent-Replayed") != "" {
		t.Fatal("the first response is marked as a replay")
	}
	for range 3 {
		post(alice, key, `{"item":"book","qty":1}`).
			AssertJSON(201, `{"id":1,"owner":"alice","item":"book","qty":1}`).
			AssertHeader("Location", "/orders/1").
			AssertHeader("Idempotent-Replayed", "true")
	}
	post(alice, key, `{"item":"book","qty":2}`).AssertError(422, "FX_IDEMPOTENCY_KEY_REUSED")
	post(alice, "", `{"item":"book","qty":1}`).AssertError(400, "FX_IDEMPOTENCY_KEY_REQUIRED")
	post(alice, "has space", `{"item":"book","qty":1}`).AssertError(400, "FX_IDEMPOTENCY_KEY_REQUIRED")
	// Bob's key is his own: the same key and body create his order.
	post(bob, key, `{"item":"book","qty":1}`).AssertJSON(201, `{"id":2,"owner":"bob","item":"book","qty":1}`)
	// A refused order is stored too: its retry gets the same 422.
	post(alice, "k-bad-qty", `{"item":"book","qty":0}`).AssertError(422, "APP_BAD_QUANTITY")
	post(alice, "k-bad-qty", `{"item":"book","qty":0}`).AssertError(422, "APP_BAD_QUANTITY").
		AssertHeader("Idempotent-Replayed", "true")

	c.Get("/orders/count").Header("X-API-Key", alice).Do().AssertJSON(200, `{"count":2}`)
}
