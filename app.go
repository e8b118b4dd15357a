package fx

import (
	"crypto/tls"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fxhq/fx/internal/conn"
	"github.com/fxhq/fx/validate"
	"github.com/valyala/fasthttp"
)

// Handler serves a request. Returning a non-nil error, or panicking, hands
// the failure to the error boundary.
type Handler func(c *Ctx) error

// Next runs the rest of the chain (later middleware, then the handler) and
// returns its failure, panics included (as *PanicError). Call it at most
// once per request: a second call returns FX_NEXT_CALLED_MULTIPLE_TIMES and
// does not run the chain again.
type Next func() error

// Middleware wraps the rest of the chain. Not calling next ends the request
// with whatever the middleware wrote (or returned).
type Middleware func(c *Ctx, next Next) error

// ErrorHook sees every failure before the default envelope is written. err
// is the raw value: exactly what was returned or passed to panic. Return
// true when the hook wrote the response itself (with c.JSON, c.WriteError
// and friends); it starts from an empty body and the failure's status.
//
// Return false to send the default envelope. What the hook wrote is then
// handled by one rule: if it wrote no body, the headers it added, changed
// or removed are kept, so it can decorate the default envelope (a request
// ID, Retry-After), while its status is discarded and Content-Type,
// Content-Length and Content-Encoding are the envelope's; if it wrote a
// body, everything it wrote (body, status and headers) is discarded. A
// hook that panics is logged (with the request's log attributes) and
// everything it wrote is discarded. In every case Ctx.ErrorCode is the
// code of the failure.
type ErrorHook func(c *Ctx, err any) (handled bool)

// Config configures an App. The zero value is production-safe.
type Config struct {
	// Development lets 500 responses carry the raw error text, and logs a
	// panic's stack as an array of frames ("function file:line", starting
	// at the panicking frame) rather than one string. Default false:
	// FX_INTERNAL_ERROR always says "Internal server error".
	Development bool

	// Logger receives 5xx failures, hook failures and misuse reports.
	// Nil means slog.Default().
	Logger *slog.Logger

	// BodyLimit is the largest request body accepted, in bytes; a larger
	// one is answered 413 FX_PAYLOAD_TOO_LARGE. Default 4 MiB.
	BodyLimit int

	// HeaderLimit is the largest request line plus headers, in bytes (the
	// connection read buffer); more is answered 431 FX_HEADERS_TOO_LARGE.
	// Default 8 KiB.
	HeaderLimit int

	// ReadTimeout bounds reading one whole request, headers and body, from
	// its first byte; a client trickling bytes (slow loris) is answered 408
	// FX_REQUEST_TIMEOUT and disconnected. Default 10s; negative disables.
	ReadTimeout time.Duration

	// WriteTimeout bounds writing a response. Default 15s; negative
	// disables.
	WriteTimeout time.Duration

	// IdleTimeout bounds waiting for the next request on a keep-alive
	// connection. Default 60s; negative leaves the wait bounded by
	// ReadTimeout (as fasthttp does).
	//
	// The three timeouts are enforced by fx on each connection Listen and
	// Serve accept, one phase at a time (reading a request from its first
	// byte, writing its response, waiting idle), at ~50 ns per
	// keep-alive request; a timeout is never early and at most about 10 ms
	// late. The fasthttp.Server of
	// App.Server keeps its own timeout fields at zero.
	IdleTimeout time.Duration

	// Concurrency is the most connections served at once; beyond it a
	// connection is answered 503 FX_SERVICE_UNAVAILABLE and closed. Default
	// 256 * 1024, clamped below the descriptor limit read at New: with N
	// the soft RLIMIT_NOFILE, (N - 64) * 3/4 (N = 1024 gives 720), so that
	// the 503 fires before accept runs out of descriptors; the rest is left
	// for refusals in flight and the program's own files. An explicit value
	// is not clamped. It applies to Listen and Serve; a fasthttp.Server of your
	// own built on Handler() keeps fasthttp's limit, whose 503 is plain
	// text, and app.Test is not limited.
	Concurrency int

	// ServerHeader is sent as the Server header. Default "": none.
	ServerHeader string

	// TLS, when set, makes Listen, Serve and Run serve HTTPS with it
	// (start from DefaultTLSConfig and add certificates): every listening
	// socket, whether new, from socket activation or handed on, is wrapped
	// with tls.NewListener. It is cloned at Boot; its NextProtos defaults
	// to "http/1.1" and a MinVersion below TLS 1.2 is raised to it. One
	// without a certificate, or offering "h2" (fasthttp speaks HTTP/1.1
	// only), is a configuration error reported by Boot. Nil: plain HTTP.
	TLS *tls.Config

	// RedirectTrailingSlash redirects /a/ to /a (or back) when only the
	// other form is registered. Default false: such requests are 404.
	RedirectTrailingSlash bool

	// RedirectFixedPath redirects case and dot-segment variants of a
	// registered path to it. Default false: they are 404.
	RedirectFixedPath bool

	// HandleOPTIONS answers OPTIONS requests for a path with other routes
	// with 200 and an Allow header, through the middleware (which may
	// answer otherwise, as CORS does for preflights). Default false: 404
	// unless an OPTIONS route (or middleware such as CORS) answers.
	HandleOPTIONS bool

	// MaxIssues is the most validation issues one 422 FX_VALIDATION_ERROR
	// lists, body and query together. Validation stops doing the work once
	// it has found that many (built-in schemas, Struct and the adapters
	// stop early; any other validate.Schema has its list cut), and the
	// response then carries details.truncated: true beside the issues.
	// Default 100. Whatever its value, one 422 stays under about 64 KiB
	// (see NewValidationError). Cost of a 4 MiB body of 1.4 million
	// invalid items under the builder: about 14 ms of CPU and 30 KB
	// allocated per request (BenchmarkHugeInvalidBody; it was 9.8 s and
	// 1.3 GB).
	MaxIssues int

	// TrustedProxies lists the proxies whose forwarding header Ctx.ClientAddr
	// believes: CIDR prefixes ("10.0.0.0/8", "fd00::/8") or single addresses.
	// Default empty: the headers are ignored and the client is always the
	// socket peer, so no client can choose its own IP. An entry that does not
	// parse makes Boot fail (FX_INTERNAL_ERROR naming it).
	TrustedProxies []string

	// ClientIPHeader is the forwarding header read through TrustedProxies:
	// "X-Forwarded-For" (the default), "Forwarded" (RFC 7239, for=), or any
	// header carrying a comma-separated address list ("X-Real-IP"). Only
	// this header is read; set it to the one your proxies append to.
	ClientIPHeader string

	// MultipartMaxParts is the most parts (fields and files together)
	// Ctx.MultipartForm accepts; more is 413 FX_PAYLOAD_TOO_LARGE, on every
	// listener. Default 1000. It is the only part limit: a form is parsed
	// when a handler reads it, never before, and one over mime/multipart's
	// own cap of 1000 parts is read in batches (see Ctx.MultipartForm).
	MultipartMaxParts int

	// MultipartMaxFileSize is the largest file part Ctx.MultipartForm
	// accepts, in bytes; a larger one is 413 FX_PAYLOAD_TOO_LARGE. Default
	// 0: only BodyLimit bounds it.
	MultipartMaxFileSize int64

	// Compression, when set, compresses response bodies, error envelopes
	// included, with zstd, brotli or gzip as the request's Accept-Encoding
	// allows (zstd and brotli when their package is imported:
	// fx/compression/zstd, fx/compression/brotli; gzip always), and adds
	// Vary: Accept-Encoding; see CompressionConfig. An
	// invalid entry makes Boot fail. Default nil: bodies are sent as
	// written.
	Compression *CompressionConfig

	trusted           trustedProxies // TrustedProxies parsed, at New (ctx_client.go)
	clientIPForwarded bool           // ClientIPHeader is Forwarded
}

// Defaults of Config.
const (
	DefaultBodyLimit    = 4 << 20
	DefaultHeaderLimit  = 8 << 10
	DefaultReadTimeout  = 10 * time.Second
	DefaultWriteTimeout = 15 * time.Second
	DefaultIdleTimeout  = 60 * time.Second
	DefaultConcurrency  = 256 * 1024
	DefaultMaxIssues    = 100
)

// defaultMultipartMaxParts is Config.MultipartMaxParts's default.
const defaultMultipartMaxParts = 1000

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.BodyLimit <= 0 {
		c.BodyLimit = DefaultBodyLimit
	}
	if c.HeaderLimit <= 0 {
		c.HeaderLimit = DefaultHeaderLimit
	}
	c.ReadTimeout = orDefault(c.ReadTimeout, DefaultReadTimeout)
	c.WriteTimeout = orDefault(c.WriteTimeout, DefaultWriteTimeout)
	c.IdleTimeout = orDefault(c.IdleTimeout, DefaultIdleTimeout)
	if c.Concurrency <= 0 {
		c.Concurrency = conn.DefaultLimit(DefaultConcurrency)
	}
	if c.MaxIssues <= 0 {
		c.MaxIssues = DefaultMaxIssues
	}
	c = c.withRequestDefaults() // TrustedProxies, ClientIPHeader, Multipart*: withRequestDefaults
	return c
}

// withRequestDefaults fills in the Config fields read by the request
// accessors (ClientAddr, MultipartForm) and parses TrustedProxies once, at
// New; invalid entries are kept for Boot to report (App.configErrors).
func (c Config) withRequestDefaults() Config {
	c.trusted = parseTrustedProxies(c.TrustedProxies)
	if c.ClientIPHeader == "" {
		c.ClientIPHeader = "X-Forwarded-For"
	}
	c.clientIPForwarded = strings.EqualFold(c.ClientIPHeader, "Forwarded")
	if c.MultipartMaxParts <= 0 {
		c.MultipartMaxParts = defaultMultipartMaxParts
	}
	return c
}

func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0 // fasthttp: no timeout
	}
	return d
}

// App is an fx application: routes, middleware, the error hook and
// plugins, booted once and then served. Register everything before Boot
// (plugin Setup functions run during Boot may register too); registering
// after Boot panics, as the route table is then immutable and read without
// locks.
type App struct {
	routes // Handle, Get, ..., Route: registration shared with Group (router.go)

	cfg    Config
	logger *slog.Logger
	tls    *tls.Config // Config.TLS as Boot prepared it (listen_tls.go); nil: plain HTTP

	regMu   sync.Mutex // guards the registration fields below
	sealed  bool       // set by Boot: registration closed
	mws     []Middleware
	specs   []routeSpec
	hook    ErrorHook
	plugins []Plugin

	observers []func(c *Ctx) // OnResponse, in registration order (observe.go)

	closers []func() error

	bootMu  sync.Mutex
	booted  atomic.Bool
	booting atomic.Bool // Boot is running (set under bootMu)
	bootErr error
	handler fasthttp.RequestHandler

	notFoundRoute *route
	ctxPool       sync.Pool
	misused       sync.Map

	// zip is Config.Compression prepared at Boot, nil without it (finish
	// applies it, compress.go).
	zip *compressor

	// life is the shutdown: the one stopping state everything reads
	// (life.stop), and the wait for it to complete (lifecycle.go).
	life lifecycle

	// up is the App's side of a hand-off to a new process (handoff.go).
	up upgrader

	srvMu  sync.Mutex
	server *fasthttp.Server
}

// New returns an App. Pass at most one Config; none means the defaults.
func New(config ...Config) *App {
	var cfg Config
	if len(config) > 0 {
		cfg = config[0]
	}
	cfg = cfg.withDefaults()
	a := &App{cfg: cfg, logger: cfg.Logger}
	a.routes = routes{app: a}
	a.life.stop.init()
	a.ctxPool.New = func() any { return newCtx(a) }
	return a
}

// Config returns the App's configuration with defaults filled in.
func (a *App) Config() Config { return a.cfg }

// Logger returns the logger failures are reported to.
func (a *App) Logger() *slog.Logger { return a.logger }

// Done returns a channel closed when Shutdown (or ShutdownWithContext, or
// Run's shutdown) begins. From then on every response carries
// Connection: close, and the readiness probe of package health answers
// 503 so that a load balancer stops sending traffic while requests in
// flight finish. Long-running streams and WebSockets select on it to end,
// so that Shutdown, which waits for in-flight responses, is not held up
// by them. To ask whether shutdown has begun without waiting:
//
//	select {
//	case <-app.Done(): // shutting down
//	default:
//	}
//
// Cost: a non-blocking receive, a few nanoseconds.
func (a *App) Done() <-chan struct{} { return a.life.stop.context().Done() }

// Use appends middleware that runs, in Use order, around every route's
// handler and around the 404 of unmatched requests, whether it was
// registered before or after the routes.
func (a *App) Use(mw ...Middleware) {
	a.register("Use", func() { a.mws = append(a.mws, mw...) })
}

// OnError sets the error hook (replacing any previous one).
func (a *App) OnError(h ErrorHook) {
	a.register("OnError", func() { a.hook = h })
}

// OnShutdown registers fn to run during Shutdown, after the server stopped
// serving, in reverse registration order (use it to close pools and
// runtimes a plugin opened).
func (a *App) OnShutdown(fn func() error) {
	a.regMu.Lock()
	a.closers = append(a.closers, fn)
	a.regMu.Unlock()
}

// Register adds a plugin. Order does not matter: Boot runs Setup functions
// dependencies first (see Plugin).
func (a *App) Register(p Plugin) {
	a.register("Register", func() { a.plugins = append(a.plugins, p) })
}

func (a *App) register(what string, f func()) {
	a.regMu.Lock()
	defer a.regMu.Unlock()
	if a.sealed {
		panic("fx: " + what + " called after the app booted; register everything before Boot, Listen, Handler or Test")
	}
	f()
}

// Route is a route contract. Middleware runs after the App's and the
// Group's middleware and before the contract: an
// authorization check there refuses a caller with its own 401 or 403
// before the body is read, so a caller who may not use the route never
// gets a 422 that describes its schema. Then the body and query are
// validated against their schemas before Handler runs, and every issue of
// both is reported in one 422 FX_VALIDATION_ERROR. A nil schema is not
// validated.
type Route struct {
	Method, Path string
	Body, Query  validate.Schema // nil: not validated
	Middleware   []Middleware    // run after app and group middleware, BEFORE the contract
	Handler      Handler

	// Documentation only (see RouteInfo): never read while serving.
	Doc       RouteDoc      // summary, tags, operationId, ...; merged over the Group's
	Errors    []*Error      // application errors the handler can return (their status and code)
	Responses []ResponseDoc // success responses; none: a 200 with an unspecified body

	op *opTypes // set by Op (op.go): a typed operation's types, for documentation
}
