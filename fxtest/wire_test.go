package fxtest_test

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// Regression: with "Expect: 100-continue" fasthttp writes an interim
// "HTTP/1.1 100 Continue" head before the response. Do kept the first head
// it found, the interim one, so Response.Header returned no headers at all
// (no Content-Type, no Content-Length) for a 200 that had them. Do now
// skips interim heads, as a client does.
func TestDoSkipsInterimResponses(t *testing.T) {
	app := quietApp()
	app.Post("/echo", func(c *fx.Ctx) error {
		c.RequestCtx().Response.Header.Set("X-Final", "yes")
		return c.JSON(201, map[string]string{"got": string(c.Body())})
	})
	r := fxtest.New(t, app).Post("/echo").Header("Expect", "100-continue").JSON(`"a"`).Do()
	r.AssertJSON(201, map[string]string{"got": `"a"`}).AssertHeader("X-Final", "yes")
	if r.Header().Get("Content-Type") == "" {
		t.Errorf("headers of the final response: %v", r.Header())
	}
}

// Responses without a body: 204 and 304 carry none, whatever their headers
// say; Body is empty and not nil.
func TestDoBodylessStatuses(t *testing.T) {
	app := quietApp()
	app.Get("/204", func(c *fx.Ctx) error { return c.NoContent(204) })
	app.Get("/304", func(c *fx.Ctx) error { return c.NoContent(304) })
	c := fxtest.New(t, app)
	for path, status := range map[string]int{"/204": 204, "/304": 304} {
		if r := c.Get(path).Do(); r.Body == nil || len(r.Body) != 0 || r.Status != status {
			t.Errorf("%s: %d %q", path, r.Status, r.Body)
		}
	}
}

// ReadResponses reads every response a connection to Serve carried, in
// order: a body with Content-Length, a streamed (chunked) one, and an
// envelope, each with its headers.
func TestReadResponses(t *testing.T) {
	app := quietApp()
	app.Get("/a", func(c *fx.Ctx) error { return c.String(200, "first") })
	app.Get("/s", func(c *fx.Ctx) error {
		return c.Stream("text/plain", func(w *bufio.Writer) error {
			for _, part := range []string{"str", "eamed"} {
				if _, err := w.WriteString(part); err != nil {
					return err
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
			return nil
		})
	})
	conn, err := net.Dial("tcp", fxtest.Serve(t, app))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = io.WriteString(conn, "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /s HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	raw, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := fxtest.ReadResponses(t, raw)
	if err != nil || len(rs) != 3 {
		t.Fatalf("%d responses, %v: %q", len(rs), err, raw)
	}
	if rs[0].Status != 200 || string(rs[0].Body) != "first" || rs[0].Header().Get("Content-Length") != "5" {
		t.Errorf("first: %d %q %v", rs[0].Status, rs[0].Body, rs[0].Header())
	}
	if rs[1].Status != 200 || string(rs[1].Body) != "streamed" || rs[1].Header().Get("Transfer-Encoding") != "chunked" {
		t.Errorf("streamed: %d %q %v", rs[1].Status, rs[1].Body, rs[1].Header())
	}
	rs[2].AssertError(404, fx.ErrorCodes.NotFound)
}

// ReadResponses refuses what is not a sequence of well-formed responses,
// returning those before the malformed one.
func TestReadResponsesRefuses(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	for name, raw := range map[string]string{
		"no colon":        ok + "HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 0\r\n\r\n",
		"short body":      ok + "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort",
		"bad chunk":       ok + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",
		"garbage after":   ok + "garbage\r\n\r\n",
		"head never ends": ok + "HTTP/1.1 200 OK\r\nX: y\r\n",
	} {
		rs, err := fxtest.ReadResponses(t, []byte(raw))
		if err == nil || len(rs) != 1 || string(rs[0].Body) != "ok" {
			t.Errorf("%s: %d responses, %v", name, len(rs), err)
		}
	}
	// A chunked body's trailers are skipped: the next response follows.
	rs, err := fxtest.ReadResponses(t, []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nT: v\r\n\r\n"+ok))
	if err != nil || len(rs) != 2 || string(rs[0].Body) != "ab" || string(rs[1].Body) != "ok" {
		t.Errorf("after trailers: %d responses, %v", len(rs), err)
	}
}
