package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// A fasthttp.Client copies its settings into a per-host client on its
// first request to a host: one used before New kept MaxResponseBodySize
// 0 (no limit) there, and an 8 MiB answer was accepted under a 1 MiB
// MaxResponseBytes. The Client now bounds the body itself, with a
// Content-Length and without one (chunked).
func TestResponseLimitHoldsForAUsedFastClient(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 8<<20)
	app := quietApp()
	app.Get("/small", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	app.Get("/big", func(c *fx.Ctx) error { return c.JSON(200, big) })
	base := serve(t, app)
	chunked := rawServer(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
		for i := 0; i < 8; i++ {
			fmt.Fprintf(conn, "%x\r\n%s\r\n", 1<<20, big[:1<<20])
		}
		io.WriteString(conn, "0\r\n\r\n")
	})

	fc := &fasthttp.Client{}
	for _, u := range []string{base + "/small", chunked.url + "/"} {
		if code, _, err := fc.Get(nil, u); err != nil || code != 200 {
			t.Fatalf("using the fasthttp.Client before New: %d %v", code, err)
		}
	}
	for _, u := range []string{base + "/big", chunked.url + "/"} {
		c := newClient(t, fast(Config{BaseURL: u, FastClient: fc, MaxResponseBytes: 1 << 20}))
		_, err := c.Do(context.Background(), &Request{Method: "GET"})
		var te *TransportError
		if !errors.Is(err, ErrResponseTooLarge) || !errors.As(err, &te) {
			t.Fatalf("%s: err = %v, want ErrResponseTooLarge", u, err)
		}
	}
	// Under the limit, the same client reads the answer, and keeps using
	// its connections.
	c := newClient(t, fast(Config{BaseURL: base, FastClient: fc, MaxResponseBytes: 1 << 20}))
	var out string
	if err := c.Call(context.Background(), "GET", "/small", nil, &out); err != nil || out != "ok" {
		t.Fatalf("under the limit: %v %q", err, out)
	}
}

// redirect answers every request with status and Location loc.
func redirect(status int, loc string) func(net.Conn, *http.Request) {
	return func(conn net.Conn, _ *http.Request) {
		fmt.Fprintf(conn, "HTTP/1.1 %d Redirect\r\nLocation: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status, loc)
	}
}

// A 307 loop on a POST returned nil on the fasthttp transport (fasthttp's
// DoDeadline does not follow redirects, and the 307 passed as a success),
// and net/http's "stopped after 10 redirects" was retried as a broken
// connection. Both transports now follow redirects alike and end the loop
// with ErrTooManyRedirects after 10 requests, never retried.
func TestRedirectLoopIsAnError(t *testing.T) {
	t.Parallel()
	transports(t, func(t *testing.T, cfg Config) {
		srv := rawServer(t, redirect(307, "/loop"))
		cfg.BaseURL = srv.url
		c := newClient(t, fast(cfg))
		_, err := c.Do(context.Background(), &Request{Method: "POST", Path: "/loop", Body: []byte(`{}`)})
		var te *TransportError
		if !errors.Is(err, ErrTooManyRedirects) || !errors.As(err, &te) {
			t.Fatalf("err = %v, want ErrTooManyRedirects in a TransportError", err)
		}
		if n := srv.count.Load(); n != maxRedirects {
			t.Fatalf("%d requests, want %d (one attempt, never retried)", n, maxRedirects)
		}
	})
}

// headerLog answers 200 and records the headers and body of each request.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
	body []string
}

func (l *headerLog) answer(conn net.Conn, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	l.seen = append(l.seen, r.Header.Clone())
	l.body = append(l.body, r.Method+" "+r.URL.Path+" "+string(b))
	l.mu.Unlock()
	io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4\r\nConnection: close\r\n\r\n\"ok\"")
}

// The net/http transport forwarded X-Api-Key on a redirect to another
// host (net/http removes only Authorization and cookies, and only for
// another domain: a port of the same host keeps them), and the fasthttp
// transport did not follow redirects. Both now follow a 307 with the same
// method, body and Idempotency-Key, and send no credential to another
// origin: not Authorization, Cookie, X-Api-Key, Config.Header's headers
// or Config.CredentialHeaders.
func TestRedirectToAnotherOriginDropsCredentials(t *testing.T) {
	t.Parallel()
	transports(t, func(t *testing.T, cfg Config) {
		other := &headerLog{}
		b := rawServer(t, other.answer)
		a := rawServer(t, redirect(307, b.url+"/landed"))
		cfg.BaseURL = a.url
		cfg.Header = http.Header{"Authorization": {"Bearer service-token"}, "X-Tenant": {"acme"}}
		cfg.CredentialHeaders = []string{"x-partner-key"}
		c := newClient(t, fast(cfg))
		_, err := c.Do(context.Background(), &Request{Method: "POST", Path: "/orders", Body: []byte(`{"qty":1}`),
			Header: http.Header{"X-Api-Key": {"k1"}, "Cookie": {"s=1"}, "X-Partner-Key": {"p1"}, "X-Trace": {"t1"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(other.seen) != 1 {
			t.Fatalf("the other origin saw %d requests, want the redirected one", len(other.seen))
		}
		h := other.seen[0]
		for _, k := range []string{"Authorization", "Cookie", "X-Api-Key", "X-Partner-Key", "X-Tenant"} {
			if v := h.Get(k); v != "" {
				t.Errorf("%s: %q sent to another origin", k, v)
			}
		}
		if h.Get("X-Trace") != "t1" || h.Get("Idempotency-Key") == "" || other.body[0] != `POST /landed {"qty":1}` {
			t.Errorf("the 307 must resend the request: %v %q", h, other.body[0])
		}
	})
}

// A redirect to a scheme other than http and https is the answer, on
// both transports. net/http's transport failed the call with
// "unsupported protocol scheme" for a Location of file:///etc/passwd
// (the fasthttp transport returned the 302).
func TestRedirectToAnotherSchemeIsTheAnswer(t *testing.T) {
	t.Parallel()
	for _, loc := range []string{"file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)"} {
		transports(t, func(t *testing.T, cfg Config) {
			srv := rawServer(t, redirect(302, loc))
			cfg.BaseURL = srv.url
			c := New(fast(cfg))
			resp, err := c.Do(context.Background(), &Request{Method: "GET", Path: "/go"})
			if err != nil {
				t.Fatalf("%s: %v, want the 302 as the answer", loc, err)
			}
			if resp.Status != 302 || resp.Header.Get("Location") != loc || srv.count.Load() != 1 {
				t.Fatalf("%s: %d, Location %q, %d requests; want the 302 itself, one request", loc, resp.Status, resp.Header.Get("Location"), srv.count.Load())
			}
		})
	}
}

// A redirect within the origin keeps every header; a 303 turns a POST
// into a GET without a body.
func TestRedirectWithinTheOrigin(t *testing.T) {
	t.Parallel()
	transports(t, func(t *testing.T, cfg Config) {
		log := &headerLog{}
		srv := rawServer(t, func(conn net.Conn, r *http.Request) {
			if r.URL.Path == "/from" {
				redirect(303, "/to")(conn, r)
				return
			}
			log.answer(conn, r)
		})
		cfg.BaseURL = srv.url
		c := newClient(t, fast(cfg))
		_, err := c.Do(context.Background(), &Request{Method: "POST", Path: "/from", Body: []byte(`{}`),
			Header: http.Header{"X-Api-Key": {"k1"}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(log.seen) != 1 || log.seen[0].Get("X-Api-Key") != "k1" || log.body[0] != "GET /to " {
			t.Fatalf("seen %v %q", log.seen, log.body)
		}
	})
}

// Reading a caller's FastClient's answers as a stream keeps its keep-alive
// connections: fasthttp closes a stream's connection when the stream is
// closed before its end: every body is read to its end.
func TestGivenFastClientKeepsConnections(t *testing.T) {
	t.Parallel()
	app := quietApp()
	body := strings.Repeat("x", 200_000)
	app.Get("/big", func(c *fx.Ctx) error { return c.JSON(200, body) })
	app.Get("/small", func(c *fx.Ctx) error { return c.JSON(200, "ok") })
	base := serve(t, app)
	var dials atomic.Int64
	fc := &fasthttp.Client{Dial: func(a string) (net.Conn, error) {
		dials.Add(1)
		return fasthttp.Dial(a)
	}}
	c := newClient(t, Config{BaseURL: base, FastClient: fc})
	for i := range 20 {
		path := []string{"/big", "/small"}[i%2]
		if resp, err := c.Do(context.Background(), &Request{Method: "GET", Path: path}); err != nil || resp.Status != 200 {
			t.Fatal(err)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Fatalf("%d connections for 20 sequential calls, want 1", n)
	}
}
