package middleware_test

import (
	"slices"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// TestMiddlewareDeclareErrors: each guard declares the codes it can raise
// (fx.Declare), so documentation lists them on the routes it guards.
func TestMiddlewareDeclareErrors(t *testing.T) {
	codes := func(mw fx.Middleware) []string {
		var out []string
		for _, e := range fx.Declared(mw) {
			if s, _ := fx.StatusOf(e.Code); s != e.Status {
				t.Errorf("%s declared with status %d", e.Code, e.Status)
			}
			out = append(out, e.Code)
		}
		return out
	}
	for name, c := range map[string]struct {
		mw   fx.Middleware
		want []string
	}{
		"Auth":               {middleware.Auth(middleware.AuthConfig{APIKeys: apiKeys(t)}), []string{fx.CodeUnauthenticated}},
		"RequireRoles":       {middleware.RequireRoles("admin"), []string{fx.CodeUnauthenticated, fx.CodeForbidden}},
		"RequirePermissions": {middleware.RequirePermissions("x"), []string{fx.CodeUnauthenticated, fx.CodeForbidden}},
		"Tenant":             {middleware.Tenant(middleware.TenantConfig{Required: true}), []string{fx.CodeTenantRequired}},
		"Tenant+Match":       {middleware.Tenant(middleware.TenantConfig{MatchPrincipal: true}), []string{fx.CodeTenantRequired, fx.CodeForbidden}},
		"RateLimit": {middleware.RateLimit(middleware.RateLimitConfig{
			Limit: middleware.Limit{Name: "l", Requests: 1, Period: time.Second}}), []string{fx.CodeRateLimited}},
		"Timeout": {middleware.Timeout(time.Second), []string{fx.CodeTimeout}},
	} {
		if got := codes(c.mw); !slices.Equal(got, c.want) {
			t.Errorf("%s declares %v, want %v", name, got, c.want)
		}
	}
}
