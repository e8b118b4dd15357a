package fx_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"net/netip"
	"strings"
	"time"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// Behind a load balancer at 10.0.0.0/8 that appends to X-Forwarded-For,
// the client is the last address the balancer vouches for; what the
// client wrote itself further left is ignored, and a client connecting
// directly cannot claim any address.
func ExampleCtx_ClientAddr() {
	app := fx.New(fx.Config{TrustedProxies: []string{"10.0.0.0/8"}})
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, c.ClientAddr().String()) })
	h := app.Handler()

	serve := func(peer, xff string) {
		var req fasthttp.Request
		req.SetRequestURI("/")
		req.Header.Set("X-Forwarded-For", xff)
		var rc fasthttp.RequestCtx
		rc.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(peer)), nil)
		h(&rc)
		fmt.Println(string(rc.Response.Body()))
	}
	serve("10.0.0.2:443", "6.6.6.6, 203.0.113.7") // through the balancer
	serve("198.51.100.4:5000", "6.6.6.6")         // direct: the header is not trusted
	// Output:
	// 203.0.113.7
	// 198.51.100.4
}

// SetCookie is HttpOnly, Secure, SameSite=Lax and Path=/ unless a field
// opts out; a value that would break the header is an error, not a header.
func ExampleCtx_SetCookie() {
	app := fx.New(fx.Config{Logger: silentLogger})
	app.Get("/login", func(c *fx.Ctx) error {
		if err := c.SetCookie(fx.Cookie{Name: "sid", Value: "3f2a9c", MaxAge: 3600}); err != nil {
			return err
		}
		return c.Redirect(303, "/home")
	})
	app.Get("/bad", func(c *fx.Ctx) error {
		return c.SetCookie(fx.Cookie{Name: "sid", Value: "a;Domain=evil.example"})
	})
	resp, _ := app.Test(httptest.NewRequest("GET", "/login", nil))
	fmt.Println(resp.StatusCode, resp.Header.Get("Location"))
	fmt.Println(resp.Header.Get("Set-Cookie"))
	show(app, "GET", "/bad", "")
	app.Shutdown()
	// Output:
	// 303 /home
	// sid=3f2a9c; max-age=3600; path=/; HttpOnly; secure; SameSite=Lax
	// 500 {"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}
}

// Multipart forms are bounded by BodyLimit and the multipart limits; what
// goes over is a 413 envelope.
func ExampleCtx_MultipartForm() {
	app := fx.New(fx.Config{MultipartMaxFileSize: 8, Logger: silentLogger})
	app.Post("/upload", func(c *fx.Ctx) error {
		f, err := c.MultipartForm()
		if err != nil {
			return err // an *fx.Error: 400 or 413
		}
		return c.String(200, fmt.Sprintf("%s: %d bytes", c.FormValue("title"), f.File["doc"][0].Size))
	})
	post := func(doc string) {
		body := "--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nnotes\r\n" +
			"--b\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"a.txt\"\r\n\r\n" + doc + "\r\n--b--\r\n"
		req := httptest.NewRequest("POST", "/upload", strings.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
		resp, _ := app.Test(req)
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.StatusCode, string(b))
	}
	post("tiny")
	post("far too long")
	app.Shutdown()
	// Output:
	// 200 notes: 4 bytes
	// 413 {"error":{"code":"FX_PAYLOAD_TOO_LARGE","message":"A file in the multipart form is larger than 8 bytes"}}
}

// A Server-Sent Events stream: read what you need from c first; the
// function runs after the handler returns, flushes each event, and ends
// when the App shuts down.
func ExampleCtx_SSE() {
	app := fx.New()
	app.Get("/ticks", func(c *fx.Ctx) error {
		n := len(c.Query("n"))
		return c.SSE(func(e *fx.EventWriter) error {
			for i := range n {
				select {
				case <-e.Done():
					return nil
				case <-time.After(time.Millisecond):
				}
				if err := e.Send(fx.Event{ID: fmt.Sprint(i), Event: "tick", Data: "line one\nline two"}); err != nil {
					return err // the client went away
				}
			}
			return nil
		})
	})
	resp, _ := app.Test(httptest.NewRequest("GET", "/ticks?n=xx", nil))
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Header.Get("Content-Type"))
	fmt.Print(string(b))
	app.Shutdown()
	// Output:
	// text/event-stream
	// id: 0
	// event: tick
	// data: line one
	// data: line two
	//
	// id: 1
	// event: tick
	// data: line one
	// data: line two
}

// Stream writes a body of unknown length, flushed as it goes.
func ExampleCtx_Stream() {
	app := fx.New()
	app.Get("/csv", func(c *fx.Ctx) error {
		return c.Stream("text/csv", func(w *bufio.Writer) error {
			for i := 1; i <= 3; i++ {
				fmt.Fprintf(w, "%d,%d\n", i, i*i)
				if err := w.Flush(); err != nil {
					return err
				}
			}
			return nil
		})
	})
	resp, _ := app.Test(httptest.NewRequest("GET", "/csv", nil))
	b, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.TransferEncoding, "\n", string(b))
	app.Shutdown()
	// Output:
	// [chunked]
	// 1,1
	// 2,4
	// 3,9
}

// Serving HTTPS: Config.TLS, built on fx.DefaultTLSConfig (TLS 1.2
// minimum, AEAD suites, ALPN http/1.1). Run, Listen and Serve then serve
// TLS on every socket, with the connection limit, lingering close,
// Shutdown and the hand-off as over TCP.
func ExampleDefaultTLSConfig() {
	cert, err := tls.LoadX509KeyPair("cert.pem", "key.pem")
	if err != nil {
		log.Fatal(err)
	}
	cfg := fx.DefaultTLSConfig()
	cfg.Certificates = []tls.Certificate{cert}
	app := fx.New(fx.Config{TLS: cfg})
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "over TLS: "+fmt.Sprint(c.RequestCtx().IsTLS())) })
	log.Fatal(app.Run(context.Background(), ":8443"))
}
