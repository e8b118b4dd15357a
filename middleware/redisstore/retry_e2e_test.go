package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/client"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/redistest"
	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/fxhq/fx/middleware/redisstore"
)

// cutProxy is the test's load balancer: it sends each request to the next
// backend in turn. The first attempt of every call (the first request
// with a given Idempotency-Key) fails on purpose, in one of two ways,
// alternating by call: either it is forwarded, the backend runs it, and
// the proxy then drops the client's connection without an answer (the
// order exists, the client does not know it); or it is sent to a
// draining instance that answers 503 FX_SERVICE_UNAVAILABLE.
type cutProxy struct {
	backends []string
	draining string
	next     atomic.Uint64
	mu       sync.Mutex
	seen     map[string]bool
	calls    int
	cuts     atomic.Int64
	drained  atomic.Int64
	fwd      *http.Client
}

func (p *cutProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	p.mu.Lock()
	first := !p.seen[key]
	p.seen[key] = true
	var drain bool
	if first {
		p.calls++
		drain = p.calls%2 == 0
	}
	p.mu.Unlock()
	target := p.backends[p.next.Add(1)%uint64(len(p.backends))]
	if first && drain {
		target = p.draining
		p.drained.Add(1)
	}
	body, _ := io.ReadAll(r.Body)
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, "http://"+target+r.URL.RequestURI(), bytes.NewReader(body))
	req.Header = r.Header.Clone()
	resp, err := p.fwd.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if first && !drain {
		p.cuts.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // forwarded and answered, never delivered
		}
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

// Two fx instances on one Redis behind a round-robin proxy that fails the
// first attempt of every call, half of them after the handler ran:
// 1,000 calls of POST /orders through fx/client create exactly 1,000
// orders, each caller gets its own.
func TestRetriesAcrossInstancesCreateEachOrderOnce(t *testing.T) {
	srv := redistest.Start(t)
	var mu sync.Mutex
	orders := map[string]int{} // order ID -> times created
	var seq atomic.Int64
	instance := func() *fx.App {
		app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
		app.Use(idempotency.New(idempotency.Config{
			// Decisions, not timing: generous deadlines, so that a loaded
			// machine does not turn slow Redis calls into 503s.
			Store:          redisstore.NewIdempotencyStore(idemClient(t, srv.Addr), redisstore.IdempotencyStoreConfig{Timeout: testTimeout}),
			StoreTimeout:   testTimeout,
			Required:       true,
			ShareAnonymous: true, // the test's callers are anonymous
		}))
		app.Post("/orders", func(c *fx.Ctx) error {
			in, err := fx.JSONBody[struct {
				Ref string `json:"ref"`
			}](c)
			if err != nil {
				return err
			}
			mu.Lock()
			orders[in.Ref]++
			mu.Unlock()
			return c.JSON(201, map[string]any{"ref": in.Ref, "seq": seq.Add(1)})
		})
		return app
	}
	draining := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	draining.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("Retry-After", "0")
		return fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "Draining")
	})
	p := &cutProxy{
		backends: []string{fxtest.Serve(t, instance()), fxtest.Serve(t, instance())},
		draining: fxtest.Serve(t, draining),
		seen:     map[string]bool{},
		fwd:      &http.Client{Timeout: 5 * time.Second},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: p}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })

	c := client.New(client.Config{
		BaseURL: "http://" + ln.Addr().String(),
		Retry:   client.Retry{MaxAttempts: 5, BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond},
		// Every call here fails once on purpose: a budget that allows a
		// retry per call (the default allows one per five).
		Budget: client.NewBudget(client.BudgetConfig{Ratio: 1, MinRetries: 10}),
	})
	const calls, workers = 1000, 32
	var wg sync.WaitGroup
	var ok, typed atomic.Int64
	refs := make(chan int)
	var failMu sync.Mutex
	var failures []error
	for range workers {
		wg.Go(func() {
			for i := range refs {
				ref := "order-" + itoa(i)
				var out struct {
					Ref string `json:"ref"`
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := c.Call(ctx, "POST", "/orders", map[string]string{"ref": ref}, &out)
				cancel()
				var fe *fx.Error
				switch {
				case err == nil && out.Ref == ref:
					ok.Add(1)
				case errors.As(err, &fe):
					typed.Add(1)
				default:
					failMu.Lock()
					failures = append(failures, err)
					failMu.Unlock()
				}
			}
		})
	}
	for i := range calls {
		refs <- i
	}
	close(refs)
	wg.Wait()

	if len(failures) > 0 {
		t.Fatalf("%d calls ended with neither their order nor a typed *fx.Error; first: %v", len(failures), failures[0])
	}
	mu.Lock()
	defer mu.Unlock()
	for ref, n := range orders {
		if n != 1 {
			t.Errorf("order %s created %d times", ref, n)
		}
	}
	if len(orders) != calls || ok.Load() != calls {
		t.Fatalf("%d orders created, %d callers saw their order, %d typed errors; want %d and %d",
			len(orders), ok.Load(), typed.Load(), calls, calls)
	}
	if p.cuts.Load() != calls/2 || p.drained.Load() != calls/2 {
		t.Fatalf("the proxy cut %d and drained %d first attempts, want %d each", p.cuts.Load(), p.drained.Load(), calls/2)
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
