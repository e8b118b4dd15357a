// Package client is a Go client for fx services. It speaks the fx error
// contract: every error envelope an fx server sends,
//
//	{"error":{"code":"FX_RATE_LIMITED","message":"...","details":{...}}}
//
// comes back as an *fx.Error (the response's status, the code, the message
// and the details decoded as JSON), so callers branch on the code
// constants with errors.As, never on strings:
//
//	var e *fx.Error
//	if errors.As(err, &e) && e.Code == fx.ErrorCodes.NotFound { ... }
//
// and it retries only when a retry is safe (see Retry): idempotent
// methods, and POST or PATCH calls carrying an Idempotency-Key that the
// client generates once per logical call and sends again, unchanged, on
// every attempt, so a server using the idempotency middleware runs the
// handler at most once however many attempts reach it. Waits grow
// exponentially with full jitter, honour the server's Retry-After and
// RateLimit headers, stop at the context's deadline, and draw on a retry
// budget shared by every call of a Client, so that a fleet of clients
// cannot multiply the load on a server that is already failing.
//
// Requests go through fasthttp's client by default, or through a
// net/http client (Config.HTTPClient). A Client is safe for concurrent
// use; build one per service and keep it. Generated clients (ogen,
// oapi-codegen) and plain net/http callers use it through HTTPClient or
// RoundTripper, with the same retries; see docs/clients.md.
//
// Redirects: both transports follow a redirect as net/http does, sending
// at most 10 requests in a row (then ErrTooManyRedirects, never retried).
// 301, 302 and 303 turn a method other than GET and HEAD into a GET
// without a body; 307 and 308 send the same method, body and
// Idempotency-Key again. A redirect to another origin (another scheme,
// host or port than the call's URL) sends no credentials: Authorization,
// Proxy-Authorization, Cookie, Cookie2, X-Api-Key, every header of
// Config.Header and every name in Config.CredentialHeaders are removed
// from it (net/http alone removes only Authorization and cookies, and
// only for another domain). A redirect without a Location, or to a
// scheme other than http and https, is the answer.
//
// Cost: a call allocates its request and response bodies, the decoded
// result and, on a POST or PATCH, a 16-byte key; the retry logic itself allocates nothing on a
// call that succeeds at its first attempt. The RoundTripper adds a copy of
// the request's body and the *http.Response it returns.
package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fxhq/fx"
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// Config configures a Client. The zero value of every field but BaseURL
// is a working default.
type Config struct {
	// BaseURL is prefixed to every request path, e.g.
	// "http://127.0.0.1:8080". Required.
	BaseURL string
	// Header is sent with every request (an Authorization, a tenant
	// header). Per-call headers (Request.Header) are added after it.
	Header http.Header
	// HTTPClient, when set, sends the requests through net/http instead
	// of fasthttp. Its own Timeout still applies to each attempt. The
	// Client uses a copy of it whose CheckRedirect also strips credentials
	// on a redirect to another origin (see Redirects in the package
	// documentation); the value itself is not modified.
	HTTPClient *http.Client
	// FastClient is the fasthttp client used when HTTPClient is nil; nil
	// builds one. fasthttp's own retries are switched off on it either
	// way (RetryIfErr refuses every retry): retries are this package's
	// decision alone. fasthttp copies its settings into a per-host client
	// on the first request to each host, so a FastClient that already
	// sent requests keeps its old settings for those hosts (its own
	// retries included); MaxResponseBytes holds whatever its history,
	// since the Client reads every answer of a FastClient it was given as
	// a stream and bounds it itself (4 more allocations, about 180 B,
	// per call than with the client New builds: BenchmarkDo). A fasthttp attempt cannot be interrupted: it ends at its
	// deadline (AttemptTimeout or the context's deadline, whichever comes
	// first), and a cancelled context stops the call before the next
	// attempt; with HTTPClient, cancellation ends the attempt at once.
	FastClient *fasthttp.Client
	// AttemptTimeout bounds each attempt; 0 means 10 s. The whole call is
	// bounded by the context's deadline.
	AttemptTimeout time.Duration
	// Retry is the retry policy; zero fields take the Default* constants
	// of Retry (4 attempts, 50 ms to 2 s of backoff, 30 s at most per wait).
	Retry Retry
	// Budget, shared by every call of the Client, bounds how many retries
	// it sends per window; nil means NewBudget(BudgetConfig{}). Share one
	// Budget between Clients of one service to bound them together.
	Budget *Budget
	// MaxResponseBytes bounds the body of one answer, so that a server
	// cannot make the client buffer without limit; 0 means 32 MiB. A
	// longer answer fails the call with ErrResponseTooLarge (in a
	// TransportError; never retried, the same answer would come back).
	// Both transports read at most MaxResponseBytes+1 bytes of it, and
	// refuse at once an answer whose Content-Length is over the limit.
	MaxResponseBytes int
	// MaxRequestBytes bounds a request body that the RoundTripper buffers
	// so that it can send it again on a retry; 0 means 32 MiB. A longer
	// body fails the call with ErrRequestTooLarge before anything is sent.
	// Do and Call take their body as bytes and are not bounded by it.
	MaxRequestBytes int
	// CredentialHeaders names request headers, besides Authorization,
	// Proxy-Authorization, Cookie, X-Api-Key and every header of Header,
	// that carry credentials (an API key header of another name). All of
	// them are removed from a request that a redirect sends to another
	// origin (see Redirects in the package documentation).
	CredentialHeaders []string
	// NoIdempotencyKey stops the client generating an Idempotency-Key for
	// POST and PATCH calls. Such calls are then never retried (unless the
	// caller sets the key itself, see Request.IdempotencyKey).
	NoIdempotencyKey bool
}

// Client calls an fx service. Build it with New.
type Client struct {
	base     string
	origin   *url.URL // BaseURL's scheme and host: where Header is sent
	header   http.Header
	send     transport
	timeout  time.Duration
	retry    Retry
	budget   *Budget
	noKey    bool
	maxBody  int64 // MaxRequestBytes
	redirect *redirects
	// newTimer starts the wait before a retry (time.NewTimer; a test
	// replaces it to record the waits instead of sleeping through them).
	newTimer func(time.Duration) *time.Timer
}

// New returns a Client for cfg. It panics when BaseURL is empty or not an
// absolute http or https URL (a programming error found at start-up).
func New(cfg Config) *Client {
	if cfg.BaseURL == "" {
		panic("client: Config.BaseURL is required")
	}
	origin, err := url.Parse(cfg.BaseURL)
	if err != nil || (origin.Scheme != "http" && origin.Scheme != "https") || origin.Host == "" {
		panic(fmt.Sprintf("client: Config.BaseURL %q is not an absolute http or https URL", cfg.BaseURL))
	}
	c := &Client{
		base:     strings.TrimSuffix(cfg.BaseURL, "/"),
		origin:   origin,
		header:   cfg.Header,
		timeout:  cfg.AttemptTimeout,
		retry:    cfg.Retry.withDefaults(),
		budget:   cfg.Budget,
		noKey:    cfg.NoIdempotencyKey,
		maxBody:  int64(cfg.MaxRequestBytes),
		redirect: newRedirects(cfg.Header, cfg.CredentialHeaders),
		newTimer: time.NewTimer,
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxResponseBytes
	}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Second
	}
	if c.budget == nil {
		c.budget = NewBudget(BudgetConfig{})
	}
	limit := cfg.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	if cfg.HTTPClient != nil {
		c.send = newStdTransport(cfg.HTTPClient, limit, c.redirect)
	} else {
		fc := cfg.FastClient
		if fc == nil {
			fc = &fasthttp.Client{Name: "fx-client", MaxResponseBodySize: limit}
		}
		fc.RetryIfErr = func(*fasthttp.Request, int, error) (bool, bool) { return false, false }
		c.send = &fastTransport{c: fc, limit: limit, stream: cfg.FastClient != nil, redirect: c.redirect}
	}
	return c
}

// CloseIdleConnections closes the connections the Client keeps open
// between calls (its fasthttp.Client's, or its http.Client's transport's)
// that are not in use; a later call opens new ones. A server shutting
// down closes an idle keep-alive connection the draining way: it waits,
// up to a second, for the client to close its side, which a fasthttp
// client does only when it next uses the connection. Call it when done
// with a server (in a test, before the server shuts down) so that its
// shutdown does not wait for those connections.
func (c *Client) CloseIdleConnections() { c.send.closeIdle() }

// Request is one logical call: however many attempts it takes, they all
// send the same method, path, headers, body and Idempotency-Key.
type Request struct {
	Method string
	// Path is appended to Config.BaseURL; it may carry a query string.
	Path   string
	Header http.Header
	// Body is sent as is, with Content-Type application/json unless
	// Header sets another. Call marshals its input into it.
	Body []byte
	// IdempotencyKey, when set, is sent as the Idempotency-Key header on
	// every attempt (as a quoted string), unless Header already carries
	// one, which is then sent as is. Left empty on a POST or PATCH, Do
	// generates one and stores it here (unless Config.NoIdempotencyKey),
	// so a caller that sends the same Request again later reuses it.
	IdempotencyKey string
}

// Response is a successful (status < 400) answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Attempts is how many attempts the call took (1 = no retry).
	Attempts int
}

// UnexpectedResponseError is an error status (400 or more) whose body is
// not an fx envelope: a proxy's error page, a server that is not fx.
// fx servers always send an envelope, which Do returns as an *fx.Error.
type UnexpectedResponseError struct {
	Status      int
	ContentType string
	Body        []byte // at most the first 512 bytes
}

// Error describes the answer: its status, content type and the start of
// its body.
func (e *UnexpectedResponseError) Error() string {
	return fmt.Sprintf("client: status %d without an error envelope (%s): %.80q", e.Status, e.ContentType, e.Body)
}

// DefaultMaxResponseBytes is Config.MaxResponseBytes' default.
const DefaultMaxResponseBytes = 32 << 20

// ErrResponseTooLarge is the error of an attempt whose answer is longer
// than Config.MaxResponseBytes (errors.Is finds it in the TransportError).
var ErrResponseTooLarge = errors.New("client: response body over Config.MaxResponseBytes")

// ErrRequestTooLarge is the error of a RoundTripper call whose request
// body is longer than Config.MaxRequestBytes (errors.Is finds it in the
// TransportError); nothing was sent.
var ErrRequestTooLarge = errors.New("client: request body over Config.MaxRequestBytes")

// ErrBudgetExhausted is joined to the last error of a call that wanted to
// retry but found the Client's retry budget spent (errors.Is finds it).
var ErrBudgetExhausted = errors.New("client: retry budget exhausted")

// Do sends r, retrying as the policy allows (see Retry), and returns the
// first successful response, or the last attempt's error: an *fx.Error
// for an envelope, an *UnexpectedResponseError for another error status,
// or the transport's error (wrapped, with errors.Is finding
// context.DeadlineExceeded when the context ended the call).
func (c *Client) Do(ctx context.Context, r *Request) (*Response, error) {
	resp, err := c.run(ctx, r, c.base+r.Path, c.header)
	if se, ok := err.(*statusError); ok {
		return nil, se.err // the caller sees the *fx.Error itself
	}
	return resp, err
}

// run is Do's retry loop for r sent to url with the headers base, then
// r.Header. An error answer that ends the call (not retryable, attempts
// used up, a wait longer than MaxWait or than the context's deadline)
// comes back as the *statusError itself, so that the RoundTripper can hand
// the answer on unchanged; a call that ends because the budget is spent
// or the context ended while waiting returns that answer's error joined
// with ErrBudgetExhausted or the context's error.
func (c *Client) run(ctx context.Context, r *Request, url string, base http.Header) (*Response, error) {
	if r.IdempotencyKey == "" && !c.noKey && (r.Method == http.MethodPost || r.Method == http.MethodPatch) && r.Header.Get(idempotencyKey) == "" {
		r.IdempotencyKey = NewIdempotencyKey()
	}
	safe := idempotentMethod(r.Method) || r.IdempotencyKey != "" || r.Header.Get(idempotencyKey) != ""
	c.budget.request()
	for attempt := 1; ; attempt++ {
		a, err := c.attempt(ctx, r, url, base)
		if err == nil {
			a.Attempts = attempt
			return a, nil
		}
		wait, retry := c.retry.decide(err, attempt, safe)
		if !retry {
			return nil, err
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return nil, err // the server's hint or the backoff outlives the call
		}
		last := err
		if se, ok := err.(*statusError); ok {
			last = se.err
		}
		if !c.budget.retry() {
			return nil, errors.Join(last, ErrBudgetExhausted)
		}
		t := c.newTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(last, ctx.Err())
		case <-t.C:
		}
	}
}

// Call sends method path with in marshalled as its JSON body (nil: no
// body) and decodes a successful response's JSON body into out (nil:
// discarded). Errors are those of Do.
func (c *Client) Call(ctx context.Context, method, path string, in, out any) error {
	r := &Request{Method: method, Path: path}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("client: encoding the body of %s %s: %w", method, path, err)
		}
		r.Body = b
	}
	resp, err := c.Do(ctx, r)
	if err != nil || out == nil || len(resp.Body) == 0 {
		return err
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("client: decoding the answer of %s %s: %w", method, path, err)
	}
	return nil
}

// idempotencyKey is the request header that carries the key.
const idempotencyKey = "Idempotency-Key"

// attempt sends r once and turns an error status into its error value.
func (c *Client) attempt(ctx context.Context, r *Request, url string, base http.Header) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	h := make(http.Header, len(base)+len(r.Header)+2)
	for k, v := range base {
		h[k] = v
	}
	for k, v := range r.Header {
		h[k] = v
	}
	if len(r.Body) > 0 && h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	if r.IdempotencyKey != "" && len(r.Header[idempotencyKey]) == 0 {
		h.Set(idempotencyKey, quoteKey(r.IdempotencyKey))
	}
	resp, err := c.send.roundTrip(ctx, r.Method, url, h, r.Body, deadline)
	if err != nil {
		return nil, &TransportError{Method: r.Method, URL: url, Sent: !notSent(err), Err: err}
	}
	if resp.Status < 400 {
		return resp, nil
	}
	return nil, &statusError{err: decodeError(resp), header: resp.Header, resp: resp}
}

// decodeError returns the *fx.Error of an envelope, or an
// *UnexpectedResponseError for any other body.
func decodeError(resp *Response) error {
	var env struct {
		Error *struct {
			Code    string          `json:"code"`
			Message string          `json:"message"`
			Details json.RawMessage `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(resp.Body, &env) == nil && env.Error != nil && env.Error.Code != "" {
		e := &fx.Error{Status: resp.Status, Code: env.Error.Code, Message: env.Error.Message}
		if len(env.Error.Details) > 0 {
			var d any
			if json.Unmarshal(env.Error.Details, &d) == nil {
				e.Details = d
			}
		}
		return e
	}
	body := resp.Body
	if len(body) > 512 {
		body = body[:512]
	}
	return &UnexpectedResponseError{Status: resp.Status, ContentType: resp.Header.Get("Content-Type"), Body: body}
}

// statusError carries an error status's headers (Retry-After,
// RateLimit) to the retry decision, and the answer itself to the
// RoundTripper; Do returns only its err.
type statusError struct {
	err    error
	header http.Header
	resp   *Response
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// TransportError is a failure to get any answer: the connection could not
// be made, broke, or an attempt timed out. Sent says whether the request
// may have reached the server (false only when the connection was never
// made); Do retries a request that may have been sent only when a retry is
// safe.
type TransportError struct {
	Method, URL string
	Sent        bool
	Err         error
}

// Error names the request and the transport's error.
func (e *TransportError) Error() string {
	return "client: " + e.Method + " " + e.URL + ": " + e.Err.Error()
}

// Unwrap returns the transport's error, so errors.Is finds
// context.DeadlineExceeded or a net.Error behind it.
func (e *TransportError) Unwrap() error { return e.Err }

// quoteKey writes key as the sf-string the IETF draft makes
// Idempotency-Key: in double quotes, with '"' and '\' escaped.
func quoteKey(key string) string {
	if !strings.ContainsAny(key, `"\`) {
		return `"` + key + `"`
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(key); i++ {
		if key[i] == '"' || key[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(key[i])
	}
	b.WriteByte('"')
	return b.String()
}

// NewIdempotencyKey returns a fresh random key: 32 hexadecimal digits
// (128 bits from crypto/rand).
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
