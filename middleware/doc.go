// Package middleware holds fx's first-party middleware for authentication,
// authorization, tenancy and observability.
//
// # Authentication
//
// [Auth] reads credentials from the request, verifies them and stores the
// verified [Principal] for later middleware and the handler
// ([PrincipalFrom]). It accepts
//
//   - Bearer tokens (RFC 6750, "Authorization: Bearer <token>"; the scheme
//     is case-insensitive as RFC 7235 requires), verified by any [Verifier];
//     package middleware/jwt is a ready one on github.com/golang-jwt/jwt/v5,
//     kept out of this package so that importing it (for CORS, say) does
//     not link a JWT library;
//   - API keys from a header (default "X-API-Key"), verified by any
//     [Verifier]; [NewAPIKeys] is a fixed key set compared in constant time.
//
// Credentials that are absent, malformed, badly signed, expired or not yet
// valid are answered 401 FX_UNAUTHENTICATED with a WWW-Authenticate
// challenge. The message says which kind of failure it was and
// details.reason carries it as a stable string (see the Reason constants);
// neither ever echoes the credential.
//
// # Authorization
//
// [RequireRoles] and [RequirePermissions] answer 403 FX_FORBIDDEN when the
// principal lacks what they require, and 401 FX_UNAUTHENTICATED when there
// is no principal at all (Auth did not run, or ran with Optional and the
// request carried no credentials). The two never mix. Put them where they
// apply: fx's App.Use for every route, App.Group for the routes of a group,
// and fx.Route's Middleware for one route, where they run before the
// route's body and query validation, so a refused caller gets 401 or 403,
// never a 422 that describes the schema:
//
//	app.Route(fx.Route{Method: "POST", Path: "/users", Body: userSchema,
//		Middleware: []fx.Middleware{middleware.RequireRoles("admin")},
//		Handler:    createUser})
//
// # Tenancy
//
// [Tenant] resolves the tenant ID from a header (default "X-Tenant-ID") or
// from the subdomain under a base domain, validates it against a documented
// pattern ([ValidTenantID]), optionally cross-checks it against the
// principal's tenant claim, and stores it for [TenantFrom].
//
// # Observability
//
// [RequestID] gives every request an ID (a safe incoming X-Request-ID, or
// a generated one), sends it on every response, errors included, and adds
// it to the request's log attributes so fx's own log lines carry it;
// [RequestIDFrom] reads it. [AccessLog] is an fx.App.OnResponse
// observer that logs one slog line per request with its final status and
// error code, the 404s and transport errors included.
//
// # Timeouts
//
// [Timeout] puts a deadline on the request's context and answers 504
// FX_TIMEOUT when the handler overran it, deciding that after next returns,
// in the request's own goroutine, so a late handler never races the 504.
//
// # Errors
//
// Every failure is an *fx.Error with a code from fx.ErrorCodes; the
// *fx.Error values are package-level and shared, so failing requests do
// not allocate for them. Treat them as read-only.
package middleware

// FailureDetails is the Details of every *fx.Error this package (and
// package middleware/ratelimit) returns: on the wire,
// "details":{"reason":"expired"}. Each middleware's Reason constants
// stand beside it.
type FailureDetails struct {
	Reason string `json:"reason"`
}
