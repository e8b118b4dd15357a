//go:build clients

package live

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx/client"
	ogen "github.com/fxhq/fx/scripts/openapi-clients/gen/ogen/orders"
)

// TestOrdersClientProgram runs cmd/orders-client, the ogen client of
// examples/orders under fx/client that docs/clients.md shows, against the
// live example: it creates an order (201, its Location typed), gets the
// typed 404 and the typed issues of a 422. The page must show the
// program as it is.
func TestOrdersClientProgram(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(moduleDir, "cmd", "orders-client", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, program, _ := strings.Cut(string(src), "package main")
	if !strings.Contains(string(page), "```go\npackage main"+program+"```\n") {
		t.Errorf("docs/clients.md does not show cmd/orders-client/main.go as it is (from its package clause on)")
	}

	ex := startExample(t, "orders")
	cmd := exec.Command("go", "run", "-tags", "clients", "./cmd/orders-client")
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "ORDERS_URL="+ex.base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run -tags clients ./cmd/orders-client: %v\n%s", err, out)
	}
	want := "created ord_1 at /orders/ord_1\n" +
		"not found: APP_ORDER_NOT_FOUND No such order\n" +
		"invalid: body customer: Required\n" +
		"invalid: body lines: Must have at least 1 item\n"
	if string(out) != want {
		t.Errorf("cmd/orders-client printed\n%s\nwant\n%s", out, want)
	}
}

// attempts is an http.RoundTripper that counts what fx/client sends and
// says when a 409 came back.
type attempts struct {
	mu       sync.Mutex
	keys     []string // the Idempotency-Key of each attempt
	conflict chan struct{}
}

func (a *attempts) RoundTrip(req *http.Request) (*http.Response, error) {
	a.mu.Lock()
	a.keys = append(a.keys, req.Header.Get("Idempotency-Key"))
	a.mu.Unlock()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusConflict {
		select {
		case a.conflict <- struct{}{}:
		default:
		}
	}
	return resp, err
}

// TestGeneratedClientRetriesThroughFxClient: ogen's client of
// examples/orders under c.HTTPClient() meets a 409
// FX_IDEMPOTENCY_IN_FLIGHT (another call with the same key is still in
// its handler): fx/client waits the answer's Retry-After and sends the
// request again with the same key, and the generated client gets the
// first call's 201, replayed, typed, without seeing the 409.
func TestGeneratedClientRetriesThroughFxClient(t *testing.T) {
	ex := startServeHook(t, "orders")
	ctx := context.Background()
	sent := &attempts{conflict: make(chan struct{}, 1)}
	c := client.New(client.Config{BaseURL: ex.base, HTTPClient: &http.Client{Transport: sent}})
	api, err := ogen.NewClient(ex.base, ordersSec{}, ogen.WithClient(c.HTTPClient()))
	if err != nil {
		t.Fatal(err)
	}
	order := &ogen.PostOrdersReq{Customer: "Ada", Lines: []ogen.PostOrdersReqLinesItem{{Sku: "BOOK-1", Qty: 1}}}
	params := ogen.PostOrdersParams{XTenantID: ordersTenant, IdempotencyKey: client.NewIdempotencyKey()}
	type result struct {
		res ogen.PostOrdersRes
		err error
	}
	call := func(done chan<- result) {
		res, err := api.PostOrders(ctx, order, params)
		done <- result{res, err}
	}

	ex.control("hold")
	first, second := make(chan result, 1), make(chan result, 1)
	go call(first)
	ex.control("claimed")
	start := time.Now()
	go call(second)
	select {
	case <-sent.conflict:
	case <-time.After(30 * time.Second):
		t.Fatal("the second call got no 409")
	}
	ex.control("release")
	a, b := <-first, <-second
	waited := time.Since(start)

	for i, r := range []result{a, b} {
		if r.err != nil {
			t.Fatalf("call %d: %v", i+1, r.err)
		}
	}
	one, ok1 := a.res.(*ogen.PostOrdersCreatedHeaders)
	two, ok2 := b.res.(*ogen.PostOrdersCreatedHeaders)
	if !ok1 || !ok2 {
		t.Fatalf("answers %T and %T, want two 201s", a.res, b.res)
	}
	if two.Response.ID != one.Response.ID || two.IdempotentReplayed.Value != ogen.PostOrdersCreatedIdempotentReplayedTrue {
		t.Errorf("the retried call got order %s (replayed %+v), want the first call's %s replayed",
			two.Response.ID, two.IdempotentReplayed, one.Response.ID)
	}
	if waited < time.Second {
		t.Errorf("the retry came %v after the call, before the 409's Retry-After (1 s)", waited)
	}
	if len(sent.keys) != 3 || sent.keys[0] != params.IdempotencyKey || sent.keys[1] != sent.keys[0] || sent.keys[2] != sent.keys[0] {
		t.Errorf("attempts sent keys %q, want 3 attempts with %q", sent.keys, params.IdempotencyKey)
	}
}
