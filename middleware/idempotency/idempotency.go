package idempotency

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// HeaderKey is the request header carrying the key, and HeaderReplayed the
// response header New adds to a replayed response ("true").
const (
	HeaderKey      = "Idempotency-Key"
	HeaderReplayed = "Idempotent-Replayed"
)

// Defaults of Config.
const (
	DefaultLifetime         = 24 * time.Hour
	DefaultLockTimeout      = time.Minute
	DefaultStoreTimeout     = 100 * time.Millisecond
	DefaultRetryAfter       = time.Second
	DefaultMaxResponseBytes = 1 << 20
)

// Config configures New. The zero value is usable: POST and PATCH, keys
// optional, a MemoryStore of its own, keys kept a day.
type Config struct {
	// Store holds the keys. Default: a NewMemoryStore of its own, which
	// protects one instance only; instances behind a load balancer need a
	// shared store (the Redis one).
	Store Store

	// Methods are the methods the middleware acts on; other requests pass
	// through untouched. Default POST and PATCH (GET, PUT and DELETE are
	// idempotent by definition).
	Methods []string

	// Required refuses a request of those methods that sends no key: 400
	// FX_IDEMPOTENCY_KEY_REQUIRED, reason "missing_idempotency_key". When
	// false such a request runs as if the middleware were absent.
	Required bool

	// Lifetime is how long a completed response is kept for replay.
	// Default 24 hours (the IETF draft and Stripe's).
	Lifetime time.Duration

	// LockTimeout is how long a claim lasts while its request runs: after
	// it, the key counts as free again, so a retry of a request whose
	// instance died mid-way runs the handler (once). It must be longer
	// than the slowest handler on these routes (bound them with
	// middleware.Timeout): a request still running after it may run
	// alongside a retry, and its response is then not stored. Default one
	// minute.
	LockTimeout time.Duration

	// StoreTimeout bounds each Store call (a Redis round trip), so a store
	// that hangs is a quick 503 (or FailOpen), not a stuck request.
	// Default 100 ms. The MemoryStore never waits and ignores it.
	StoreTimeout time.Duration

	// RetryAfter is the Retry-After sent with 409 FX_IDEMPOTENCY_IN_FLIGHT
	// and with the 503 of a failed store, rounded up to whole seconds.
	// Default one second.
	RetryAfter time.Duration

	// Scope names whose keys a request's key is among: the same key from
	// two scopes is two keys, so one caller never receives another's
	// stored response. Default DefaultScope (the tenant and the
	// authenticated principal's identity). ErrNoScope runs the request
	// without idempotency (nothing stored or replayed); any other error is
	// the request's answer (use an *fx.Error).
	Scope func(c *fx.Ctx) (string, error)

	// ShareAnonymous lets requests without a principal use keys, scoped by
	// their tenant alone: every anonymous caller of a tenant shares one
	// scope, so a caller that guesses or learns another's key and sends
	// the same request receives the other's stored response (and a
	// different request gets 422, which tells it the key was used). Set it
	// only on routes whose responses any anonymous caller may see. Default
	// false: a request without a principal runs without idempotency
	// (DefaultScope answers ErrNoScope). It applies to the default Scope
	// only; a Scope of your own decides for itself (a session cookie
	// identifies anonymous callers).
	ShareAnonymous bool

	// Headers are the response header fields stored and replayed with the
	// status and body. Default Content-Type and Location. Content-Encoding
	// is always stored when present, since the stored body is encoded
	// with it.
	Headers []string

	// Storable decides from the final status whether a response is
	// stored. Default DefaultStorable. A response not stored releases the
	// claim: a retry runs the handler again.
	Storable func(status int) bool

	// MaxResponseBytes caps the body of a stored response. A larger (or
	// streamed) response is sent but not stored: the claim is released, so
	// a retry runs the handler again, and the App's logger says so.
	// Default 1 MiB.
	MaxResponseBytes int

	// CompleteAfterResponse takes the completion — storing the response, or
	// releasing the claim of a response not stored — off the request's
	// path: it runs in the background once the handler returned, on a copy
	// of the response, while the response is sent. With a remote store a
	// request then waits for one round trip (the claim), not two. Default
	// false: the completion lands before the response is sent.
	//
	// What it weakens: the handler still runs at most once per key while
	// the instance and the store stay up, but if the instance dies, or the
	// store fails, after the response was sent and before the completion
	// landed, the response is lost while the client holds it: the claim
	// expires after LockTimeout and a retry (409 until then) runs the
	// handler again. At most once becomes at most once unless a crash or a
	// store failure falls in that window (one round trip long). Use it
	// where running twice in that rare case is acceptable or caught
	// downstream (a unique order number), not where it is not.
	//
	// The background work is bounded by MaxPendingCompletions; the App's
	// Shutdown waits for it (it registers an OnShutdown function on the
	// first request of each App), each completion bounded by StoreTimeout.
	CompleteAfterResponse bool

	// MaxPendingCompletions bounds the completions CompleteAfterResponse
	// runs in the background at once; a request finding them all taken
	// completes synchronously (delayed, never dropped). Default 1024.
	MaxPendingCompletions int

	// FailOpen runs the handler without idempotency when the Store fails
	// (logging at most one line per second). The default, fail closed,
	// answers 503 FX_SERVICE_UNAVAILABLE (reason "idempotency_unavailable")
	// with Retry-After: a request whose duplicate cannot be detected is
	// refused rather than possibly run twice, and the client retries with
	// the same key.
	FailOpen bool
}

// DefaultStorable is Config.Storable's default: the outcomes a retry of
// the same request would get again are stored — 2xx, 3xx and the 4xx
// statuses but 408 (Request Timeout), 425 (Too Early) and 429 (Too Many
// Requests). Nothing else is stored: 1xx, 408, 425, 429 and every 5xx
// (500, 502, 503, 504, ...) say "not now", not "no", so the claim is
// released and a retry runs the handler again.
func DefaultStorable(status int) bool {
	switch {
	case status == 408, status == 425, status == 429:
		return false
	case status >= 200 && status < 500:
		return true
	}
	return false
}

type idempotency struct {
	store        Store
	local        bool // the store never waits: no deadline context per call
	methods      []string
	required     bool
	lifetime     time.Duration
	lock         time.Duration
	storeTimeout time.Duration
	retryAfter   string
	scope        func(c *fx.Ctx) (string, error)
	headers      []string
	storable     func(int) bool
	maxBody      int
	failOpen     bool
	shareAnon    bool
	after        *afterResponse // Config.CompleteAfterResponse; nil: complete before the response
	lastLog      atomic.Int64
}

// New returns middleware that runs the handler of a request carrying an
// Idempotency-Key at most once per (scope, key) within Config.Lifetime,
// and answers every retry with the stored response. It follows the IETF
// draft "The Idempotency-Key HTTP Header Field"
// (draft-ietf-httpapi-idempotency-key-header). For a request whose method
// is one of Config.Methods:
//
//   - no key: the request runs untouched, or, with Config.Required, 400
//     FX_IDEMPOTENCY_KEY_REQUIRED (reason "missing_idempotency_key");
//   - a malformed key (see ParseKey), or several Idempotency-Key fields:
//     400 FX_IDEMPOTENCY_KEY_REQUIRED (reason "malformed_idempotency_key");
//   - a key never seen in this scope (Config.Scope): the key is claimed,
//     the handler runs, and its response is stored when Config.Storable
//     says so (otherwise the claim is released);
//   - a key whose first request is still running: 409
//     FX_IDEMPOTENCY_IN_FLIGHT with Retry-After;
//   - a key seen with another fingerprint: 422 FX_IDEMPOTENCY_KEY_REUSED.
//     The fingerprint is the SHA-256 of the method, the route pattern, the
//     path, the query string and the body exactly as received (no JSON
//     normalisation: a client retries with the same bytes);
//   - a key whose request completed: the stored response is replayed — its
//     status, the Config.Headers fields and the body — with
//     Idempotent-Replayed: true. Headers other middleware set on every
//     response (a request ID, CORS) are set afresh by that middleware.
//
// An error answer is stored as the default envelope (what the error
// boundary writes without an error hook): the first request still goes
// through the App's hook, the replays are that envelope. A handler that
// overran a middleware.Timeout inside New had returned when the 504 was
// sent, and may have done its work: the answer it gave (which the 504
// replaced) is what is stored, so a retry gets it instead of a second run;
// only a handler that itself gave up on its context (it returned
// context.DeadlineExceeded or Canceled) has its claim released.
//
// Put it after Auth and Tenant, which the default scope reads, and before
// anything that must not run twice. When the Store fails, Config.FailOpen
// decides (503 by default). New declares what it can raise (fx.Declare):
// 400, 409, 422 and 503.
//
// Cost on a request with a key, with the MemoryStore: the key parsed into
// the store key, the scope built, one SHA-256 over the request (a few ns
// per body byte), a claim and a completion (each a clock read, a lock and
// a map operation) and a copy of the stored response: about 1.7-2.2 µs of
// CPU and 5 allocations on a small JSON request, a replay about 0.7 µs and
// one allocation (BenchmarkIdempotency, measured as CPU time on a 2-core
// machine so loaded that wall-clock ns/op read four times that; see
// docs/idempotency.md). A remote store adds two round trips, the claim
// before the handler and the completion after it: with Redis on loopback
// about 54 µs for the two where one round trip costs 31 µs
// (BenchmarkIdempotencyRedis, BenchmarkAllow; best of four runs); with
// Config.CompleteAfterResponse the completion leaves the request's path and
// one round trip remains (BenchmarkIdempotencyAdded in bench/). Requests of other methods,
// and requests without a key when not Required, cost a method comparison
// and a header lookup.
//
// New panics on a negative duration or size: a programming error found at
// start-up.
func New(cfg Config) fx.Middleware {
	m := &idempotency{
		store: cfg.Store, methods: cfg.Methods, required: cfg.Required,
		lifetime: cfg.Lifetime, lock: cfg.LockTimeout, storeTimeout: cfg.StoreTimeout,
		scope: cfg.Scope, headers: cfg.Headers, storable: cfg.Storable,
		maxBody: cfg.MaxResponseBytes, failOpen: cfg.FailOpen, shareAnon: cfg.ShareAnonymous,
	}
	if cfg.Lifetime < 0 || cfg.LockTimeout < 0 || cfg.StoreTimeout < 0 || cfg.RetryAfter < 0 || cfg.MaxResponseBytes < 0 || cfg.MaxPendingCompletions < 0 {
		panic("idempotency.New: durations, MaxResponseBytes and MaxPendingCompletions must not be negative")
	}
	if cfg.CompleteAfterResponse {
		m.after = newAfterResponse(cmp.Or(cfg.MaxPendingCompletions, DefaultMaxPendingCompletions))
	}
	if m.store == nil {
		m.store = NewMemoryStore(MemoryStoreConfig{})
	}
	_, m.local = m.store.(*MemoryStore)
	if m.methods == nil {
		m.methods = []string{"POST", "PATCH"}
	}
	m.lifetime = orDefault(m.lifetime, DefaultLifetime)
	m.lock = orDefault(m.lock, DefaultLockTimeout)
	m.storeTimeout = orDefault(m.storeTimeout, DefaultStoreTimeout)
	retry := orDefault(cfg.RetryAfter, DefaultRetryAfter)
	m.retryAfter = strconv.FormatInt(int64((retry+time.Second-1)/time.Second), 10)
	// A nil scope is DefaultScope, which handle writes into the key in place.
	if m.headers == nil {
		m.headers = []string{"Content-Type", "Location"}
	}
	if m.storable == nil {
		m.storable = DefaultStorable
	}
	if m.maxBody == 0 {
		m.maxBody = DefaultMaxResponseBytes
	}
	return fx.Declare(m.handle, declaration(cfg.Required, m.methods))
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func (m *idempotency) handle(c *fx.Ctx, next fx.Next) error {
	if !m.applies(c) {
		return next()
	}
	vals := c.RequestCtx().Request.Header.PeekAll(HeaderKey)
	switch {
	case len(vals) == 0 && m.required:
		return errMissingKey
	case len(vals) == 0:
		return next()
	case len(vals) > 1:
		return errMalformedKey
	}
	// raw stays valid; vals does not: PeekAll reuses one slice per
	// request, which the scope's credential lookup fills again.
	raw := vals[0]
	// The store key: the scope, a line feed (ParseKey's keys have none, so
	// the split is unambiguous) and the key; one allocation, owned by the
	// store from here on.
	var b []byte
	if m.scope == nil { // DefaultScope, written in place
		var scoped bool
		if b, scoped = appendDefaultScope(make([]byte, 0, 64+len(raw)), c, m.shareAnon); !scoped {
			return m.unscoped(c, next)
		}
	} else {
		scope, err := m.scope(c)
		if errors.Is(err, ErrNoScope) {
			return m.unscoped(c, next)
		}
		if err != nil {
			return err
		}
		b = append(make([]byte, 0, len(scope)+1+len(raw)), scope...)
	}
	b = append(b, '\n')
	b, ok := appendKey(b, raw)
	if !ok {
		return errMalformedKey
	}
	key := unsafe.String(unsafe.SliceData(b), len(b))
	fp := fingerprint(c)

	ctx, cancel := m.callContext()
	token, held, err := m.store.Claim(ctx, key, fp, m.lock)
	cancel()
	switch {
	case err != nil:
		return m.storeFailed(c, next, err)
	case token == 0 && held.Fingerprint != fp:
		return errKeyReused
	case token == 0 && held.State == Completed:
		replay(c, &held.Response)
		return nil
	case token == 0:
		c.SetHeader("Retry-After", m.retryAfter)
		return errInFlight
	}

	// next returns when the handler has returned: it runs on this
	// goroutine, middleware.Timeout included, so its outcome is final here.
	err = next()
	resp, answer := handlerAnswer(c, err)
	status := resp.StatusCode()
	if answer != nil {
		status, _ = fx.Resolve(answer)
	}
	f := finishing{key: key, token: token}
	switch {
	case !m.storable(status):
	case resp.IsBodyStream() || len(resp.Body()) > m.maxBody:
		m.logf(c, "idempotency: response streamed or over MaxResponseBytes; not stored, a retry runs the handler again")
	default:
		if answer != nil {
			c.WriteError(answer) // the default envelope, to store; the boundary still handles err
			resp = &c.RequestCtx().Response
		}
		stored := capture(status, resp, m.headers) // a copy: the Ctx is pooled
		f.resp = &stored
	}
	m.finish(c, f)
	return err
}

// lateAnswer is what middleware.Timeout's 504 carries: what the handler
// answered after its deadline.
type lateAnswer interface {
	LateAnswer() (*fasthttp.Response, error)
}

// handlerAnswer is the handler's own outcome behind err: the error it
// returned and the response it wrote. A middleware.Timeout that answered
// 504 after the handler overran kept that outcome (LateAnswer): the handler
// did its work, so its answer, not the 504, is what a retry gets — the
// claim is not released to run it again. A handler that itself reported
// the end of its context (context.DeadlineExceeded or Canceled: a timeout
// or a shutdown it gave up on) answered a 5xx, and its claim is released.
func handlerAnswer(c *fx.Ctx, err error) (*fasthttp.Response, error) {
	resp := &c.RequestCtx().Response
	if err == nil {
		return resp, nil
	}
	return errorAnswer(err, resp)
}

// errorAnswer is handlerAnswer for a non-nil err: apart, so that the
// variable errors.As fills (it escapes) costs nothing on a success.
func errorAnswer(err error, resp *fasthttp.Response) (*fasthttp.Response, error) {
	var late lateAnswer
	if !errors.As(err, &late) {
		return resp, err
	}
	lresp, lerr := late.LateAnswer()
	if lerr != nil || lresp == nil {
		return resp, cmp.Or(lerr, err)
	}
	return lresp, nil
}

// unscoped runs a request whose caller nothing identifies (ErrNoScope)
// without idempotency: no response of it is stored, so none can be
// replayed to another caller.
func (m *idempotency) unscoped(c *fx.Ctx, next fx.Next) error {
	m.logf(c, "idempotency: nothing identifies the caller (no principal, or no Subject and no credential); the key is ignored and the response not stored (see Config.ShareAnonymous)")
	return next()
}

// applies reports whether the request's method is one of Config.Methods.
func (m *idempotency) applies(c *fx.Ctx) bool {
	method := c.RequestCtx().Method()
	for _, want := range m.methods {
		if string(method) == want {
			return true
		}
	}
	return false
}

// callContext bounds one store call.
func (m *idempotency) callContext() (context.Context, context.CancelFunc) {
	if m.local {
		return context.Background(), func() {}
	}
	return context.WithTimeout(context.Background(), m.storeTimeout)
}

// storeFailed answers a request whose Claim failed.
func (m *idempotency) storeFailed(c *fx.Ctx, next fx.Next, err error) error {
	if m.failOpen {
		m.logf(c, "idempotency: store failed; running the request without idempotency (FailOpen)", "error", err)
		return next()
	}
	c.SetHeader("Retry-After", m.retryAfter)
	return fmt.Errorf("idempotency: store failed: %w: %w", errUnavailable, err)
}

// logf reports at most one line per second to the App's logger.
func (m *idempotency) logf(c *fx.Ctx, msg string, args ...any) {
	m.logTo(c.App().Logger(), c.Method(), c.Path(), msg, args...)
}

// logTo is logf with the request's logger, method and path given.
func (m *idempotency) logTo(l *slog.Logger, method, path, msg string, args ...any) {
	now := time.Now().UnixNano()
	if last := m.lastLog.Load(); now-last >= int64(time.Second) && m.lastLog.CompareAndSwap(last, now) {
		l.Warn(msg, append(args, "method", method, "path", path)...)
	}
}

// hashers reuses SHA-256 states and a scratch buffer.
var hashers = sync.Pool{New: func() any { return &hasher{h: sha256.New()} }}

type hasher struct {
	h   hash.Hash
	buf []byte
}

// fingerprint is the SHA-256 of the method, route pattern, path (as
// normalised for routing), raw query string and body, each prefixed by
// its length, so two different requests never hash the same bytes.
func fingerprint(c *fx.Ctx) Fingerprint {
	rc := c.RequestCtx()
	hs := hashers.Get().(*hasher)
	b := hs.buf[:0]
	for _, part := range [...][]byte{rc.Method(), unsafeBytes(c.Route()), rc.Path(), rc.URI().QueryString()} {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	body := rc.Request.Body()
	b = binary.AppendUvarint(b, uint64(len(body)))
	hs.h.Reset()
	hs.h.Write(b)
	hs.h.Write(body)
	var fp Fingerprint
	hs.buf = hs.h.Sum(b[:0])
	copy(fp[:], hs.buf)
	hashers.Put(hs)
	return fp
}

// unsafeBytes views s as bytes, read-only.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
