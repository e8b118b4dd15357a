package fx

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	json "github.com/goccy/go-json"
	"github.com/goccy/go-json/jsontext"
	jsonv2 "github.com/goccy/go-json/v2"
	"github.com/valyala/fasthttp"
)

// Writing the response: the body (JSON, Send, String, NoContent),
// headers, redirects, cookies, the error envelope (WriteError) and the
// opt-out from compression (NoCompress).

// JSON writes body as the JSON response with the given status and
// Content-Type application/json, replacing any body written before. It
// encodes with goccy/go-json straight into the response buffer: passing a
// pointer or a value that fits an interface costs no allocation, a small
// struct by value costs one (the interface conversion).
//
// An encoding failure (a channel, a function, a cycle, a MarshalJSON that
// fails or panics) is returned, and the response body is left empty; return
// it and the client gets the 500 envelope.
func (c *Ctx) JSON(status int, body any) (err error) { return c.writeJSON(status, body, false) }

// emptyNilOptions encode as c.JSON does (encoding/json's semantics,
// without HTML escaping) except that a nil slice is [], a nil map {} and
// a nil []byte "": go-json's v2 encoder with its v1 options.
var emptyNilOptions = []jsonv2.Options{json.DefaultOptionsV1(), jsontext.EscapeForHTML(false),
	jsonv2.FormatNilSliceAsNull(false), jsonv2.FormatNilMapAsNull(false)}

// writeJSON is c.JSON; with emptyNil, nil slices, maps and []byte are
// encoded as [], {} and "" instead of null (a typed operation's output,
// whose document says they are never null), with go-json's v2 encoder
// and its v1 options. Cost of emptyNil (BenchmarkOpOutput, three rooms,
// `go test -run '^$' -bench BenchmarkOpOutput -benchtime 200000x`): no
// allocation either way; 2.1-3.0 µs per request against c.JSON's
// 1.4-3.0 µs on a busy 2-core machine, up to about a fifth more.
func (c *Ctx) writeJSON(status int, body any, emptyNil bool) (err error) {
	resp := &c.rc.Response
	resp.ResetBody() // usually nothing to do: fasthttp pooled the last request's buffer
	c.jw.resp = resp
	defer func() {
		if r := recover(); r != nil {
			c.resetEncoder() // the encoder may hold broken state
			resp.ResetBody()
			err = fmt.Errorf("fx: JSON: encoding %T panicked: %s", body, formatValue(r))
		}
	}()
	if emptyNil {
		err = jsonv2.MarshalWrite(&c.jw, body, emptyNilOptions...)
	} else {
		err = c.enc.Encode(body)
	}
	if err != nil {
		resp.ResetBody()
		return fmt.Errorf("fx: JSON: %w", err)
	}
	resp.SetStatusCode(status)
	resp.Header.SetContentTypeBytes(contentTypeJSON)
	return nil
}

// jsonWriter appends go-json's output to the response body, dropping the
// newline that json.Encoder adds after every value.
type jsonWriter struct{ resp *fasthttp.Response }

func (w *jsonWriter) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 && p[n-1] == '\n' {
		p = p[:n-1]
	}
	w.resp.AppendBody(p)
	return n, nil
}

var contentTypeJSON = []byte("application/json")

// Send writes body with the given status and content type.
func (c *Ctx) Send(status int, contentType string, body []byte) error {
	c.rc.Response.SetStatusCode(status)
	c.rc.Response.Header.SetContentType(contentType)
	c.rc.Response.SetBody(body)
	return nil
}

// String writes s as text/plain; charset=utf-8 with the given status.
func (c *Ctx) String(status int, s string) error {
	c.rc.Response.SetStatusCode(status)
	c.rc.Response.Header.SetContentType("text/plain; charset=utf-8")
	c.rc.Response.SetBodyString(s)
	return nil
}

// NoContent sends status with an empty body.
func (c *Ctx) NoContent(status int) error {
	c.rc.Response.ResetBody()
	c.rc.Response.SetStatusCode(status)
	return nil
}

// SetHeader sets a response header, replacing any value it had. Headers set
// before a failure are kept on the error response (request IDs, CORS).
func (c *Ctx) SetHeader(name, value string) { c.rc.Response.Header.Set(name, value) }

// AddHeader adds a response header value, keeping the values already set
// under name (SetHeader replaces them): several Link, Vary or
// Cache-Control lines. fasthttp keeps one value for the headers it
// manages itself (Content-Type, Content-Length, Server, Date, Connection,
// Transfer-Encoding): for those AddHeader replaces, as SetHeader does.
// Cookies go through SetCookie. Cost: no allocation once the response
// header buffer has grown.
func (c *Ctx) AddHeader(name, value string) { c.rc.Response.Header.Add(name, value) }

// Redirect answers with status (301, 302, 303, 307 or 308) and a Location
// header of location, exactly as given: a relative reference ("/login",
// "../up", "?page=2") is sent relative, never resolved against the
// request's Host header (which the client chooses). The body is empty.
//
// It returns an error, writing nothing, for any other status or for a
// location that is empty or has a control character (CR and LF would
// split the header and let the location inject headers of its own).
// Return the error: it is a 500 FX_INTERNAL_ERROR, as for any programming
// error.
//
// Open redirects: never pass a location taken from the request (a
// "?next=" parameter) unchecked, or your domain becomes a phishing
// relay. Accept only paths of your own: one that starts with "/" but not
// with "//" or "/\" (which browsers read as another host), or compare
// against a list. Cost: no allocation.
func (c *Ctx) Redirect(status int, location string) error {
	switch status {
	case 301, 302, 303, 307, 308:
	default:
		return errors.New("fx: Redirect: status " + strconv.Itoa(status) + " is not a redirect (301, 302, 303, 307, 308)")
	}
	if location == "" {
		return errors.New("fx: Redirect: empty location")
	}
	for i := 0; i < len(location); i++ {
		if b := location[i]; b < 0x20 || b == 0x7f {
			return errors.New("fx: Redirect: location has a control character")
		}
	}
	resp := &c.rc.Response
	resp.ResetBody()
	resp.SetStatusCode(status)
	resp.Header.Set("Location", location)
	return nil
}

// Cookie is a response cookie for Ctx.SetCookie. Its zero values are the
// safe choice: HttpOnly, Secure, SameSite=Lax and Path "/" are set unless
// a field says otherwise, so a cookie written without thought is not
// readable by scripts, not sent over plain HTTP and not sent on cross-site
// subrequests. Opting out is explicit and reads as such in review:
// AllowScript (no HttpOnly), Insecure (no Secure), SameSite: SameSiteNone.
type Cookie struct {
	Name  string
	Value string // RFC 6265 cookie-octets only; encode anything else (base64url)

	Path   string // default "/"
	Domain string // default none: the cookie is host-only

	// MaxAge in seconds: > 0 sets Max-Age; < 0 deletes the cookie now
	// (Max-Age=0); 0 leaves it unset (then Expires, if set, applies; with
	// neither the cookie lasts the browser session).
	MaxAge  int
	Expires time.Time

	SameSite SameSite

	// AllowScript omits HttpOnly: page scripts (document.cookie) can read
	// the cookie. Only for values scripts need, never for session tokens.
	AllowScript bool
	// Insecure omits Secure: the cookie is also sent over plain HTTP
	// (local development without TLS). Refused with SameSiteNone, which
	// browsers accept only on Secure cookies.
	Insecure bool
	// Partitioned sets the Partitioned attribute (CHIPS).
	Partitioned bool
}

// SameSite is the SameSite attribute of a Cookie. The zero value is Lax.
type SameSite uint8

const (
	SameSiteLax    SameSite = iota // SameSite=Lax (the default)
	SameSiteStrict                 // SameSite=Strict
	SameSiteNone                   // SameSite=None (requires Secure)
)

// SetCookie adds a Set-Cookie header for ck, with the secure defaults
// described on Cookie. Setting the same name twice in one response keeps
// the last. It returns an error, writing nothing, when the cookie cannot
// be written safely: a name that is not an RFC 6265 token, a value with
// bytes outside cookie-octets (controls, space, '"', ',', ';', '\'), a
// Path or Domain with a control character or ';', or SameSiteNone with
// Insecure. These are programming errors (a value must be encoded before
// it becomes a cookie), so returning the error from the handler gives the
// client a 500 FX_INTERNAL_ERROR and the log the reason; a header smuggled
// through a cookie value is never written.
//
// Cost: no allocation (a pooled fasthttp.Cookie), about 0.5 µs over a bare
// route (BenchmarkSetCookie; most of it is fasthttp sanitising the header).
func (c *Ctx) SetCookie(ck Cookie) error {
	if err := ck.check(); err != nil {
		return err
	}
	fc := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(fc)
	fc.SetKey(ck.Name)
	fc.SetValue(ck.Value)
	path := ck.Path
	if path == "" {
		path = "/"
	}
	fc.SetPath(path)
	if ck.Domain != "" {
		fc.SetDomain(ck.Domain)
	}
	fc.SetMaxAge(ck.MaxAge)
	if !ck.Expires.IsZero() {
		fc.SetExpire(ck.Expires)
	}
	fc.SetHTTPOnly(!ck.AllowScript)
	fc.SetSecure(!ck.Insecure)
	switch ck.SameSite {
	case SameSiteStrict:
		fc.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	case SameSiteNone:
		fc.SetSameSite(fasthttp.CookieSameSiteNoneMode)
	default:
		fc.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	}
	fc.SetPartitioned(ck.Partitioned)
	c.rc.Response.Header.SetCookie(fc)
	return nil
}

// ClearCookie tells the client to delete the cookie name set with Path "/"
// and no Domain (Max-Age=0, empty value). A cookie set with another Path
// or Domain is a different cookie: clear it with SetCookie, the same Path
// and Domain, and MaxAge -1.
func (c *Ctx) ClearCookie(name string) error {
	return c.SetCookie(Cookie{Name: name, MaxAge: -1})
}

func (ck *Cookie) check() error {
	if ck.Name == "" {
		return errors.New("fx: SetCookie: empty cookie name")
	}
	for i := 0; i < len(ck.Name); i++ {
		if !isTokenChar(ck.Name[i]) {
			return errors.New("fx: SetCookie: cookie name " + quoteConfig(ck.Name) + " is not an RFC 6265 token")
		}
	}
	for i := 0; i < len(ck.Value); i++ {
		if !isCookieOctet(ck.Value[i]) {
			return errors.New("fx: SetCookie: value of cookie " + quoteConfig(ck.Name) +
				" has a byte outside RFC 6265 cookie-octets (control, space, '\"', ',', ';' or '\\'); encode it first")
		}
	}
	if !isAttrValue(ck.Path) || !isAttrValue(ck.Domain) {
		return errors.New("fx: SetCookie: Path or Domain of cookie " + quoteConfig(ck.Name) + " has a control character or ';'")
	}
	if ck.SameSite == SameSiteNone && ck.Insecure {
		return errors.New("fx: SetCookie: SameSiteNone requires Secure (browsers drop the cookie); do not set Insecure")
	}
	if ck.SameSite > SameSiteNone {
		return errors.New("fx: SetCookie: unknown SameSite value")
	}
	return nil
}

// isCookieOctet: %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E (RFC 6265 4.1.1).
func isCookieOctet(b byte) bool {
	return b >= 0x21 && b <= 0x7e && b != '"' && b != ',' && b != ';' && b != '\\'
}

func isAttrValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f || s[i] == ';' {
			return false
		}
	}
	return true
}

// WriteError writes the default envelope for err into the response, as
// the error boundary would: the status and code Resolve gives, the
// message and details (production rules apply: FX_INTERNAL_ERROR says only
// "Internal server error" unless Config.Development), Content-Type
// application/json, any body written before and its Content-Encoding
// replaced, other headers kept. A *PanicError is treated as its panic
// value, and a value that is not an error (the raw value an error hook
// receives for panic("...")) gives the 500 FX_INTERNAL_ERROR, as it does
// at the boundary. It sets ErrorCode.
//
// Use it in an error hook to decorate the default response and return
// true, or in a middleware that handles an error itself and returns nil.
// It does not log: the boundary logs the 5xx failures it sees, and an
// error a middleware swallows never reaches it. Cost: that of the envelope
// (no allocation for an *Error without details).
func (c *Ctx) WriteError(err any) {
	e, _ := err.(error)
	raw := err
	if pe, ok := e.(*PanicError); ok {
		raw = pe.Value
	}
	status, code, msg, details := c.app.resolve(e, raw)
	c.out.code = code
	c.app.writeEnvelope(&c.rc.Response, status, code, msg, details)
}

// NoCompress sends this request's response uncompressed, whatever
// Config.Compression says: for a response that reflects input next to a
// secret (BREACH: see CompressionConfig and docs/security.md). Call it before
// the handler returns; it holds for the error envelope too. Cost: one
// user value (no allocation); without Config.Compression it does nothing.
func (c *Ctx) NoCompress() { c.rc.SetUserValue(noCompressKey{}, true) }
