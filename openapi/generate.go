package openapi

import (
	"cmp"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/validate"
)

// Config describes the API as a whole and where Mount serves it.
type Config struct {
	Title   string // info.title; default "API"
	Version string // info.version (of the API, not of OpenAPI); default "0.0.0"
	// Description is info.description (CommonMark); default a sentence
	// naming this field, so that linters requiring one pass and the
	// reader of the document sees what to add.
	Description string
	// Contact is info.contact; nil: a contact whose name says to set
	// this field (linters require a contact).
	Contact *Contact
	// License is info.license; nil: a license whose name says to set this
	// field (the document does not say under which terms the API may be
	// used; linters require a license).
	License *License
	// Servers is the servers list; empty: one server at "/", the host
	// that served the document (OpenAPI's own default, written out).
	Servers []Server
	// Tags describe the tags routes use (RouteDoc.Tags, Group.Tags), in
	// this order; a tag used but not described here is listed after
	// them, by name only.
	Tags []Tag

	// Path is where Mount serves the JSON document; default
	// "/openapi.json".
	Path string
	// YAMLPath is where Mount serves the same document as YAML; default
	// Path with its ".json" suffix replaced by ".yaml" ("/openapi.yaml");
	// "-" serves none.
	YAMLPath string
	// DocsPath is where Mount serves the documentation page; default
	// "/docs"; "-" serves none.
	DocsPath string
}

// Contact is info.contact: who answers for the API.
type Contact struct {
	Name  string `json:"name,omitempty"`
	URL   string `json:"url,omitempty"`
	Email string `json:"email,omitempty"`
}

// Server is one entry of the document's servers list.
type Server struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
}

// License is the document's info.license: Name, and either an SPDX
// Identifier ("MIT", "Apache-2.0") or a URL (not both).
type License struct {
	Name       string `json:"name"`
	Identifier string `json:"identifier,omitempty"`
	URL        string `json:"url,omitempty"`
}

// Tag describes one tag of the document's tags list.
type Tag struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

func (c Config) withDefaults() Config {
	c.Title = cmp.Or(c.Title, "API")
	c.Version = cmp.Or(c.Version, "0.0.0")
	c.Path = cmp.Or(c.Path, "/openapi.json")
	c.DocsPath = cmp.Or(c.DocsPath, "/docs")
	c.YAMLPath = cmp.Or(c.YAMLPath, strings.TrimSuffix(c.Path, ".json")+".yaml")
	return c
}

// Version is the OpenAPI version of the documents this package writes.
const Version = "3.1.0"

// methods are the HTTP methods OpenAPI has operations for; a route with
// another method is left out of the document.
var methods = map[string]string{
	http.MethodGet: "get", http.MethodPut: "put", http.MethodPost: "post",
	http.MethodDelete: "delete", http.MethodOptions: "options",
	http.MethodHead: "head", http.MethodPatch: "patch", http.MethodTrace: "trace",
}

// Generate boots app (see fx.App.Boot) and returns its OpenAPI 3.1
// document as JSON values (map[string]any, []any, string, numbers,
// bool), ready for json.Marshal. Routes with RouteDoc.Hidden, and routes
// whose method OpenAPI has no operation for, are left out. Every
// operation has an operationId, a summary (RouteDoc.Summary, or its
// method and path), and its security requirements (an empty list when
// no middleware guarding it declares credentials, see fx.Declaration).
// It returns the boot error when app failed to boot. Cost: one walk of
// the route table and of each schema; it is meant to run once (Mount
// caches its result).
func Generate(app *fx.App, cfg Config) (map[string]any, error) {
	cfg = cfg.withDefaults()
	routes, err := app.Routes()
	if err != nil {
		return nil, err
	}
	g := &generator{opIDs: map[string]int{}, schemas: componentSchemas()}
	paths := map[string]any{}
	var tags []string
	for _, r := range routes {
		m, ok := methods[r.Method]
		if !ok || r.Doc.Hidden {
			continue
		}
		p := oasPath(r.Path)
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		item[m] = g.operation(r)
		for _, t := range operationTags(r) {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	info := map[string]any{"title": cfg.Title, "version": cfg.Version,
		"description": cmpOr(cfg.Description, cfg.Title+". (Set openapi.Config.Description to describe this API.)")}
	if c := cfg.Contact; c != nil {
		info["contact"] = stringsObject("name", c.Name, "url", c.URL, "email", c.Email)
	} else {
		info["contact"] = map[string]any{"name": "Set openapi.Config.Contact"}
	}
	if l := cfg.License; l != nil {
		info["license"] = stringsObject("name", l.Name, "identifier", l.Identifier, "url", l.URL)
	} else {
		info["license"] = map[string]any{"name": "Set openapi.Config.License"}
	}
	// the shared validation schemas only when an operation refers to them
	// (linters flag an unused component)
	for _, name := range []string{"ValidationDetails", "ValidationIssue"} {
		if !refersTo(map[string]any{"paths": paths, "schemas": g.schemas}, "#/components/schemas/"+name, name) {
			delete(g.schemas, name)
		}
	}
	components := map[string]any{"schemas": g.schemas}
	if g.shared != nil {
		components["responses"] = g.shared
	}
	if ss := g.schemes.components(); ss != nil {
		components["securitySchemes"] = ss
	}
	servers := []any{map[string]any{"url": "/"}}
	if len(cfg.Servers) > 0 {
		servers = make([]any, len(cfg.Servers))
		for i, s := range cfg.Servers {
			servers[i] = stringsObject("url", s.URL, "description", s.Description)
		}
	}
	doc := map[string]any{
		"openapi":    Version,
		"info":       info,
		"servers":    servers,
		"paths":      paths,
		"components": components,
	}
	if tl := tagList(cfg.Tags, tags); len(tl) > 0 {
		doc["tags"] = tl
	}
	return doc, nil
}

// refersTo reports whether v (a document part) holds a $ref to ref
// anywhere except inside the schema named skip.
func refersTo(v any, ref, skip string) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == skip {
				continue
			}
			if k == "$ref" && e == ref {
				return true
			}
			if refersTo(e, ref, skip) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if refersTo(e, ref, skip) {
				return true
			}
		}
	}
	return false
}

// tagList is the document's tags: the described ones, then those routes
// use without a description.
func tagList(described []Tag, used []string) []any {
	var out []any
	for _, t := range described {
		out = append(out, stringsObject("name", t.Name, "description", t.Description))
	}
	for _, name := range used {
		if !slices.ContainsFunc(described, func(t Tag) bool { return t.Name == name }) {
			out = append(out, map[string]any{"name": name, "description": "Operations tagged " + name + "."})
		}
	}
	return out
}

// operationTags are the route's tags, or by default one named for the
// first segment of its path ("orders" for /orders/:id; "default" for /
// or a path that starts with a parameter): linters want every operation
// tagged.
func operationTags(r fx.RouteInfo) []string {
	if len(r.Doc.Tags) > 0 {
		return r.Doc.Tags
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(r.Path, "/"), "/")
	if first == "" || first[0] == ':' || first[0] == '*' {
		first = "default"
	}
	return []string{first}
}

// stringsObject is an object of the given key/value pairs whose value is not
// empty.
func stringsObject(kv ...string) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// oasPath turns fx syntax into OpenAPI's: ":id" and "*rest" → "{id}",
// "{rest}".
func oasPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s != "" && (s[0] == ':' || s[0] == '*') {
			segs[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(segs, "/")
}

type generator struct {
	opIDs   map[string]int // operationIds given so far → count
	schemes schemes
	schemas map[string]any // components.schemas: the shared ones and each operation's error schemas
	shared  map[string]any // components.responses: the shared ones operations use; nil: none yet
}

// operation builds the Operation Object of one route.
func (g *generator) operation(r fx.RouteInfo) map[string]any {
	opID := g.operationID(r)
	summary := cmpOr(r.Doc.Summary, r.Method+" "+oasPath(r.Path))
	op := map[string]any{
		"operationId": opID,
		"summary":     summary,
		"description": cmpOr(r.Doc.Description, summary+"."),
		"tags":        stringsAny(operationTags(r)),
	}
	if r.Doc.Deprecated {
		op["deprecated"] = true
	}
	in := inputOf(r)
	decls := declarations(r)
	params := parameters(r, in)
	params = append(params, declaredParams(decls, params)...)
	if len(params) > 0 {
		op["parameters"] = params
	}
	op["security"] = g.schemes.security(decls)
	if in.body != nil {
		rb := map[string]any{"content": jsonContent(in.body)}
		if in.bodyRequired {
			rb["required"] = true
		}
		op["requestBody"] = rb
	}
	op["responses"] = g.responses(r, opID)
	return op
}

// operationID is RouteDoc.OperationID, or one derived from the method and
// path ("getUsersById"); a repeat gets a numeric suffix.
func (g *generator) operationID(r fx.RouteInfo) string {
	id := r.Doc.OperationID
	if id == "" {
		var b strings.Builder
		b.WriteString(strings.ToLower(r.Method))
		for _, s := range strings.Split(r.Path, "/") {
			if s == "" {
				continue
			}
			if s[0] == ':' || s[0] == '*' {
				b.WriteString("By")
				s = s[1:]
			}
			for _, w := range strings.FieldsFunc(s, func(c rune) bool {
				return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
			}) {
				b.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
		id = b.String()
	}
	g.opIDs[id]++
	if n := g.opIDs[id]; n > 1 {
		id += strconv.Itoa(n)
	}
	return id
}

// input is what a route reads from a request, as schemas.
type input struct {
	body         map[string]any // nil: no body schema
	bodyRequired bool
	query        map[string]any // object schema of the query parameters
	headers      map[string]any // object schema of header parameters (typed operations)
	path         map[string]any // schemas of path parameters by name (typed operations)
}

// inputOf reads a route's contract, or its typed operation's input type.
func inputOf(r fx.RouteInfo) input {
	var in input
	if r.Body != nil {
		in.body = schemaOf(r.Body)
		// Optional when the schema accepts an empty body (nil).
		in.bodyRequired = !acceptsNil(r.Body)
	}
	if r.Query != nil {
		in.query, _ = validate.JSONSchemaOf(r.Query)
	}
	if len(r.Input) > 0 {
		opInput(r.Input, &in)
	}
	return in
}

// opInput documents a typed operation's bound fields (fx.Op): each path,
// query and header field a parameter of its Go type, Body the request
// body.
func opInput(fields []fx.InputField, in *input) {
	in.path = map[string]any{}
	add := func(obj *map[string]any, f fx.InputField) {
		if *obj == nil {
			*obj = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		(*obj)["properties"].(map[string]any)[f.Name] = fieldSchema(f)
		if f.Required {
			req, _ := (*obj)["required"].([]any)
			(*obj)["required"] = append(req, f.Name)
		}
	}
	for _, f := range fields {
		switch f.In {
		case "path":
			in.path[f.Name] = fieldSchema(f)
		case "query":
			add(&in.query, f)
		case "header":
			add(&in.headers, f)
		case "body":
			in.body, in.bodyRequired = fieldSchema(f), f.Required
		}
	}
}

// fieldSchema is a bound field's schema as a request sends it: with its
// constraint tags when Op compiled them.
func fieldSchema(f fx.InputField) map[string]any {
	if f.Schema != nil {
		return f.Schema
	}
	return validate.TypeJSONSchema(f.Type)
}

// acceptsNil reports whether s accepts an absent body; a schema that
// panics does not.
func acceptsNil(s validate.Schema) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	res := s.Validate(nil)
	return len(res.Issues) == 0 && res.Err() == nil
}

// schemaOf is the JSON Schema of s, or {} when s does not describe
// itself.
func schemaOf(s validate.Schema) map[string]any {
	if m, ok := validate.JSONSchemaOf(s); ok {
		return m
	}
	return map[string]any{}
}

// parameters lists path, query and header parameters.
func parameters(r fx.RouteInfo, in input) []any {
	var out []any
	for i, name := range r.Params {
		p := map[string]any{"name": name, "in": "path", "required": true}
		s := map[string]any{"type": "string"}
		if ps, ok := in.path[name]; ok {
			s = ps.(map[string]any)
		}
		p["schema"] = s
		if r.CatchAll && i == len(r.Params)-1 {
			p["description"] = "The rest of the path: it spans segments and may contain '/'."
		}
		out = append(out, p)
	}
	out = append(out, objectParams("query", in.query)...)
	out = append(out, objectParams("header", in.headers)...)
	return out
}

// objectParams turns an object schema's properties into parameters of
// location in, required as the object says, sorted by name.
func objectParams(in string, obj map[string]any) []any {
	props, _ := obj["properties"].(map[string]any)
	if len(props) == 0 {
		return nil
	}
	req, _ := obj["required"].([]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]any, 0, len(names))
	for _, k := range names {
		p := map[string]any{"name": k, "in": in, "schema": props[k]}
		if slices.Contains(req, any(k)) {
			p["required"] = true
		}
		out = append(out, p)
	}
	return out
}

func jsonContent(schema map[string]any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

func stringsAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// typeSchema is the schema of a Go value's type, or the value's own when
// it is a validate.Describer.
func typeSchema(v any) map[string]any {
	if d, ok := v.(validate.Describer); ok {
		return d.JSONSchema()
	}
	return validate.TypeJSONSchema(reflect.TypeOf(v))
}
