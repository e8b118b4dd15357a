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
//	if errors.As(err, &e) && e.Code == fx.CodeNotFound { ... }
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
// use; build one per service and keep it.
//
// Cost: a call allocates its request and response bodies, the decoded
// result and, on a POST or PATCH, a 16-byte key; the retry logic itself
// allocates nothing on a call that succeeds at its first attempt.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	// of fasthttp. Its own Timeout still applies to each attempt.
	HTTPClient *http.Client
	// FastClient is the fasthttp client used when HTTPClient is nil; nil
	// builds one. fasthttp's own retries are switched off on it either
	// way (RetryIfErr refuses every retry): retries are this package's
	// decision alone. A fasthttp attempt cannot be interrupted: it ends at
	// its deadline (AttemptTimeout or the context's deadline, whichever
	// comes first), and a cancelled context stops the call before the
	// next attempt; with HTTPClient, cancellation ends the attempt at once.
	FastClient *fasthttp.Client
	// AttemptTimeout bounds each attempt; 0 means 10 s. The whole call is
	// bounded by the context's deadline.
	AttemptTimeout time.Duration
	// Retry is the retry policy; the zero value is DefaultRetry.
	Retry Retry
	// Budget, shared by every call of the Client, bounds how many retries
	// it sends per window; nil means NewBudget(BudgetConfig{}). Share one
	// Budget between Clients of one service to bound them together.
	Budget *Budget
	// MaxResponseBytes bounds the body of one answer, so that a server
	// cannot make the client buffer without limit; 0 means 32 MiB. A
	// longer answer fails the attempt with ErrResponseTooLarge (a
	// TransportError, retried only when a retry is safe).
	MaxResponseBytes int
	// NoIdempotencyKey stops the client generating an Idempotency-Key for
	// POST and PATCH calls. Such calls are then never retried (unless the
	// caller sets the key itself, see Request.IdempotencyKey).
	NoIdempotencyKey bool
}

// Client calls an fx service. Build it with New.
type Client struct {
	base    string
	header  http.Header
	send    transport
	timeout time.Duration
	retry   Retry
	budget  *Budget
	noKey   bool
}

// New returns a Client for cfg. It panics when BaseURL is empty (a
// programming error found at start-up).
func New(cfg Config) *Client {
	if cfg.BaseURL == "" {
		panic("client: Config.BaseURL is required")
	}
	c := &Client{
		base:    strings.TrimSuffix(cfg.BaseURL, "/"),
		header:  cfg.Header,
		timeout: cfg.AttemptTimeout,
		retry:   cfg.Retry.withDefaults(),
		budget:  cfg.Budget,
		noKey:   cfg.NoIdempotencyKey,
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
		c.send = stdTransport{cfg.HTTPClient, int64(limit)}
	} else {
		fc := cfg.FastClient
		if fc == nil {
			fc = &fasthttp.Client{Name: "fx-client"}
		}
		fc.RetryIfErr = func(*fasthttp.Request, int, error) (bool, bool) { return false, false }
		fc.MaxResponseBodySize = limit
		c.send = fastTransport{fc}
	}
	return c
}

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
	// every attempt. Left empty on a POST or PATCH, Do generates one and
	// stores it here (unless Config.NoIdempotencyKey), so a caller that
	// sends the same Request again later reuses it.
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

// ErrBudgetExhausted is joined to the last error of a call that wanted to
// retry but found the Client's retry budget spent (errors.Is finds it).
var ErrBudgetExhausted = errors.New("client: retry budget exhausted")

// Do sends r, retrying as the policy allows (see Retry), and returns the
// first successful response, or the last attempt's error: an *fx.Error
// for an envelope, an *UnexpectedResponseError for another error status,
// or the transport's error (wrapped, with errors.Is finding
// context.DeadlineExceeded when the context ended the call).
func (c *Client) Do(ctx context.Context, r *Request) (*Response, error) {
	if r.IdempotencyKey == "" && !c.noKey && (r.Method == http.MethodPost || r.Method == http.MethodPatch) {
		r.IdempotencyKey = NewIdempotencyKey()
	}
	safe := idempotentMethod(r.Method) || r.IdempotencyKey != ""
	url := c.base + r.Path
	c.budget.request()
	for attempt := 1; ; attempt++ {
		a, err := c.attempt(ctx, r, url)
		if err == nil {
			a.Attempts = attempt
			return a, nil
		}
		wait, retry := c.retry.decide(err, attempt, safe)
		if se, ok := err.(*statusError); ok {
			err = se.err // the caller sees the *fx.Error itself
		}
		if !retry {
			return nil, err
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return nil, err // the server's hint or the backoff outlives the call
		}
		if !c.budget.retry() {
			return nil, errors.Join(err, ErrBudgetExhausted)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, errors.Join(err, ctx.Err())
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

// attempt sends r once and turns an error status into its error value.
func (c *Client) attempt(ctx context.Context, r *Request, url string) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	h := make(http.Header, len(c.header)+len(r.Header)+2)
	for k, v := range c.header {
		h[k] = v
	}
	for k, v := range r.Header {
		h[k] = v
	}
	if len(r.Body) > 0 && h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	if r.IdempotencyKey != "" {
		h.Set("Idempotency-Key", `"`+r.IdempotencyKey+`"`)
	}
	resp, err := c.send.roundTrip(ctx, r.Method, url, h, r.Body, deadline)
	if err != nil {
		return nil, &TransportError{Method: r.Method, URL: url, Sent: !notSent(err), Err: err}
	}
	if resp.Status < 400 {
		return resp, nil
	}
	return nil, &statusError{err: decodeError(resp), header: resp.Header}
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
// RateLimit) to the retry decision; Do returns only its err.
type statusError struct {
	err    error
	header http.Header
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

// NewIdempotencyKey returns a fresh random key: 32 hexadecimal digits
// (128 bits from crypto/rand).
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// transport sends one attempt.
type transport interface {
	roundTrip(ctx context.Context, method, url string, h http.Header, body []byte, deadline time.Time) (*Response, error)
}

type fastTransport struct{ c *fasthttp.Client }

func (t fastTransport) roundTrip(_ context.Context, method, url string, h http.Header, body []byte, deadline time.Time) (*Response, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	for k, vs := range h {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.SetBodyRaw(body)
	if err := t.c.DoDeadline(req, resp, deadline); err != nil {
		if errors.Is(err, fasthttp.ErrBodyTooLarge) {
			err = fmt.Errorf("%w (%w)", ErrResponseTooLarge, err)
		}
		return nil, err
	}
	out := &Response{Status: resp.StatusCode(), Header: make(http.Header), Body: bytes.Clone(resp.Body())}
	for k, v := range resp.Header.All() {
		out.Header.Add(string(k), string(v))
	}
	return out, nil
}

type stdTransport struct {
	c     *http.Client
	limit int64
}

func (t stdTransport) roundTrip(ctx context.Context, method, url string, h http.Header, body []byte, deadline time.Time) (*Response, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = h
	resp, err := t.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, t.limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > t.limit {
		return nil, ErrResponseTooLarge
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}
