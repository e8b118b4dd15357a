package fx

import (
	"slices"
	"strings"
)

// Group registers routes under a common path prefix with middleware of
// their own, which runs after the App's Use middleware and before each
// route's Route.Middleware, its contract and its handler:
//
//	admin := app.Group("/admin", middleware.RequireRoles("admin"))
//	admin.Get("/stats", stats) // GET /admin/stats
//
// A Group's middleware is part of each of its routes' chains, built once at
// Boot, so it costs what App middleware costs (no allocation). It does not
// run for unmatched requests under the prefix: those are the App's 404. Use
// an empty prefix to put middleware on a few routes only, and
// Route.Middleware for a single route.
type Group struct {
	routes // Handle, Get, ..., Route under the prefix (router.go); routes.prefix is the full prefix, parents included
	parent *Group
	mws    []Middleware
	doc    RouteDoc // defaults for its routes' documentation (Doc, Tags)
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
	g := &Group{parent: parent}
	g.routes = routes{app: a, group: g, prefix: strings.TrimSuffix(prefix, "/")}
	a.register("Group", func() { g.mws = append(g.mws, mw...) })
	return g
}

// App returns the App the group's routes register on. Packages that
// mount handlers with resources of their own (static files) use it to
// close them at Shutdown (App.OnShutdown) and to report a configuration
// error at Boot (App.Register).
func (g *Group) App() *App { return g.app }

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

// Doc sets documentation defaults for the group's routes (see
// RouteInfo.Doc for how they combine with a route's own Doc and with
// parent groups): typically Tags, or Deprecated for a whole API version.
// Like Use, it must be called before Boot. It returns g.
func (g *Group) Doc(d RouteDoc) *Group {
	d.Tags = slices.Clone(d.Tags)
	g.app.register("Group.Doc", func() { g.doc = d })
	return g
}

// Tags adds tags to the group's documentation defaults (see Doc). It
// returns g.
func (g *Group) Tags(tags ...string) *Group {
	g.app.register("Group.Tags", func() { g.doc.Tags = append(slices.Clip(g.doc.Tags), tags...) })
	return g
}

// docs returns the documentation defaults of g's groups, outermost first.
func (g *Group) docs() []RouteDoc {
	if g == nil {
		return nil
	}
	return append(g.parent.docs(), g.doc)
}
