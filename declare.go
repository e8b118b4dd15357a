package fx

import (
	"slices"
	"sync"

	"github.com/fxhq/fx/internal/handlerdecl"
)

// Declaration is what a middleware declares about the requests it guards,
// for documentation: the errors it can end a request with, the
// credentials it authenticates, and the request parameters it reads.
// Package openapi turns them into each guarded operation's error
// responses, its security requirements (with components.securitySchemes),
// its parameters and its response headers; the route table lists the errors (RouteInfo.Errors).
// Declaring is done once, when the middleware is built (Declare); it
// costs nothing per request.
type Declaration struct {
	// Errors are the errors the middleware can end a request with (their
	// Status and Code; the messages are not documented).
	Errors []*Error

	// Security lists the credentials the middleware authenticates; a
	// request must present one of them (OpenAPI: one security requirement
	// per scheme). When several middleware of one route declare Security,
	// a request must satisfy each of them.
	Security []SecuritySchemeDoc

	// Anonymous: a request that presents none of Security is let through
	// too, without an identity (middleware.AuthConfig.Optional). The
	// operation's security then also lists the empty requirement — unless
	// a middleware of the same route declares RequiresIdentity.
	Anonymous bool

	// RequiresIdentity: the middleware refuses a request that no earlier
	// middleware authenticated (middleware.RequireRoles). It cancels the
	// Anonymous of the route's other middleware.
	RequiresIdentity bool

	// Parameters are the request parameters the middleware reads (a
	// tenant header, Idempotency-Key, a request ID).
	Parameters []ParameterDoc

	// Methods are the request methods the middleware acts on (the
	// idempotency middleware: POST and PATCH); on a route of another
	// method the declaration does not apply (the route lists none of its
	// errors, parameters or headers). Empty: every method.
	Methods []string

	// Headers are the response headers the middleware sets (RateLimit on
	// every answer it lets through and on its 429, Retry-After on its
	// 429, WWW-Authenticate on its 401), each on the responses of its
	// Statuses (see Header.BeforeNext).
	Headers []HeaderDoc
}

// HeaderDoc documents a response header (an OpenAPI Header Object): one a
// middleware sets (Declaration.Headers) or one an operation sends with a
// success response (ResponseDoc.Headers, such as Location on a 201).
type HeaderDoc struct {
	Name        string
	Description string
	// Required: every response it is documented on carries it.
	Required bool
	// Schema is the JSON Schema of the value; nil means {"type":"string"}.
	Schema map[string]any
	// Statuses are the statuses of the responses a middleware's header
	// is sent with (Retry-After: 429); empty: every response of the
	// routes it guards. Ignored in ResponseDoc.Headers (the response's own
	// status).
	Statuses []int
	// BeforeNext: the middleware sets the header before it calls next,
	// so it is on the answers of what runs after it (the later
	// middleware, the contract and the handler) and, of the middleware's
	// own errors, on those of Statuses (none when empty); never on the
	// errors of the middleware before it in the chain, nor on what the
	// server answers before any middleware runs (413 over
	// Config.BodyLimit). It is then required on a status only when
	// Required and only the middleware's own errors answer it. Ignored
	// in Response.Headers.
	BeforeNext bool
}

// SecuritySchemeDoc is one kind of credential (an OpenAPI Security Scheme
// Object). Two schemes with the same Name on the routes of one App are
// documented under distinct names (the second gets a numeric suffix).
type SecuritySchemeDoc struct {
	// Name is the scheme's key in components.securitySchemes
	// ("bearerAuth", "apiKeyAuth").
	Name string
	// Type is "http" (Authorization header: Scheme says which), "apiKey"
	// (a header, query parameter or cookie: In and Param) or "mutualTLS".
	// OAuth 2 and OpenID Connect, which need flows or a discovery URL,
	// are not modelled.
	Type string
	// Scheme is the HTTP authentication scheme of Type "http" ("bearer",
	// "basic"), lower case.
	Scheme string
	// BearerFormat hints at the bearer token's format ("JWT").
	BearerFormat string
	// In is where an "apiKey" travels: "header", "query" or "cookie".
	In string
	// Param is the header, query parameter or cookie name of an
	// "apiKey" ("X-API-Key").
	Param string
	// Description says what the credential is (CommonMark).
	Description string
}

// ParameterDoc is a request parameter a middleware reads (an OpenAPI
// Parameter Object).
type ParameterDoc struct {
	Name        string
	In          string // "header", "query" or "cookie"
	Required    bool
	Description string
	// Schema is the JSON Schema of the value; nil means {"type":"string"}.
	Schema map[string]any
}

// Declare records d for mw (see Declaration) and returns mw itself,
// unchanged: declaring costs nothing per request. Declaring the same mw
// again adds to its declaration (lists are appended, flags or-ed). nil
// entries of d.Errors are skipped.
//
//	func RequireKey(keys Store) fx.Middleware {
//		return fx.Declare(func(c *fx.Ctx, next fx.Next) error { ... }, fx.Declaration{
//			Errors:   []*fx.Error{ErrNoKey},
//			Security: []fx.SecuritySchemeDoc{{Name: "partnerKey", Type: "apiKey", In: "header", Param: "X-Partner-Key"}},
//		})
//	}
//
// Limits: the declaration is keyed by the function value's identity (the
// closure Go allocated), in a process-wide table that is only read by
// DeclarationOf, never while serving. A closure that
// captures variables is a new value per constructor call, so each call
// declares its own; a function without captures (a top-level func, a
// literal capturing nothing) is one value everywhere, and its declaration
// holds for every use. Wrapping mw in another function (func(c, n) error
// { return mw(c, n) }) loses the declaration: declare the wrapper. Entries
// are never removed (the table keeps mw alive, so its identity is never
// reused): declare at construction, not per request.
func Declare(mw Middleware, d Declaration) Middleware {
	if mw == nil {
		return nil
	}
	declMu.Lock()
	defer declMu.Unlock()
	k := handlerdecl.Key(mw)
	nd := &declaration{mw: mw}
	if prev, ok := declared.Load(k); ok {
		nd.d = prev.(*declaration).d.clone()
	}
	for _, e := range d.Errors {
		if e != nil {
			nd.d.Errors = append(nd.d.Errors, e)
		}
	}
	nd.d.Security = append(nd.d.Security, d.Security...)
	nd.d.Parameters = append(nd.d.Parameters, d.Parameters...)
	nd.d.Headers = append(nd.d.Headers, d.Headers...)
	nd.d.Methods = append(nd.d.Methods, d.Methods...)
	nd.d.Anonymous = nd.d.Anonymous || d.Anonymous
	nd.d.RequiresIdentity = nd.d.RequiresIdentity || d.RequiresIdentity
	declared.Store(k, nd)
	return mw
}

// DeclarationOf returns what was declared for mw (the zero Declaration
// when nothing was). Its slices are copies; the Schema maps of its
// Parameters are shared and must not be modified.
func DeclarationOf(mw Middleware) Declaration {
	if mw == nil {
		return Declaration{}
	}
	d, ok := declared.Load(handlerdecl.Key(mw))
	if !ok {
		return Declaration{}
	}
	return d.(*declaration).d.clone()
}

// AppliesTo reports whether d holds for a route of method: d.Methods is
// empty or lists it.
func (d Declaration) AppliesTo(method string) bool {
	return len(d.Methods) == 0 || slices.Contains(d.Methods, method)
}

var (
	declMu   sync.Mutex // serialises Declare's read-modify-write
	declared sync.Map   // handlerdecl.Key → *declaration
)

type declaration struct {
	mw Middleware // kept alive so that its identity is never reused
	d  Declaration
}

func (d Declaration) clone() Declaration {
	d.Errors = append([]*Error(nil), d.Errors...)
	d.Security = append([]SecuritySchemeDoc(nil), d.Security...)
	d.Parameters = append([]ParameterDoc(nil), d.Parameters...)
	d.Headers = append([]HeaderDoc(nil), d.Headers...)
	d.Methods = append([]string(nil), d.Methods...)
	return d
}
