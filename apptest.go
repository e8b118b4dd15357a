package fx

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"

	"github.com/valyala/fasthttp/fasthttputil"
)

// Test sends req to the App through its real fasthttp server over an
// in-memory connection (no port is opened) and returns the response with
// its body fully read, so tests can assert on status, headers and body:
//
//	resp, err := app.Test(httptest.NewRequest("GET", "/hello", nil))
//
// Test boots the App. A deadline on req.Context() bounds the exchange, and
// cancelling the context closes the connection, as a disconnecting client
// would. Test is safe for concurrent use.
//
// The first call starts serving the in-memory listener in the background;
// it runs until Shutdown: end each test's App with
// t.Cleanup(func() { app.Shutdown() }) so that it does not outlive the test.
func (a *App) Test(req *http.Request) (*http.Response, error) {
	conn, err := a.testDial()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx := req.Context()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl) //nolint:errcheck
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	writeErr := make(chan error, 1)
	go func() { writeErr <- req.Write(conn) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		if werr := <-writeErr; werr != nil {
			return nil, werr
		}
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

func (a *App) testDial() (net.Conn, error) {
	srv := a.Server()
	a.srvMu.Lock()
	if a.testLn == nil {
		ln := fasthttputil.NewInmemoryListener()
		a.testLn = ln
		go srv.Serve(ln) //nolint:errcheck // ends when Shutdown closes ln
	}
	ln := a.testLn.(*fasthttputil.InmemoryListener)
	a.srvMu.Unlock()
	return ln.Dial()
}
