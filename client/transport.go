package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// transport sends one attempt, following redirects (see Redirects).
type transport interface {
	roundTrip(ctx context.Context, method, url string, h http.Header, body []byte, deadline time.Time) (*Response, error)
	closeIdle()
}

// fastTransport sends attempts through a fasthttp.Client. A client that
// New built has MaxResponseBodySize set to the limit from its first
// request, and fasthttp bounds the answer as it buffers it. A client the
// caller gave (Config.FastClient) may have met hosts before New, and
// fasthttp keeps the per-host settings of that first meeting: for it every
// answer is asked for as a stream (Response.StreamBody, a per-request
// setting) and read here, at most limit+1 bytes, so that the bound holds
// whatever the client's history.
type fastTransport struct {
	c        *fasthttp.Client
	limit    int
	stream   bool // a caller's client: bound the answer here
	redirect *redirects
}

func (t *fastTransport) closeIdle() { t.c.CloseIdleConnections() }

func (t *fastTransport) roundTrip(_ context.Context, method, rawURL string, h http.Header, body []byte, deadline time.Time) (*Response, error) {
	var first, u *url.URL // parsed at the first redirect, if any
	target, hop := rawURL, h
	for n := 0; ; n++ {
		resp, err := t.once(method, target, hop, body, deadline)
		if err != nil || !isRedirect(resp.Status) {
			return resp, err
		}
		loc := resp.Header.Get("Location")
		if loc == "" {
			return resp, nil
		}
		if first == nil {
			if first, err = url.Parse(rawURL); err != nil {
				return nil, err
			}
			u = first
		}
		next, err := u.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("client: a redirect's Location %q: %w", loc, err)
		}
		if next.Scheme != "http" && next.Scheme != "https" {
			return resp, nil
		}
		if n+1 >= maxRedirects {
			return nil, ErrTooManyRedirects
		}
		method, body = redirectMethod(resp.Status, method, body)
		hop = t.redirect.header(h, first, next, body == nil)
		u, target = next, next.String()
	}
}

// once sends one request and returns its answer.
func (t *fastTransport) once(method, url string, h http.Header, body []byte, deadline time.Time) (*Response, error) {
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
	resp.StreamBody = t.stream
	err := t.c.DoDeadline(req, resp, deadline)
	if err != nil {
		if errors.Is(err, fasthttp.ErrBodyTooLarge) {
			err = fmt.Errorf("%w (%w)", ErrResponseTooLarge, err)
		}
		return nil, err
	}
	var b []byte
	if t.stream {
		b, err = t.read(resp)
		_ = resp.CloseBodyStream() // returns the connection, or closes it when the body was left unread
		if err != nil {
			return nil, err
		}
	} else if len(resp.Body()) > 0 {
		b = bytes.Clone(resp.Body())
	}
	out := &Response{Status: resp.StatusCode(), Header: make(http.Header), Body: b}
	for k, v := range resp.Header.All() {
		if string(k) != "Transfer-Encoding" { // the body is decoded already
			out.Header.Add(string(k), string(v))
		}
	}
	return out, nil
}

// read returns the body of a streamed answer, refusing it with
// ErrResponseTooLarge as soon as it is known to be longer than the limit.
func (t *fastTransport) read(resp *fasthttp.Response) ([]byte, error) {
	n := resp.Header.ContentLength() // -1 chunked, -2 until close
	if n > t.limit {
		return nil, ErrResponseTooLarge
	}
	s := resp.BodyStream()
	if s == nil { // an answer without a body (HEAD, 204, 304)
		return nil, nil
	}
	if n >= 0 {
		b := make([]byte, n)
		if _, err := io.ReadFull(s, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return readLimited(s, int64(t.limit))
}

// readLimited reads r to its end, refusing more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, ErrResponseTooLarge
	}
	return b, nil
}

// stdTransport sends attempts through a copy of a net/http client whose
// CheckRedirect applies Redirects.
type stdTransport struct {
	c     *http.Client
	limit int64
}

func (t stdTransport) closeIdle() { t.c.CloseIdleConnections() }

func newStdTransport(c *http.Client, limit int, p *redirects) stdTransport {
	cp := *c // the caller's client is left as it is
	check := c.CheckRedirect
	cp.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return http.ErrUseLastResponse // the redirect is the answer (file:, ftp:), as on fasthttp
		}
		// net/http has copied the first request's headers, and removed
		// Authorization and cookies only for another domain: remove every
		// credential on a hop to another origin (port or scheme included).
		if !sameOrigin(via[0].URL, req.URL) {
			p.strip(req.Header)
		}
		if check != nil {
			return check(req, via)
		}
		if len(via) >= maxRedirects {
			return ErrTooManyRedirects
		}
		return nil
	}
	return stdTransport{&cp, int64(limit)}
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
	if resp.ContentLength > t.limit {
		return nil, ErrResponseTooLarge
	}
	b, err := readLimited(resp.Body, t.limit)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// maxRedirects is how many requests one attempt sends at most, the
// first included (net/http's default: 9 redirects followed, the 10th
// refused).
const maxRedirects = 10

// ErrTooManyRedirects is the error of an attempt whose 10th request was
// answered by a redirect again (errors.Is finds it in the TransportError, on both
// transports). It is never retried: the same loop would come back.
var ErrTooManyRedirects = errors.New("client: stopped after 10 redirects")

// redirects applies the package documentation's Redirects rules; it
// holds the canonical names of those headers.
type redirects struct{ sensitive []string }

func newRedirects(header http.Header, extra []string) *redirects {
	p := &redirects{sensitive: []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2", "X-Api-Key"}}
	for k := range header {
		p.sensitive = append(p.sensitive, http.CanonicalHeaderKey(k))
	}
	for _, k := range extra {
		p.sensitive = append(p.sensitive, http.CanonicalHeaderKey(k))
	}
	return p
}

// strip removes the credential headers from h.
func (p *redirects) strip(h http.Header) {
	for _, k := range p.sensitive {
		delete(h, k)
	}
}

// header returns the headers of a hop to next, from those of the request
// that went to first: all of them for the same origin, all but the
// credentials for another one; without the body's Content-Type when the
// hop drops the body.
func (p *redirects) header(h http.Header, first, next *url.URL, noBody bool) http.Header {
	same := sameOrigin(first, next)
	if same && !noBody {
		return h
	}
	out := h.Clone()
	if !same {
		p.strip(out)
	}
	if noBody {
		delete(out, "Content-Type")
	}
	return out
}

// sameOrigin reports whether a and b have the same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// port is u's port, or its scheme's default.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// isRedirect reports whether status is a redirect that is followed.
func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// redirectMethod is the method and body of the request a redirect with
// status sends (net/http's rule).
func redirectMethod(status int, method string, body []byte) (string, []byte) {
	if status == 307 || status == 308 {
		return method, body
	}
	if method != http.MethodGet && method != http.MethodHead {
		method = http.MethodGet
	}
	return method, nil
}
