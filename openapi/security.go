package openapi

import (
	"slices"
	"strconv"
	"strings"

	"github.com/fxhq/fx"
)

// Security and middleware parameters come from what the middleware
// guarding a route declare (fx.Declare): each scheme becomes an entry
// of components.securitySchemes, each route's schemes its security
// requirements, and declared parameters (a tenant header) its parameters.

// schemes names the security schemes of one document: two different
// schemes declared under one name get distinct names (the second
// "name2"), the same scheme declared twice keeps one.
type schemes struct {
	byName map[string]fx.SecuritySchemeDoc
	names  map[fx.SecuritySchemeDoc]string
}

// name returns the document's name of s, registering it.
func (ss *schemes) name(s fx.SecuritySchemeDoc) string {
	if n, ok := ss.names[s]; ok {
		return n
	}
	if ss.byName == nil {
		ss.byName, ss.names = map[string]fx.SecuritySchemeDoc{}, map[fx.SecuritySchemeDoc]string{}
	}
	base := s.Name
	if base == "" {
		base = s.Type
	}
	n := base
	for i := 2; ; i++ {
		if _, taken := ss.byName[n]; !taken {
			break
		}
		n = base + strconv.Itoa(i)
	}
	ss.byName[n], ss.names[s] = s, n
	return n
}

// components is components.securitySchemes; nil when no route declared
// one.
func (ss *schemes) components() map[string]any {
	if len(ss.byName) == 0 {
		return nil
	}
	out := make(map[string]any, len(ss.byName))
	for n, s := range ss.byName {
		out[n] = stringsObject("type", s.Type, "scheme", s.Scheme, "bearerFormat", s.BearerFormat,
			"in", s.In, "name", s.Param, "description", s.Description)
	}
	return out
}

// security is the operation's security requirements: a request must
// satisfy every middleware declaring Security, each with one of its
// schemes, so the requirements are the combinations of one scheme per
// such middleware (an Anonymous one may also be skipped, unless a
// middleware of the route declares RequiresIdentity and nothing else is
// presented). An empty list (no credentials needed) when nothing
// declares security.
func (ss *schemes) security(decls []fx.Declaration) []any {
	requiresIdentity := slices.ContainsFunc(decls, func(d fx.Declaration) bool { return d.RequiresIdentity })
	combos := [][]string{{}} // each a set of scheme names, sorted
	for _, d := range decls {
		if len(d.Security) == 0 {
			continue
		}
		var next [][]string
		for _, c := range combos {
			if d.Anonymous {
				next = append(next, c)
			}
			for _, s := range d.Security {
				n := ss.name(s)
				nc := slices.Clone(c)
				if !slices.Contains(nc, n) {
					nc = append(nc, n)
					slices.Sort(nc)
				}
				next = append(next, nc)
			}
		}
		combos = next
	}
	out := []any{}
	seen := map[string]bool{}
	for _, c := range combos {
		if len(c) == 0 && (requiresIdentity || len(combos) == 1) {
			continue // an identity is required, or nothing declared security
		}
		k := strings.Join(c, " ")
		if seen[k] {
			continue
		}
		seen[k] = true
		req := map[string]any{}
		for _, n := range c {
			req[n] = []any{}
		}
		out = append(out, req)
	}
	return out
}

// declarations are what the route's middleware declare, outermost first.
func declarations(r fx.RouteInfo) []fx.Declaration {
	out := make([]fx.Declaration, 0, len(r.Middleware))
	for _, mw := range r.Middleware {
		if d := fx.DeclarationOf(mw); d.AppliesTo(r.Method) {
			out = append(out, d)
		}
	}
	return out
}

// declaredParams are the parameters the route's middleware declare, in
// order, leaving out those the route itself has (same location and name;
// header names compare case-insensitively) and repeats.
func declaredParams(decls []fx.Declaration, own []any) []any {
	key := func(in, name string) string {
		if in == "header" {
			name = strings.ToLower(name)
		}
		return in + " " + name
	}
	seen := map[string]bool{}
	for _, p := range own {
		m := p.(map[string]any)
		seen[key(m["in"].(string), m["name"].(string))] = true
	}
	var out []any
	for _, d := range decls {
		for _, p := range d.Parameters {
			k := key(p.In, p.Name)
			if seen[k] {
				continue
			}
			seen[k] = true
			schema := p.Schema
			if schema == nil {
				schema = map[string]any{"type": "string"}
			}
			o := map[string]any{"name": p.Name, "in": p.In, "schema": schema}
			if p.Required {
				o["required"] = true
			}
			if p.Description != "" {
				o["description"] = p.Description
			}
			out = append(out, o)
		}
	}
	return out
}
