// Package bench implements one small service, idiomatically, in raw
// fasthttp (the hand-written floor), fx and its peers (Fiber v2 and v3,
// Echo v4 and v5, Gin, chi, net/http's ServeMux and Huma v2 on chi), so
// that they can be compared on equal terms: in-process benchmarks
// (bench_test.go, summarised by cmd/table) and a load test over loopback
// (load.sh, serving with cmd/server).
//
// Every implementation answers the same endpoints with the same status and
// an equivalent JSON body (equivalence_test.go checks it):
//
//	GET  /hello          200 {"message":"Hello, World!"}
//	GET  /users/:id      200 {"id":..,"name":..}; id "missing" → 404 APP_USER_NOT_FOUND with details
//	GET  /error          404 APP_USER_NOT_FOUND too, from a static route (no path parameter)
//	GET  /panic          the handler panics with a plain error → 500 FX_INTERNAL_ERROR
//	any unmatched route  404 FX_NOT_FOUND "Route GET /nope not found"
//	POST /orders         201 with the order; three invalid fields → 422 FX_VALIDATION_ERROR, three issues
//
// Every framework's logging is discarded, and each can be built with a
// chain of pass-through middleware in front of every route.
//
// The package is a benchmark fixture, not an API: it lives in its own
// module so that peer frameworks never enter fx's go.mod.
package bench

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/valyala/fasthttp"
)

// HelloMessage is the message of GET /hello.
const HelloMessage = "Hello, World!"

// Hello is the body of GET /hello. Every implementation builds one per
// request and marshals it.
type Hello struct {
	Message string `json:"message"`
}

// User is the body of GET /users/:id for an id that exists (every id but
// MissingUserID).
type User struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// NewUser is the user every implementation answers for id.
func NewUser(id string) User { return User{ID: id, Name: "User " + id} }

// MissingUserID is the id GET /users/:id does not find.
const MissingUserID = "missing"

// Order is the body of POST /orders. The struct tags serve validator/v10
// (`validate` for Echo and Fiber, `binding` for Gin) and Huma's JSON Schema
// (minLength, minimum, format; a field without omitempty is required); the
// hand-written checks in CheckOrder implement the same rules with the same
// messages.
type Order struct {
	Item     string `json:"item" validate:"required" binding:"required" minLength:"1"`
	Quantity int    `json:"quantity" validate:"min=1" binding:"min=1" minimum:"1"`
	Email    string `json:"email" validate:"required,email" binding:"required,email" minLength:"1" format:"email"`
}

// Issue messages of POST /orders, shared by every implementation.
const (
	MsgRequired   = "Required"
	MsgMinOne     = "Must be at least 1"
	MsgEmail      = "Must be a valid email address"
	MsgBadJSON    = "Request body is not valid JSON"
	ValidationMsg = "Request validation failed"
)

// Wire codes. The FX_ ones are fx's catalog codes, which the peers copy so
// that all implementations answer the same bytes.
const (
	CodeNotFound     = "FX_NOT_FOUND"
	CodeInternal     = "FX_INTERNAL_ERROR"
	CodeValidation   = "FX_VALIDATION_ERROR"
	CodeUserNotFound = "APP_USER_NOT_FOUND"
	InternalMessage  = "Internal server error"
	UserNotFoundMsg  = "User not found"
)

// UserNotFoundDetails is the details object of APP_USER_NOT_FOUND.
type UserNotFoundDetails struct {
	Resource string `json:"resource"`
	ID       string `json:"id"`
}

// ErrBoom is the plain error GET /panic panics with (a package variable, so
// that no implementation pays for building it).
var ErrBoom = errors.New("boom")

// Issue is one entry of details.issues in the 422 envelope.
type Issue struct {
	Location string   `json:"location"`
	Path     []string `json:"path"`
	Message  string   `json:"message"`
}

// CheckOrder validates o by hand, with the rules and messages of the
// validator/v10 tags on Order; issues are in field-name order (email, item,
// quantity), as fx sorts them. It is what the raw fasthttp, chi and
// ServeMux implementations use.
func CheckOrder(o *Order) []Issue {
	var issues []Issue
	add := func(path []string, msg string) {
		if issues == nil {
			issues = make([]Issue, 0, 3)
		}
		issues = append(issues, Issue{"body", path, msg})
	}
	switch {
	case o.Email == "":
		add(pathEmail, MsgRequired)
	case !ValidEmail(o.Email):
		add(pathEmail, MsgEmail)
	}
	if o.Item == "" {
		add(pathItem, MsgRequired)
	}
	if o.Quantity < 1 {
		add(pathQuantity, MsgMinOne)
	}
	return issues
}

// Issue paths, shared and never modified.
var (
	pathEmail    = []string{"email"}
	pathItem     = []string{"item"}
	pathQuantity = []string{"quantity"}
)

// ValidEmail is a deliberately simple address check: one '@' with text on
// both sides and a dot in the domain. (validator/v10's rule is stricter;
// both reject and accept the bodies the suite sends.)
func ValidEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at != strings.LastIndexByte(s, '@') {
		return false
	}
	dom := s[at+1:]
	dot := strings.LastIndexByte(dom, '.')
	return dot > 0 && dot < len(dom)-1
}

// AppError is the application error type of the peer implementations (fx
// has *fx.Error): a status, a code, a message and optional details. Each
// peer's error handler turns it into the envelope.
type AppError struct {
	Status  int
	Code    string
	Message string
	Details any
}

// Error returns the code and message.
func (e *AppError) Error() string { return e.Code + ": " + e.Message }

// ErrUserNotFound is GET /users/missing's error for the peers, kept in a
// variable as an application would keep a sentinel.
var ErrUserNotFound = &AppError{Status: 404, Code: CodeUserNotFound, Message: UserNotFoundMsg,
	Details: &UserNotFoundDetails{Resource: "user", ID: MissingUserID}}

// NewValidationError is the peers' 422 for issues.
func NewValidationError(issues []Issue) *AppError {
	return &AppError{Status: 422, Code: CodeValidation, Message: ValidationMsg,
		Details: ValidationDetails{Issues: issues}}
}

// ValidationDetails is the details object of FX_VALIDATION_ERROR.
type ValidationDetails struct {
	Issues []Issue `json:"issues"`
}

// BadJSONError is the 422 for a body that is not JSON.
func BadJSONError() *AppError {
	return NewValidationError([]Issue{{"body", []string{}, MsgBadJSON}})
}

// Envelope is the error envelope as the peers marshal it.
type Envelope struct {
	Error EnvelopeBody `json:"error"`
}

// EnvelopeBody is the inside of Envelope.
type EnvelopeBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}

// ToEnvelope maps a failure to its status and envelope, as fx's error
// boundary does: an *AppError anywhere in the chain gives its own status,
// code, message and details; anything else is the production 500.
func ToEnvelope(err error) (int, Envelope) {
	var ae *AppError
	if errors.As(err, &ae) {
		return ae.Status, Envelope{EnvelopeBody{Code: ae.Code, Message: ae.Message, Details: ae.Details}}
	}
	return 500, InternalEnvelope
}

// InternalEnvelope is the production 500 envelope.
var InternalEnvelope = Envelope{EnvelopeBody{Code: CodeInternal, Message: InternalMessage}}

// NotFoundEnvelope is the 404 envelope for an unmatched method and path, in
// fx's words.
func NotFoundEnvelope(method, path string) Envelope {
	return Envelope{EnvelopeBody{Code: CodeNotFound, Message: "Route " + method + " " + path + " not found"}}
}

// Impl is one framework's build of the service: a fasthttp handler
// (fasthttp-based frameworks) or an http.Handler (net/http-based ones),
// and how that framework serves a listener.
type Impl struct {
	FastHTTP fasthttp.RequestHandler
	HTTP     http.Handler
	serve    func(ln net.Listener) error
}

// Serve serves ln with the framework's own server when it has one
// (fx: App.Serve, Fiber: App.Listener, Echo v5: StartConfig), else with a
// fasthttp.Server or an http.Server around the handler. It returns when ln
// is closed.
func (i Impl) Serve(ln net.Listener) error {
	switch {
	case i.serve != nil:
		return i.serve(ln)
	case i.FastHTTP != nil:
		s := &fasthttp.Server{Handler: i.FastHTTP, NoDefaultServerHeader: true}
		return s.Serve(ln)
	default:
		s := &http.Server{Handler: i.HTTP}
		return s.Serve(ln)
	}
}

// Framework is one implementation of the service.
type Framework struct {
	// Name is the short name used in benchmark names and tables.
	Name string
	// New builds the service with middleware pass-through middleware in
	// front of every route.
	New func(middleware int) Impl
}

// Frameworks lists every implementation, raw fasthttp (the baseline) first.
var Frameworks = []Framework{
	{"raw-fasthttp", NewRaw},
	{"fx", NewFX},
	{"fiber-v2", NewFiberV2},
	{"fiber-v3", NewFiberV3},
	{"echo-v4", NewEcho},
	{"echo-v5", NewEcho5},
	{"gin", NewGin},
	{"chi", NewChi},
	{"servemux", NewServeMux},
	{"huma", NewHuma},
}

// Lookup returns the framework named name.
func Lookup(name string) (Framework, bool) {
	for _, f := range Frameworks {
		if f.Name == name {
			return f, true
		}
	}
	return Framework{}, false
}

// Endpoint is one benchmarked request.
type Endpoint struct {
	Name        string // in benchmark names and tables
	Method      string
	Path        string
	Body        string // sent as application/json when non-empty
	Middleware  int    // pass-through middleware in front of the route
	Status      int    // expected status
	Description string
}

// Bodies of POST /orders.
const (
	InvalidOrder = `{"item":"","quantity":0,"email":"not-an-email"}`
	ValidOrder   = `{"item":"book","quantity":2,"email":"ada@example.com"}`
)

// MiddlewareChain is the length of the pass-through chain of the
// "hello-mw5" endpoint.
const MiddlewareChain = 5

// Endpoints are the benchmarked requests, in table order.
var Endpoints = []Endpoint{
	{"hello", "GET", "/hello", "", 0, 200, "GET /hello, small JSON"},
	{"user-error", "GET", "/users/missing", "", 0, 404, "GET /users/missing, an application error kept in a variable, with details"},
	{"error-var", "GET", "/error", "", 0, 404, "GET /error, the same error on a static route (no path parameter to extract)"},
	{"panic", "GET", "/panic", "", 0, 500, "GET /panic, the handler panics with a plain error"},
	{"not-found", "GET", "/nope", "", 0, 404, "GET /nope, unmatched route"},
	{"orders-422", "POST", "/orders", InvalidOrder, 0, 422, "POST /orders, three invalid fields"},
	{"hello-mw5", "GET", "/hello", "", MiddlewareChain, 200, "GET /hello behind five pass-through middleware"},
}
