package jwttest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

// t stands for the *testing.T of a test function in this example. It
// prints failures, so that a failing assertion changes the output.
var t testing.TB = kittest.PrintTB{}

// A Signer mints tokens for the verifier it builds: no key material, no
// golang-jwt code in the test.
func ExampleSigner() {
	s := jwttest.NewSigner(jwttest.HS256) // a fresh secret; RS256, ES256, EdDSA alike
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: s.Verifier()}))
	app.Route(fx.Route{
		Method: "GET", Path: "/admin",
		Middleware: []fx.Middleware{middleware.RequireRoles("admin")},
		Handler: func(c *fx.Ctx) error {
			p, _ := middleware.PrincipalFrom(c)
			return c.String(200, p.Subject+" of "+p.Tenant)
		},
	})
	c := fxtest.New(t, app)

	ok := c.Get("/admin").Bearer(s.Token(jwttest.Subject("alice"), jwttest.Roles("admin"), jwttest.Tenant("acme"))).Do()
	fmt.Println(ok.Status, string(ok.Body))
	c.Get("/admin").Bearer(s.Token(jwttest.Roles("viewer"))).Do().AssertError(403, fx.ErrorCodes.Forbidden)
	c.Get("/admin").Bearer(s.Token(jwttest.ExpiresIn(-time.Hour))).Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
	c.Get("/admin").Bearer(s.Unsigned(jwttest.Roles("admin"))).Do().AssertError(401, fx.ErrorCodes.Unauthenticated)
	// Output: 200 alice of acme
}
