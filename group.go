package fx

import (
	"strings"
)

// Group registers routes under a common path prefix with middleware of
// their own, which runs after the App's Use middleware and before the
// handler:
//
//	admin := app.Group("/admin", middleware.RequireRoles("admin"))
//	admin.Get("/stats", stats) // GET /admin/stats
//
// A Group's middleware is part of each of its routes' chains, built once at
// Boot, so it costs what App middleware costs (no allocation). It does not
// run for unmatched requests under the prefix: those are the App's 404. Use
// an empty prefix to put middleware on a few routes only.
type Group struct {
	app    *App
	parent *Group
	prefix string // full prefix, parents included
	mws    []Middleware
}

// Group returns a Group of routes under prefix ("" or "/api/v1"; no
// trailing slash) with the given middleware.
func (a *App) Group(prefix string, mw ...Middleware) *Group {
	return newGroup(a, nil, prefix, mw)
}

// Group returns a sub-group: its prefix is appended to g's, its middleware
// runs after g's.
func (g *Group) Group(prefix string, mw ...Middleware) *Group {
	return newGroup(g.app, g, g.prefix+prefix, mw)
}

func newGroup(a *App, parent *Group, prefix string, mw []Middleware) *Group {
	g := &Group{app: a, parent: parent, prefix: strings.TrimSuffix(prefix, "/")}
	a.register("Group", func() { g.mws = append(g.mws, mw...) })
	return g
}

// Use appends middleware to the group (before Boot, like App.Use; it
// applies to the group's routes whether registered before or after).
func (g *Group) Use(mw ...Middleware) {
	g.app.register("Group.Use", func() { g.mws = append(g.mws, mw...) })
}

// middleware returns the group's whole middleware, outermost first.
func (g *Group) middleware() []Middleware {
	if g == nil {
		return nil
	}
	return append(g.parent.middleware(), g.mws...)
}

// Handle registers h for method and the group's prefix + path.
func (g *Group) Handle(method, path string, h Handler) {
	g.app.addRoute(routeSpec{method: method, path: g.prefix + path, handler: h, group: g})
}

// Route registers a route contract under the group's prefix.
func (g *Group) Route(r Route) {
	g.app.addRoute(routeSpec{method: r.Method, path: g.prefix + r.Path, handler: r.Handler,
		body: r.Body, query: r.Query, group: g})
}

// Get registers h for GET (and HEAD) requests to the group's prefix + path.
func (g *Group) Get(path string, h Handler) { g.Handle("GET", path, h) }

// Post registers h for POST requests to the group's prefix + path.
func (g *Group) Post(path string, h Handler) { g.Handle("POST", path, h) }

// Put registers h for PUT requests to the group's prefix + path.
func (g *Group) Put(path string, h Handler) { g.Handle("PUT", path, h) }

// Patch registers h for PATCH requests to the group's prefix + path.
func (g *Group) Patch(path string, h Handler) { g.Handle("PATCH", path, h) }

// Delete registers h for DELETE requests to the group's prefix + path.
func (g *Group) Delete(path string, h Handler) { g.Handle("DELETE", path, h) }

// Head registers h for HEAD requests to the group's prefix + path.
func (g *Group) Head(path string, h Handler) { g.Handle("HEAD", path, h) }

// Options registers h for OPTIONS requests to the group's prefix + path.
func (g *Group) Options(path string, h Handler) { g.Handle("OPTIONS", path, h) }
