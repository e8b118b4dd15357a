package nethttp_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/nethttp"
)

// TestMalformedBodyIsClientError: over a real socket to a net/http server,
// a body the client framed badly or cut short is the client's fault: 400
// FX_BAD_REQUEST (as fasthttp's transport answers), not 500
// FX_NODE_INTERNAL_ERROR; the hook still sees the *AdapterError with the
// cause; the handler never runs.
func TestMalformedBodyIsClientError(t *testing.T) {
	app := quietApp()
	hook := hookChan(app)
	ran := make(chan struct{}, 8)
	app.Post("/", func(c *fx.Ctx) error { ran <- struct{}{}; return c.String(200, "ok") })
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()

	const want = `{"error":{"code":"FX_BAD_REQUEST","message":"The request could not be parsed"}}`
	for _, tc := range []struct {
		name, req string
		halfClose bool // the client stops sending (the body is cut short)
	}{
		{"invalid chunk size", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", false},
		{"chunk size with bare LF", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n", false},
		{"chunk without CRLF after data", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY0\r\n\r\n", false},
		{"chunked body cut short", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", true},
		{"body shorter than Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := sendRaw(t, srv.Listener.Addr().String(), tc.req)
			if tc.halfClose {
				if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp)
			if resp.StatusCode != 400 || body != want || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			raw := kittest.Within(t, hook, "the hook")
			ae, ok := raw.(*nethttp.AdapterError)
			if !ok || ae.Op != nethttp.OpReadBody {
				t.Fatalf("hook saw %T %v", raw, raw)
			}
			var fe *fx.Error
			if !errors.As(ae, &fe) || fe.Code != fx.ErrorCodes.BadRequest {
				t.Errorf("errors.As found %v", fe)
			}
			select {
			case <-ran:
				t.Error("the handler ran on a malformed body")
			default:
			}
		})
	}
}

// TestSlowBodyIsRequestTimeout: a client that does not finish its body
// within the http.Server's ReadTimeout gets 408 FX_REQUEST_TIMEOUT, as on
// fasthttp's transport.
func TestSlowBodyIsRequestTimeout(t *testing.T) {
	t.Parallel() // waits out a read timeout
	app := quietApp()
	app.Post("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	srv := httptest.NewUnstartedServer(nethttp.Handler(app))
	srv.Config.ReadTimeout = 300 * time.Millisecond
	srv.Start()
	defer srv.Close()

	conn := sendRaw(t, srv.Listener.Addr().String(), "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"error":{"code":"FX_REQUEST_TIMEOUT","message":"The request was not received in time"}}`
	if body := readAll(t, resp); resp.StatusCode != 408 || body != want {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
}

// sendRaw dials addr, writes raw on the connection and returns it, closed
// when the test ends; every read and write is bounded by 10 s.
func sendRaw(t *testing.T, addr, raw string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	return conn
}
