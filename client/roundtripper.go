package client

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// RoundTripper returns an http.RoundTripper that sends each request
// through c, so that a client that takes one (or an *http.Client, see
// HTTPClient) gets c's retries: an ogen or oapi-codegen client generated
// from an fx service's OpenAPI document, a hand-written net/http caller.
//
// One RoundTrip is one logical call, with Do's rules (see Retry): an
// idempotent method, or a POST or PATCH carrying an Idempotency-Key, is
// retried on a transient failure, after the server's Retry-After or
// RateLimit hint, within the context's deadline (req.Context()), Retry's
// MaxWait and the Client's Budget. A POST or PATCH without an
// Idempotency-Key header gets one, generated once and sent unchanged on
// every attempt (unless Config.NoIdempotencyKey); a key the request
// carries is sent as is. The request body is read once, at most
// Config.MaxRequestBytes of it, and sent again from memory on each
// attempt; req itself is not modified. Config.Header is added only to
// requests for BaseURL's origin (scheme, host and port), so its
// credentials never go to another service the caller names. Redirects are
// followed inside, as by Do (see Redirects in the package documentation).
//
// What the caller sees:
//
//   - a success (status < 400): the response, its body in memory;
//   - an error status, when the call ends without a further retry (the
//     status is not transient, the request is not safe to retry, the
//     attempts are used up, or the next wait is longer than MaxWait or
//     than what is left of the context): the last answer unchanged, with
//     a nil error, so that a generated client decodes the error envelope
//     it declares for that status into its typed error;
//   - an error, with a nil response, when no answer can be handed on: a
//     *TransportError for a connection that could not be made or broke,
//     an attempt that timed out, an answer over MaxResponseBytes
//     (ErrResponseTooLarge), a redirect loop (ErrTooManyRedirects) or a
//     body over MaxRequestBytes (ErrRequestTooLarge); the last answer's
//     error joined with ErrBudgetExhausted when a retry was due but the
//     Budget was spent, or with the context's error when it ended during
//     a wait.
//
// An error answer's error is the *fx.Error of its envelope (an
// *UnexpectedResponseError for another body), and errors.As finds it
// through the *url.Error of http.Client and the wrapping of a generated
// client (ogen's and oapi-codegen's both keep Unwrap):
//
//	var e *fx.Error
//	if errors.As(err, &e) && errors.Is(err, client.ErrBudgetExhausted) { ... }
//
// Cost, on top of Do's: a copy of the request's body, the URL as a string
// and the *http.Response. A GET through HTTPClient on the fasthttp
// transport makes 30 allocations, http.Client's own and the caller's
// request included, against 17 for the same call through Do
// (BenchmarkRoundTripper, BenchmarkDo).
func (c *Client) RoundTripper() http.RoundTripper { return roundTripper{c} }

// HTTPClient returns an *http.Client whose Transport is c.RoundTripper(),
// for the constructors that take one:
//
//	api.NewClient(url, api.WithClient(c.HTTPClient()))        // ogen
//	api.NewClientWithResponses(url, api.WithHTTPClient(c.HTTPClient())) // oapi-codegen
//
// It has no Timeout (each attempt is bounded by Config.AttemptTimeout,
// the call by the request's context) and no cookie jar, and it does not
// follow redirects itself: the RoundTripper has already followed them, so
// a redirect it hands on (one without a Location) is the answer. A new
// *http.Client is returned on each call; they all share c.
func (c *Client) HTTPClient() *http.Client {
	return &http.Client{
		Transport:     c.RoundTripper(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type roundTripper struct{ c *Client }

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.c
	u := req.URL.String()
	body, err := t.body(req)
	if err != nil {
		return nil, &TransportError{Method: req.Method, URL: u, Err: err}
	}
	r := &Request{Method: req.Method, Header: req.Header, Body: body}
	var base http.Header
	if sameOrigin(c.origin, req.URL) {
		base = c.header
	}
	resp, err := c.run(req.Context(), r, u, base)
	if se, ok := err.(*statusError); ok {
		resp, err = se.resp, nil // the final answer, for the caller to decode
	}
	if err != nil {
		return nil, err
	}
	return &http.Response{
		Status:        strconv.Itoa(resp.Status) + " " + http.StatusText(resp.Status),
		StatusCode:    resp.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        resp.Header,
		Body:          io.NopCloser(bytes.NewReader(resp.Body)),
		ContentLength: int64(len(resp.Body)),
		Request:       req,
	}, nil
}

// body reads and closes req's body, at most Config.MaxRequestBytes of it.
func (t roundTripper) body(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	limit := t.c.maxBody
	if req.ContentLength > limit {
		return nil, ErrRequestTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("client: reading the request body: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, ErrRequestTooLarge
	}
	return b, nil
}
