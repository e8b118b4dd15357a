package fx

import "github.com/valyala/fasthttp"

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

// App returns the App these routes register on: the App itself, or a
// Group's App. Packages that mount handlers with resources of their own
// (static files) use it to close them at Shutdown (App.OnShutdown) and
// to report a configuration error at Boot (App.Register).
func (a *routes) App() *App { return a.app }

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
