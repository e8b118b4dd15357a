// Package fxotel instruments an fx App with OpenTelemetry: a server span
// and a sample of the http.server.request.duration histogram for every
// request, named and attributed per the OpenTelemetry semantic
// conventions for HTTP (semconv v1.40.0, "Semantic conventions for HTTP
// spans" and "... for HTTP metrics", both Stable), and W3C Trace Context
// propagation from the request into the handler's c.Context().
//
// It lives in its own module (github.com/fxhq/fx/otel) so that fx itself
// does not depend on OpenTelemetry.
package fxotel

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and the meter
// Instrument creates.
const ScopeName = "github.com/fxhq/fx/otel"

// Config configures Instrument. The zero value uses the global tracer and
// meter providers and W3C Trace Context propagation.
type Config struct {
	// TracerProvider creates the tracer of the server spans. Nil:
	// otel.GetTracerProvider() at the time Instrument is called.
	TracerProvider trace.TracerProvider

	// MeterProvider creates the http.server.request.duration histogram.
	// Nil: otel.GetMeterProvider() at the time Instrument is called.
	MeterProvider metric.MeterProvider

	// Propagator extracts the caller's trace context from the request
	// headers. Nil: propagation.TraceContext{} (W3C traceparent and
	// tracestate), not the global propagator, whose default is a no-op
	// that would silently drop every incoming trace; pass
	// otel.GetTextMapPropagator() to use the global one (baggage, B3, ...).
	Propagator propagation.TextMapPropagator
}

// durationBuckets are the explicit bucket boundaries, in seconds, of the
// http.server.request.duration histogram: the ones the semantic
// conventions advise for it.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// Instrument registers OpenTelemetry instrumentation on app: a middleware
// (app.Use) that starts a server span, and an observer (app.OnResponse)
// that ends it and records http.server.request.duration once the response
// is final. Call it before any other app.Use, so that the span covers the
// whole chain and every later middleware and handler finds it in
// c.Context(); and before the App boots (registering after Boot panics, as
// for any registration). It returns an error, and registers nothing, when
// app is nil or the histogram cannot be created.
//
// The span. Its kind is Server; its name is "{method} {route}" ("GET
// /users/:id", the route as registered, in fx syntax), or "{method}" when
// no route matched (a 404), and "HTTP" for a method outside the known set
// (semconv: http.request.method is then "_OTHER" and
// http.request.method_original the method sent). It starts when the
// middleware runs (after fasthttp read the request and fx routed it, a
// fraction of a microsecond after the start Ctx.Duration counts from:
// passing fasthttp's request time as the start would cost an allocation
// per request) and ends when the response is
// final, after the error boundary and the error hook, so it carries the
// status the client gets: a 404, a 422, a panic's 500 and a response an
// error hook replaced included. Attributes, as the conventions name them:
// http.request.method, url.path, url.scheme, http.route (matched routes),
// network.protocol.version, server.address and server.port (from the
// Host header; the port defaults to the scheme's), client.address
// (Ctx.ClientAddr, which honours Config.TrustedProxies),
// user_agent.original (when sent), http.response.status_code, and
// error.type when the request failed: the envelope's code (Ctx.ErrorCode,
// "FX_NOT_FOUND", ...), or the status code when a handler wrote a 5xx
// itself. url.query is left out on purpose: query strings carry tokens
// and signatures, and the conventions ask to redact them. The span status
// is Error for a 5xx and left Unset otherwise (a 4xx is the client's
// failure, not the server's); a returned error or panic behind a 5xx is
// also recorded as an exception event. A sampler sees the span name,
// http.request.method and http.route at the start; the attributes that
// copy request memory are set only once the span is known to be
// recording, so an unsampled request pays for none of them.
//
// Propagation. The caller's context is extracted from the request headers
// (Config.Propagator): a valid traceparent makes the server span a child
// of that remote span. The span's context becomes the parent of
// c.Context() (fx.SetRequestContext), so spans a handler starts from
// c.Context() are children of the server span, and an outgoing request
// made with c.Context() carries the trace when its client injects it
// (otelhttp.NewTransport, or Propagator.Inject with
// propagation.HeaderCarrier for net/http, RequestHeaderCarrier for
// fasthttp). c.Context() keeps its other properties: it is cancelled when
// the chain returns and at Shutdown, and under the nethttp adapter it
// still derives from the *http.Request's context. Nothing is injected
// into responses: the W3C traceresponse header is a draft, and telling
// every client the server's trace IDs is a choice for a middleware of the
// application's own (trace.SpanContextFromContext(c.Context())).
//
// What has no span. A transport error (400, 408, 413, 431, framing
// refusals), the over-capacity 503, a router redirect and a failed boot's
// 500 never run middleware, so they get no span; they are recorded in the
// histogram (route "", their code as error.type, duration 0 for transport
// errors, see fx.App.OnResponse), so the metric counts every response.
//
// The histogram http.server.request.duration (unit "s", the buckets the
// conventions advise) records each response with http.request.method,
// url.scheme, http.route (when matched), http.response.status_code,
// network.protocol.version and error.type (when failed). The attribute
// set of each combination is built once and cached (up to 4096
// combinations; beyond, sets are built per request), and span names per
// method and route likewise.
//
// Cost (go test -run '^$' -bench . -benchmem -cpu 1 in otel/, best of 3
// on a heavily shared 2-core machine): the bare route takes about 120 ns
// and no allocation (BenchmarkBare); with no-op providers about 0.9 µs
// and 1 allocation, the context the no-op tracer returns (BenchmarkNoop;
// the rest is the observer, the clock read, the propagator and two cache
// lookups); with the SDK (always-on sampler, a span processor that drops
// spans, a manual metric reader) about 8 µs and 17 allocations
// (BenchmarkSDK: the SDK's span and its attributes, url.path,
// client.address, server.address and user_agent.original copied out of
// request memory, the histogram record), 20 with an incoming traceparent
// (BenchmarkSDKTraceparent). An unsampled span skips every per-request
// attribute.
func Instrument(app *fx.App, cfg Config) error {
	if app == nil {
		return errors.New("fxotel: Instrument given a nil *fx.App")
	}
	tp, mp, prop := cfg.TracerProvider, cfg.MeterProvider, cfg.Propagator
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	hist, err := mp.Meter(ScopeName, metric.WithSchemaURL(semconv.SchemaURL)).Float64Histogram(
		"http.server.request.duration",
		metric.WithDescription("Duration of HTTP server requests."),
		metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(durationBuckets...),
	)
	if err != nil {
		return errors.Join(errors.New("fxotel: creating the http.server.request.duration histogram"), err)
	}
	in := &instrumentation{
		tracer: tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:   prop,
		hist:   hist,
		base:   appContext{done: app.Done()},
		names:  map[nameKey]*routeInfo{},
		sets:   map[setKey][]metric.RecordOption{},
	}
	app.Use(in.middleware)
	app.OnResponse(in.observe)
	return nil
}

type instrumentation struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	hist   metric.Float64Histogram
	base   appContext // c.Context()'s parent when no transport set one

	mu    sync.RWMutex
	names map[nameKey]*routeInfo
	sets  map[setKey][]metric.RecordOption
}

// maxCached bounds each cache: span names and start options are bounded by
// methods × routes, attribute sets also by statuses and error codes, and
// an application that builds codes per request must not grow a map
// forever.
const maxCached = 4096

// spanKey is the Ctx value (fx.Ctx.SetValue) under which the middleware
// leaves the span for the observer.
type spanKey struct{}

// middleware starts the server span and makes its context the parent of
// c.Context().
func (in *instrumentation) middleware(c *fx.Ctx, next fx.Next) error {
	rc := c.RequestCtx()
	parent := context.Context(in.base)
	if p := fx.RequestContext(rc); p != nil {
		parent = p // the nethttp adapter's *http.Request context
	}
	parent = in.prop.Extract(parent, (*RequestHeaderCarrier)(&rc.Request.Header))
	ri := in.route(c.Method(), c.Route())
	ctx, span := in.tracer.Start(parent, ri.name, ri.opts...)
	if span.IsRecording() {
		setRequestAttributes(c, span)
	}
	fx.SetRequestContext(rc, ctx)
	c.SetValue(spanKey{}, span)
	err := next()
	if err != nil && span.IsRecording() {
		c.SetValue(errKey{}, err) // the observer records it if the response is a 5xx
	}
	return err
}

// errKey is the Ctx value under which the middleware leaves the error the
// chain returned (a panic arrives as an *fx.PanicError), for the observer
// to record as an exception when the final response is a 5xx: an error
// hook may have turned it into another response.
type errKey struct{}

// observe ends the span with the final status and records the duration.
func (in *instrumentation) observe(c *fx.Ctx) {
	status := c.Status()
	code := c.ErrorCode()
	if code == "" && status >= 500 {
		code = strconv.Itoa(status) // semconv: the status code when nothing names the error
	}
	d := c.Duration()
	span, _ := c.Value(spanKey{}).(trace.Span)
	if span != nil {
		if span.IsRecording() {
			span.SetAttributes(semconv.HTTPResponseStatusCode(status))
			if code != "" {
				span.SetAttributes(semconv.ErrorTypeKey.String(code))
			}
			if status == fasthttp.StatusSwitchingProtocols {
				setConnectionAttributes(c, span)
			}
			if status >= 500 {
				span.SetStatus(codes.Error, code)
				if err, ok := c.Value(errKey{}).(error); ok {
					span.RecordError(err)
				}
			}
		}
		span.End()
	}
	ctx := context.Background()
	if span != nil && span.SpanContext().IsSampled() {
		ctx = trace.ContextWithSpan(ctx, span) // exemplars link to the span
	}
	in.hist.Record(ctx, d.Seconds(), in.attributeSet(c, status, code)...)
}

// nameKey identifies a span name: the method as semconv reports it and
// the route.
type nameKey struct{ method, route string }

// routeInfo is what a span of one method and route starts with.
type routeInfo struct {
	name string
	opts []trace.SpanStartOption // kind Server; http.request.method, http.route
}

// route returns the cached span name and start options for method and
// route.
func (in *instrumentation) route(method, route string) *routeInfo {
	m, known := semconvMethod(method)
	k := nameKey{m, route}
	in.mu.RLock()
	ri := in.names[k]
	in.mu.RUnlock()
	if ri != nil {
		return ri
	}
	name := m
	if !known {
		name = "HTTP"
	}
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(m)}
	if route != "" {
		name += " " + route
		attrs = append(attrs, semconv.HTTPRoute(route))
	}
	ri = &routeInfo{name: name, opts: []trace.SpanStartOption{serverKind, trace.WithAttributes(attrs...)}}
	in.mu.Lock()
	if len(in.names) < maxCached {
		in.names[k] = ri
	}
	in.mu.Unlock()
	return ri
}

// serverKind is the start option every server span shares.
var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// setKey identifies a histogram attribute set.
type setKey struct {
	method, route, code, scheme, proto string
	status                             int
}

// attributeSet returns the cached histogram attributes of c's response,
// as the options of Record (a slice, so that passing it allocates
// nothing).
func (in *instrumentation) attributeSet(c *fx.Ctx, status int, code string) []metric.RecordOption {
	rc := c.RequestCtx()
	m, _ := semconvMethod(c.Method())
	k := setKey{method: m, route: c.Route(), code: code, scheme: scheme(rc), proto: protocolVersion(rc), status: status}
	in.mu.RLock()
	opt, ok := in.sets[k]
	in.mu.RUnlock()
	if ok {
		return opt
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs,
		semconv.HTTPRequestMethodKey.String(k.method),
		semconv.URLScheme(k.scheme),
		semconv.HTTPResponseStatusCode(status),
	)
	if k.route != "" {
		attrs = append(attrs, semconv.HTTPRoute(k.route))
	}
	if k.proto != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(k.proto))
	}
	if code != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(code))
	}
	opt = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	in.mu.Lock()
	if len(in.sets) < maxCached {
		in.sets[k] = opt
	}
	in.mu.Unlock()
	return opt
}

// setRequestAttributes sets the attributes that vary per request on a
// recording span.
func setRequestAttributes(c *fx.Ctx, span trace.Span) {
	rc := c.RequestCtx()
	var buf [8]attribute.KeyValue
	attrs := append(buf[:0],
		semconv.URLPath(string(rc.Path())),
		semconv.URLScheme(scheme(rc)),
	)
	if _, known := semconvMethod(c.Method()); !known {
		attrs = append(attrs, semconv.HTTPRequestMethodOriginal(string(rc.Method())))
	}
	if v := protocolVersion(rc); v != "" {
		attrs = append(attrs, semconv.NetworkProtocolVersion(v))
	}
	if host, port := hostPort(rc.Host()); host != "" {
		if port == 0 {
			port = 80
			if scheme(rc) == "https" {
				port = 443
			}
		}
		attrs = append(attrs, semconv.ServerAddress(host), semconv.ServerPort(port))
	}
	if a := c.ClientAddr(); a.IsValid() {
		attrs = append(attrs, semconv.ClientAddress(a.String()))
	}
	if ua := rc.Request.Header.UserAgent(); len(ua) > 0 {
		attrs = append(attrs, semconv.UserAgentOriginal(string(ua)))
	}
	span.SetAttributes(attrs...)
}

// semconvMethod returns method as http.request.method reports it: itself
// when it is one of the methods the conventions know (case-sensitively),
// "_OTHER" otherwise, which also bounds the cardinality of span names and
// attribute sets an attacker can create.
func semconvMethod(method string) (string, bool) {
	switch method {
	case "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY":
		return method, true
	}
	return "_OTHER", false
}

// scheme returns url.scheme: "https" on a TLS connection or when the
// transport reported one (the nethttp adapter), "http" otherwise.
func scheme(rc *fasthttp.RequestCtx) string {
	if rc.IsTLS() || string(rc.URI().Scheme()) == "https" {
		return "https"
	}
	return "http"
}

// protocolVersion returns network.protocol.version ("1.1", "1.0", "2"),
// or "" for a protocol it does not know (so a client cannot grow the
// attribute sets by sending odd protocol strings).
func protocolVersion(rc *fasthttp.RequestCtx) string {
	switch string(rc.Request.Header.Protocol()) {
	case "HTTP/1.1":
		return "1.1"
	case "HTTP/1.0":
		return "1.0"
	case "HTTP/2", "HTTP/2.0":
		return "2"
	case "HTTP/3", "HTTP/3.0":
		return "3"
	}
	return ""
}

// hostPort splits a Host header into server.address and server.port
// (0 when absent or not a port number): "[::1]:8080" gives "::1" and
// 8080, "example.com" gives "example.com" and 0. It allocates only the
// address (net.SplitHostPort would also allocate an error for a Host
// without a port, the common case behind a proxy).
func hostPort(h []byte) (string, int) {
	s := string(h)
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return s, 0
		}
		host = s[1:end]
		if rest := s[end+1:]; strings.HasPrefix(rest, ":") {
			port = rest[1:]
		}
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 && strings.IndexByte(s[:i], ':') < 0 {
		host, port = s[:i], s[i+1:] // one colon: host:port (more: a bare IPv6 address)
	}
	if len(port) == 0 || len(port) > 5 {
		return host, 0
	}
	n := 0
	for _, d := range []byte(port) {
		if d < '0' || d > '9' {
			return host, 0
		}
		n = n*10 + int(d-'0')
	}
	if n > 65535 {
		return host, 0
	}
	return host, n
}

// setConnectionAttributes puts on the span of an upgraded request (a
// WebSocket, package websocket, observed when its connection ends) the
// connection's figures, which it leaves as ws_* log attributes (close
// code and reason, messages and bytes each way), as websocket.*
// attributes. Cost: only for a 101, one attribute per figure.
func setConnectionAttributes(c *fx.Ctx, span trace.Span) {
	for _, a := range c.LogAttrs() {
		k, ok := strings.CutPrefix(a.Key, "ws_")
		if !ok {
			continue
		}
		k = "websocket." + k
		switch v := a.Value; v.Kind() {
		case slog.KindInt64:
			span.SetAttributes(attribute.Int64(k, v.Int64()))
		case slog.KindBool:
			span.SetAttributes(attribute.Bool(k, v.Bool()))
		default:
			span.SetAttributes(attribute.String(k, v.String()))
		}
	}
}
