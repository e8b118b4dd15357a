package client

import (
	"errors"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// Retry is the retry policy of a Client.
//
// A failed attempt is retried when all of these hold:
//
//   - the failure is transient: no connection could be made; the
//     connection broke or the attempt timed out (an answer over
//     Config.MaxResponseBytes is not transient); or the server answered
//     408, 429, 502, 503 or 504, or 409 FX_IDEMPOTENCY_IN_FLIGHT (the
//     first attempt with the same key is still running);
//   - a retry is safe: the request was never sent (no connection), or its
//     method is idempotent (GET, HEAD, OPTIONS, TRACE, PUT, DELETE), or it
//     carries an Idempotency-Key, which the server uses to run it at most
//     once;
//   - fewer than MaxAttempts attempts were made, the wait is at most
//     MaxWait and fits in the context's deadline, and the Client's Budget
//     allows one more retry.
//
// The wait before attempt n+1 is a random duration in [0, min(MaxDelay,
// BaseDelay·2ⁿ⁻¹)] ("full jitter"), or the server's hint when that is
// longer: Retry-After (seconds or an HTTP date), or the t= of a RateLimit
// header whose r= is 0. A hint is capped at one hour whatever it says (a
// number of seconds beyond time.Duration's range included), and a wait
// longer than MaxWait, or than what is left of the context, is not
// waited: the call ends at once with the answer that asked for it.
type Retry struct {
	// MaxAttempts is the most attempts a call makes, the first included;
	// 0 means DefaultMaxAttempts (4); 1 turns retries off.
	MaxAttempts int
	// BaseDelay is the backoff's first ceiling; 0 means DefaultBaseDelay
	// (50 ms).
	BaseDelay time.Duration
	// MaxDelay caps the backoff (not a server's hint); 0 means
	// DefaultMaxDelay (2 s).
	MaxDelay time.Duration
	// MaxWait is the longest the client waits before one retry, a
	// server's Retry-After or RateLimit hint included: a call whose next
	// wait would be longer ends at once with the answer that asked for
	// it, so that a call without a context deadline is not parked for as
	// long as the server says. 0 means DefaultMaxWait (30 s); a negative
	// value lifts the bound (hints stay capped at one hour, and the
	// context's deadline still applies).
	MaxWait time.Duration
}

// Defaults of Retry: the policy of a Config whose Retry is the zero value.
const (
	DefaultMaxAttempts = 4
	DefaultBaseDelay   = 50 * time.Millisecond
	DefaultMaxDelay    = 2 * time.Second
	DefaultMaxWait     = 30 * time.Second
)

func (r Retry) withDefaults() Retry {
	if r.MaxAttempts == 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = DefaultBaseDelay
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = DefaultMaxDelay
	}
	if r.MaxWait == 0 {
		r.MaxWait = DefaultMaxWait
	}
	return r
}

// decide says whether attempt number attempt, which failed with err, is
// to be retried, and after how long.
func (r Retry) decide(err error, attempt int, safe bool) (time.Duration, bool) {
	if attempt >= r.MaxAttempts {
		return 0, false
	}
	var hint time.Duration
	var te *TransportError
	var se *statusError
	switch {
	case errors.As(err, &te):
		if te.Sent && !safe || errors.Is(err, ErrResponseTooLarge) || errors.Is(err, ErrTooManyRedirects) { // the same answer would come back
			return 0, false
		}
	case errors.As(err, &se):
		if !safe || !transientStatus(se.err) {
			return 0, false
		}
		hint = serverHint(se.header, time.Now())
	default:
		return 0, false
	}
	ceiling := r.BaseDelay << (attempt - 1)
	if ceiling > r.MaxDelay || ceiling <= 0 {
		ceiling = r.MaxDelay
	}
	wait := max(time.Duration(rand.Int64N(int64(ceiling)+1)), hint)
	if r.MaxWait > 0 && wait > r.MaxWait {
		return 0, false // the server asks for longer than this client waits
	}
	return wait, true
}

// transientStatus reports whether an error answer may succeed if sent
// again unchanged.
func transientStatus(err error) bool {
	var e *fx.Error
	if errors.As(err, &e) {
		switch e.Status {
		case 408, 429, 502, 503, 504:
			return true
		case 409:
			return e.Code == fx.ErrorCodes.IdempotencyInFlight
		}
		return false
	}
	var u *UnexpectedResponseError
	if errors.As(err, &u) {
		switch u.Status {
		case 408, 429, 502, 503, 504:
			return true
		}
	}
	return false
}

// idempotentMethod reports whether RFC 9110 §9.2.2 calls method
// idempotent.
func idempotentMethod(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// notSent reports whether err proves the request never left: the
// connection could not be made.
func notSent(err error) bool {
	if errors.Is(err, fasthttp.ErrDialTimeout) || errors.Is(err, fasthttp.ErrNoFreeConns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// maxHint caps every server hint, so that a hostile or broken header
// cannot park a call.
const maxHint = time.Hour

// serverHint is how long the server asked the client to wait: Retry-After
// (delay-seconds or an HTTP date), else the t= of a RateLimit item whose
// r= is 0 (draft-ietf-httpapi-ratelimit-headers). Every hint is capped at
// maxHint, a number of seconds too large for a time.Duration (or for a
// uint64) included: it saturates instead of wrapping round to a short or
// negative wait.
func serverHint(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, ok := seconds(v); ok {
			d = s
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now) // Sub saturates: a date far ahead is no overflow
		}
	} else if v := h.Get("RateLimit"); v != "" {
		for _, item := range strings.Split(v, ",") {
			if r, ok := seconds(param(item, "r")); ok && r == 0 {
				if t, ok := seconds(param(item, "t")); ok {
					d = max(d, t)
				}
			}
		}
	}
	return min(max(d, 0), maxHint)
}

// seconds reads delay-seconds (RFC 9110 §10.2.3: one or more digits) as a
// duration capped at maxHint; ok is false when v is not digits only.
func seconds(v string) (d time.Duration, ok bool) {
	if v == "" {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n > uint64(maxHint/time.Second) { // err: beyond uint64 (digits only, so a range error)
		return maxHint, true
	}
	return time.Duration(n) * time.Second, true
}

// param returns the value of parameter name in one RateLimit item
// (`"name";r=0;t=12`), or "".
func param(item, name string) string {
	for _, p := range strings.Split(item, ";")[1:] {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && k == name {
			return v
		}
	}
	return ""
}

// BudgetConfig sizes a Budget.
type BudgetConfig struct {
	// Ratio is the share of calls that may be retried within a window: 0
	// means 0.2 (at most one retry per five calls, on top of MinRetries).
	Ratio float64
	// MinRetries is allowed per window whatever the number of calls, so a
	// quiet client can still retry; 0 means 10.
	MinRetries int
	// Window is the accounting period; 0 means 10 s.
	Window time.Duration
}

// Budget bounds the retries of the calls that share it: within each
// window, at most MinRetries + ⌊Ratio × calls started in the window⌋.
// When a server fails every request, the load it sees from clients that
// share a budget is bounded by 1 + Ratio times their call rate, instead
// of MaxAttempts times. It is safe for concurrent use; a call takes its
// mutex once, plus once per retry.
type Budget struct {
	cfg     BudgetConfig
	mu      sync.Mutex
	start   time.Time
	calls   int
	retries int
	now     func() time.Time
}

// NewBudget returns a Budget sized by cfg.
func NewBudget(cfg BudgetConfig) *Budget {
	if cfg.Ratio <= 0 {
		cfg.Ratio = 0.2
	}
	if cfg.MinRetries <= 0 {
		cfg.MinRetries = 10
	}
	if cfg.Window <= 0 {
		cfg.Window = 10 * time.Second
	}
	return &Budget{cfg: cfg, now: time.Now}
}

// roll starts a new window when the current one is over; b.mu is held.
func (b *Budget) roll() {
	if now := b.now(); now.Sub(b.start) >= b.cfg.Window {
		b.start, b.calls, b.retries = now, 0, 0
	}
}

// request counts a call.
func (b *Budget) request() {
	b.mu.Lock()
	b.roll()
	b.calls++
	b.mu.Unlock()
}

// retry takes one retry from the budget, and reports false when none is
// left in this window.
func (b *Budget) retry() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.roll()
	if b.retries >= b.cfg.MinRetries+int(b.cfg.Ratio*float64(b.calls)) {
		return false
	}
	b.retries++
	return true
}
