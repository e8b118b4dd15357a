package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

// answer503 answers every request 503 with the given Retry-After and an
// envelope.
func answer503(retryAfter string) func(net.Conn, *http.Request) {
	const env = `{"error":{"code":"FX_SERVICE_UNAVAILABLE","message":"busy"}}`
	return func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: "+
			retryAfter+"\r\nContent-Length: "+strconv.Itoa(len(env))+"\r\n\r\n"+env)
	}
}

// A Retry-After beyond time.Duration's range used to wrap round to a short
// or negative wait, and the call was retried at once (4 requests in under
// a second). It is capped at an hour like every other hint, which is
// longer than the client waits: one request, the 503 comes back.
func TestRetryAfterBeyondDurationIsCapped(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"9300000000", "18446744074", "99999999999999999999999"} {
		transports(t, func(t *testing.T, cfg Config) {
			srv := rawServer(t, answer503(v))
			cfg.BaseURL = srv.url
			c := newClient(t, fast(cfg))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := c.Call(ctx, "GET", "/", nil, nil)
			var e *fx.Error
			if !errors.As(err, &e) || e.Status != 503 {
				t.Fatalf("Retry-After %s: err = %v, want the 503", v, err)
			}
			if n := srv.count.Load(); n != 1 {
				t.Fatalf("Retry-After %s: %d requests, want 1 (the hint is an hour, not a wrapped short wait)", v, n)
			}
		})
	}
}

// Without a context deadline, a Retry-After of an hour used to park Do
// for an hour. Retry.MaxWait (30 s by default) bounds every wait: a longer
// one ends the call at once with the answer that asked for it.
func TestLongRetryAfterIsNotWaited(t *testing.T) {
	t.Parallel()
	srv := rawServer(t, answer503("3600"))
	c := newClient(t, fast(Config{BaseURL: srv.url}))
	done := make(chan error, 1)
	go func() { done <- c.Call(context.Background(), "GET", "/", nil, nil) }()
	select {
	case err := <-done:
		var e *fx.Error
		if !errors.As(err, &e) || e.Status != 503 || srv.count.Load() != 1 {
			t.Fatalf("err = %v after %d requests, want the 503 after 1", err, srv.count.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Do is parked by a Retry-After of an hour")
	}
}

// MaxWait is configurable both ways: below a hint the call ends, above it
// the client waits and retries.
func TestMaxWaitIsConfigurable(t *testing.T) {
	t.Parallel()
	srv := rawServer(t, answer503("1"))
	short := newClient(t, fast(Config{BaseURL: srv.url, Retry: Retry{MaxAttempts: 2, MaxWait: 500 * time.Millisecond}}))
	if err := short.Call(context.Background(), "GET", "/", nil, nil); err == nil || srv.count.Load() != 1 {
		t.Fatalf("MaxWait 500ms, Retry-After 1: %v after %d requests, want the 503 after 1", err, srv.count.Load())
	}
	srv.count.Store(0)
	long := newClient(t, fast(Config{BaseURL: srv.url, Retry: Retry{MaxAttempts: 2, MaxWait: 2 * time.Second}}))
	waits := skipWaits(long)
	if err := long.Call(context.Background(), "GET", "/", nil, nil); err == nil || srv.count.Load() != 2 {
		t.Fatalf("MaxWait 2s, Retry-After 1: %v after %d requests, want the 503 after 2", err, srv.count.Load())
	}
	if w := waits(); len(w) != 1 || w[0] < time.Second {
		t.Fatalf("waits before the retry: %v, want one of Retry-After's 1 s at least", w)
	}
}
