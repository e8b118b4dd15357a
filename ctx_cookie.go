package fx

import (
	"errors"
	"time"

	"github.com/valyala/fasthttp"
)

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

// Cookie returns the value of the request cookie name, or "" when the
// request has none. The string is a copy, safe to keep; it costs one
// allocation when the cookie is present.
func (c *Ctx) Cookie(name string) string {
	return string(c.rc.Request.Header.Cookie(name))
}

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
