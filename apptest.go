package fx

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fxhq/fx/internal/drainhook"
)

// In-memory exchanges. App.Test and TestRaw (and the fxtest package, which
// is built on TestRaw) answer a request through the App's real fasthttp
// server, without a port and without a goroutine of their own: the request
// bytes are handed to fasthttp's Server.ServeConn on an exchangeConn, a
// net.Conn whose reads return those bytes and then io.EOF, and whose
// writes collect the response. fasthttp parses the request (limits,
// framing guard, transport errors answered with the envelope), the App
// handles it, fasthttp writes the response, finds the end of the input
// and returns. Reads never block, and no timeout applies (fx enforces
// Config's timeouts on the connections Serve accepts:
// internal/conn/deadline.go).
//
// Before, App.Test served an in-memory listener with fasthttp's Serve.
// fasthttp's Server.ShutdownWithContext waits for its open-connection
// count to reach zero by polling every 100 ms, and Serve's own goroutine
// is in that count until it has noticed the closed listener, so every
// App.Shutdown after an App.Test took ~100 ms. Exchanges are counted by
// the lifecycle instead (lifecycle.go), and Shutdown waits for them on a
// channel: it returns in microseconds when none is in flight
// (TestShutdownAfterTestDoesNotPoll).

// A shutdown that has begun, in memory: package fxtest (Client.BeginShutdown)
// makes the App answer as it does to a request arriving on a kept
// connection during the drain (readiness 503, a WebSocket route's 503),
// with its in-memory exchanges still served.
func init() {
	drainhook.Begin = func(app any) {
		// As Shutdown begins: every response closes its connection,
		// App.Done and handlers' contexts are done.
		app.(*App).life.stop.begin(phaseDraining)
	}
}

// Test sends req to the App through its real fasthttp server over an
// in-memory connection (no port is opened) and returns the response with
// its body fully read, so tests can assert on status, headers and body:
//
//	resp, err := app.Test(httptest.NewRequest("GET", "/hello", nil))
//
// Test boots the App. A deadline on req.Context() bounds the exchange, and
// cancelling the context abandons it, as a disconnecting client would (the
// handler runs on; its response is discarded). Test is safe for
// concurrent use. The server sees req.RemoteAddr as the client's address
// when it is an "ip:port" (httptest.NewRequest sets 192.0.2.1:1234).
//
// Test needs no teardown of its own: nothing outlives the call but a
// handler still running for an abandoned request, which Shutdown waits
// for. After Shutdown has begun, Test returns an error wrapping
// net.ErrClosed. The fxtest package offers request builders and
// contract-aware assertions on the same mechanism.
//
// Cost: req is written to memory first (its body read whole), then
// served on another goroutine so that the context can abandon it; see
// TestRaw for the exchange itself.
func (a *App) Test(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ex := &exchangeConn{raddr: parseRemoteAddr(req.RemoteAddr)}
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		var buf bytes.Buffer
		if err := req.Write(&buf); err != nil {
			done <- result{nil, err}
			return
		}
		ex.in = buf.Bytes()
		err := a.serveExchange(ex)
		done <- result{ex.out, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		ex.abandon() // the handler's response, if any, is dropped
		return nil, context.Cause(ctx)
	}
	if r.err != nil {
		return nil, r.err
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(r.out)), req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// TestRaw answers the raw HTTP/1.1 request in req (request line, headers
// and body, as a client would send them) through the App's real fasthttp
// server, on the calling goroutine, and appends the raw response to dst.
// It is the mechanism under App.Test and the fxtest package: prefer those;
// TestRaw is for tests that need exact bytes on the wire (malformed
// requests, framing).
//
// Everything fasthttp does on a connection happens: header and body
// limits, the framing guard, transport errors answered with the envelope
// (an unparsable req gets a 400 FX_BAD_REQUEST response, not an error).
// Several pipelined requests are answered in order; after the last one
// the connection ends as if the client had closed it. Read timeouts never
// fire (the input is all there). The client address is 192.0.2.1:1234.
//
// TestRaw boots the App; it is safe for concurrent use. Shutdown waits for
// exchanges in flight; once it has begun, TestRaw returns an error
// wrapping net.ErrClosed. req and dst may be reused after TestRaw returns.
//
// Cost: fasthttp's per-connection setup (a pooled RequestCtx, reader and
// writer) and one parse and one write of the request and the response:
// about 0.8 µs more than a direct call of the App's handler on a quiet
// 2-core VM, and no allocation beside the handler's own (the in-memory
// connection is recycled); BenchmarkTestRaw in package fxtest.
func (a *App) TestRaw(dst, req []byte) ([]byte, error) {
	ex := exchangePool.Get().(*exchangeConn)
	ex.in, ex.out, ex.raddr = req, dst, defaultTestAddr
	err := a.serveExchange(ex)
	out := ex.out
	if ex.closed.Load() {
		// ServeConn closes the connection before it returns, so nothing
		// holds ex any more. A hijacked connection is closed later, when
		// Ctx.Hijack's function returns (or never, by a handler that
		// hijacked through RequestCtx.Hijack: the App's server keeps
		// hijacked connections open): that ex is left to the garbage
		// collector, since pooling it would hand a live connection to the
		// next exchange.
		*ex = exchangeConn{}
		exchangePool.Put(ex)
	}
	return out, err
}

// exchangePool recycles the connections of TestRaw (one allocation per
// exchange, since fasthttp keeps the net.Conn it serves).
var exchangePool = sync.Pool{New: func() any { return new(exchangeConn) }}

// errShutDown is returned for an exchange attempted after Shutdown began.
var errShutDown = fmt.Errorf("fx: the App is shut down: %w", net.ErrClosed)

// serveExchange serves ex with the App's fasthttp server, counted by the
// lifecycle so that Shutdown waits for it.
func (a *App) serveExchange(ex *exchangeConn) error {
	srv := a.Server()
	if !a.life.addExchange() {
		return errShutDown
	}
	defer a.life.doneExchange()
	start := len(ex.out)
	err := srv.ServeConn(ex)
	switch {
	case ex.abandoned.Load():
		return net.ErrClosed
	case len(ex.out) > start:
		return nil // fasthttp reports what it answered (400, 413...) as an error too
	}
	return err
}

// exchangeConn is the connection of one in-memory exchange: reads return
// in and then io.EOF, writes append to out. Only abandon may be called
// from another goroutine than the one serving it.
type exchangeConn struct {
	in, out   []byte
	raddr     net.Addr
	abandoned atomic.Bool
	closed    atomic.Bool // set by Close: fasthttp is done with the connection
}

var (
	defaultTestAddr net.Addr = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 1234}
	testLocalAddr   net.Addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}
)

// errAbandoned fails the reads and writes of an abandoned exchange.
var errAbandoned = errors.New("fx: in-memory exchange abandoned by its client")

func (c *exchangeConn) Read(p []byte) (int, error) {
	if c.abandoned.Load() {
		return 0, errAbandoned
	}
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.in)
	c.in = c.in[n:]
	return n, nil
}

func (c *exchangeConn) Write(p []byte) (int, error) {
	if c.abandoned.Load() {
		return 0, errAbandoned
	}
	c.out = append(c.out, p...)
	return len(p), nil
}

// abandon makes every later read and write fail, as for a client that
// disconnected.
func (c *exchangeConn) abandon() { c.abandoned.Store(true) }

func (c *exchangeConn) Close() error                     { c.closed.Store(true); return nil }
func (c *exchangeConn) LocalAddr() net.Addr              { return testLocalAddr }
func (c *exchangeConn) RemoteAddr() net.Addr             { return c.raddr }
func (c *exchangeConn) SetDeadline(time.Time) error      { return nil }
func (c *exchangeConn) SetReadDeadline(time.Time) error  { return nil }
func (c *exchangeConn) SetWriteDeadline(time.Time) error { return nil }

// parseRemoteAddr is addr ("ip:port") as a *net.TCPAddr, or the default
// test address.
func parseRemoteAddr(addr string) net.Addr {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return net.TCPAddrFromAddrPort(ap)
	}
	return defaultTestAddr
}
