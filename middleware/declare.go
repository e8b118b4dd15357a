package middleware

import "github.com/fxhq/fx"

// What this package's middleware declare (fx.DeclareAll), for
// documentation generators (package openapi): each guarded operation then
// lists these statuses and codes, its security requirements and the
// parameters the middleware read. Status, Code and the type of Details
// (FailureDetails: the document types "details" by it) matter here; the
// messages a request gets are the ones documented on each constructor.
var (
	declUnauthenticated = fx.NewCatalogError(fx.CodeUnauthenticated, "Authentication required", FailureDetails{})
	declForbidden       = fx.NewCatalogError(fx.CodeForbidden, "Forbidden", FailureDetails{})
	declTenantRequired  = fx.NewCatalogError(fx.CodeTenantRequired, "Tenant required", FailureDetails{})
	declBadRequest      = fx.NewCatalogError(fx.CodeBadRequest, "Bad request", FailureDetails{})
)

// challengeHeader is the WWW-Authenticate challenge of a 401 (and, for a
// bearer principal, of RequireRoles' 403: RFC 6750's insufficient_scope).
var challengeHeader = fx.Header{Name: "WWW-Authenticate", Required: true, Statuses: []int{401},
	Description: "The challenge of the credentials the route accepts (RFC 9110 §11.6.1)."}

// Names of the security schemes Auth declares (the keys of the OpenAPI
// document's components.securitySchemes).
const (
	BearerSchemeName = "bearerAuth"
	APIKeySchemeName = "apiKeyAuth"
)

// authDeclaration is what Auth under cfg (defaults applied) declares: 401,
// and one security scheme per accepted credential (a bearer token, with
// the format its Verifier states through BearerFormatter, "JWT" for
// package middleware/jwt's; an API key in its header),
// any one of which a request may present; Optional lets requests without
// credentials through.
func authDeclaration(cfg AuthConfig) fx.Declaration {
	d := fx.Declaration{Errors: []*fx.Error{declUnauthenticated}, Anonymous: cfg.Optional,
		Headers: []fx.Header{challengeHeader}}
	if cfg.Bearer != nil {
		s := fx.SecurityScheme{Name: BearerSchemeName, Type: "http", Scheme: "bearer",
			Description: "A bearer token in the Authorization header (RFC 6750)."}
		if f, ok := cfg.Bearer.(BearerFormatter); ok {
			switch s.BearerFormat = f.BearerFormat(); s.BearerFormat {
			case "":
			case "JWT":
				s.Description = "A JSON Web Token (RFC 7519) sent as a bearer token in the Authorization header (RFC 6750)."
			default:
				s.Description = "A bearer token (" + s.BearerFormat + ") in the Authorization header (RFC 6750)."
			}
		}
		d.Security = append(d.Security, s)
	}
	if cfg.APIKeys != nil {
		d.Security = append(d.Security, fx.SecurityScheme{Name: APIKeySchemeName, Type: "apiKey", In: "header",
			Param: cfg.APIKeyHeader, Description: "An API key in the " + cfg.APIKeyHeader + " header."})
	}
	return d
}

// requireDeclaration is what RequireRoles and RequirePermissions declare:
// 401 without a principal, 403 without the role or permission; they need
// an identity, so the route's security is not optional.
var requireDeclaration = fx.Declaration{
	Errors:           []*fx.Error{declUnauthenticated, declForbidden},
	RequiresIdentity: true,
	Headers:          []fx.Header{challengeHeader},
}

// requestIDDeclaration is what RequestID declares: the header it reads
// (unless it ignores incoming IDs) and sets on every answer.
func requestIDDeclaration(header string, ignoreIncoming bool) fx.Declaration {
	d := fx.Declaration{Headers: []fx.Header{{Name: header, Required: true,
		Description: "The request's ID: the one the request sent when it was safe, else a new one."}}}
	if !ignoreIncoming {
		d.Parameters = []fx.Parameter{{Name: header, In: "header",
			Description: "An ID for the request, kept when safe (ValidRequestID: at most 128 printable ASCII characters, no quotes, backslash, comma, semicolon or angle brackets), else replaced."}}
	}
	return d
}

// tenantDeclaration is what Tenant under cfg declares: 400
// FX_TENANT_REQUIRED for a missing (Required) or malformed tenant; 400
// FX_BAD_REQUEST when both the header and the subdomain can name one and
// they differ; 401 and 403 with MatchPrincipal; and its header (header,
// after defaults; "" when disabled) as a parameter, required when it is
// the only source of a Required tenant, with the pattern of ValidTenantID
// unless cfg.Validate replaces it.
func tenantDeclaration(cfg TenantConfig, header, base string) fx.Declaration {
	d := fx.Declaration{Errors: []*fx.Error{declTenantRequired}}
	if header != "" && base != "" {
		d.Errors = append(d.Errors, declBadRequest)
	}
	if cfg.MatchPrincipal {
		d.Errors = append(d.Errors, declUnauthenticated, declForbidden)
	}
	if header != "" {
		p := fx.Parameter{Name: header, In: "header", Required: cfg.Required && base == "",
			Description: "The tenant the request is for.", Schema: map[string]any{"type": "string"}}
		if base != "" {
			p.Description += " A tenant subdomain of " + base + " may name it instead; both must then agree."
		}
		if cfg.Validate == nil {
			p.Schema = map[string]any{"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$"}
		}
		d.Parameters = []fx.Parameter{p}
	}
	return d
}
