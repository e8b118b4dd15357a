package fx

import (
	"errors"
	"fmt"
	"reflect"
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
// header fields are string, bool (read by validate.ParseBool: 1, t,
// TRUE, true, True, and 0, f, F, FALSE, false, False), an integer or
// float kind, or (query only) []string, and take the same constraint
// tags, checked after the value is parsed (an absent optional value is
// its zero value, as an absent body field is). Every failure of every field is collected into
// one 422 FX_VALIDATION_ERROR (locations "body", "path", "query",
// "header"; the envelope of route contracts, bounded by Config.MaxIssues).
// A constraint tag that cannot be honoured (an unknown word, a word that
// does not fit the field's type, a bad parameter or regular expression)
// is a configuration error that Boot reports (FX_INTERNAL_ERROR naming the
// route, the type, the field and the word; joined with the other
// configuration errors), never ignored. Out is
// written with c.JSON and the status of the first OpOption-declared
// Response (default 200); return a non-nil *Out (nil is sent as null).
//
// Cost: the binding plan and the constraint plans are built once, at Op;
// per request, one allocation for the In (with a body of at most 1 KiB,
// it holds room for the body's strings, half the body's length: a string
// the handler keeps keeps the In alive), a parse per field (a string
// field costs its copy), for a body the one pass that decodes it (one
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

// Router is what routes are registered on: *App and *Group. Typed
// operations (Op) and static.Mount take one.
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
// reg. It panics when In is not a struct, a tagged field has a type it
// cannot bind, or a path tag names no parameter of path: programming
// errors found at start-up.
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
		return c.JSON(status, out)
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
	rules     tagengine.Field[validate.Issue] // its constraint tags
}

type opBody struct {
	off uintptr
	typ reflect.Type // the field's type
	ptr bool         // *B: optional, allocated when a body is sent
	dec tagengine.Body[validate.Issue]
}

// planOf builds the binding plan of t. It panics on a programming error
// of the binding (t not a struct, a type it cannot bind, a path tag
// naming no parameter); the constraint tags that cannot be honoured are
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
	p := &opPlan{}
	var errs []error
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Name == "Body" {
			b := &opBody{off: f.Offset, typ: f.Type, ptr: f.Type.Kind() == reflect.Pointer}
			et := f.Type
			if b.ptr {
				et = et.Elem()
			}
			dec, err := tagengine.For[validate.Issue]().Body(et)
			if err != nil {
				errs = append(errs, err)
				dec, _ = tagengine.For[validate.Issue]().Body(reflect.TypeFor[struct{}]()) // never run: Boot fails
			}
			b.dec = dec
			p.body = b
			continue
		}
		for _, loc := range [...]string{"path", "query", "header"} {
			tag, ok := f.Tag.Lookup(loc)
			if !ok {
				continue
			}
			name, opt, _ := strings.Cut(tag, ",")
			if name == "" {
				name = f.Name
			}
			of := opField{loc: loc, name: name, required: loc == "path" || opt == "required", off: f.Offset, typ: f.Type}
			if !bindable(f.Type, loc == "query") {
				panic(fmt.Sprintf("fx.Op: field %s.%s: cannot bind a %s from the %s", t, f.Name, f.Type, loc))
			}
			if loc == "path" && !containsString(params, name) {
				panic(fmt.Sprintf("fx.Op: field %s.%s: path %q has no parameter %q", t, f.Name, path, name))
			}
			rules, err := tagengine.For[validate.Issue]().Field(t, f)
			if err != nil {
				errs = append(errs, err)
			} else if rules.Required() {
				of.required = true
			}
			of.rules = rules
			p.fields = append(p.fields, of)
		}
	}
	return p, errors.Join(errs...)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func bindable(t reflect.Type, slice bool) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	case reflect.Slice:
		return slice && t.Elem().Kind() == reflect.String
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
		}
		out = append(out, in)
	}
	if p.body != nil {
		out = append(out, InputField{In: "body", Required: !p.body.ptr, Type: p.body.typ, Schema: p.body.dec.JSONSchema()})
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
		if msg := f.bind(c, at); msg != "" {
			issues = append(issues, ValidationIssue{Location: f.loc, Path: []string{f.name}, Message: msg})
		} else if f.rules != nil {
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
	// one pass: the strict grammar (validate.CheckJSON's verdict), the
	// decode into the field and its constraint tags
	issues, err := b.dec.DecodeAt(raw, at, room, limit)
	if err != nil {
		if b.ptr {
			*(*unsafe.Pointer)(field) = nil
		}
		return []ValidationIssue{jsonIssue(err)}
	}
	return appendIssues(nil, "body", issues)
}

// bind sets one field from its source; it returns the issue's message.
func (f *opField) bind(c *Ctx, at unsafe.Pointer) string {
	var raw []byte
	switch f.loc {
	case "path":
		s := c.Param(f.name)
		if s == "" {
			return "Required"
		}
		return setScalar(f.typ, at, s, nil)
	case "query":
		args := c.rc.QueryArgs()
		if f.typ.Kind() == reflect.Slice {
			var vals []string
			for _, v := range args.PeekMulti(f.name) {
				vals = append(vals, string(v))
			}
			if len(vals) == 0 && f.required {
				return "Required"
			}
			*(*[]string)(at) = vals
			return ""
		}
		raw = args.Peek(f.name)
	case "header":
		raw = c.rc.Request.Header.Peek(f.name)
	}
	if len(raw) == 0 {
		if f.required {
			return "Required"
		}
		return "" // absent, or empty: the zero value
	}
	return setScalar(f.typ, at, "", raw)
}

// setScalar parses s (or raw, when s is "") into the value at at, of type
// t; it returns the issue's message, in the builder's words.
func setScalar(t reflect.Type, at unsafe.Pointer, s string, raw []byte) string {
	if s == "" {
		if t.Kind() == reflect.String {
			*(*string)(at) = string(raw)
			return ""
		}
		s = b2s(raw) // parsed, not kept
	}
	switch t.Kind() {
	case reflect.String:
		*(*string)(at) = s
	case reflect.Bool:
		v, issue := validate.ParseBool(s)
		if issue != "" {
			return issue
		}
		*(*bool)(at) = v
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, t.Bits())
		if err != nil {
			return intIssue(s, err, t)
		}
		reflect.NewAt(t, at).Elem().SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, t.Bits())
		if err != nil {
			return intIssue(s, err, t)
		}
		reflect.NewAt(t, at).Elem().SetUint(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(s, t.Bits())
		if err != nil {
			return "Expected a number, got " + quoteShort(s)
		}
		reflect.NewAt(t, at).Elem().SetFloat(n)
	}
	return ""
}

func intIssue(s string, err error, t reflect.Type) string {
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		bits := t.Bits()
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
			return "Must be between 0 and " + strconv.FormatUint(1<<bits-1, 10)
		}
		return "Must be between " + strconv.FormatInt(-1<<(bits-1), 10) + " and " + strconv.FormatInt(1<<(bits-1)-1, 10)
	}
	return "Expected an integer, got " + quoteShort(s)
}

// quoteShort quotes client input for a message, cut to 40 bytes.
func quoteShort(s string) string { return strconv.Quote(cutText(s, 40)) }
