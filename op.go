package fx

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/fxhq/fx/internal/jsonscan"
	"github.com/fxhq/fx/internal/tagengine"
	"github.com/fxhq/fx/validate"
)

// Typed operations: a handler that takes its input as a struct and returns
// its output as a value, with the binding, the validation and the
// documentation derived from the types.
//
//	type GetUser struct {
//		ID      string `path:"id"`
//		Verbose bool   `query:"verbose"`
//		Key     string `header:"X-Key,required"`
//	}
//	fx.Op(app, "GET", "/users/:id", func(c *fx.Ctx, in *GetUser) (*User, error) { ... })
//
// In's fields are bound from tags: `path:"name"` (a path parameter of the
// route, always required), `query:"name"` and `header:"Name"` (optional
// unless the tag adds ",required" or its validate tag says required); a
// field named Body is the JSON request body, decoded straight into the
// field and checked as validate.Struct does: the type of every value and
// the constraint tags of every field (`validate:"required,min=3"`,
// `pattern:"..."`, docs/tags.md), type and rule issues together. A
// non-pointer Body is required: a missing body, `null`, and (when its
// type has required fields) `{}` are each refused with their issue; a
// pointer Body may be absent or null (then it stays nil). Path, query and
// header fields read their raw values with the one reading that
// validate.QueryStruct uses (docs/tags.md has the table): a string, a
// bool (validate.ParseBool: 1, t, TRUE, true, True, and 0, f, F, FALSE,
// false, False), an integer or float kind (a JSON number: not +5, 05,
// 0x10, NaN or Inf; within the type's range), time.Time (RFC 3339),
// []byte (base64), an encoding.TextUnmarshaler, a pointer to one of
// those (nil when absent), or (query only) a slice of them, one element
// per repeated key. They take the same constraint tags, checked after the
// value is read (an absent optional value is its zero value, as an absent
// body field is), and a `default:"v"` tag (also on the Body's own fields):
// the value when the request leaves it out, read and checked by the
// field's own rules at start-up, and the schema's default. The fields of
// an embedded struct are bound as the outer struct's own, as
// encoding/json flattens them. Every failure of every field is collected into
// one 422 FX_VALIDATION_ERROR (locations "body", "path", "query",
// "header"; the envelope of route contracts, bounded by Config.MaxIssues).
// A constraint tag that cannot be honoured (an unknown word, a word that
// does not fit the field's type, a bad parameter or regular expression),
// and a field that cannot be bound (a type of no source, a path tag
// naming no parameter, two fields bound to one name, a default its rules
// refuse) are configuration errors that Boot reports (FX_INTERNAL_ERROR naming the
// route, the type, the field and the word; joined with the other
// configuration errors), never ignored. Out is
// written with c.JSON and the status of the first OpOption-declared
// Response (default 200); return a non-nil *Out (nil is sent as null).
//
// Cost: the binding plan and the constraint plans are built once, at Op;
// per request, one allocation for the In (with a body of at most 1 KiB,
// it holds room for the body's strings, half the body's length: a string
// the handler keeps keeps the In alive), a parse per field (a string
// field costs its copy, a pointer field its value, a slice field its
// elements; a query field is a pass over the query's keys), for a body the one pass that decodes it (one
// allocation per slice and pointer; the strings that do not fit the
// room take one more), and
// the constraint checks, which allocate nothing on a valid input (see
// validate's rules_run.go for the exceptions: url, uri, maps). See
// BenchmarkOp and BenchmarkOpConstraints for the comparison with a
// handler doing the same by hand.

// OpOption edits the Route a typed operation registers: documentation
// (Doc, Errors, Responses) and Route.Middleware. Its Method, Path, Body,
// Query and Handler are the operation's own; an option changing them is
// overridden.
type OpOption func(r *Route)

// Router is what typed operations register on: *App and *Group.
type Router interface {
	Route(r Route)
}

// InputField is one bound field of a typed operation's input (see
// RouteInfo.Input).
type InputField struct {
	In       string // "path", "query", "header" or "body"
	Name     string // parameter or header name; "" for the body
	Required bool
	Type     reflect.Type
	// Schema is the JSON Schema of the value a request sends: its type
	// with the keywords of its constraint tags (slices and maps nullable
	// only when a pointer or omitempty says so). Computed once, at Op;
	// read it, do not modify it.
	Schema map[string]any
	// Constrained: the field has constraint tags (validate, pattern), so
	// a value of its type can still be refused.
	Constrained bool
}

// Op registers a typed operation (see the package documentation above) on
// reg. It panics when In is not a struct; a field it cannot bind is a
// configuration error that Boot reports with the others.
func Op[In, Out any](reg Router, method, path string, h func(c *Ctx, in *In) (*Out, error), opts ...OpOption) {
	plan, tagErr := planOf(reflect.TypeFor[In](), path)
	r := Route{}
	for _, o := range opts {
		o(&r)
	}
	status := 200
	if len(r.Responses) > 0 && r.Responses[0].Status != 0 {
		status = r.Responses[0].Status
	}
	r.Method, r.Path, r.Body, r.Query = method, path, nil, nil
	r.Handler = func(c *Ctx) error {
		var in *In
		var room []byte
		if plan.body != nil {
			in, room = newIn[In](len(c.rc.Request.Body()))
		} else {
			in = new(In)
		}
		if err := plan.bind(c, unsafe.Pointer(in), room); err != nil {
			return err
		}
		out, err := h(c, in)
		if err != nil {
			return err
		}
		return c.writeJSON(status, out, true) // nil slices and maps as [] and {}: the document says so
	}
	r.op = &opTypes{in: reflect.TypeFor[In](), out: reflect.TypeFor[Out](), fields: plan.info(), err: tagErr}
	reg.Route(r)
}

// opPlan binds one input type.
type opPlan struct {
	fields []opField
	body   *opBody
}

type opField struct {
	loc, name string
	required  bool
	off       uintptr
	typ       reflect.Type
	param     tagengine.Param                 // how its raw strings read (validate's one reading)
	rules     tagengine.Field[validate.Issue] // its constraint tags
	def       reflect.Value                   // its default, set when the value is absent; invalid: none
	defDoc    any                             // the default as the document writes it
}

type opBody struct {
	off uintptr
	typ reflect.Type // the field's type
	ptr bool         // *B: optional, allocated when a body is sent
	dec tagengine.Body[validate.Issue]
	// defaults: the body's value before decoding, its fields' default
	// tags applied (invalid: none); a key the body leaves out keeps it.
	defaults reflect.Value
	defDoc   map[string]any // JSON name -> the default as the document writes it
}

// opLocations are the tags that bind a field.
var opLocations = [...]string{"path", "query", "header"}

// planOf builds the binding plan of t. It panics when t is not a struct;
// every field it cannot bind (a type no source can carry, a path tag
// naming no parameter, two fields bound to one name, a default its own
// rules refuse...) and every constraint tag that cannot be honoured is
// returned (joined), for Boot to report.
func planOf(t reflect.Type, path string) (*opPlan, error) {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("fx.Op: input type %s is not a struct", t))
	}
	var params []string
	if path != "" { // "": a Group's own path (on an App, Boot reports it)
		var err error
		if _, params, err = translatePath(path); err != nil {
			panic("fx.Op: " + err.Error())
		}
	}
	w := &opWalk{top: t, path: path, params: params, p: &opPlan{}, names: map[string]string{}}
	w.walk(t, 0, map[reflect.Type]bool{})
	return w.p, errors.Join(w.errs...)
}

// opWalk is planOf's walk over the input struct and, flattened as
// encoding/json flattens them, its embedded structs.
type opWalk struct {
	top    reflect.Type
	path   string
	params []string
	p      *opPlan
	errs   []error
	names  map[string]string // "query:limit" -> the Go field bound to it
}

func (w *opWalk) fail(f reflect.StructField, format string, args ...any) {
	w.errs = append(w.errs, fmt.Errorf("fx.Op: field %s.%s: %s", w.top, f.Name, fmt.Sprintf(format, args...)))
}

// walk adds the fields of struct t, which lies at offset base of the
// input; open holds the embedded structs being walked.
func (w *opWalk) walk(t reflect.Type, base uintptr, open map[reflect.Type]bool) {
	open[t] = true
	defer delete(open, t)
	for i := range t.NumField() {
		f := t.Field(i)
		loc, tag, n := "", "", 0
		for _, l := range opLocations {
			if v, ok := f.Tag.Lookup(l); ok {
				loc, tag, n = l, v, n+1
			}
		}
		if f.Anonymous && n == 0 {
			w.embedded(f, base, open)
			continue
		}
		switch {
		case n > 1:
			w.fail(f, "one field binds from one place, not from %d", n)
			continue
		case n == 1 && !f.IsExported():
			w.fail(f, "an unexported field cannot be bound: export it")
			continue
		case !f.IsExported():
			continue
		case n == 0 && f.Name == "Body":
			w.body(f, base)
			continue
		case n == 0:
			for _, other := range [...]string{"validate", "pattern", "default"} {
				if _, ok := f.Tag.Lookup(other); ok {
					w.fail(f, "a %s tag on a field that is not bound: add a path, query or header tag, or name it Body", other)
					break
				}
			}
			continue
		}
		w.field(t, f, base, loc, tag)
	}
}

// embedded flattens the embedded struct field f.
func (w *opWalk) embedded(f reflect.StructField, base uintptr, open map[reflect.Type]bool) {
	ft := f.Type
	switch {
	case ft.Kind() == reflect.Struct && !open[ft]:
		w.walk(ft, base+f.Offset, open)
	case ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct && binds(ft.Elem(), map[reflect.Type]bool{}):
		w.fail(f, "an embedded pointer to a struct with bound fields cannot be bound: embed %s itself", ft.Elem())
	}
}

// binds reports whether struct t has a bound field or a Body, embedded
// ones included.
func binds(t reflect.Type, open map[reflect.Type]bool) bool {
	open[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		for _, l := range opLocations {
			if _, ok := f.Tag.Lookup(l); ok {
				return true
			}
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Name == "Body" || (f.Anonymous && ft.Kind() == reflect.Struct && !open[ft] && binds(ft, open)) {
			return true
		}
	}
	return false
}

// body adds the Body field f.
func (w *opWalk) body(f reflect.StructField, base uintptr) {
	if w.p.body != nil {
		w.fail(f, "a second Body (an embedded struct's): the input has one body")
		return
	}
	b := &opBody{off: base + f.Offset, typ: f.Type, ptr: f.Type.Kind() == reflect.Pointer}
	if _, ok := f.Tag.Lookup("default"); ok {
		w.fail(f, "a default on the Body: put default tags on the body's fields")
	}
	et := f.Type
	if b.ptr {
		et = et.Elem()
	}
	dec, err := tagengine.For[validate.Issue]().Body(et)
	if err != nil {
		w.errs = append(w.errs, err)
		dec, _ = tagengine.For[validate.Issue]().Body(reflect.TypeFor[struct{}]()) // never run: Boot fails
	}
	b.dec = dec
	w.p.body = b
	if err == nil && et.Kind() == reflect.Struct {
		w.bodyDefaults(b, et, et, nil, 0)
	}
}

// bodyDefaults reads the default tags of the body's own fields (those of
// its embedded structs included, as JSON flattens them) into b; a default
// deeper in the body is refused, as is one its field's rules refuse.
func (w *opWalk) bodyDefaults(b *opBody, et, t reflect.Type, index []int, depth int) {
	for i := range t.NumField() {
		f := t.Field(i)
		idx := append(slices.Clone(index), i)
		dv, has := f.Tag.Lookup("default")
		if f.Anonymous && f.Type.Kind() == reflect.Struct && !has {
			w.bodyDefaults(b, et, f.Type, idx, depth)
			continue
		}
		if !has {
			if depth == 0 && hasDefault(f.Type, map[reflect.Type]bool{}) {
				w.fail(f, "a default tag below the Body's own fields (in a nested struct, a list, a map or a pointer) is not applied: default the Body's own fields")
			}
			continue
		}
		jname, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if jname == "" {
			jname = f.Name
		}
		param, err := tagengine.For[validate.Issue]().Param(f.Type)
		switch {
		case jname == "-" || !f.IsExported():
			err = errors.New("a default on a field JSON never sets")
		case err == nil && (param.Slice() || f.Type.Kind() == reflect.Pointer):
			err = fmt.Errorf("a default on a %s (a list or an optional value): use a single value type", f.Type)
		}
		if err != nil {
			w.fail(f, "%v", err)
			continue
		}
		rules, err := tagengine.For[validate.Issue]().Field(t, f)
		if err != nil {
			continue // reported by the body's decoder
		}
		if rules.Required() {
			w.fail(f, "a default on a required field, which is never absent")
			continue
		}
		v, doc, ok := w.defaultOf(f, param, rules, dv)
		if !ok {
			continue
		}
		if !b.defaults.IsValid() {
			b.defaults, b.defDoc = reflect.New(et).Elem(), map[string]any{}
		}
		b.defaults.FieldByIndex(idx).Set(v)
		b.defDoc[jname] = doc
	}
}

// hasDefault reports whether a default tag stands anywhere below t.
func hasDefault(t reflect.Type, open map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || open[t] {
		return false
	}
	open[t] = true
	for i := range t.NumField() {
		if _, ok := t.Field(i).Tag.Lookup("default"); ok || hasDefault(t.Field(i).Type, open) {
			return true
		}
	}
	return false
}

// field adds the field f, bound from loc by tag.
func (w *opWalk) field(owner reflect.Type, f reflect.StructField, base uintptr, loc, tag string) {
	name, opt, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	key := loc + ":" + name
	if loc == "header" {
		key = strings.ToLower(key) // header names are case-insensitive
	}
	if other, ok := w.names[key]; ok {
		w.fail(f, "%s %q is bound to %s already", loc, name, other)
		return
	}
	w.names[key] = f.Name
	of := opField{loc: loc, name: name, required: loc == "path" || opt == "required", off: base + f.Offset, typ: f.Type}
	if opt != "" && opt != "required" {
		w.fail(f, "unknown option %q in %s tag %q (the one option is required)", opt, loc, tag)
	}
	param, err := tagengine.For[validate.Issue]().Param(f.Type)
	if err == nil && param.Slice() && loc != "query" {
		err = fmt.Errorf("cannot bind a %s from the %s: a list is read from a query's repeated key", f.Type, loc)
	}
	if err != nil {
		w.fail(f, "%v", err)
		return
	}
	of.param = param
	if loc == "path" && !containsString(w.params, name) {
		w.fail(f, "path %q has no parameter %q", w.path, name)
		return
	}
	rules, err := tagengine.For[validate.Issue]().Field(owner, f)
	if err != nil {
		w.errs = append(w.errs, err)
	} else if rules.Required() {
		of.required = true
	}
	of.rules = rules
	if dv, ok := f.Tag.Lookup("default"); ok {
		w.setDefault(&of, f, dv)
	}
	w.p.fields = append(w.p.fields, of)
}

// setDefault reads the default tag dv of field f: the one reading of the
// field's raw values, then its rules, at start-up.
func (w *opWalk) setDefault(of *opField, f reflect.StructField, dv string) {
	switch {
	case of.loc == "path":
		w.fail(f, "a default on a path parameter, which is always present")
		return
	case of.required:
		w.fail(f, "a default on a required field, which is never absent")
		return
	case of.param.Slice() || f.Type.Kind() == reflect.Pointer:
		w.fail(f, "a default on a %s (a list or an optional value): use a %s", f.Type, "single value type")
		return
	}
	if v, doc, ok := w.defaultOf(f, of.param, of.rules, dv); ok {
		of.def, of.defDoc = v, doc
	}
}

// defaultOf reads the default tag dv of field f with the field's one
// reading of raw values, then checks it with the field's rules: the
// value, and the value as the document writes it (a number or a boolean
// as such, anything else as written).
func (w *opWalk) defaultOf(f reflect.StructField, param tagengine.Param, rules tagengine.Field[validate.Issue], dv string) (v reflect.Value, doc any, ok bool) {
	v = reflect.New(f.Type).Elem()
	if msg := param.Set(dv, true, v.Addr().UnsafePointer()); msg != "" {
		w.fail(f, "default %q: %s", dv, msg)
		return v, nil, false
	}
	if rules != nil {
		if issues := rules.Check(v.Addr().UnsafePointer(), 0); len(issues) > 0 {
			w.fail(f, "default %q: %s", dv, issues[0].Message)
			return v, nil, false
		}
	}
	doc = dv
	textT := reflect.TypeFor[encoding.TextUnmarshaler]()
	switch v.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		if !v.Type().Implements(textT) && !reflect.PointerTo(v.Type()).Implements(textT) {
			doc = v.Interface()
		}
	}
	return v, doc, true
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// info lists the plan for RouteInfo.Input.
func (p *opPlan) info() []InputField {
	var out []InputField
	for _, f := range p.fields {
		in := InputField{In: f.loc, Name: f.name, Required: f.required, Type: f.typ}
		if f.rules != nil { // nil: its tags do not compile (Boot fails)
			in.Constrained, in.Schema = f.rules.Constrained(), f.rules.JSONSchema()
			if f.def.IsValid() {
				in.Schema["default"] = f.defDoc
			}
		}
		out = append(out, in)
	}
	if p.body != nil {
		schema := p.body.dec.JSONSchema()
		if props, ok := schema["properties"].(map[string]any); ok {
			for name, doc := range p.body.defDoc {
				if m, ok := props[name].(map[string]any); ok {
					m["default"] = doc
				}
			}
		}
		out = append(out, InputField{In: "body", Required: !p.body.ptr, Type: p.body.typ, Schema: schema})
	}
	return out
}

// newIn allocates the In of a request whose body is n bytes long, when n
// is at most 1 KiB, with room for the body's strings in the same
// allocation: half the body's length, rounded up to 32, 64, 128, 256 or
// 512 bytes (strings are seldom more than half of a body: the keys, the
// quotes and the other values take the rest). The one-pass decoder
// copies the strings there while they fit (validate's decode.go), and
// the rest, if any, into a buffer of their own; a string the handler
// keeps keeps the In alive with it. A longer body gets a bare In.
func newIn[In any](n int) (*In, []byte) {
	switch {
	case n <= 64:
		return inWithRoom[In, [32]byte]()
	case n <= 128:
		return inWithRoom[In, [64]byte]()
	case n <= 256:
		return inWithRoom[In, [128]byte]()
	case n <= 512:
		return inWithRoom[In, [256]byte]()
	case n <= 1024:
		return inWithRoom[In, [512]byte]()
	}
	return new(In), nil
}

// inWithRoom allocates an In and a Room byte array together, in one
// allocation (newIn's size classes are its Room types), and returns the
// room as an empty slice of the array's capacity.
func inWithRoom[In, Room any]() (*In, []byte) {
	x := new(struct {
		in   In
		room Room
	})
	return &x.in, unsafe.Slice((*byte)(unsafe.Pointer(&x.room)), unsafe.Sizeof(x.room))[:0]
}

// bind fills the In at base from the request, or returns the 422 of every
// failure (at most Config.MaxIssues, then truncated). room is newIn's.
func (p *opPlan) bind(c *Ctx, base unsafe.Pointer, room []byte) error {
	max := c.app.cfg.MaxIssues
	var issues []ValidationIssue
	if p.body != nil {
		issues = p.body.bind(c, base, room, max+1)
	}
	for i := range p.fields {
		if len(issues) > max {
			break
		}
		f := &p.fields[i]
		at := unsafe.Add(base, f.off)
		var check bool
		if issues, check = f.bind(c, at, issues, max+1); check && f.rules != nil {
			for _, is := range f.rules.Check(at, max+1-len(issues)) {
				issues = append(issues, ValidationIssue{Location: f.loc, Path: append([]string{f.name}, is.Path...), Message: is.Message})
			}
		}
	}
	if len(issues) == 0 {
		return nil
	}
	truncated := len(issues) > max
	if truncated {
		issues = issues[:max]
	}
	sortIssues(issues)
	return newValidationError(issues, truncated)
}

func (b *opBody) bind(c *Ctx, base unsafe.Pointer, room []byte, limit int) []ValidationIssue {
	raw := c.rc.Request.Body()
	if isBlank(raw) {
		if b.ptr {
			return nil
		}
		return []ValidationIssue{{Location: "body", Path: []string{}, Message: emptyBodyMessage}}
	}
	if !jsonContentType(c) {
		return []ValidationIssue{contentTypeIssue}
	}
	if jsonscan.IsNull(raw) {
		if b.ptr {
			return nil // an optional body sent as null: absent, the field stays nil
		}
		return []ValidationIssue{{Location: "body", Path: []string{}, Message: "Expected " + jsonKind(b.typ) + ", got null"}}
	}
	field := unsafe.Add(base, b.off)
	at := field // where the body's value goes
	if b.ptr {
		at = reflect.New(b.typ.Elem()).UnsafePointer()
		*(*unsafe.Pointer)(field) = at
	}
	if b.defaults.IsValid() { // the keys the body leaves out keep them
		reflect.NewAt(b.defaults.Type(), at).Elem().Set(b.defaults)
	}
	// one pass: the strict grammar (validate.CheckJSON's verdict), the
	// decode into the field and its constraint tags
	issues, err := b.dec.DecodeAt(raw, at, room, limit)
	if err != nil {
		if b.ptr {
			*(*unsafe.Pointer)(field) = nil
		}
		return []ValidationIssue{jsonIssue(err)}
	}
	if len(issues) > 0 && b.defaults.IsValid() {
		issues = b.absentDefaults(raw, issues)
	}
	return appendIssues(nil, "body", issues)
}

// absentDefaults drops, from the issues of a body the decoder refused,
// those at a defaulted field the body leaves out: the decoder's second
// reading (the rules of the fields that type-checked) starts from a zero
// value, where the request has the default, which its rules accept.
// Cost: the refusal path of a body with defaults only (a tree of it).
func (b *opBody) absentDefaults(raw []byte, issues []validate.Issue) []validate.Issue {
	tree, _ := validate.DecodeJSON(raw)
	m, _ := tree.(map[string]any)
	kept := issues[:0:0]
	for _, is := range issues {
		if len(is.Path) == 1 {
			if _, def := b.defDoc[is.Path[0]]; def {
				if _, sent := m[is.Path[0]]; !sent {
					continue
				}
			}
		}
		kept = append(kept, is)
	}
	return kept
}

// bind sets one field from its source (its default when the value is
// absent), appending the issues of its value (at most limit in all);
// check says whether the value is there for the constraint tags.
func (f *opField) bind(c *Ctx, at unsafe.Pointer, issues []ValidationIssue, limit int) (_ []ValidationIssue, check bool) {
	var raw []byte
	switch f.loc {
	case "path":
		s := c.Param(f.name)
		if s == "" {
			return f.issue(issues, "Required"), false
		}
		if msg := f.param.Set(s, true, at); msg != "" {
			return f.issue(issues, msg), false
		}
		return issues, true
	case "query":
		args := c.rc.QueryArgs()
		n := 0
		for k, v := range args.All() {
			if string(k) == f.name {
				n++
				raw = v
			}
		}
		switch {
		case n > 1 && !f.param.Slice():
			return f.issue(issues, "Expected a single value, got "+strconv.Itoa(n)), false
		case n > 1 || (n == 1 && len(raw) > 0 && f.param.Slice()):
			return f.bindList(args.All(), at, n, issues, limit)
		case n == 1 && len(raw) == 0 && f.param.EmptyIsValue() && !f.required:
			if msg := f.param.Set("", true, at); msg != "" { // a string kind's value
				return f.issue(issues, msg), false
			}
			return issues, true
		}
	case "header":
		raw = c.rc.Request.Header.Peek(f.name)
	}
	if len(raw) == 0 { // absent, or empty: no value
		switch {
		case f.def.IsValid():
			reflect.NewAt(f.typ, at).Elem().Set(f.def)
		case f.required:
			return f.issue(issues, "Required"), false
		}
		return issues, true
	}
	if msg := f.param.Set(b2s(raw), false, at); msg != "" {
		return f.issue(issues, msg), false
	}
	return issues, true
}

// bindList sets a slice field from the n values of its key among args,
// each element's issue at its index.
func (f *opField) bindList(args func(yield func(k, v []byte) bool), at unsafe.Pointer, n int, issues []ValidationIssue, limit int) ([]ValidationIssue, bool) {
	elem, size := f.param.Grow(at, n)
	i, ok := 0, true
	for k, v := range args {
		if string(k) != f.name {
			continue
		}
		if msg := f.param.Set(b2s(v), false, unsafe.Add(elem, uintptr(i)*size)); msg != "" {
			ok = false
			if len(issues) < limit {
				issues = append(issues, ValidationIssue{Location: f.loc, Path: []string{f.name, strconv.Itoa(i)}, Message: msg})
			}
		}
		i++
	}
	return issues, ok
}

func (f *opField) issue(issues []ValidationIssue, msg string) []ValidationIssue {
	return append(issues, ValidationIssue{Location: f.loc, Path: []string{f.name}, Message: msg})
}
