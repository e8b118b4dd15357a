package fx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/valyala/fasthttp"
)

// Listen boots the App and serves HTTP on addr (":8080", "127.0.0.1:0")
// until Shutdown. It refuses to start, returning the boot error, when Boot
// fails.
func (a *App) Listen(addr string) error {
	if err := a.Boot(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return a.Serve(ln)
}

// Serve boots the App and serves HTTP on ln until Shutdown. Like Listen, it
// refuses to start when Boot fails (ln is then closed).
func (a *App) Serve(ln net.Listener) error {
	if err := a.Boot(); err != nil {
		ln.Close()
		return err
	}
	return a.Server().Serve(ln)
}

// Server returns the fasthttp.Server the App serves with (created on first
// use from Config: limits, timeouts, the transport error handler). Adjust
// fields before the first Serve if Config lacks a knob you need.
func (a *App) Server() *fasthttp.Server {
	a.srvMu.Lock()
	defer a.srvMu.Unlock()
	if a.server == nil {
		a.server = a.newServer()
	}
	return a.server
}

func (a *App) newServer() *fasthttp.Server {
	cfg := a.cfg
	return &fasthttp.Server{
		Handler:               a.Handler(),
		ErrorHandler:          a.transportError,
		Name:                  cfg.ServerHeader,
		NoDefaultServerHeader: cfg.ServerHeader == "",
		MaxRequestBodySize:    cfg.BodyLimit,
		ReadBufferSize:        cfg.HeaderLimit,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		Concurrency:           cfg.Concurrency,
		Logger:                fasthttpLogger{a},
		CloseOnShutdown:       true,
	}
}

// Shutdown stops accepting connections, waits for in-flight requests to
// finish (without a deadline; see ShutdownWithContext), then runs the
// OnShutdown functions.
func (a *App) Shutdown() error {
	return a.ShutdownWithContext(context.Background())
}

// ShutdownWithContext is Shutdown bounded by ctx: when ctx ends first, the
// remaining connections are closed and ctx's error is returned.
func (a *App) ShutdownWithContext(ctx context.Context) error {
	a.srvMu.Lock()
	srv, ln := a.server, a.testLn
	a.testLn = nil
	a.srvMu.Unlock()
	var errs []error
	if srv != nil {
		if err := srv.ShutdownWithContext(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if ln != nil {
		ln.Close()
	}
	a.regMu.Lock()
	closers := a.closers
	a.closers = nil
	a.regMu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// transportError answers what fasthttp could not hand to a handler (a
// malformed request, a body or headers over the limit, a read timeout) with
// the envelope. The raw request bytes are never echoed.
func (a *App) transportError(rc *fasthttp.RequestCtx, err error) {
	code := ErrorCodes.BadRequest
	msg := "The request could not be parsed"
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		code, msg = ErrorCodes.PayloadTooLarge, "The request body is larger than the server accepts"
	case errors.As(err, &small):
		code, msg = ErrorCodes.HeadersTooLarge, "The request headers are larger than the server accepts"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		code, msg = ErrorCodes.RequestTimeout, "The request was not received in time"
	}
	rc.Response.Reset()
	a.writeEnvelope(&rc.Response, ErrorStatus[code], code, msg, nil)
}

// fasthttpLogger sends fasthttp's own messages to the App's logger at debug
// level (they are connection-level noise such as client resets).
type fasthttpLogger struct{ a *App }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.a.logger.Debug("fasthttp", "msg", fmt.Sprintf(format, args...))
}

// acquireCtx takes a Ctx from the pool for rc and rt.
func (a *App) acquireCtx(rc *fasthttp.RequestCtx, rt *route) *Ctx {
	c := a.ctxPool.Get().(*Ctx)
	c.rc, c.rt = rc, rt
	return c
}

// releaseCtx returns c to the pool; c must not be used afterwards.
func (a *App) releaseCtx(c *Ctx) {
	c.reset()
	a.ctxPool.Put(c)
}
