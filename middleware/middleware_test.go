package middleware_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
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
		for _, e := range fx.DeclarationOf(mw).Errors {
			if s := fx.ErrorStatus[e.Code]; s != e.Status {
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
		"Auth":                  {middleware.Auth(middleware.AuthConfig{APIKeys: apiKeys(t)}), []string{fx.ErrorCodes.Unauthenticated}},
		"RequireRoles":          {middleware.RequireRoles("admin"), []string{fx.ErrorCodes.Unauthenticated, fx.ErrorCodes.Forbidden}},
		"RequirePermissions":    {middleware.RequirePermissions("x"), []string{fx.ErrorCodes.Unauthenticated, fx.ErrorCodes.Forbidden}},
		"Tenant":                {middleware.Tenant(middleware.TenantConfig{Required: true}), []string{fx.ErrorCodes.TenantRequired}},
		"Tenant+Match":          {middleware.Tenant(middleware.TenantConfig{MatchPrincipal: true}), []string{fx.ErrorCodes.TenantRequired, fx.ErrorCodes.Unauthenticated, fx.ErrorCodes.Forbidden}},
		"Tenant+Subdomain":      {middleware.Tenant(middleware.TenantConfig{BaseDomain: "api.example.com"}), []string{fx.ErrorCodes.TenantRequired, fx.ErrorCodes.BadRequest}},
		"Tenant subdomain only": {middleware.Tenant(middleware.TenantConfig{Header: "-", BaseDomain: "api.example.com"}), []string{fx.ErrorCodes.TenantRequired}},
		"Timeout":               {middleware.Timeout(time.Second), []string{fx.ErrorCodes.Timeout}},
	} {
		if got := codes(c.mw); !slices.Equal(got, c.want) {
			t.Errorf("%s declares %v, want %v", name, got, c.want)
		}
	}
}

// TestNoJWTLibrary: importing package middleware (for CORS, rate limiting,
// security headers) or the test client fxtest must not link a JWT library;
// the JWT verifier lives in package middleware/jwt and the test signer in
// middleware/jwt/jwttest, which only their users import. It asks the go
// command for the packages' dependencies (tests excluded), as a user's
// build would resolve them: two go commands, so it runs with
// FX_SLOW_TESTS=1 (.ci/run sets it).
func TestNoJWTLibrary(t *testing.T) {
	if os.Getenv("FX_SLOW_TESTS") == "" {
		t.Skip("slow test (runs the go command): FX_SLOW_TESTS=1 runs it (.ci/run sets it)")
	}
	gobin, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		t.Fatalf("the go command is needed to list the dependencies: %v", err)
	}
	for _, pkg := range []string{"github.com/fxhq/fx/middleware", "github.com/fxhq/fx/fxtest"} {
		out, err := exec.Command(gobin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 || !strings.Contains(string(out), "github.com/fxhq/fx\n") {
			t.Fatalf("go list -deps %s printed an implausible list:\n%s", pkg, out)
		}
		for _, p := range deps {
			if strings.Contains(strings.ToLower(p), "jwt") || strings.Contains(p, "jose") {
				t.Errorf("package %s depends on %s: JWT code belongs in middleware/jwt and middleware/jwt/jwttest", pkg, p)
			}
		}
	}
}
