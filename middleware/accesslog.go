package middleware

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/fxhq/fx"
)

// AccessLogConfig configures AccessLog. The zero value logs every request
// to the App's logger.
type AccessLogConfig struct {
	// Logger receives the lines. Nil: the logger of the App that serves
	// the request (fx.Config.Logger).
	Logger *slog.Logger

	// Message is the message of every line. Default "request".
	Message string

	// ClientErrorsAtInfo logs 4xx responses at info level instead of warn
	// (for APIs where 401s and 404s are routine).
	ClientErrorsAtInfo bool

	// Skip, when set, is asked for every request; true leaves the request
	// out of the log (health checks, metrics scrapes). It runs inside
	// OnResponse: every Ctx accessor works.
	Skip func(c *fx.Ctx) bool

	// SampleSuccesses logs one in every N responses with a status below
	// 400 (deterministically: the 1st, the N+1th, ...), and every error
	// response. 0 or 1: every response.
	SampleSuccesses int
}

// AccessLog returns an access log on log/slog, an observer to register
// with app.OnResponse: one line per request, after the response is final,
// with
//
//	method, route (the registered pattern, "" when unmatched), path,
//	status, code (the error code, only on failures), duration, bytes_in
//	(the request body: its Content-Length, or the bytes read for a
//	chunked body), bytes_out (the response body; -1 for a streamed body),
//	ip (the remote address)
//
// followed by the request's log attributes (fx.Ctx.LogAttrs: request_id
// when RequestID ran, anything other middleware added). The level follows
// the status: error for 5xx, warn for 4xx (info with ClientErrorsAtInfo),
// info otherwise.
//
// It is an observer rather than a middleware because a middleware cannot
// see the final response: the envelope of an error is written after the
// chain unwinds (a middleware could call fx.Resolve, but would still miss
// what a hook wrote), and the transport errors (400, 408, 413, 431), the
// over-capacity 503 and the 404 without middleware never run middleware
// at all. OnResponse sees every one of them, once. Register it before the
// App boots, like any observer:
//
//	app.OnResponse(middleware.AccessLog(middleware.AccessLogConfig{}))
//
// Cost (BenchmarkAccessLog* against BenchmarkRequestIDBaseline, -cpu 1 on
// a heavily shared 2-core machine): when the logger's level disables the
// line, one Enabled call and no allocation (BenchmarkAccessLogDisabled:
// 0 allocs, within noise of the bare route); an enabled line costs what
// the slog handler costs, plus gathering the fields and one clock read:
// with slog's JSON handler writing to io.Discard, 4 allocations and
// 2.6-3.9 µs per request on a quiet machine (7-12 µs when it was heavily
// shared), most of it slog's own: logging the same attributes directly
// took 6-7 µs of those 7-12. Sampling and Skip save the handler's
// cost for the requests they leave out.
func AccessLog(cfg AccessLogConfig) func(c *fx.Ctx) {
	l := &accessLog{cfg: cfg, logger: cfg.Logger, msg: cfg.Message}
	if l.msg == "" {
		l.msg = "request"
	}
	l.sample = uint64(max(cfg.SampleSuccesses, 1))
	return l.observe
}

type accessLog struct {
	cfg    AccessLogConfig
	logger *slog.Logger
	msg    string
	sample uint64
	seen   atomic.Uint64 // successes seen, for sampling
}

func (l *accessLog) observe(c *fx.Ctx) {
	status := c.Status()
	level := slog.LevelInfo
	switch {
	case status >= 500:
		level = slog.LevelError
	case status >= 400 && !l.cfg.ClientErrorsAtInfo:
		level = slog.LevelWarn
	}
	logger := l.logger
	if logger == nil {
		logger = c.App().Logger()
	}
	ctx := context.Background()
	if !logger.Enabled(ctx, level) {
		return
	}
	if l.cfg.Skip != nil && l.cfg.Skip(c) {
		return
	}
	if status < 400 && l.sample > 1 && (l.seen.Add(1)-1)%l.sample != 0 {
		return
	}
	rc := c.RequestCtx()
	extra := c.LogAttrs()
	attrs := make([]slog.Attr, 0, 10+len(extra))
	attrs = append(attrs,
		slog.String("method", c.Method()),
		slog.String("route", c.Route()),
		slog.String("path", c.Path()),
		slog.Int("status", status),
	)
	if code := c.ErrorCode(); code != "" {
		attrs = append(attrs, slog.String("code", code))
	}
	in := rc.Request.Header.ContentLength()
	if in < 0 && !rc.Request.IsBodyStream() {
		in = len(rc.Request.Body()) // a chunked body, already read
	}
	out := -1
	if !rc.Response.IsBodyStream() { // Body would read a stream
		out = len(rc.Response.Body())
	}
	attrs = append(attrs,
		slog.Duration("duration", c.Duration()),
		slog.Int("bytes_in", max(in, 0)),
		slog.Int("bytes_out", out),
		slog.String("ip", rc.RemoteIP().String()),
	)
	attrs = append(attrs, extra...)
	logger.LogAttrs(ctx, level, l.msg, attrs...)
}
