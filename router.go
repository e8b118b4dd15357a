package fx

import (
	"fmt"
	"regexp"
	"strings"
	"unsafe"

	"github.com/fasthttp/router"
	"github.com/fxhq/fx/validate"
	"github.com/valyala/fasthttp"
)

// The route table: what the application registers (the methods of
// routes, shared by App and Group, each making a routeSpec) and what Boot
// builds from it (buildRouter): the fasthttp/router, the exact-match table
// in front of it (staticRoutes), and route conflicts reported as boot
// errors in fx's syntax.

// routes holds the route-registration methods, written once and shared by
// App (routes at the root, no group) and Group (routes under its prefix,
// with its middleware) through embedding; go doc lists them under both
// types. A second copy of this method list is how a method or a doc fix
// ends up on one of the two only.
type routes struct {
	app    *App
	group  *Group // nil on the App
	prefix string // the Group's full prefix; "" on the App
}

// Handle registers h for method and path (on a Group: the group's prefix +
// path, behind its middleware). Paths use ":name" for a segment parameter
// and a final "*name" for the rest of the path (read both with c.Param). A
// GET route also answers HEAD (without a body) unless a HEAD route is
// registered for the same path.
func (a *routes) Handle(method, path string, h Handler) {
	a.add(routeSpec{method: method, path: path, handler: h})
}

// Route registers a route contract (see Route; on a Group, its Path is
// under the group's prefix and its Middleware runs after the group's). A
// nil Handler is a configuration error (FX_ROUTE_HANDLER_REQUIRED), and a
// nil Middleware entry one too (FX_INTERNAL_ERROR), both reported by Boot.
func (a *routes) Route(r Route) {
	a.add(routeSpec{method: r.Method, path: r.Path, handler: r.Handler,
		body: r.Body, query: r.Query,
		mws:  append([]Middleware(nil), r.Middleware...), // later changes to the caller's slice do not count
		meta: newRouteMeta(r)})
}

func (a *routes) add(s routeSpec) {
	s.path = a.prefix + s.path
	s.group = a.group
	a.app.addRoute(s)
}

// Get registers h for GET (and HEAD) requests to path.
func (a *routes) Get(path string, h Handler) { a.Handle(fasthttp.MethodGet, path, h) }

// Post registers h for POST requests to path.
func (a *routes) Post(path string, h Handler) { a.Handle(fasthttp.MethodPost, path, h) }

// Put registers h for PUT requests to path.
func (a *routes) Put(path string, h Handler) { a.Handle(fasthttp.MethodPut, path, h) }

// Patch registers h for PATCH requests to path.
func (a *routes) Patch(path string, h Handler) { a.Handle(fasthttp.MethodPatch, path, h) }

// Delete registers h for DELETE requests to path.
func (a *routes) Delete(path string, h Handler) { a.Handle(fasthttp.MethodDelete, path, h) }

// Head registers h for HEAD requests to path.
func (a *routes) Head(path string, h Handler) { a.Handle(fasthttp.MethodHead, path, h) }

// Options registers h for OPTIONS requests to path.
func (a *routes) Options(path string, h Handler) { a.Handle(fasthttp.MethodOptions, path, h) }

// routeSpec is a registration, kept until Boot builds the router.
type routeSpec struct {
	method, path string
	handler      Handler
	body, query  validate.Schema
	mws          []Middleware // Route.Middleware: after the group's, before the contract
	group        *Group       // nil: registered on the App
	meta         routeMeta    // documentation only (routeinfo.go)
}

// route is a booted route: its whole chain, fixed at Boot.
type route struct {
	method, path string // as registered, fx syntax
	chain        []Middleware
	handler      Handler
	params       []string
}

func (a *App) addRoute(s routeSpec) {
	a.register(s.method+" "+s.path, func() { a.specs = append(a.specs, s) })
}

// buildRouter turns the registrations into a fasthttp/router and the
// static table in front of it (staticRoutes), collecting configuration
// errors instead of panicking.
func (a *App) buildRouter(specs []routeSpec, mws []Middleware) (*router.Router, *staticRoutes, []error) {
	r := router.New()
	static := new(staticRoutes)
	r.RedirectTrailingSlash = a.cfg.RedirectTrailingSlash
	r.RedirectFixedPath = a.cfg.RedirectFixedPath
	r.HandleMethodNotAllowed = false // the contract: an unregistered method is a 404
	r.HandleOPTIONS = a.cfg.HandleOPTIONS
	if len(mws) > 0 || a.observers != nil { // so that OnResponse sees it
		// The automatic OPTIONS answer (200 with Allow) goes through the
		// middleware too, so CORS middleware can answer preflights.
		opts := &route{method: fasthttp.MethodOptions, chain: mws, handler: func(*Ctx) error { return nil }}
		r.GlobalOPTIONS = func(rc *fasthttp.RequestCtx) { a.serve(rc, opts) }
	}
	r.NotFound = a.notFound

	var errs []error
	explicit := map[string]bool{} // method+shape: a HEAD of that shape is registered
	for _, s := range specs {
		explicit[s.method+" "+routeShape(s.path)] = true
	}
	seen := map[string]string{} // method+shape → the path registered first
	add := func(method string, s routeSpec, h Handler, params []string, fhPath string) {
		// App, then group, then route middleware; h already holds the
		// contract, so route middleware (an authorization check) answers
		// before validation can describe the schema.
		chain := mws
		if own := append(s.group.middleware(), s.mws...); len(own) > 0 {
			chain = append(append(make([]Middleware, 0, len(mws)+len(own)), mws...), own...)
		}
		rt := &route{method: method, path: s.path, chain: chain, handler: h, params: params}
		defer func() {
			if p := recover(); p != nil {
				errs = append(errs, routerPanicError(method, s.path, p))
			}
		}()
		r.Handle(method, fhPath, func(rc *fasthttp.RequestCtx) { a.serve(rc, rt) })
		static.add(method, s.path, rt) // after Handle: only what the router accepted
		static.heads.add(s.path)
	}
	checked := map[*Group]bool{}
	for _, s := range specs {
		// A nil group middleware would panic on every request of the
		// group: report it once per group, as Boot does for App.Use.
		for g := s.group; g != nil && !checked[g]; g = g.parent {
			checked[g] = true
			errs = append(errs, nilMiddleware(fmt.Sprintf("Group %q", g.prefix), g.mws)...)
		}
		errs = append(errs, nilMiddleware(routeWhat(s.method, s.path), s.mws)...)
		if s.handler == nil {
			errs = append(errs, catalogError(codeRouteHandlerRequired,
				fmt.Sprintf("Route %s %s has no handler", s.method, s.path)))
			continue
		}
		if s.method == "" || strings.ContainsAny(s.method, " \t\r\n") {
			errs = append(errs, configError(routeWhat(s.method, s.path), "invalid method"))
			continue
		}
		if op := s.meta.op; op != nil && op.err != nil { // constraint tags of a typed operation (op.go)
			errs = append(errs, configError(routeWhat(s.method, s.path), "%v", op.err))
			continue
		}
		fhPath, params, err := translatePath(s.path)
		if err != nil {
			errs = append(errs, configError(routeWhat(s.method, s.path), "%v", err))
			continue
		}
		shape := routeShape(s.path)
		if prev, dup := seen[s.method+" "+shape]; dup {
			errs = append(errs, conflictError(s.method, s.path, prev))
			continue
		}
		seen[s.method+" "+shape] = s.path
		h := s.handler
		if s.body != nil || s.query != nil {
			h = contractHandler(s.body, s.query, h)
		}
		failed := len(errs)
		add(s.method, s, h, params, fhPath)
		// The HEAD twin of a GET the router refused would only repeat the
		// same error.
		if s.method == fasthttp.MethodGet && len(errs) == failed && !explicit[fasthttp.MethodHead+" "+shape] {
			add(fasthttp.MethodHead, s, h, params, fhPath)
		}
	}
	static.heads.enable(a.cfg)
	return r, static, errs
}

// Route conflicts are boot errors, reported once each and in fx's syntax.
//
// fasthttp/router reports a conflict by panicking with its own syntax
// ("'{name}' in new path '/users/{name}' conflicts with existing wild path
// '{id}'"), and a GET's automatic HEAD twin panicked a second time, so one
// mistake became two errors naming paths the application never wrote. fx
// now finds the common conflict itself (the same method and the same path
// shape, whatever the parameter names) and words it in ":name" syntax;
// any other panic of the router is rewritten into fx syntax by
// routerReason, and the HEAD twin of a GET that failed is not registered.

// routeShape is p with every parameter name dropped ("/users/:id" and
// "/users/:name" are both "/users/:"): two routes of one method with the
// same shape match the same requests.
func routeShape(p string) string {
	if strings.IndexByte(p, ':') < 0 && strings.IndexByte(p, '*') < 0 {
		return p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s != "" && (s[0] == ':' || s[0] == '*') {
			segs[i] = s[:1]
		}
	}
	return strings.Join(segs, "/")
}

// conflictError reports that method path matches the same requests as the
// earlier route method prev.
func conflictError(method, path, prev string) *Error {
	if path == prev {
		return configError(routeWhat(method, path), "registered twice")
	}
	return configError(routeWhat(method, path), "conflicts with %s %s, registered earlier", method, prev)
}

// routerPanicError reports a route the router refused for another reason.
func routerPanicError(method, path string, p any) *Error {
	return configError(routeWhat(method, path), "cannot be registered: %s", routerReason(formatValue(p)))
}

var (
	routerCatchAll = regexp.MustCompile(`\{([^{}:]+):\*\}`)
	routerParam    = regexp.MustCompile(`\{([^{}:]+)(:[^{}]*)?\}`)
)

// routerReason rewrites fasthttp/router's "{name}" and "{name:*}" into fx's
// ":name" and "*name".
func routerReason(s string) string {
	s = routerCatchAll.ReplaceAllString(s, "*$1")
	return routerParam.ReplaceAllString(s, ":$1")
}

// staticRoutes is the exact-match table in front of the router: a request
// whose path, exactly as sent, is that of a route without parameters runs
// that route without the one-path step (path.go) and without the radix
// walk. Boot admits a path only when the step would pass it unchanged: it
// holds no '\' and no '%', and fasthttp's normalisation leaves it as it is
// (no "//", "/./" or "/../"). A request that matches it byte for byte then
// has c.Path() equal to it, and the router would have chosen the same
// route (a static segment outranks a parameter, and an exact match never
// redirects). Everything else (parameters, misses, methods other than the
// seven standard ones) takes the step, then heads (routeHeads: the misses
// it can tell at once get the 404 there), then the router.
//
// Cost: a hit compares the path with the few static paths of its length
// (or, past shortMax of them, hashes it into a map; no allocation either
// way) and switches on the method, in place of the step's check and the
// radix walk: routing and serving an empty handler takes 30 ns against
// 42 ns without the table (go test -run '^$' -bench StaticRoute; with a
// Go map instead of the short lists, ~3 ns more). A miss adds those
// comparisons to the work that follows; a path of a length no static
// route has skips them on one inlined bit test.
type staticRoutes struct {
	heads routeHeads               // the misses answered without the router
	paths map[string]*methodRoutes // every static path
	lens  uint64                   // bit n: some static path has length n (n < 63); bit 63: some is longer
	// short[n] lists the paths of length n < 63 while there are at most
	// shortMax of them, compared in turn (cheaper than hashing a short
	// key); bit n of crowded says there are more, looked up in paths.
	short   [63][]staticEntry
	crowded uint64
}

// methodRoutes holds a static path's route per method (staticMethods).
type methodRoutes [len(staticMethods)]*route

type staticEntry struct {
	path   string
	routes *methodRoutes
}

const shortMax = 8

// staticMethods are the methods the table holds routes for.
var staticMethods = [...]string{
	fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodPost, fasthttp.MethodPut,
	fasthttp.MethodPatch, fasthttp.MethodDelete, fasthttp.MethodOptions,
}

// staticSlot is method's index in staticMethods, or -1.
func staticSlot(method []byte) int {
	switch string(method) { // the compiler does not allocate for this switch
	case fasthttp.MethodGet:
		return 0
	case fasthttp.MethodHead:
		return 1
	case fasthttp.MethodPost:
		return 2
	case fasthttp.MethodPut:
		return 3
	case fasthttp.MethodPatch:
		return 4
	case fasthttp.MethodDelete:
		return 5
	case fasthttp.MethodOptions:
		return 6
	}
	return -1
}

// add puts rt in the table when path (fx syntax) is static and one the
// one-path step passes unchanged; other routes are left to the router.
func (s *staticRoutes) add(method, path string, rt *route) {
	slot := staticSlot([]byte(method))
	if slot < 0 || len(rt.params) > 0 || !passesUnchanged(path) {
		return
	}
	if s.paths == nil {
		s.paths = map[string]*methodRoutes{}
	}
	m := s.paths[path]
	if m == nil {
		m = new(methodRoutes)
		s.paths[path] = m
		s.index(path, m)
	}
	m[slot] = rt
}

// index records a new path in lens and short.
func (s *staticRoutes) index(path string, m *methodRoutes) {
	n := len(path)
	if n >= 63 {
		s.lens |= 1 << 63 // looked up in paths
		return
	}
	s.lens |= 1 << n
	if s.short[n] = append(s.short[n], staticEntry{path, m}); len(s.short[n]) > shortMax {
		s.short[n], s.crowded = nil, s.crowded|1<<n
	}
}

// passesUnchanged reports whether a request path equal to p is one the
// one-path step (path.go) passes to the router as it is: no '\', no
// escape, and fasthttp's normalisation (the one the request gets) leaves
// it unchanged.
func passesUnchanged(p string) bool {
	if strings.ContainsAny(p, `\%`) {
		return false
	}
	var u fasthttp.URI
	u.SetPath(p)
	return string(u.Path()) == p && string(u.PathOriginal()) == p
}

// lookup returns the route for method and path (as sent), or nil.
func (s *staticRoutes) lookup(method, path []byte) *route {
	if s.lens>>min(uint(len(path)), 63)&1 == 0 {
		return nil // inlined: a miss on length costs no call
	}
	return s.find(method, path)
}

// find is lookup for a path of a length some static path has.
func (s *staticRoutes) find(method, path []byte) *route {
	var m *methodRoutes
	if n := len(path); n < 63 && s.crowded&(1<<n) == 0 {
		for i := range s.short[n] {
			if e := &s.short[n][i]; e.path == b2s(path) {
				m = e.routes
				break
			}
		}
	} else {
		m = s.paths[b2s(path)]
	}
	if m == nil {
		return nil
	}
	if i := staticSlot(method); i >= 0 {
		return m[i]
	}
	return nil
}

// b2s views b as a string without copying, the package's one such view:
// the result must not be kept past b's current contents (a lookup, a
// comparison, a parse, or bytes copied into an escaper's output).
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// routeHeads answers "can any route match this path?" for the misses that
// are cheapest to tell: a request whose first path segment begins with a
// byte the first segment of no route begins with. The router would walk
// its tree, find nothing, try the trailing-slash redirect (which adds or
// drops only a final '/', so never changes the first segment) and call
// its NotFound; dispatch calls it at once, the same 404 through the same
// middleware, hook and observers. Boot builds it from every route the
// router accepted, all methods together, and turns it off where a first
// byte cannot rule a route out:
//
//   - a route whose first segment is a parameter or a catch-all
//     ("/:tenant/...", "/*path") matches any first segment;
//   - Config.RedirectFixedPath redirects case variants, with Unicode case
//     folding ("/HELLO", even "/\u212Aey" for "/key").
//
// With Config.HandleOPTIONS, '*' counts as a first byte: the router answers
// OPTIONS /* for the whole server. The zero value is off: every request
// goes to the router. It runs after the one-path step, on the path the
// router will match.
//
// Cost: one inlined bit test per request that reaches it (not the static
// table's hits), in place of the router's walk and fallbacks on a miss
// (GET /nope: BenchmarkStaticRoute's miss-404 routes in ~15 ns against
// ~30 through the router). A miss whose first byte some route has goes to
// the router as before.
type routeHeads struct {
	on    bool      // set by enable: not off, and no RedirectFixedPath
	off   bool      // some first segment is a parameter or catch-all
	first [4]uint64 // bit c: some route's first segment begins with byte c
}

// add records the first segment of path (fx syntax).
func (h *routeHeads) add(path string) {
	seg := firstSegment(path)
	switch {
	case seg == "": // "/", or an empty segment, which no path the router sees after the one-path step starts with
	case seg[0] == ':' || seg[0] == '*':
		h.off = true
	default:
		h.set(seg[0])
	}
}

func (h *routeHeads) set(c byte) { h.first[c>>6] |= 1 << (c & 63) }

// enable turns the filter on, unless cfg or a route makes it unsound.
func (h *routeHeads) enable(cfg Config) {
	h.on = !h.off && !cfg.RedirectFixedPath
	if cfg.HandleOPTIONS {
		h.set('*') // OPTIONS /*: the router's Allow for the whole server
	}
}

// miss reports whether no route, and no redirect of the router, can
// match a request for path (as the router will match it), whatever its
// method.
func (h *routeHeads) miss(path []byte) bool {
	if !h.on || len(path) < 2 || path[0] != '/' {
		return false // "/" and "*" (OPTIONS *) go to the router
	}
	c := path[1]
	return h.first[c>>6]>>(c&63)&1 == 0
}

// firstSegment is path's first segment: what lies between its leading
// '/' and the next one (path starts with '/').
func firstSegment(path string) string {
	seg := path[1:]
	if i := strings.IndexByte(seg, '/'); i >= 0 {
		seg = seg[:i]
	}
	return seg
}
