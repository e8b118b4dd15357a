package middleware

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fxhq/fx"
)

// Rate limiting: GCRA (the generic cell rate algorithm, the virtual
// scheduling form of a token bucket). Each key has one number, its
// theoretical arrival time (TAT): the instant at which its bucket would be
// full again. A request at now is allowed when
//
//	max(TAT, now) + T - B*T <= now        (T = Period/Requests, B = Burst)
//
// and then moves TAT to max(TAT, now) + T. Nothing else is stored, no
// timer runs, and the answer is exact: B requests at once, then one every
// T, never more. A key whose TAT has passed is the same as a key never seen,
// which is what lets stores forget it (the memory store evicts it first,
// the Redis store gives it a TTL ending at its TAT).

// Limit is a rate-limit policy: Requests per Period sustained, with bursts
// of up to Burst requests at once.
//
// Over any stretch of time d, a key gets at most Burst + Requests*d/Period
// requests; a client that sends steadily gets Requests per Period exactly.
type Limit struct {
	// Name identifies the policy in the RateLimit and RateLimit-Policy
	// headers and separates its keys from other policies' in a shared
	// store: two RateLimits sharing a Store need different Names, or they
	// count in the same buckets. Default "default". Printable ASCII
	// without '"' and '\'.
	Name string
	// Requests is the quota: how many requests a key may make per Period
	// (the "q" of RateLimit-Policy). Required, at least 1.
	Requests int
	// Period is the time window of the quota (the "w" of
	// RateLimit-Policy): a whole number of seconds, at least one second
	// (the header draft has no sub-second windows). Period/Requests must
	// be at least one microsecond (the Redis store's resolution).
	Period time.Duration
	// Burst is how many requests a key that was idle may send at once.
	// Default Requests: a fresh key may spend its whole quota at once, then
	// it gets one request every Period/Requests.
	Burst int
}

// interval returns T, the time one request costs (the emission interval),
// and the tolerance B*T, both in nanoseconds.
func (l Limit) interval() (t, tau int64) {
	t = int64(l.Period) / int64(l.Requests)
	return t, t * int64(l.Burst)
}

// Interval returns the time one request costs, Period/Requests, rounded
// down to the nanosecond: a key regains one request per Interval. Stores
// other than the in-memory one use it (with Burst) to run the algorithm.
func (l Limit) Interval() time.Duration { t, _ := l.interval(); return time.Duration(t) }

// Validate returns l with its defaults filled (Name "default", Burst
// Requests), or an error listing every problem. RateLimit and the stores
// call it; a Store receives only validated limits from RateLimit.
func (l Limit) Validate() (Limit, error) {
	if l.Name == "" {
		l.Name = "default"
	}
	if l.Burst == 0 {
		l.Burst = l.Requests
	}
	var errs []error
	if !isSFString(l.Name) {
		errs = append(errs, errors.New("Limit.Name must be printable ASCII without '\"' or '\\'"))
	}
	if l.Requests < 1 {
		errs = append(errs, fmt.Errorf("Limit.Requests is %d; it must be at least 1", l.Requests))
	}
	if l.Period < time.Second || l.Period%time.Second != 0 {
		errs = append(errs, fmt.Errorf("Limit.Period is %v; it must be a whole number of seconds, at least 1s", l.Period))
	}
	if l.Burst < 1 {
		errs = append(errs, fmt.Errorf("Limit.Burst is %d; it must be at least 1", l.Burst))
	}
	if len(errs) == 0 {
		t := int64(l.Period) / int64(l.Requests)
		switch {
		case t < int64(time.Microsecond):
			errs = append(errs, fmt.Errorf("Limit: Period/Requests is %v; it must be at least 1µs", time.Duration(t)))
		case int64(l.Burst) > (1<<62)/t:
			errs = append(errs, errors.New("Limit: Burst*Period/Requests overflows"))
		}
	}
	return l, errors.Join(errs...)
}

// Decision is a Store's answer for one request.
type Decision struct {
	// Allowed reports whether the request may go on; when true the store
	// has counted it.
	Allowed bool
	// Remaining is how many more requests the key may send right now (the
	// "r" of the RateLimit header). 0 when refused.
	Remaining int
	// RetryAfter is how long until the key may send one request again; 0
	// when allowed.
	RetryAfter time.Duration
	// Reset is how long until the key's whole Burst is available again.
	Reset time.Duration
}

// Store holds the state of rate-limit keys. Allow decides one request of
// key under limit and, when it allows it, counts it, atomically: two
// concurrent calls for one key never both get the last request.
//
// key may alias request memory valid only during the call: a Store that
// keeps it must copy it. Keys of different limits (Limit.Name) are
// separate. limit has passed validation: Requests, Period and Burst are
// positive and Name is set. An error means the store could not decide (a
// Redis that is down); RateLimitConfig.FailOpen says what happens then.
//
// Cost per call: NewMemoryStore's is a hash, a clock read, one shard lock
// and a map lookup, with no allocation for a known key. A networked store (the Redis store
// of the module github.com/fxhq/fx/middleware/redisstore) costs
// one round trip running one script.
type Store interface {
	Allow(ctx context.Context, key string, limit Limit) (Decision, error)
}

// localStore is implemented by MemoryStore: it needs no context, which
// saves RateLimit the c.Context() it would otherwise create (two
// allocations) per request.
type localStore interface {
	allow(key string, limit Limit) Decision
}

// ReasonRateLimited is details.reason of the 429 RateLimit answers, and
// ReasonRateLimitUnavailable that of its 503 when the store failed.
const (
	ReasonRateLimited          = "rate_limited"
	ReasonRateLimitUnavailable = "rate_limit_unavailable"
)

var (
	errRateLimited = fx.NewCatalogError(fx.CodeRateLimited,
		"Too many requests: the rate limit is exceeded; retry after the time in Retry-After",
		FailureDetails{Reason: ReasonRateLimited})
	errRateLimitUnavailable = fx.NewCatalogError(fx.CodeServiceUnavailable,
		"The rate limit cannot be checked right now; retry later",
		FailureDetails{Reason: ReasonRateLimitUnavailable})
	errAPIKeyRequired = fx.NewCatalogError(fx.CodeUnauthenticated,
		"Authentication required: this route is rate limited per API key; send one",
		FailureDetails{Reason: ReasonMissingCredentials})
	errNoTenantKey = fx.NewCatalogError(fx.CodeTenantRequired,
		"Tenant required: the rate limit is per tenant and no tenant was resolved",
		FailureDetails{Reason: ReasonMissingTenant})
)

// RateLimitConfig configures RateLimit.
type RateLimitConfig struct {
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

// RateLimit returns middleware that limits how often each key (by default
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
// reach next. A store failure answers as RateLimitConfig.FailOpen says.
// The headers are set before next runs, so they are also on the error
// responses of later middleware and the handler. With several RateLimits
// on one route, each replaces the headers of the one before it: the
// innermost one's are sent.
//
// Cost with the default memory store, measured with
//
//	go test -run '^$' -bench RateLimit -benchmem -cpu 1,2 ./middleware
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
// RateLimit panics on an invalid Limit, listing every problem: it is a
// programming error found at start-up.
func RateLimit(cfg RateLimitConfig) fx.Middleware {
	l, err := cfg.Limit.Validate()
	if err != nil {
		panic("middleware.RateLimit: " + err.Error())
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
	return fx.DeclareAll(r.handle, rateLimitDeclaration(r.local != nil, r.failOpen))
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
			c.App().Logger().Error("middleware.RateLimit: store failed; letting requests through (FailOpen)",
				"policy", r.limit.Name, "error", err)
		}
		return next()
	}
	c.SetHeader("Retry-After", "1")
	return fmt.Errorf("middleware.RateLimit: store failed: %w: %w", errRateLimitUnavailable, err)
}

// ceilSeconds rounds d up to whole seconds.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// isSFString reports whether s can be the content of a structured-field
// String (RFC 8941 §3.3.3) without escapes: printable ASCII but '"' and
// '\'.
func isSFString(s string) bool {
	for i := 0; i < len(s); i++ {
		if ch := s[i]; ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\\' {
			return false
		}
	}
	return true
}

// KeyByIP keys requests by the client's IP address, c.ClientAddr(): the
// connection's peer, or, when the peer is one of Config.TrustedProxies, the
// address those proxies forwarded (X-Forwarded-For or Forwarded, read
// right to left through trusted hops only, so a client cannot pick its own
// bucket by sending the header). An IPv4 address is keyed as its 4 bytes,
// an IPv6 address by its /64 prefix (8 bytes), since one host commonly
// holds a whole /64 and would otherwise get 2^64 buckets. The key is
// binary, not text. When the client is the peer itself (no trusted proxy
// in the way) it costs no allocation: it aliases the request's address,
// valid until the request ends (the nethttp adapter reuses it), which is
// what the Store contract expects; a forwarded address costs one small
// allocation. A connection without an IP address (a unix socket) reports
// 0.0.0.0, so all its requests share one bucket.
//
// Behind a proxy or load balancer that is not listed in
// Config.TrustedProxies every request comes from the proxy's address, so
// all clients share one bucket: list the proxy.
func KeyByIP(c *fx.Ctx) (string, error) {
	ip := c.RequestCtx().RemoteIP()
	if client := c.ClientAddr().Unmap(); client.IsValid() {
		if peer, ok := netip.AddrFromSlice(ip); !ok || peer.Unmap() != client {
			ip = client.AsSlice() // forwarded by a trusted proxy
		}
	}
	if v4 := ip.To4(); v4 != nil {
		ip = v4
	} else if len(ip) == net.IPv6len {
		ip = ip[:8]
	}
	return unsafe.String(unsafe.SliceData(ip), len(ip)), nil
}

// KeyByPrincipal keys requests by the subject of the principal Auth (or
// SetPrincipal) stored: one bucket per user or service, whatever IP it
// calls from. Put Auth before RateLimit. A request without a principal, or
// with an empty Subject, is refused with 401 FX_UNAUTHENTICATED as
// RequireRoles refuses it. No allocation.
//
// Subjects of different schemes share one key space (an API key named
// "alice" and a JWT whose sub is "alice" share a bucket); key by
// KeyByAPIKey on routes that take API keys only if that matters.
func KeyByPrincipal(c *fx.Ctx) (string, error) {
	p, err := requirePrincipal(c)
	if err != nil {
		return "", err
	}
	if p.Subject == "" { // a Verifier's bug; fail closed rather than share one bucket
		return "", unauthenticated(c, schBearer, kInvalid)
	}
	return p.Subject, nil
}

// unauthenticated returns the 401 of failure k with its challenge (that of
// the Auth that ran, or the default one).
func unauthenticated(c *fx.Ctx, s scheme, k kind) error {
	if a, ok := c.Value(authKey{}).(*authenticator); ok {
		return a.fail(c, s, k)
	}
	c.SetHeader("WWW-Authenticate", defaultChallenge)
	return authFailures[s][k]
}

// KeyByAPIKey keys requests by the API key they were authenticated with:
// the Subject of a principal of scheme SchemeAPIKey (the name NewAPIKeys
// gives the key), never the secret itself, so no secret is written to a
// store. A request authenticated otherwise, or not at all, is refused with
// 401 FX_UNAUTHENTICATED and an APIKey challenge. No allocation (the
// refusal's challenge string aside, when no Auth ran).
func KeyByAPIKey(c *fx.Ctx) (string, error) {
	p, err := requirePrincipal(c)
	if err != nil {
		return "", err
	}
	if p.Scheme != SchemeAPIKey || p.Subject == "" {
		ch := `APIKey realm="` + DefaultRealm + `", header="` + DefaultAPIKeyHeader + `"`
		if a, ok := c.Value(authKey{}).(*authenticator); ok {
			ch = a.challenges[schAPIKey][kMissing]
		}
		c.SetHeader("WWW-Authenticate", ch)
		return "", errAPIKeyRequired
	}
	return p.Subject, nil
}

// KeyByTenant keys requests by the tenant Tenant resolved: one bucket per
// tenant, shared by all its users. Put Tenant before RateLimit. A request
// without a tenant is refused with 400 FX_TENANT_REQUIRED (reason
// "missing_tenant"). No allocation.
func KeyByTenant(c *fx.Ctx) (string, error) {
	if id, ok := TenantFrom(c); ok {
		return id, nil
	}
	return "", errNoTenantKey
}
