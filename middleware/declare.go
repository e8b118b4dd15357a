package middleware

import "github.com/fxhq/fx"

// What this package's middleware declare they can raise (fx.Declare), for
// documentation generators (package openapi): each guarded operation then
// lists these statuses and codes. Only Status and Code matter here; the
// messages a request gets are the ones documented on each constructor.
var (
	declUnauthenticated = fx.NewCatalogError(fx.CodeUnauthenticated, "Authentication required")
	declForbidden       = fx.NewCatalogError(fx.CodeForbidden, "Forbidden")
	declTenantRequired  = fx.NewCatalogError(fx.CodeTenantRequired, "Tenant required")
	declRateLimited     = fx.NewCatalogError(fx.CodeRateLimited, "Rate limit exceeded")
)

// tenantErrors are the errors Tenant can raise under cfg: 400 for a
// missing (Required) or malformed tenant, 403 when MatchPrincipal refuses
// a principal of another tenant.
func tenantErrors(cfg TenantConfig) []*fx.Error {
	if cfg.MatchPrincipal {
		return []*fx.Error{declTenantRequired, declForbidden}
	}
	return []*fx.Error{declTenantRequired}
}
