package fx

import (
	"reflect"
	"slices"
	"strings"

	"github.com/fxhq/fx/internal/handlerdecl"
	"github.com/fxhq/fx/validate"
)

// Route documentation: what a route says about itself beyond its contract,
// for generators of API descriptions (package openapi). None of it is read
// while serving: a route costs the same with or without it.

// RouteDoc is a route's operation metadata (OpenAPI's summary,
// description, tags, operationId and deprecated). On a Group (Group.Doc)
// it gives defaults to the group's routes: see RouteInfo.Doc.
type RouteDoc struct {
	Summary     string
	Description string
	OperationID string // unique across the App; "": the generator derives one from method and path
	Tags        []string
	Deprecated  bool
	Hidden      bool // left out of generated documents (the route is still served)
}

// ResponseDoc documents one success response of a route.
type ResponseDoc struct {
	Status      int    // 0 means 200
	Description string // "": the status text
	// Body is a value of the response body's Go type (User{}, []User(nil),
	// a pointer to either); its schema comes from the type and its JSON
	// tags. A validate.Schema that implements validate.Describer is
	// described as itself. nil: no body.
	Body        any
	ContentType string // "": application/json
	Example     any    // an example body, encoded as is
	// Headers are the headers the operation sets on this response
	// (Location on a 201); the headers its middleware set are declared
	// by them (Declaration.Headers).
	Headers []HeaderDoc
}

// routeMeta is a registration's documentation (routeSpec.meta).
type routeMeta struct {
	doc       RouteDoc
	errs      []*Error
	responses []ResponseDoc
	op        *opTypes // typed operation (op.go); nil for a plain route
}

// opTypes are the Go types of a typed operation's input and output.
type opTypes struct {
	in, out reflect.Type
	fields  []InputField
	err     error // the input's constraint tags that cannot be honoured: a Boot error (op.go)
}

func newRouteMeta(r Route) routeMeta {
	return routeMeta{doc: r.Doc, errs: slices.Clone(r.Errors), responses: slices.Clone(r.Responses), op: r.op}
}

// RouteInfo is a read-only view of one booted route (see App.Routes).
type RouteInfo struct {
	Method, Path string   // as registered, fx syntax ("/users/:id", "/files/*rest")
	Params       []string // path parameter names, in order
	CatchAll     bool     // the last parameter is a "*name" catch-all (it spans segments)
	Body, Query  validate.Schema
	// Middleware is the route's whole chain, outermost first: the App's,
	// the Groups', then Route.Middleware.
	Middleware []Middleware
	// Handler is the route's handler, as registered.
	Handler Handler
	// Doc is Route.Doc over the defaults of the route's Groups: the
	// Groups' Tags come first (outermost first, no repeats), Deprecated
	// and Hidden are inherited, and the other fields are the route's.
	Doc RouteDoc
	// Errors are the application errors the route declares (Route.Errors)
	// followed by those its handler answers by itself (a WebSocket
	// route's refusals before the upgrade) and those its middleware
	// declare (Declare) for routes of its method (Declaration.Methods),
	// one per code, first declaration winning.
	Errors    []*Error
	Responses []ResponseDoc
	// In and Out are a typed operation's input and output struct types
	// (Op); nil for a plain route. Input lists the fields Op binds.
	In, Out reflect.Type
	Input   []InputField
}

// Routes boots the App (see Boot) and lists its routes in registration
// order, plugin routes included, without the implicit HEAD twin of each
// GET. It returns the boot error, and no routes, when Boot failed. The
// route table is immutable after Boot, so the list is the one being
// served. Cost: it builds a new list on each call; it is meant for tools
// run once (documentation), never per request.
func (a *App) Routes() ([]RouteInfo, error) {
	if err := a.Boot(); err != nil {
		return nil, err
	}
	a.regMu.Lock()
	specs, mws := a.specs, a.mws
	a.regMu.Unlock()
	out := make([]RouteInfo, 0, len(specs))
	for _, s := range specs {
		_, params, err := translatePath(s.path)
		if err != nil {
			continue // unreachable after a successful Boot
		}
		chain := append(append(slices.Clone(mws), s.group.middleware()...), s.mws...)
		ri := RouteInfo{
			Method: s.method, Path: s.path, Params: params,
			CatchAll: strings.Contains(s.path, "/*"),
			Body:     s.body, Query: s.query,
			Middleware: chain,
			Handler:    s.handler,
			Doc:        mergeDoc(s.group, s.meta.doc),
			Errors:     routeErrors(s.meta.errs, s.handler, chain, s.method),
			Responses:  slices.Clone(s.meta.responses),
		}
		if op := s.meta.op; op != nil {
			ri.In, ri.Out, ri.Input = op.in, op.out, slices.Clone(op.fields)
		}
		out = append(out, ri)
	}
	return out, nil
}

// mergeDoc puts the defaults of g and its parents under d.
func mergeDoc(g *Group, d RouteDoc) RouteDoc {
	var tags []string
	for _, gd := range g.docs() {
		for _, t := range gd.Tags {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
		d.Deprecated = d.Deprecated || gd.Deprecated
		d.Hidden = d.Hidden || gd.Hidden
	}
	for _, t := range d.Tags {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	d.Tags = tags
	return d
}

// routeErrors lists the route's declared errors, then those its handler
// answers by itself (a WebSocket route's refusals: internal/handlerdecl),
// then those its middleware declare for routes of method, one per code.
func routeErrors(own []*Error, h Handler, chain []Middleware, method string) []*Error {
	var out []*Error
	add := func(e *Error) {
		if e == nil {
			return
		}
		for _, x := range out {
			if x.Code == e.Code {
				return
			}
		}
		out = append(out, e)
	}
	for _, e := range own {
		add(e)
	}
	if h != nil {
		errs, _ := handlerdecl.Errors(h).([]*Error)
		for _, e := range errs {
			add(e)
		}
	}
	for _, mw := range chain {
		if d := DeclarationOf(mw); d.AppliesTo(method) {
			for _, e := range d.Errors {
				add(e)
			}
		}
	}
	return out
}

// DeclaredResponse is one response of a route's contract: a success status
// with the body it declares, or one error code at its status. The list of
// a route (RouteInfo.DeclaredResponses) is what package openapi documents
// for the operation and what package fxtest's strict mode holds the
// route's answers to, computed in one place so that the two cannot
// disagree.
type DeclaredResponse struct {
	// ResponseDoc is the success response as declared (Route.Responses, or
	// the implied 200), with Status filled in (never 0). For an error
	// response only Status is set.
	ResponseDoc
	// Code is the error code of an error response (the envelope's
	// error.code); "" for a success response.
	Code string
	// BodyType is the Go type of a success body: that of ResponseDoc.Body,
	// or a typed operation's Out for the status Op writes it with. nil:
	// the body is not declared (any body, or none). A ResponseDoc.Body that
	// is a validate.Describer is described as itself, not by its type.
	BodyType reflect.Type
	// Headers (Response.Headers) are, for a success or an error response
	// alike, every header the contract declares on a response of this
	// status: the operation's own (success responses), then those the
	// route's middleware declare for it (Declaration.Headers, see
	// Header.BeforeNext), one per name (case-insensitive, first wins),
	// with Statuses cleared and Required as it holds for this status.
	// Every entry of one status has the same list.

	// Message is the message of an error response's Code: that of the
	// route's first declared error of the code (its own, then its
	// middleware's), or the one fx sends for the errors it answers itself
	// (FX_VALIDATION_ERROR, FX_INTERNAL_ERROR, FX_PAYLOAD_TOO_LARGE,
	// FX_HEADERS_TOO_LARGE). Documents use it in their examples.
	Message string

	// Details are the declared details of an error response's Code: the
	// Details of the route's errors of that code and status (its own,
	// then its middleware's), the first non-nil one; when several are
	// slices of one type (middleware.FailureReasons, the reasons a
	// middleware sends), their elements joined, repeats left out. nil:
	// none declared (for FX_VALIDATION_ERROR, fx's own
	// validate.ValidationDetails-shaped issues are implied).
	Details any

	// Generic marks the errors fx can answer on any route of the kind,
	// whatever the route's own code declares: 500 FX_INTERNAL_ERROR and
	// 431 FX_HEADERS_TOO_LARGE on every route, 413 FX_PAYLOAD_TOO_LARGE
	// on every route that reads a body. They are in the contract, but a
	// test suite is not expected to provoke each of them (fxtest's
	// coverage leaves them out).
	Generic bool
}

// DeclaredResponses lists the route's contract, every response it may
// answer, in this order:
//
//   - the success responses of Route.Responses (Status 0 means 200), or,
//     when there are none, a 200 whose body is a typed operation's Out
//     (undeclared for a plain route); a typed operation writes Out with
//     its first response's status;
//   - 422 FX_VALIDATION_ERROR when a contract validates the body or the
//     query, or a typed operation binds an input that can fail (a body,
//     a number, a constrained field: not plain string path parameters
//     alone, see InputField.Constrained);
//   - 413 FX_PAYLOAD_TOO_LARGE when the route reads a body (a Body
//     schema, a typed Body field, or the method is POST, PUT or PATCH);
//   - 431 FX_HEADERS_TOO_LARGE, on every route: the server answers it
//     before routing to any request whose request line and headers are
//     over Config.HeaderLimit, whatever the route, and a client can send
//     one to any operation (a large cookie or token);
//   - 500 FX_INTERNAL_ERROR, on every route;
//   - the route's Errors (its own, then its middleware's: see Errors),
//     each at its status (a status outside 400-599 at 500, as the error
//     boundary sends it).
//
// One entry per status for successes (a later Response replaces an
// earlier one of the same status) and per status and code for errors; a
// success status that also has error codes is an error status (an error
// response is an envelope). Not listed: 404 FX_NOT_FOUND when no route
// matched, and what the transport answers before routing to a request
// no conforming client sends (400 FX_BAD_REQUEST for an unparsable or
// ambiguous request, 408 for one not received in time, and 413 over
// Config.BodyLimit on a route that reads no body). Cost: a new slice per
// call, for tools and tests, never read while serving.
func (r RouteInfo) DeclaredResponses() []DeclaredResponse {
	var out []DeclaredResponse
	hasStatus := func(status int) int {
		for i, d := range out {
			if d.Status == status {
				return i
			}
		}
		return -1
	}
	if len(r.Responses) == 0 {
		out = append(out, DeclaredResponse{ResponseDoc: ResponseDoc{Status: 200}, BodyType: r.Out})
	}
	for i, resp := range r.Responses {
		d := DeclaredResponse{ResponseDoc: resp}
		if d.Status == 0 {
			d.Status = 200
		}
		switch {
		case resp.Body != nil:
			d.BodyType = reflect.TypeOf(resp.Body)
		case i == 0:
			d.BodyType = r.Out // a typed operation writes Out with the first status
		}
		if at := hasStatus(d.Status); at >= 0 {
			out[at] = d
		} else {
			out = append(out, d)
		}
	}
	addError := func(status int, code string, generic bool) {
		status = errorStatus(status)
		for _, d := range out {
			if d.Status == status && d.Code == code {
				return
			}
		}
		if at := hasStatus(status); at >= 0 && out[at].Code == "" {
			out = slices.Delete(out, at, at+1) // an error status is an envelope's
		}
		out = append(out, DeclaredResponse{ResponseDoc: ResponseDoc{Status: status}, Code: code, Generic: generic})
	}
	readsBody := r.Body != nil || r.Method == "POST" || r.Method == "PUT" || r.Method == "PATCH"
	for _, f := range r.Input {
		readsBody = readsBody || f.In == "body"
	}
	if r.Body != nil || r.Query != nil || inputCanFail(r.Input) {
		addError(422, codeValidationError, false)
	}
	if readsBody {
		addError(413, codePayloadTooLarge, true)
	}
	addError(431, codeHeadersTooLarge, true)
	addError(500, codeInternalError, true)
	for _, e := range r.Errors {
		addError(e.Status, e.Code, false)
	}
	r.declareHeaders(out)
	for i, d := range out {
		if d.Code != "" && !d.Generic {
			out[i].Details = r.declaredDetails(d.Status, d.Code)
		}
		if d.Code != "" {
			out[i].Message = r.declaredMessage(d.Code)
		}
	}
	return out
}

// declaredMessage is DeclaredResponse.Message of code.
func (r RouteInfo) declaredMessage(code string) string {
	switch code {
	case codeValidationError:
		return validationMessage
	case codeInternalError:
		return internalErrorMessage
	case codePayloadTooLarge:
		return bodyTooLargeMessage
	case codeHeadersTooLarge:
		return headersTooLargeMessage
	}
	for _, e := range r.Errors {
		if e.Code == code {
			return e.Message
		}
	}
	return ""
}

// declaredDetails is DeclaredResponse.Details of status and code.
func (r RouteInfo) declaredDetails(status int, code string) any {
	var all []any
	collect := func(errs []*Error) {
		for _, e := range errs {
			if e.Code == code && errorStatus(e.Status) == status && e.Details != nil {
				all = append(all, e.Details)
			}
		}
	}
	if r.ownsError(code) {
		for _, e := range r.Errors {
			if e.Code == code {
				collect([]*Error{e})
				break
			}
		}
	}
	for _, mw := range r.Middleware {
		if d := DeclarationOf(mw); d.AppliesTo(r.Method) {
			collect(d.Errors)
		}
	}
	if len(all) == 0 {
		return nil
	}
	first := reflect.ValueOf(all[0])
	if first.Kind() != reflect.Slice || !first.Type().Elem().Comparable() {
		return all[0]
	}
	joined := reflect.MakeSlice(first.Type(), 0, first.Len())
	for _, v := range all {
		rv := reflect.ValueOf(v)
		if rv.Type() != first.Type() {
			continue
		}
		for i := range rv.Len() {
			el := rv.Index(i)
			seen := false
			for j := range joined.Len() {
				seen = seen || joined.Index(j).Interface() == el.Interface()
			}
			if !seen {
				joined = reflect.Append(joined, el)
			}
		}
	}
	return joined.Interface()
}

// Where a response can be decided, for its headers: before any
// middleware (the transport's refusals), by the middleware at an index
// of the chain, or after them all (originInside: the contract, the
// handler).
const originTransport = -1

// declareHeaders sets the Headers of each entry of out (see
// DeclaredResponse.Headers).
func (r RouteInfo) declareHeaders(out []DeclaredResponse) {
	inside := len(r.Middleware)
	type decl struct {
		at int
		d  Declaration
	}
	var decls []decl
	for j, mw := range r.Middleware {
		if d := DeclarationOf(mw); d.AppliesTo(r.Method) {
			decls = append(decls, decl{j, d})
		}
	}
	// origins[status]: where the responses of status can be decided
	origins := map[int][]int{}
	addOrigin := func(status, at int) {
		if !slices.Contains(origins[status], at) {
			origins[status] = append(origins[status], at)
		}
	}
	for _, d := range out {
		switch {
		case d.Code == "", d.Code == codeInternalError, d.Code == codeValidationError:
			addOrigin(d.Status, inside)
			continue
		case d.Generic: // 413 over the body limit, 431: before any middleware
			addOrigin(d.Status, originTransport)
			continue
		}
		byMiddleware := false
		for _, dc := range decls {
			for _, e := range dc.d.Errors {
				if e.Code == d.Code && errorStatus(e.Status) == d.Status {
					addOrigin(d.Status, dc.at)
					byMiddleware = true
				}
			}
		}
		if !byMiddleware || r.ownsError(d.Code) {
			addOrigin(d.Status, inside)
		}
	}
	// on reports whether h, declared by the middleware at, is on the
	// responses of status, and whether it is required there.
	on := func(h HeaderDoc, at, status int) (listed, required bool) {
		inStatuses := len(h.Statuses) == 0 || slices.Contains(h.Statuses, status)
		if !h.BeforeNext {
			return inStatuses, h.Required && inStatuses && !slices.Contains(origins[status], originTransport)
		}
		own := len(h.Statuses) > 0 && slices.Contains(h.Statuses, status)
		onlyOwn := own
		for _, o := range origins[status] {
			listed = listed || o > at || o == at && own
			onlyOwn = onlyOwn && o == at
		}
		return listed, h.Required && onlyOwn
	}
	byStatus := map[int][]HeaderDoc{}
	for i := range out {
		d := &out[i]
		hs, done := byStatus[d.Status]
		if !done {
			seen := map[string]bool{}
			add := func(h HeaderDoc, required bool) {
				k := strings.ToLower(h.Name)
				if h.Name == "" || seen[k] {
					return
				}
				seen[k] = true
				h.Statuses, h.BeforeNext, h.Required = nil, false, required
				hs = append(hs, h)
			}
			if d.Code == "" {
				for _, h := range d.Headers {
					add(h, h.Required)
				}
			}
			for _, dc := range decls {
				for _, h := range dc.d.Headers {
					if listed, required := on(h, dc.at, d.Status); listed {
						add(h, required)
					}
				}
			}
			byStatus[d.Status] = hs
		}
		d.Headers = hs
	}
}

// ownsError reports whether the route declares code itself (Route.Errors),
// not only through its middleware.
func (r RouteInfo) ownsError(code string) bool {
	for _, e := range r.Errors {
		if e.Code != code {
			continue
		}
		for _, mw := range r.Middleware {
			if slices.Contains(DeclarationOf(mw).Errors, e) {
				return false
			}
		}
		return true
	}
	return false
}

// errorStatus is the status the error boundary sends an error of status
// with: a status outside 400-599 is sent as 500.
func errorStatus(status int) int {
	if status < 400 || status > 599 {
		return 500
	}
	return status
}

// inputCanFail reports whether binding a typed operation's fields can
// fail: a body, a required query or header field, a field with
// constraint tags or one that is parsed (not a string). A string path
// parameter without tags cannot: the router gives it a non-empty value.
func inputCanFail(fields []InputField) bool {
	for _, f := range fields {
		if f.In == "body" || f.Constrained || f.Required && f.In != "path" {
			return true
		}
		if k := f.Type.Kind(); k != reflect.String && k != reflect.Slice {
			return true
		}
	}
	return false
}
