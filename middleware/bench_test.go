package middleware_test

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
	"github.com/valyala/fasthttp"
)

// benchServe runs requests through app's fasthttp handler in process (no
// network), so the numbers are fx + middleware + handler. Each request
// carries header name: value and must answer 200.
func benchServe(b *testing.B, app *fx.App, name, value string) {
	b.Helper()
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	kittest.BenchParallel(b, app.Handler(), "GET", "/me", 200, func(rc *fasthttp.RequestCtx) {
		if name != "" {
			rc.Request.Header.Set(name, value)
		}
	})
}

// me is the benchmark handler: it reads the principal and answers a
// constant body, so the numbers are those of authentication.
func me(c *fx.Ctx) error {
	if _, ok := middleware.PrincipalFrom(c); !ok {
		return c.String(500, "no principal")
	}
	return c.String(200, "ok")
}

func benchApp(mw ...fx.Middleware) *fx.App {
	app := fx.New()
	app.Use(mw...)
	app.Get("/me", me)
	return app
}

// BenchmarkBaseline is the same request and handler with SetPrincipal
// standing in for Auth: the cost of fx itself, to subtract.
func BenchmarkBaseline(b *testing.B) {
	p := &middleware.Principal{Subject: "x"}
	benchServe(b, benchApp(func(c *fx.Ctx, next fx.Next) error {
		middleware.SetPrincipal(c, p)
		return next()
	}), "", "")
}

// BenchmarkAuthJWTHS256 is a request passing Auth with an HS256 token
// checked for signature, exp, nbf, iat, iss and aud. Every request sends
// the same token, so after the first one the verifier's cache answers.
func BenchmarkAuthJWTHS256(b *testing.B) {
	tok := jwtkit.Sign(jwttest.Claims{"roles": []string{"admin"}, "tenant_id": "acme"}, nil)
	benchServe(b, benchApp(middleware.Auth(middleware.AuthConfig{Bearer: jwtkit.HSVerifier()})), "Authorization", "Bearer "+tok)
}

// cachedVerifier is jwtkit.HSVerifier with a cache of size entries (negative:
// none).
func cachedVerifier(b *testing.B, size int) *jwt.Verifier {
	cfg := signer(nil).JWTConfig()
	cfg.CacheSize = size
	v, err := jwt.NewVerifier(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

// BenchmarkAuthJWTHS256NoCache is BenchmarkAuthJWTHS256 with the cache
// disabled (CacheSize < 0): golang-jwt verifies every request.
func BenchmarkAuthJWTHS256NoCache(b *testing.B) {
	tok := jwtkit.Sign(jwttest.Claims{"roles": []string{"admin"}, "tenant_id": "acme"}, nil)
	v := cachedVerifier(b, -1)
	benchServe(b, benchApp(middleware.Auth(middleware.AuthConfig{Bearer: v})), "Authorization", "Bearer "+tok)
}

// BenchmarkAuthJWTHS256FirstSighting is the cost of a token the cache has
// not seen: 1024 distinct tokens cycle through a cache of 8 entries, so
// (almost) every request verifies its token and stores it, evicting
// another.
func BenchmarkAuthJWTHS256FirstSighting(b *testing.B) {
	toks := make([]string, 1024)
	for i := range toks {
		// The same claims as BenchmarkAuthJWTHS256's token, only "sub"
		// differs: the same decoding work.
		toks[i] = "Bearer " + jwtkit.Sign(jwttest.Claims{"roles": []string{"admin"}, "tenant_id": "acme", "sub": "user-" + strconv.Itoa(i)}, nil)
	}
	v := cachedVerifier(b, 8)
	app := benchApp(middleware.Auth(middleware.AuthConfig{Bearer: v}))
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	h := app.Handler()
	var next atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var rc fasthttp.RequestCtx
		rc.Request.SetRequestURI("/me")
		for pb.Next() {
			rc.Request.Header.Set("Authorization", toks[next.Add(1)%uint64(len(toks))])
			rc.Response.Reset()
			h(&rc)
			if rc.Response.StatusCode() != 200 {
				b.Fatalf("status %d: %s", rc.Response.StatusCode(), rc.Response.Body())
			}
		}
	})
}

// BenchmarkAuthAPIKey is a request passing Auth with one of two static API
// keys.
func BenchmarkAuthAPIKey(b *testing.B) {
	benchServe(b, benchApp(middleware.Auth(middleware.AuthConfig{APIKeys: apiKeys(b)})), "X-API-Key", adminKey)
}

// BenchmarkAuthAPIKeyRequireRoleTenant adds RequireRoles and a Tenant
// header to the API key request.
func BenchmarkAuthAPIKeyRequireRoleTenant(b *testing.B) {
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{APIKeys: apiKeys(b)}),
		middleware.Tenant(middleware.TenantConfig{Required: true, MatchPrincipal: true}),
		middleware.RequireRoles("admin"))
	app.Get("/me", me)
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	kittest.BenchParallel(b, app.Handler(), "GET", "/me", 200, func(rc *fasthttp.RequestCtx) {
		rc.Request.Header.Set("X-API-Key", adminKey)
		rc.Request.Header.Set("X-Tenant-ID", "acme")
	})
}

// BenchmarkAuthRefusedExpired is the cost of refusing an expired token.
func BenchmarkAuthRefusedExpired(b *testing.B) {
	app := benchApp(middleware.Auth(middleware.AuthConfig{Bearer: jwtkit.HSVerifier()}))
	tok := jwtkit.Sign(jwttest.Claims{"exp": jwtkit.FixedNow.Unix() - 3600}, nil)
	if err := app.Boot(); err != nil {
		b.Fatal(err)
	}
	kittest.BenchParallel(b, app.Handler(), "GET", "/me", 401, func(rc *fasthttp.RequestCtx) {
		rc.Request.Header.Set("Authorization", "Bearer "+tok)
	})
}
