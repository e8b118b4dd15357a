package fxtest

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/handlerdecl"
	"github.com/fxhq/fx/internal/tagengine"
	"github.com/fxhq/fx/validate"
)

// Strict mode (see "Strict mode" in the package documentation): the
// contract of each route, read once by New, and the check Do runs on
// every response.

// Option configures a Client (see New).
type Option func(*options)

type options struct {
	strict       int // 0: by the App (has a document), 1: on, -1: off
	fullCoverage bool
}

// Lenient turns strict mode off: responses are not checked against the
// routes' contracts, and the client keeps no coverage. For tests that
// probe behaviour a contract does not describe on purpose.
func Lenient() Option { return func(o *options) { o.strict = -1 } }

// Strict turns strict mode on even for an App without a document: every
// route is then held to what package openapi would document for it.
func Strict() Option { return func(o *options) { o.strict = 1 } }

// transportRefusals are the codes the server answers before routing, at
// their catalog status, outside any route's contract (see
// fx.RouteInfo.DeclaredResponses).
var transportRefusals = []string{fx.ErrorCodes.BadRequest, fx.ErrorCodes.RequestTimeout, fx.ErrorCodes.PayloadTooLarge, fx.ErrorCodes.HeadersTooLarge}

// isTransportRefusal reports whether status and code are one of
// transportRefusals.
func isTransportRefusal(status int, code string) bool {
	return fx.ErrorStatus[code] == status && slices.Contains(transportRefusals, code)
}

// contract is what strict mode knows of an App: its routes' contracts,
// by method.
type contract struct {
	byMethod map[string][]*routeContract
	cov      *coverage
}

// routeContract is one route's pattern and declared responses.
type routeContract struct {
	method, path string
	segs         []string // the pattern's segments, "" for the root
	hidden       bool
	declared     []fx.DeclaredResponse
	check        map[int]bodyCheck // success status → body check
	list         string            // the declared responses, for messages
	headers      []string          // every header name declared on some response, canonical
}

// bodyCheck validates a success body; nil issues: it fits.
type bodyCheck struct {
	what  string // the declared body, for messages
	check func(body []byte) []validate.Issue
}

// hasDocument reports whether some route of routes says something about
// itself (see the strict mode documentation above).
func hasDocument(routes []fx.RouteInfo) bool {
	for _, r := range routes {
		if !reflect.ValueOf(r.Doc).IsZero() || len(r.Responses) > 0 || r.In != nil || len(ownErrors(r)) > 0 {
			return true
		}
	}
	return false
}

// ownErrors are the errors of r declared by the route itself: not by its
// middleware (fx.Declare), nor by its handler on its own (a WebSocket
// handler's refusals before the upgrade, internal/handlerdecl).
func ownErrors(r fx.RouteInfo) []*fx.Error {
	var own []*fx.Error
	handlerErrs, _ := handlerdecl.Errors(r.Handler).([]*fx.Error)
	for _, e := range r.Errors {
		notOwn := slices.Contains(handlerErrs, e)
		for _, mw := range r.Middleware {
			if slices.Contains(fx.DeclarationOf(mw).Errors, e) {
				notOwn = true
				break
			}
		}
		if !notOwn {
			own = append(own, e)
		}
	}
	return own
}

// newContract reads app's routes; nil when strict mode is off.
func newContract(app *fx.App, o options) (*contract, error) {
	if o.strict < 0 {
		return nil, nil
	}
	routes, err := app.Routes()
	if err != nil {
		return nil, err
	}
	if o.strict == 0 && !hasDocument(routes) {
		return nil, nil
	}
	c := &contract{byMethod: map[string][]*routeContract{}, cov: newCoverage()}
	for _, r := range routes {
		rc := &routeContract{
			method: r.Method, path: r.Path, segs: strings.Split(r.Path, "/")[1:],
			hidden: r.Doc.Hidden, declared: r.DeclaredResponses(), check: map[int]bodyCheck{},
		}
		var list []string
		for _, d := range rc.declared {
			list = append(list, outcomeString(d.Status, d.Code))
			for _, h := range d.Headers {
				if name := http.CanonicalHeaderKey(h.Name); !slices.Contains(rc.headers, name) {
					rc.headers = append(rc.headers, name)
				}
			}
			if d.Code == "" {
				if bc, ok := bodyCheckOf(d); ok {
					rc.check[d.Status] = bc
				}
			}
			if !rc.hidden {
				c.cov.declare(Outcome{Method: r.Method, Path: r.Path, Status: d.Status, Code: d.Code}, d.Generic)
			}
		}
		slices.SortFunc(list, compareOutcomes)
		rc.list = strings.Join(list, ", ")
		c.byMethod[r.Method] = append(c.byMethod[r.Method], rc)
	}
	return c, nil
}

// bodyCheckOf is the check of a declared success body: a
// validate.Schema validates the decoded JSON, a Go type is read as
// validate.Struct reads it. A body declared with another content type,
// or with a Describer that is not a Schema, is not checked.
func bodyCheckOf(d fx.DeclaredResponse) (bodyCheck, bool) {
	if d.ContentType != "" && !strings.HasPrefix(d.ContentType, "application/json") {
		return bodyCheck{}, false
	}
	if s, ok := d.Body.(validate.Schema); ok {
		return bodyCheck{what: fmt.Sprintf("%T", d.Body), check: func(body []byte) []validate.Issue {
			v, err := validate.DecodeJSON(body)
			if err != nil {
				return []validate.Issue{{Message: err.Error()}}
			}
			res := s.Validate(v)
			if len(res.Issues) == 0 && res.Err() != nil {
				return []validate.Issue{{Message: res.Err().Error()}}
			}
			return res.Issues
		}}, true
	}
	if _, ok := d.Body.(validate.Describer); ok || d.BodyType == nil {
		return bodyCheck{}, false
	}
	t := d.BodyType
	dec, err := tagengine.For[validate.Issue]().Body(t)
	if err != nil {
		panic(err) // fx.Op refused the type when the route was built
	}
	return bodyCheck{what: t.String(), check: func(body []byte) []validate.Issue {
		issues, err := dec.DecodeAt(body, reflect.New(t).UnsafePointer(), nil, 0)
		if err != nil { // the strict reader's refusal
			return []validate.Issue{{Message: err.Error()}}
		}
		return issues
	}}, true
}

// match finds the route that answers method and the request target uri
// as fx's router does; nil when none does.
func (c *contract) match(method, uri string) *routeContract {
	path, _, _ := strings.Cut(uri, "?")
	path, _, _ = strings.Cut(path, "#")
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	if !strings.HasPrefix(path, "/") {
		return nil
	}
	segs := strings.Split(path, "/")[1:]
	candidates := c.byMethod[method]
	if method == http.MethodHead && c.best(candidates, segs) == nil {
		candidates = c.byMethod[http.MethodGet] // the HEAD twin of a GET
	}
	return c.best(candidates, segs)
}

// best is the route of routes that matches segs with the highest
// priority: at the first segment where two matching patterns differ, a
// static segment wins over a parameter, a parameter over a catch-all.
func (c *contract) best(routes []*routeContract, segs []string) *routeContract {
	var win *routeContract
	for _, r := range routes {
		if !r.matches(segs) {
			continue
		}
		if win == nil || slices.CompareFunc(r.segs, win.segs, func(a, b string) int {
			return cmp.Compare(segKind(a), segKind(b))
		}) < 0 {
			win = r
		}
	}
	return win
}

// segKind ranks a pattern segment: 0 static, 1 parameter, 2 catch-all.
func segKind(s string) int {
	switch {
	case strings.HasPrefix(s, ":"):
		return 1
	case strings.HasPrefix(s, "*"):
		return 2
	}
	return 0
}

// matches reports whether the path segments segs fit the pattern: a
// static segment equals its own, a parameter takes one non-empty segment,
// a catch-all the rest.
func (r *routeContract) matches(segs []string) bool {
	for i, p := range r.segs {
		switch segKind(p) {
		case 2: // "/files/*rest" takes "/files/" but not "/files"
			return len(segs) > i
		case 1:
			if i >= len(segs) || segs[i] == "" {
				return false
			}
		default:
			if i >= len(segs) || segs[i] != p {
				return false
			}
		}
	}
	return len(segs) == len(r.segs)
}

// checkResponse holds resp to its route's contract, reporting to resp's
// test what falls outside it, and counts the declared response it
// exercised.
func (c *contract) checkResponse(resp *Response) {
	rc := c.match(resp.method, resp.uri)
	if rc == nil || rc.hidden {
		return
	}
	status := resp.Status
	var codes []string
	success := false
	for _, d := range rc.declared {
		if d.Status == status {
			if d.Code == "" {
				success = true
			} else {
				codes = append(codes, d.Code)
			}
		}
	}
	if resp.method == http.MethodHead { // no body: the status alone, not counted in coverage
		if success || len(codes) > 0 {
			return
		}
		resp.t.Helper()
		resp.t.Errorf("%s answered %d, which %s does not declare (declared: %s)", resp.request(), status, rc.whose(resp), rc.list)
		return
	}
	if success {
		c.cov.exercise(Outcome{Method: rc.method, Path: rc.path, Status: status})
		rc.checkHeaders(resp)
		bc, ok := rc.check[status]
		if !ok {
			return
		}
		if issues := bc.check(resp.Body); len(issues) > 0 {
			resp.t.Helper()
			resp.t.Errorf("%s answered %d with a body that %s does not declare (%s): %s%s",
				resp.request(), status, rc.whose(resp), bc.what, issuesString(issues), resp.bodyForMessage())
		}
		return
	}
	env, err := decodeEnvelope(resp.Body)
	if err == nil && slices.Contains(codes, env.Code) {
		c.cov.exercise(Outcome{Method: rc.method, Path: rc.path, Status: status, Code: env.Code})
		rc.checkHeaders(resp)
		rc.checkDetails(resp, env)
		return
	}
	if err == nil && isTransportRefusal(status, env.Code) {
		return // answered before routing: no route's contract
	}
	resp.t.Helper()
	if err != nil && len(codes) > 0 {
		resp.t.Errorf("%s answered %d with a body that %s does not declare (an error envelope with code %s): %s%s",
			resp.request(), status, rc.whose(resp), strings.Join(codes, " or "), err, resp.bodyForMessage())
		return
	}
	answer := strconv.Itoa(status)
	if err == nil {
		answer += " " + env.Code
	}
	resp.t.Errorf("%s answered %s, which %s does not declare (declared: %s)%s",
		resp.request(), answer, rc.whose(resp), rc.list, resp.bodyForMessage())
}

// checkHeaders holds the headers of resp, an answer of a declared status,
// to those declared on that status: a header the contract declares on
// some response of the route is present only where it is declared, and
// one declared required there is present.
func (r *routeContract) checkHeaders(resp *Response) {
	if len(r.headers) == 0 {
		return // nothing declared: the headers are not parsed
	}
	var declared []fx.HeaderDoc
	for _, d := range r.declared {
		if d.Status == resp.Status {
			declared = d.Headers
			break
		}
	}
	got := resp.Header()
	for _, name := range r.headers {
		i := slices.IndexFunc(declared, func(h fx.HeaderDoc) bool { return http.CanonicalHeaderKey(h.Name) == name })
		switch present := len(got.Values(name)) > 0; {
		case present && i < 0:
			resp.t.Helper()
			resp.t.Errorf("%s answered %d with the header %s, which %s does not declare on %d%s",
				resp.request(), resp.Status, name, r.whose(resp), resp.Status, resp.bodyForMessage())
		case !present && i >= 0 && declared[i].Required:
			resp.t.Helper()
			resp.t.Errorf("%s answered %d without the header %s, which %s declares required on %d%s",
				resp.request(), resp.Status, name, r.whose(resp), resp.Status, resp.bodyForMessage())
		}
	}
}

// checkDetails holds the details of env, an error envelope of a declared
// status and code, to the declared details of that code when they are a
// validate.Schema (middleware.FailureReasons: details.reason is one of
// the reasons the route's middleware send).
func (r *routeContract) checkDetails(resp *Response, env Envelope) {
	for _, d := range r.declared {
		if d.Status != resp.Status || d.Code != env.Code {
			continue
		}
		s, ok := d.Details.(validate.Schema)
		if !ok {
			return
		}
		raw := []byte(env.Details)
		if len(raw) == 0 {
			raw = []byte("null")
		}
		var issues []validate.Issue
		if v, err := validate.DecodeJSON(raw); err != nil {
			issues = []validate.Issue{{Message: err.Error()}}
		} else {
			issues = s.Validate(v).Issues
		}
		if len(issues) > 0 {
			resp.t.Helper()
			resp.t.Errorf("%s answered %d %s with details that %s does not declare: %s%s",
				resp.request(), resp.Status, env.Code, r.whose(resp), issuesString(issues), resp.bodyForMessage())
		}
		return
	}
}

// whose names the contract in a message: "its contract" when the request
// is the route's method and pattern, else the route's.
func (r *routeContract) whose(resp *Response) string {
	if resp.method == r.method && resp.uri == r.path {
		return "its contract"
	}
	return "the contract of " + r.method + " " + r.path
}

// issuesString formats validation issues for a message: "name: Expected
// string; items.0: ...", "(body)" for the value itself.
func issuesString(issues []validate.Issue) string {
	parts := make([]string, len(issues))
	for i, is := range issues {
		p := strings.Join(is.Path, ".")
		if p == "" {
			p = "(body)"
		}
		parts[i] = p + ": " + is.Message
	}
	return strings.Join(parts, "; ")
}
