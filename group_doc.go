package fx

import "slices"

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
