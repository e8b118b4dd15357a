package ratelimit

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// Config configures New.
type Config struct {
	// Limit is the policy. Requests and Period are required.
	Limit Limit

	// Key names the bucket a request is counted in. Default KeyByIP. The
	// helpers KeyByIP, KeyByPrincipal, KeyByTenant and KeyByAPIKey cover
	// the usual cases; a custom function may combine them or read
	// anything else. An error is returned as the request's failure (use an
	// *fx.Error). An empty key with a nil error exempts the request from
	// this limit (an allow-list); the helpers never return one.
	Key func(c *fx.Ctx) (string, error)

	// Store holds the keys' state. Default: a NewMemoryStore of its own
	// (65536 keys), which limits per process. Use the Redis store to share
	// one limit between several instances of the app.
	Store Store

	// FailOpen lets requests through (without RateLimit headers) when the
	// Store fails, and reports each failure to the App's logger (at most
	// one line per second). The default is to fail closed: 503
	// FX_SERVICE_UNAVAILABLE, reason "rate_limit_unavailable", with
	// Retry-After: 1, the store's error logged with the request. Closed is
	// the default because a limit that vanishes when its store is down
	// protects nothing exactly when the system is degraded, and whoever
	// can knock the store over gets unlimited requests; open is the
	// choice when availability matters more than the limit (a limit that
	// only smooths traffic).
	FailOpen bool
}

type rateLimiter struct {
	limit    Limit
	key      func(c *fx.Ctx) (string, error)
	store    Store
	local    localStore
	failOpen bool
	policy   []byte // the RateLimit-Policy value
	item     string // `"name";r=` prefix of the RateLimit value
	lastLog  atomic.Int64
}

// New returns middleware that limits how often each key (by default
// each client IP) may call the routes it runs for, with GCRA: Limit.Burst
// requests at once, then Limit.Requests per Limit.Period.
//
// Every response of a request it decided carries the header fields of the
// IETF draft "RateLimit header fields for HTTP"
// (draft-ietf-httpapi-ratelimit-headers-11, whose syntax is that of -09
// and -10: structured-field lists):
//
//	RateLimit-Policy: "default";q=100;w=60
//	RateLimit: "default";r=42;t=13
//
// q and w are Limit.Requests and Limit.Period in seconds; r is how many
// requests the key may send right now; t is, on an allowed request, the
// seconds until its whole burst is available again and, on a refused one,
// the Retry-After value (so Retry-After is never earlier than the end of
// the window, as the draft asks). Seconds are rounded up.
//
// A refused request is answered 429 FX_RATE_LIMITED (reason
// "rate_limited") with Retry-After in seconds, rounded up, and does not
// reach next. A store failure answers as Config.FailOpen says.
// The headers are set before next runs, so they are also on the error
// responses of later middleware and the handler. With several rate limits
// on one route, each replaces the headers of the one before it: the
// innermost one's are sent.
//
// Cost with the default memory store, measured with
//
//	go test -run '^$' -bench RateLimit -benchmem -cpu 1,2 ./middleware/ratelimit
//
// on a shared 2-core machine: about 160 ns and no allocation per allowed
// request over a bare route on one core (BenchmarkRateLimit 230-250 ns
// against BenchmarkRateLimitBare 65-80 ns); about a third is the clock
// read, most of the rest fasthttp copying the two header values. Refused
// requests cost about 400 ns (the envelope and three headers), also without
// allocation. Many clients spread over 64 shards (BenchmarkRateLimitManyKeys);
// one key hammered from both cores serializes on its shard's lock (about
// 470 ns per request at -cpu 2).
//
// New panics on an invalid Limit, listing every problem: it is a
// programming error found at start-up.
func New(cfg Config) fx.Middleware {
	l, err := cfg.Limit.Validate()
	if err != nil {
		panic("ratelimit.New: " + err.Error())
	}
	r := &rateLimiter{limit: l, key: cfg.Key, store: cfg.Store, failOpen: cfg.FailOpen}
	if r.key == nil {
		r.key = KeyByIP
	}
	if r.store == nil {
		r.store = NewMemoryStore(MemoryStoreConfig{})
	}
	r.local, _ = r.store.(localStore)
	r.policy = []byte(`"` + l.Name + `";q=` + strconv.Itoa(l.Requests) + `;w=` + strconv.FormatInt(int64(l.Period/time.Second), 10))
	r.item = `"` + l.Name + `";r=`
	return fx.Declare(r.handle, declaration(r.local != nil, r.failOpen))
}

func (r *rateLimiter) handle(c *fx.Ctx, next fx.Next) error {
	key, err := r.key(c)
	if err != nil {
		return err
	}
	if key == "" {
		return next()
	}
	var d Decision
	if r.local != nil {
		d = r.local.allow(key, r.limit)
	} else if d, err = r.store.Allow(c.Context(), key, r.limit); err != nil {
		return r.storeFailed(c, next, err)
	}
	h := &c.RequestCtx().Response.Header
	h.SetCanonical(hdrPolicy, r.policy)
	var buf [96]byte
	b := append(buf[:0], r.item...)
	if !d.Allowed {
		retry := ceilSeconds(d.RetryAfter)
		b = strconv.AppendInt(b, 0, 10)
		b = append(b, ";t="...)
		b = strconv.AppendInt(b, retry, 10)
		h.SetCanonical(hdrRateLimit, b)
		h.SetCanonical(hdrRetryAfter, strconv.AppendInt(b[:0], retry, 10)) // SetCanonical copied b
		return errRateLimited
	}
	b = strconv.AppendInt(b, int64(d.Remaining), 10)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, ceilSeconds(d.Reset), 10)
	h.SetCanonical(hdrRateLimit, b)
	return next()
}

// The header names as fasthttp stores them (it normalizes names to
// Upper-Lower-Case): SetCanonical with them skips normalizing on every
// request, and c.SetHeader("RateLimit", ...) later replaces them as usual.
var (
	hdrPolicy     = []byte("Ratelimit-Policy")
	hdrRateLimit  = []byte("Ratelimit")
	hdrRetryAfter = []byte("Retry-After")
)

// storeFailed answers a request whose Store returned err.
func (r *rateLimiter) storeFailed(c *fx.Ctx, next fx.Next, err error) error {
	if r.failOpen {
		now := time.Now().UnixNano()
		if last := r.lastLog.Load(); now-last >= int64(time.Second) && r.lastLog.CompareAndSwap(last, now) {
			c.App().Logger().Error("ratelimit: store failed; letting requests through (FailOpen)",
				"policy", r.limit.Name, "error", err)
		}
		return next()
	}
	c.SetHeader("Retry-After", "1")
	return fmt.Errorf("ratelimit: store failed: %w: %w", errUnavailable, err)
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// ReasonRateLimited is details.reason of the 429 a rate limit answers,
// and ReasonUnavailable that of its 503 when the store failed.
const (
	ReasonRateLimited = "rate_limited"
	ReasonUnavailable = "rate_limit_unavailable"
)

var (
	errRateLimited = fx.NewCatalogError(fx.ErrorCodes.RateLimited,
		"Too many requests: the rate limit is exceeded; retry after the time in Retry-After",
		middleware.FailureDetails{Reason: ReasonRateLimited})
	errUnavailable = fx.NewCatalogError(fx.ErrorCodes.ServiceUnavailable,
		"The rate limit cannot be checked right now; retry later",
		middleware.FailureDetails{Reason: ReasonUnavailable})
	errNoTenant = fx.NewCatalogError(fx.ErrorCodes.TenantRequired,
		"Tenant required: the rate limit is per tenant and no tenant was resolved",
		middleware.FailureDetails{Reason: middleware.ReasonMissingTenant})
)

// What New declares (fx.Declare), written from the errors above: the
// 429 and the 503, each with the reasons it carries.
var (
	declRateLimited = middleware.DeclareFailures(errRateLimited)[0]
	declUnavailable = middleware.DeclareFailures(errUnavailable)[0]
)

// declaration is what New declares: 429 with Retry-After, the RateLimit
// and RateLimit-Policy fields on its 429 and on every answer of what runs
// after it (set before next: not on the errors of the middleware before
// it, nor on its 503, which sets none), and 503 with
// Retry-After when a store of its own that can fail is not FailOpen (the
// memory store cannot fail).
func declaration(local, failOpen bool) fx.Declaration {
	retryAfter := fx.HeaderDoc{Name: "Retry-After", Required: true, Statuses: []int{429},
		Description: "Seconds to wait before retrying.", Schema: map[string]any{"type": "string", "pattern": "^[0-9]+$"}}
	d := fx.Declaration{Errors: []*fx.Error{declRateLimited}, Headers: []fx.HeaderDoc{
		{Name: "RateLimit", BeforeNext: true, Statuses: []int{429},
			Description: `The remaining quota: "policy";r=remaining;t=seconds until it is whole again (IETF draft-ietf-httpapi-ratelimit-headers).`},
		{Name: "RateLimit-Policy", BeforeNext: true, Statuses: []int{429},
			Description: `The quota policy: "policy";q=requests;w=window in seconds.`},
		retryAfter,
	}}
	if !local && !failOpen {
		d.Errors = append(d.Errors, declUnavailable)
		d.Headers[2].Statuses = []int{429, 503}
	}
	return d
}
