package nethttp_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/nethttp"
)

// A handler that takes its connection over with fx.Ctx.Detach and
// Hijack, as on fasthttp's transport, gets it through the adapter too:
// the 101's head is written with the handler's and the App's headers,
// the bytes the client sent behind its request are read first, the
// handler's Ctx (and its context) stays valid while the connection runs,
// and the observers see the request once, at the end, with the code the
// handler ended it with.
func TestHijackAfter101(t *testing.T) {
	type seen struct {
		status int
		code   string
	}
	observed := make(chan seen, 2)
	app := fx.New(fx.Config{ServerHeader: "fx-test"})
	app.OnResponse(func(c *fx.Ctx) { observed <- seen{c.Status(), c.ErrorCode()} })
	app.Get("/hold/:id", func(c *fx.Ctx) error {
		end := c.Detach()
		c.RequestCtx().SetStatusCode(101)
		c.SetHeader("Upgrade", "test")
		c.SetHeader("Connection", "Upgrade")
		c.Hijack(func(conn net.Conn) {
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err == nil && c.Context().Err() == nil {
				_, _ = io.WriteString(conn, c.Param("id")+":"+line)
			}
			end(fx.NewError(409, "APP_DONE", "done"))
		})
		return nil
	})
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(srv.URL, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET /hold/7 HTTP/1.1\r\nHost: fx\r\nUpgrade: test\r\nConnection: Upgrade\r\n\r\nsent early\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "test" || resp.Header.Get("Server") != "fx-test" {
		t.Fatalf("head: %d %v; want 101 with Upgrade: test and the App's Server", resp.StatusCode, resp.Header)
	}
	line, err := br.ReadString('\n')
	if err != nil || line != "7:sent early\n" {
		t.Fatalf("the handler read %q, %v; want the bytes sent behind the request, its Ctx and a live context", line, err)
	}
	if got := kittest.Within(t, observed, "the request's observation"); got != (seen{101, "APP_DONE"}) {
		t.Errorf("observed %+v; want 101 APP_DONE", got)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("after the handler: %v; want the connection closed", err)
	}
}

// A connection net/http cannot hand over (a writer without
// http.Hijacker, HTTP/2) is answered 500 FX_NODE_INTERNAL_ERROR, and the
// hijack function still runs, on a connection already closed, so that
// the request held past its 101 ends.
func TestHijackWithoutHijacker(t *testing.T) {
	ran := make(chan error, 1)
	app := fx.New()
	app.Get("/hold", func(c *fx.Ctx) error {
		end := c.Detach()
		c.RequestCtx().SetStatusCode(101)
		c.Hijack(func(conn net.Conn) {
			_, err := conn.Read(make([]byte, 1))
			end(nil)
			ran <- err
		})
		return nil
	})
	h := nethttp.Handler(app)
	w := httptest.NewRecorder() // no http.Hijacker
	h.ServeHTTP(w, httptest.NewRequest("GET", "/hold", nil))
	if w.Code != 500 || !strings.Contains(w.Body.String(), `"code":"FX_NODE_INTERNAL_ERROR"`) {
		t.Errorf("answer %d %s; want the 500 envelope", w.Code, w.Body)
	}
	if err := kittest.Within(t, ran, "the hijack function"); err == nil {
		t.Error("the hijack function read from the connection; want it closed")
	}
}
