package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware/idempotency"
)

// losingProxy forwards every request to an fx App and, for the first
// request of each Idempotency-Key, throws the App's answer away and
// answers 503 with Retry-After: 1 instead: the order exists, the caller
// does not know it.
type losingProxy struct {
	mu   sync.Mutex
	keys []string
	seen map[string]bool
}

func (p *losingProxy) start(t *testing.T, target string) string {
	t.Helper()
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(resp *http.Response) error {
		key := resp.Request.Header.Get("Idempotency-Key")
		p.mu.Lock()
		defer p.mu.Unlock()
		p.keys = append(p.keys, key)
		if p.seen[key] {
			return nil
		}
		p.seen[key] = true
		const env = `{"error":{"code":"FX_SERVICE_UNAVAILABLE","message":"Lost on the way"}}`
		resp.Body.Close()
		resp.StatusCode, resp.Status = 503, "503 Service Unavailable"
		resp.Header = http.Header{"Content-Type": {"application/json"}, "Retry-After": {"1"}}
		resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(env)), int64(len(env))
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// callers runs f with the two ways a net/http caller uses the Client:
// c.HTTPClient() and an http.Client built around c.RoundTripper().
func callers(t *testing.T, c *Client, f func(t *testing.T, hc *http.Client)) {
	t.Run("HTTPClient", func(t *testing.T) { f(t, c.HTTPClient()) })
	t.Run("RoundTripper", func(t *testing.T) { f(t, &http.Client{Transport: c.RoundTripper()}) })
}

// A plain net/http caller, through the Client, against a real fx App with
// the idempotency middleware, behind a proxy that loses the first answer
// of every call: the POST is retried after Retry-After with the key it got
// on its first attempt, the handler runs once, and the caller gets the
// stored 201 replayed.
func TestRoundTripperRetriesAtMostOnce(t *testing.T) {
	t.Parallel()
	transports(t, func(t *testing.T, cfg Config) {
		var runs atomic.Int64
		app := quietApp()
		app.Use(idempotency.New(idempotency.Config{Scope: func(*fx.Ctx) (string, error) { return "one-caller", nil }}))
		app.Post("/orders", func(c *fx.Ctx) error {
			return c.JSON(201, map[string]int64{"order": runs.Add(1)})
		})
		proxy := &losingProxy{seen: map[string]bool{}}
		cfg.BaseURL = proxy.start(t, serve(t, app))
		c := newClient(t, cfg)
		waits := skipWaits(c)
		callers(t, c, func(t *testing.T, hc *http.Client) {
			before, calls, waited := runs.Load(), len(proxy.keys), len(waits())
			resp, err := hc.Post(cfg.BaseURL+"/orders", "application/json", strings.NewReader(`{"qty":2}`))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 201 || resp.Header.Get("Idempotent-Replayed") != "true" ||
				string(body) != fmt.Sprintf(`{"order":%d}`, before+1) {
				t.Fatalf("got %d %v %s, want the stored 201 replayed", resp.StatusCode, resp.Header, body)
			}
			if n := runs.Load() - before; n != 1 {
				t.Fatalf("the handler ran %d times, want 1", n)
			}
			keys := proxy.keys[calls:]
			if len(keys) != 2 || keys[0] == "" || keys[0] != keys[1] {
				t.Fatalf("keys sent: %q, want one key on both attempts", keys)
			}
			if w := waits()[waited:]; len(w) != 1 || w[0] < time.Second {
				t.Fatalf("waits before the retry: %v, want one of Retry-After's 1 s at least", w)
			}
		})
	})
}

// An error answer that ends the call reaches the caller unchanged (a
// generated client decodes the envelope it declares); what leaves no
// answer to hand on is an error in which errors.As finds the *fx.Error,
// through http.Client's *url.Error and a generated client's wrapping.
func TestRoundTripperFinalAnswerAndErrors(t *testing.T) {
	t.Parallel()
	var down atomic.Int64
	app := countedApp("/down", &down, func(c *fx.Ctx) error { return fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable, "down") })
	app.Get("/missing", func(c *fx.Ctx) error { return fx.NewError(404, "APP_NOT_FOUND", "no such order") })
	app.Get("/big", func(c *fx.Ctx) error { return c.JSON(200, strings.Repeat("x", 4096)) })
	app.Post("/echo", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	base := serve(t, app)
	transports(t, func(t *testing.T, cfg Config) {
		cfg.BaseURL = base
		get := func(hc *http.Client, path string) (*http.Response, string, error) {
			resp, err := hc.Get(base + path)
			if err != nil {
				return nil, "", fmt.Errorf("do request: %w", err) // as a generated client wraps it
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp, string(b), nil
		}
		callers(t, newClient(t, fast(cfg)), func(t *testing.T, hc *http.Client) {
			down.Store(0)
			resp, body, err := get(hc, "/down")
			if err != nil || resp.StatusCode != 503 || !strings.Contains(body, `"code":"FX_SERVICE_UNAVAILABLE"`) ||
				down.Load() != int64(DefaultMaxAttempts) {
				t.Fatalf("attempts used up: %v %v %q after %d attempts", err, resp, body, down.Load())
			}
			resp, body, err = get(hc, "/missing")
			if err != nil || resp.StatusCode != 404 || body != `{"error":{"code":"APP_NOT_FOUND","message":"no such order"}}` {
				t.Fatalf("not retryable: %v %v %q", err, resp, body)
			}
		})

		small := cfg
		small.MaxResponseBytes, small.MaxRequestBytes = 1024, 16
		callers(t, newClient(t, fast(small)), func(t *testing.T, hc *http.Client) {
			_, _, err := get(hc, "/big")
			var te *TransportError
			if !errors.Is(err, ErrResponseTooLarge) || !errors.As(err, &te) {
				t.Fatalf("too large: %v", err)
			}
			_, err = hc.Post(base+"/echo", "application/json", strings.NewReader(`{"a":"`+strings.Repeat("y", 64)+`"}`))
			if !errors.Is(err, ErrRequestTooLarge) || !errors.As(err, &te) || te.Sent {
				t.Fatalf("request too large: %v", err)
			}
		})

		spent := cfg
		spent.Budget = NewBudget(BudgetConfig{MinRetries: 1, Ratio: 0.001, Window: time.Hour})
		callers(t, newClient(t, fast(spent)), func(t *testing.T, hc *http.Client) {
			var err error
			for range 2 { // the first call may take the budget's one retry
				if _, _, err = get(hc, "/down"); err != nil {
					break
				}
			}
			var e *fx.Error
			if !errors.Is(err, ErrBudgetExhausted) || !errors.As(err, &e) || e.Code != fx.ErrorCodes.ServiceUnavailable || e.Status != 503 {
				t.Fatalf("budget spent: %v, want the 503's *fx.Error with ErrBudgetExhausted", err)
			}
		})
	})
}

// Config.Header goes to BaseURL's origin only: a request the caller sends
// elsewhere through the same RoundTripper carries its own headers alone.
func TestRoundTripperSendsConfigHeaderToItsOriginOnly(t *testing.T) {
	t.Parallel()
	transports(t, func(t *testing.T, cfg Config) {
		home, other := &headerLog{}, &headerLog{}
		h, o := rawServer(t, home.answer), rawServer(t, other.answer)
		cfg.BaseURL = h.url
		cfg.Header = http.Header{"Authorization": {"Bearer service-token"}}
		hc := newClient(t, cfg).HTTPClient()
		for _, u := range []string{h.url + "/a", o.url + "/b"} {
			req, _ := http.NewRequest("GET", u, nil)
			req.Header.Set("X-Trace", "t1")
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if home.seen[0].Get("Authorization") != "Bearer service-token" || home.seen[0].Get("X-Trace") != "t1" {
			t.Errorf("BaseURL's origin: %v", home.seen[0])
		}
		if other.seen[0].Get("Authorization") != "" || other.seen[0].Get("X-Trace") != "t1" {
			t.Errorf("another origin: %v", other.seen[0])
		}
	})
}

// A key the request carries is sent as is on every attempt; a GET gets
// none.
func TestRoundTripperKeepsTheCallersKey(t *testing.T) {
	t.Parallel()
	transports(t, func(t *testing.T, cfg Config) {
		f := &flaky{n: 1, seen: map[string]int{}}
		cfg.BaseURL = serve(t, f.app())
		hc := newClient(t, fast(cfg)).HTTPClient()
		req, _ := http.NewRequestWithContext(context.Background(), "POST", cfg.BaseURL+"/x", strings.NewReader(`{}`))
		req.Header.Set("Idempotency-Key", "order-42")
		resp, err := hc.Do(req)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("%v %v", err, resp)
		}
		resp.Body.Close()
		if len(f.keys) != 2 || f.keys[0] != "order-42" || f.keys[1] != "order-42" {
			t.Fatalf("keys sent: %q", f.keys)
		}
		if req.Header.Get("Idempotency-Key") != "order-42" || len(req.Header) != 1 {
			t.Fatalf("the request was modified: %v", req.Header)
		}
		f.keys = nil
		if resp, err = hc.Get(cfg.BaseURL + "/x"); err != nil || resp.StatusCode != 201 || f.keys[0] != "" {
			t.Fatalf("GET: %v %v keys %q", err, resp, f.keys)
		}
		resp.Body.Close()
	})
}
