package middleware

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
	"golang.org/x/net/publicsuffix"
)

// Defaults of CORSConfig.
const (
	// DefaultCORSMaxAge is how long a browser may cache a preflight: 10
	// minutes, which every engine honours as is (Chromium caps at 2 hours,
	// Firefox at 24; without the header Chromium caches for 5 seconds).
	DefaultCORSMaxAge = 10 * time.Minute

	// maxOriginLength bounds a configured origin (a DNS name is at most 253
	// bytes, plus scheme and port) so that a request origin can be
	// lower-cased into a stack buffer.
	maxOriginLength = 320
)

// defaultCORSMethods are the methods a preflight allows when
// CORSConfig.AllowMethods is nil.
var defaultCORSMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}

// CORSConfig configures CORS. At least one of AllowOrigins and
// AllowOriginFunc must be set.
type CORSConfig struct {
	// AllowOrigins lists the origins allowed to read responses, each one of
	//
	//   - an exact origin, "https://app.example.com" or
	//     "http://localhost:3000": scheme "://" host [":" port], no path,
	//     no trailing slash, no default port (browsers never send
	//     "https://x:443"); compared with the request's Origin
	//     case-insensitively;
	//   - a wildcard subdomain, "https://*.example.com" (optionally with a
	//     port): the same scheme and port, and a host that is one or more
	//     DNS labels followed by ".example.com". It matches
	//     https://a.example.com and https://a.b.example.com, never
	//     https://example.com itself (list it too), https://evil-example.com,
	//     https://example.com.evil.io or another scheme or port. With
	//     AllowCredentials the part after "*." must not be a public suffix
	//     (https://*.com, https://*.co.uk, https://*.github.io): anyone can
	//     register a name under one, so the pattern would hand credentialed
	//     responses to every site there. Such a pattern is refused at
	//     start-up, as "*" is. The list is golang.org/x/net/publicsuffix
	//     (ICANN and private sections), whose default rule also makes any
	//     unlisted top-level name (https://*.internal) a public suffix: list
	//     those origins one by one, or use AllowOriginFunc;
	//   - "*": any origin except "null". The response says
	//     "Access-Control-Allow-Origin: *", so it cannot be combined with
	//     AllowCredentials;
	//   - "null": the opaque origin (sandboxed iframes, file: pages, some
	//     redirects). Any page can produce it, so listing it is close to
	//     allowing everyone; "*" never includes it. With AllowCredentials it
	//     is refused at start-up, as "*" is: any site could read
	//     credentialed responses from a sandboxed iframe.
	AllowOrigins []string

	// AllowOriginFunc decides origins that AllowOrigins does not list (or
	// all of them, when AllowOrigins is nil). It receives the Origin header
	// as sent, copied (safe to keep), and is called concurrently. With
	// AllowCredentials it is never asked about "null", which is refused.
	AllowOriginFunc func(origin string) bool

	// AllowMethods is sent as Access-Control-Allow-Methods on preflights.
	// Default GET, HEAD, POST, PUT, PATCH, DELETE. Methods are
	// case-sensitive (RFC 9110); "*" means any method, except with
	// AllowCredentials, where it is refused.
	AllowMethods []string

	// AllowHeaders is sent as Access-Control-Allow-Headers on preflights.
	// Nil: the preflight's Access-Control-Request-Headers is echoed (when it
	// is a well-formed list of header names), which allows any request
	// header. An empty, non-nil list sends none: only the CORS-safelisted
	// request headers are allowed. "*" allows any header but
	// Authorization, except with AllowCredentials, where it is refused.
	AllowHeaders []string

	// ExposeHeaders is sent as Access-Control-Expose-Headers on actual
	// responses: the response headers, beyond the CORS-safelisted ones,
	// that scripts may read (a request ID, RateLimit, Retry-After).
	ExposeHeaders []string

	// AllowCredentials sends Access-Control-Allow-Credentials: true, which
	// lets cookies and HTTP authentication go with requests from allowed
	// origins. It cannot be combined with the "*" origin.
	AllowCredentials bool

	// MaxAge is sent as Access-Control-Max-Age on preflights, in whole
	// seconds. Default DefaultCORSMaxAge; negative omits the header.
	MaxAge time.Duration
}

// corsPolicy is one configured CORS.
type corsPolicy struct {
	exact     map[string]struct{} // lower-cased exact origins, "null" if listed
	wildcards []originPattern
	any       bool // "*"
	fn        func(string) bool

	credentials bool
	echoHeaders bool // AllowHeaders nil: echo Access-Control-Request-Headers

	allowMethods, allowHeaders, exposeHeaders, maxAge []byte
}

// originPattern is "scheme://*.suffix[:port]": prefix is "scheme://",
// suffix ".example.com[:port]", both lower case.
type originPattern struct{ prefix, suffix string }

// Canonical header names (fasthttp's normalised form), so that setting them
// costs no normalisation.
var (
	hOrigin           = []byte("Origin")
	hVary             = []byte("Vary")
	hACAO             = []byte("Access-Control-Allow-Origin")
	hACAC             = []byte("Access-Control-Allow-Credentials")
	hACAM             = []byte("Access-Control-Allow-Methods")
	hACAH             = []byte("Access-Control-Allow-Headers")
	hACEH             = []byte("Access-Control-Expose-Headers")
	hACMA             = []byte("Access-Control-Max-Age")
	hACRM             = []byte("Access-Control-Request-Method")
	hACRH             = []byte("Access-Control-Request-Headers")
	vTrue             = []byte("true")
	vStar             = []byte("*")
	varyActual        = []string{"Origin"}
	varyPreflight     = []string{"Origin", "Access-Control-Request-Method", "Access-Control-Request-Headers"}
	varyPreflightLine = []byte("Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
)

// CORS returns middleware that implements the server side of the CORS
// protocol of the Fetch standard for the origins CORSConfig allows.
//
// Register it with App.Use, first (before Auth: a preflight carries no
// credentials). There it also runs for requests that match no route, which
// is how it answers preflights for paths that have no OPTIONS route; on a
// Group or a single route it never sees those preflights.
//
//   - A preflight (OPTIONS with Origin and Access-Control-Request-Method)
//     is answered here, without calling next: 204 with
//     Access-Control-Allow-Origin (the origin, or "*"), -Allow-Methods,
//     -Allow-Headers, -Max-Age and, with AllowCredentials,
//     -Allow-Credentials: true. A preflight from an origin that is not
//     allowed gets 204 with none of them: to the browser that is a failed
//     preflight, so the actual request is never sent. It is not passed on
//     to the handlers (which would answer 404 or run an application's
//     OPTIONS route for a request that is only a permission check).
//   - Any other request goes on to next. From an allowed origin, it gets
//     Access-Control-Allow-Origin (and -Allow-Credentials and
//     -Expose-Headers when configured) before next runs, so the headers are
//     also on the error envelope of a failing handler, a panic or a 404.
//     From any other origin it gets no CORS header at all: the browser
//     keeps the response from the script, the server answers as usual, and
//     no error is made up.
//   - Every response gets "Vary: Origin" (preflights also "Vary:
//     Access-Control-Request-Method, Access-Control-Request-Headers"),
//     added to any Vary already there and checked again after next returns,
//     so a handler that sets its own Vary does not make a shared cache
//     serve one origin's answer to another. It is sent even to requests
//     without Origin, whose response would have differed had they sent one.
//
// Cost (go test -run '^$' -bench CORS -benchmem -cpu 1 ./middleware, on a
// shared machine): an allowed GET takes about 300 ns against 77 ns for the
// same route without CORS, most of it fasthttp's header sets (three
// Access-Control-* headers and Vary); a preflight answered here about
// 440 ns in all. None of them allocates. Origins are matched with one map
// lookup of the lower-cased origin (in a stack buffer) and one suffix
// comparison per wildcard. AllowOriginFunc, when consulted, costs one copy
// of the origin.
//
// CORS panics when the configuration is invalid, listing every problem
// (errors.Join): no origin source, a malformed origin or pattern, "*" or a
// wildcard header/method list with AllowCredentials, an invalid header name
// or method, a wildcard over a public suffix or "null" with
// AllowCredentials.
//
// A request with more than one Origin header is refused with 400
// FX_BAD_REQUEST (reason repeated_origin; declared with fx.Declare). These
// are programming errors found at start-up: middleware is built before the
// App boots and has no App to report to, so CORS panics where it is
// called, like every invalid constructor argument in this package.
func CORS(cfg CORSConfig) fx.Middleware {
	p, err := newCORSPolicy(cfg)
	if err != nil {
		panic("middleware.CORS: " + err.Error())
	}
	return fx.Declare(p.handle, fx.Declaration{Errors: DeclareFailures(errRepeatedOrigin)})
}

// ReasonRepeatedOrigin is details.reason of CORS's 400 for a request with
// more than one Origin header.
const ReasonRepeatedOrigin = "repeated_origin"

// errRepeatedOrigin answers a request with more than one Origin header.
// Origin is a single value (RFC 6454 section 7): no browser sends two,
// and which one an intermediary and fx would each read is anyone's guess,
// so CORS refuses the request (preflight or not) with 400 FX_BAD_REQUEST
// instead of allowing the first.
var errRepeatedOrigin = fx.NewCatalogError(fx.ErrorCodes.BadRequest,
	"More than one Origin header was sent", FailureDetails{Reason: ReasonRepeatedOrigin})

func newCORSPolicy(cfg CORSConfig) (*corsPolicy, error) {
	var errs []error
	p := &corsPolicy{
		exact:       map[string]struct{}{},
		fn:          cfg.AllowOriginFunc,
		credentials: cfg.AllowCredentials,
		echoHeaders: cfg.AllowHeaders == nil,
	}
	if len(cfg.AllowOrigins) == 0 && cfg.AllowOriginFunc == nil {
		errs = append(errs, errors.New("set AllowOrigins, AllowOriginFunc or both"))
	}
	for _, o := range cfg.AllowOrigins {
		switch {
		case o == "*":
			p.any = true
		case o == "null":
			p.exact["null"] = struct{}{}
		default:
			pat, exact, err := parseOrigin(o)
			switch {
			case err != nil:
				errs = append(errs, err)
			case pat != nil:
				p.wildcards = append(p.wildcards, *pat)
			default:
				p.exact[exact] = struct{}{}
			}
		}
	}
	if p.any && cfg.AllowCredentials {
		errs = append(errs, errors.New(`AllowOrigins "*" cannot be combined with AllowCredentials (browsers refuse credentialed responses with "Access-Control-Allow-Origin: *"); list the origins`))
	}
	if _, null := p.exact["null"]; null && cfg.AllowCredentials {
		errs = append(errs, errors.New(`AllowOrigins "null" cannot be combined with AllowCredentials: any page can send the opaque origin (a sandboxed iframe), so every site could read credentialed responses; list the origins`))
	}
	if cfg.AllowCredentials {
		for _, w := range p.wildcards {
			if name := w.host(); isPublicSuffix(name) {
				errs = append(errs, fmt.Errorf(`origin pattern %q cannot be combined with AllowCredentials: %q is a public suffix, under which anyone can register a site; list the origins`,
					w.prefix+"*"+w.suffix, name))
			}
		}
	}
	methods := cfg.AllowMethods
	if methods == nil {
		methods = defaultCORSMethods
	}
	errs = append(errs, checkTokens("AllowMethods", methods, cfg.AllowCredentials)...)
	errs = append(errs, checkTokens("AllowHeaders", cfg.AllowHeaders, cfg.AllowCredentials)...)
	errs = append(errs, checkTokens("ExposeHeaders", cfg.ExposeHeaders, cfg.AllowCredentials)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p.allowMethods = []byte(strings.Join(methods, ", "))
	if len(cfg.AllowHeaders) > 0 {
		p.allowHeaders = []byte(strings.Join(cfg.AllowHeaders, ", "))
	}
	if len(cfg.ExposeHeaders) > 0 {
		p.exposeHeaders = []byte(strings.Join(cfg.ExposeHeaders, ", "))
	}
	switch {
	case cfg.MaxAge == 0:
		p.maxAge = []byte(strconv.Itoa(int(DefaultCORSMaxAge / time.Second)))
	case cfg.MaxAge > 0:
		p.maxAge = []byte(strconv.FormatInt(int64(cfg.MaxAge/time.Second), 10))
	}
	return p, nil
}

// parseOrigin checks a configured origin and returns it lower-cased, or
// its pattern when it is a wildcard subdomain.
func parseOrigin(o string) (*originPattern, string, error) {
	bad := func(why string) error { return fmt.Errorf("origin %q: %s", o, why) }
	if len(o) > maxOriginLength {
		return nil, "", bad("longer than " + strconv.Itoa(maxOriginLength) + " bytes")
	}
	lo := strings.ToLower(o)
	scheme, rest, ok := strings.Cut(lo, "://")
	if !ok || !validScheme(scheme) {
		return nil, "", bad(`want scheme://host[:port], such as "https://app.example.com"`)
	}
	if strings.ContainsAny(rest, "/?#@ \t") {
		return nil, "", bad("an origin has no path, query, user or trailing slash")
	}
	host, port := rest, ""
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && !strings.HasSuffix(rest, "]") {
		host, port = rest[:i], rest[i+1:]
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return nil, "", bad("invalid port")
		}
		if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
			return nil, "", bad("browsers never send the default port; leave it out")
		}
	}
	wild := strings.HasPrefix(host, "*.")
	name := host
	if wild {
		name = host[2:]
	}
	if strings.HasPrefix(host, "[") {
		if wild || !strings.HasSuffix(host, "]") || strings.ContainsAny(host[1:len(host)-1], "[]") {
			return nil, "", bad("malformed IPv6 host")
		}
	} else if !validHostLabels(name) {
		if strings.Contains(name, "*") {
			return nil, "", bad(`a wildcard must be the whole first label: "https://*.example.com"`)
		}
		return nil, "", bad("malformed host")
	}
	if wild {
		suffix := host[1:]
		if port != "" {
			suffix += ":" + port
		}
		return &originPattern{prefix: scheme + "://", suffix: suffix}, "", nil
	}
	return nil, lo, nil
}

// host is the name the pattern's "*." stands in front of, without the
// port: "example.com" for https://*.example.com:8443.
func (w originPattern) host() string {
	h := w.suffix[1:]
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return h
}

// isPublicSuffix reports whether name (lower case) is itself a public
// suffix by golang.org/x/net/publicsuffix: an ICANN suffix ("com",
// "co.uk"), a private one ("github.io"), or an unlisted top-level name,
// which the list's default rule "*" makes one.
func isPublicSuffix(name string) bool {
	ps, _ := publicsuffix.PublicSuffix(name)
	return ps == name
}

// validScheme reports whether s is an RFC 3986 scheme.
func validScheme(s string) bool {
	if s == "" || !('a' <= s[0] && s[0] <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		ch := s[i]
		if !('a' <= ch && ch <= 'z' || '0' <= ch && ch <= '9' || ch == '+' || ch == '-' || ch == '.') {
			return false
		}
	}
	return true
}

// validHostLabels reports whether s (lower case) is one or more non-empty
// labels of letters, digits, '-' and '_' separated by single dots. It is
// also what the '*' of a wildcard pattern may stand for, so that no
// request origin can smuggle a ':', '@', '/' or '#' past the suffix match.
func validHostLabels[T string | []byte](s T) bool {
	if len(s) == 0 || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case 'a' <= ch && ch <= 'z', '0' <= ch && ch <= '9', ch == '-', ch == '_':
		case ch == '.' && s[i-1] != '.':
		default:
			return false
		}
	}
	return true
}

// checkTokens checks a list of header names or methods.
func checkTokens(field string, list []string, credentials bool) []error {
	var errs []error
	for _, s := range list {
		switch {
		case s == "*" && credentials:
			errs = append(errs, fmt.Errorf(`%s "*" cannot be combined with AllowCredentials (browsers read it as a literal name then); list the names`, field))
		case s != "*" && !isToken(s):
			errs = append(errs, fmt.Errorf("%s: %q is not a valid token", field, s))
		}
	}
	return errs
}

func (p *corsPolicy) handle(c *fx.Ctx, next fx.Next) error {
	rc := c.RequestCtx()
	req, rh := &rc.Request.Header, &rc.Response.Header
	origin, repeated := singleton(req, fasthttp.HeaderOrigin)
	if repeated {
		addVary(rh, varyActual, hOrigin)
		return errRepeatedOrigin
	}
	if req.IsOptions() && len(origin) > 0 {
		if acrm := req.PeekBytes(hACRM); len(acrm) > 0 {
			return p.preflight(c, rc, origin)
		}
	}
	if len(origin) > 0 && p.allowOrigin(rh, origin) && p.exposeHeaders != nil {
		rh.SetCanonical(hACEH, p.exposeHeaders)
	}
	addVary(rh, varyActual, hOrigin)
	err := next()
	// A handler's SetHeader("Vary", ...) replaces ours: restore it. The
	// error envelope is written later with the headers as they are now.
	addVary(rh, varyActual, hOrigin)
	return err
}

// allowOrigin sets Access-Control-Allow-Origin (and -Credentials) when
// origin is allowed, and reports whether it is.
func (p *corsPolicy) allowOrigin(rh *fasthttp.ResponseHeader, origin []byte) bool {
	allowed, star := p.allowed(origin)
	if !allowed {
		return false
	}
	if star {
		rh.SetCanonical(hACAO, vStar)
	} else {
		rh.SetCanonical(hACAO, origin)
	}
	if p.credentials {
		rh.SetCanonical(hACAC, vTrue)
	}
	return true
}

// preflight answers a CORS-preflight request.
func (p *corsPolicy) preflight(c *fx.Ctx, rc *fasthttp.RequestCtx, origin []byte) error {
	rh := &rc.Response.Header
	addVary(rh, varyPreflight, varyPreflightLine)
	if p.allowOrigin(rh, origin) {
		rh.SetCanonical(hACAM, p.allowMethods)
		switch {
		case p.allowHeaders != nil:
			rh.SetCanonical(hACAH, p.allowHeaders)
		case p.echoHeaders:
			if acrh := rc.Request.Header.PeekBytes(hACRH); len(acrh) > 0 && isTokenList(acrh) {
				rh.SetCanonical(hACAH, acrh)
			}
		}
		if p.maxAge != nil {
			rh.SetCanonical(hACMA, p.maxAge)
		}
	}
	return c.NoContent(fasthttp.StatusNoContent)
}

// allowed reports whether origin may read the response, and whether the
// answer is "*" rather than the origin itself.
func (p *corsPolicy) allowed(origin []byte) (ok, star bool) {
	if len(origin) <= maxOriginLength {
		var buf [maxOriginLength]byte
		lo := buf[:len(origin)]
		for i, ch := range origin {
			if 'A' <= ch && ch <= 'Z' {
				ch += 'a' - 'A'
			}
			lo[i] = ch
		}
		if _, ok := p.exact[string(lo)]; ok { // no allocation: map index by converted bytes
			return true, false
		}
		for _, w := range p.wildcards {
			if len(lo) > len(w.prefix)+len(w.suffix) &&
				string(lo[:len(w.prefix)]) == w.prefix &&
				string(lo[len(lo)-len(w.suffix):]) == w.suffix &&
				validHostLabels(lo[len(w.prefix):len(lo)-len(w.suffix)]) {
				return true, false
			}
		}
		if p.any && string(lo) != "null" {
			return true, true
		}
	} else if p.any {
		return true, true // too long for any list entry, but "*" takes it
	}
	if p.fn != nil && !(p.credentials && strings.EqualFold(b2s(origin), "null")) && p.fn(string(origin)) {
		return true, false
	}
	return false, false
}

// addVary makes the response's Vary list each of names, adding the missing
// ones to what is there (several Vary fields form one list, RFC 9110 §5.3).
// all is names joined, added as one field when none is present yet.
func addVary(rh *fasthttp.ResponseHeader, names []string, all []byte) {
	present := rh.PeekAll(fasthttp.HeaderVary)
	if len(present) == 0 {
		rh.AddBytesKV(hVary, all)
		return
	}
	var missing [3]bool
	n := 0
	for i, name := range names {
		if !varyHas(present, name) {
			missing[i] = true
			n++
		}
	}
	if n == 0 {
		return
	}
	if n == len(names) {
		rh.AddBytesKV(hVary, all)
		return
	}
	for i, name := range names {
		if missing[i] {
			rh.Add(fasthttp.HeaderVary, name)
		}
	}
}

// varyHas reports whether the Vary fields list name (or "*").
func varyHas(fields [][]byte, name string) bool {
	for _, f := range fields {
		for len(f) > 0 {
			var item []byte
			item, f, _ = bytes.Cut(f, []byte{','})
			item = bytes.TrimSpace(item)
			if string(item) == "*" || strings.EqualFold(b2s(item), name) {
				return true
			}
		}
	}
	return false
}

// isTokenList reports whether b is a comma-separated list of header names
// (with optional whitespace), as Access-Control-Request-Headers is.
func isTokenList(b []byte) bool {
	seen := false
	for len(b) > 0 {
		var item []byte
		item, b, _ = bytes.Cut(b, []byte{','})
		item = bytes.Trim(item, " \t")
		if len(item) == 0 {
			continue
		}
		if !isToken(b2s(item)) {
			return false
		}
		seen = true
	}
	return seen
}
