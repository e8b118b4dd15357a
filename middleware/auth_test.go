package middleware_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest/jwtkit"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/jwt"
	"github.com/fxhq/fx/middleware/jwt/jwttest"
)

func authApp(t *testing.T, cfg middleware.AuthConfig, fxcfg ...fx.Config) *fx.App {
	t.Helper()
	app := fx.New(fxcfg...)
	app.Use(middleware.Auth(cfg))
	app.Get("/me", whoami)
	return app
}

// noneToken is an unsigned token (alg "none"), as an attacker would send it.
func noneToken(t *testing.T) string {
	return signer(nil).Unsigned(jwttest.Roles("admin"))
}

// tamper replaces claims in the payload of tok, keeping the signature.
func tamper(t *testing.T, tok string, claims jwttest.Claims) string {
	return jwttest.Tamper(tok, claims)
}

// critToken has a "crit" header the verifier does not understand.
func critToken(t *testing.T) string {
	return signer(nil).Token(jwttest.Header("crit", []string{"exp-ext"}), jwttest.Header("exp-ext", true))
}

func TestAuthBearerAndAPIKey(t *testing.T) {
	app := authApp(t, middleware.AuthConfig{Bearer: jwtkit.HSVerifier(), APIKeys: apiKeys(t)},
		fx.Config{HeaderLimit: 64 << 10})

	valid := jwtkit.Sign(jwttest.Claims{"roles": []string{"admin"}}, nil)
	hs384 := jwtkit.SignerFor(jwttest.HS384, append(jwtkit.JWTSecret, jwtkit.JWTSecret...), "").Token()
	long := strings.Repeat("a", middleware.DefaultMaxCredentialLength+1)

	type tc struct {
		name    string
		headers map[string]string
		status  int
		reason  string // "" for success
		msg     string // a fragment of the message
		oauth   string // the challenge's error attribute; "-" for none
		secret  string // must not appear in the response
	}
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	cases := []tc{
		{name: "valid token", headers: bearer(valid), status: 200, secret: valid},
		{name: "lower-case scheme", headers: map[string]string{"Authorization": "bearer " + valid}, status: 200},
		{name: "upper-case scheme", headers: map[string]string{"Authorization": "BEARER " + valid}, status: 200},
		{name: "several spaces", headers: map[string]string{"Authorization": "Bearer    " + valid}, status: 200},
		{name: "valid API key", headers: map[string]string{"X-API-Key": adminKey}, status: 200, secret: adminKey},

		{name: "no credentials", headers: nil, status: 401, reason: "missing_credentials", msg: "no credentials", oauth: "-"},
		{name: "empty Authorization", headers: map[string]string{"Authorization": ""}, status: 401, reason: "missing_credentials", oauth: "-"},
		{name: "Bearer with no token", headers: map[string]string{"Authorization": "Bearer"}, status: 401,
			reason: "malformed_credentials", msg: "Malformed Authorization header", oauth: "invalid_request"},
		{name: "Bearer and spaces", headers: map[string]string{"Authorization": "Bearer    "}, status: 401,
			reason: "malformed_credentials", oauth: "invalid_request"},
		{name: "two tokens", headers: map[string]string{"Authorization": "Bearer " + valid + " " + valid}, status: 401,
			reason: "malformed_credentials", oauth: "invalid_request", secret: valid},
		{name: "token with illegal characters", headers: map[string]string{"Authorization": `Bearer abc"def,ghi`}, status: 401,
			reason: "malformed_credentials", oauth: "invalid_request", secret: `abc"def`},
		{name: "Basic scheme", headers: map[string]string{"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}, status: 401,
			reason: "unsupported_scheme", msg: "expected Bearer", oauth: "invalid_request", secret: "dXNlcjpwYXNzd29yZA"},
		{name: "scheme without space", headers: map[string]string{"Authorization": "Bearer" + valid}, status: 401,
			reason: "unsupported_scheme", oauth: "invalid_request", secret: valid},
		{name: "not a JWT", headers: bearer("not-a-jwt"), status: 401,
			reason: "malformed_credentials", msg: "Bearer token is malformed", oauth: "invalid_token", secret: "not-a-jwt"},
		{name: "garbage segments", headers: bearer("aaaa.bbbb.cccc"), status: 401,
			reason: "malformed_credentials", msg: "malformed", oauth: "invalid_token", secret: "aaaa.bbbb"},
		{name: "signed with the wrong key", headers: bearer(jwtkit.Sign(nil, jwtkit.OtherKey)), status: 401,
			reason: "invalid_credentials", msg: "signature is invalid", oauth: "invalid_token"},
		{name: "payload tampered", headers: bearer(tamper(t, valid, jwttest.Claims{"sub": "root"})), status: 401,
			reason: "invalid_credentials", msg: "signature is invalid", oauth: "invalid_token"},
		{name: "alg none", headers: bearer(noneToken(t)), status: 401,
			reason: "invalid_credentials", msg: "algorithm is not allowed", oauth: "invalid_token"},
		{name: "alg outside the allow-list", headers: bearer(hs384), status: 401,
			reason: "invalid_credentials", msg: "algorithm is not allowed", oauth: "invalid_token"},
		{name: "expired", headers: bearer(jwtkit.Sign(jwttest.Claims{"exp": jwtkit.FixedNow.Add(-time.Hour).Unix()}, nil)), status: 401,
			reason: "expired", msg: "Bearer token has expired", oauth: "invalid_token"},
		{name: "expired within leeway", headers: bearer(jwtkit.Sign(jwttest.Claims{"exp": jwtkit.FixedNow.Add(-10 * time.Second).Unix()}, nil)), status: 200},
		{name: "expired beyond leeway", headers: bearer(jwtkit.Sign(jwttest.Claims{"exp": jwtkit.FixedNow.Add(-31 * time.Second).Unix()}, nil)), status: 401,
			reason: "expired", oauth: "invalid_token"},
		{name: "not yet valid", headers: bearer(jwtkit.Sign(jwttest.Claims{"nbf": jwtkit.FixedNow.Add(time.Hour).Unix()}, nil)), status: 401,
			reason: "not_yet_valid", msg: "not valid yet", oauth: "invalid_token"},
		{name: "issued in the future", headers: bearer(jwtkit.Sign(jwttest.Claims{"iat": jwtkit.FixedNow.Add(time.Hour).Unix()}, nil)), status: 401,
			reason: "not_yet_valid", msg: "not valid yet", oauth: "invalid_token"},
		{name: "iat within leeway", headers: bearer(jwtkit.Sign(jwttest.Claims{"iat": jwtkit.FixedNow.Add(10 * time.Second).Unix()}, nil)), status: 200},
		{name: "nbf within leeway", headers: bearer(jwtkit.Sign(jwttest.Claims{"nbf": jwtkit.FixedNow.Add(10 * time.Second).Unix()}, nil)), status: 200},
		{name: "wrong issuer", headers: bearer(jwtkit.Sign(jwttest.Claims{"iss": "https://evil.example"}, nil)), status: 401,
			reason: "invalid_claims", msg: "issuer is not accepted", oauth: "invalid_token"},
		{name: "no issuer", headers: bearer(jwtkit.Sign(jwttest.Claims{"iss": nil}, nil)), status: 401,
			reason: "invalid_claims", msg: "issuer is not accepted", oauth: "invalid_token"},
		{name: "no audience", headers: bearer(jwtkit.Sign(jwttest.Claims{"aud": nil}, nil)), status: 401,
			reason: "invalid_claims", msg: "audience is not accepted", oauth: "invalid_token"},
		{name: "empty audience", headers: bearer(jwtkit.Sign(jwttest.Claims{"aud": ""}, nil)), status: 401,
			reason: "invalid_claims", msg: "audience is not accepted", oauth: "invalid_token"},
		{name: "empty issuer", headers: bearer(jwtkit.Sign(jwttest.Claims{"iss": ""}, nil)), status: 401,
			reason: "invalid_claims", msg: "issuer is not accepted", oauth: "invalid_token"},
		{name: "wrong audience", headers: bearer(jwtkit.Sign(jwttest.Claims{"aud": []string{"other-api"}}, nil)), status: 401,
			reason: "invalid_claims", msg: "audience is not accepted", oauth: "invalid_token"},
		{name: "audience among several", headers: bearer(jwtkit.Sign(jwttest.Claims{"aud": []string{"other-api", jwtkit.Audience}}, nil)), status: 200},
		{name: "no expiry", headers: bearer(jwtkit.Sign(jwttest.Claims{"exp": nil}, nil)), status: 401,
			reason: "invalid_claims", msg: "claims are invalid", oauth: "invalid_token"},
		{name: "exp of the wrong type", headers: bearer(jwtkit.Sign(jwttest.Claims{"exp": "tomorrow"}, nil)), status: 401,
			reason: "invalid_claims", oauth: "invalid_token"},
		{name: "unknown crit header", headers: bearer(critToken(t)), status: 401,
			reason: "invalid_claims", oauth: "invalid_token"},
		{name: "very long token", headers: bearer(long), status: 401,
			reason: "credentials_too_long", msg: "too long", oauth: "invalid_request", secret: long[:64]},
		{name: "very long API key", headers: map[string]string{"X-API-Key": long}, status: 401,
			reason: "credentials_too_long", msg: "API key is too long", oauth: "invalid_request", secret: long[:64]},

		{name: "unknown API key", headers: map[string]string{"X-API-Key": "ak_live_0000000000000000000"}, status: 401,
			reason: "invalid_credentials", msg: "API key is invalid", oauth: "invalid_token", secret: "ak_live_0000"},
		{name: "prefix of a valid API key", headers: map[string]string{"X-API-Key": adminKey[:len(adminKey)-1]}, status: 401,
			reason: "invalid_credentials", oauth: "invalid_token", secret: adminKey[:20]},
		{name: "API key with a space", headers: map[string]string{"X-API-Key": "ak_live 0123456789abcdef"}, status: 401,
			reason: "malformed_credentials", msg: "Malformed API key header", oauth: "invalid_request", secret: "0123456789abcdef"},
		{name: "both token and API key", headers: map[string]string{"Authorization": "Bearer " + valid, "X-API-Key": adminKey}, status: 401,
			reason: "multiple_credentials", oauth: "invalid_request", secret: adminKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, app, "GET", "/me", c.headers)
			if c.secret != "" && strings.Contains(r.raw+strings.Join(r.header.Values("WWW-Authenticate"), " "), c.secret) {
				t.Fatalf("the response echoes the credential: %s", r.raw)
			}
			if c.reason == "" {
				if r.status != 200 || r.body["sub"] == nil {
					t.Fatalf("got %d %s, want 200 with a principal", r.status, r.raw)
				}
				if len(r.header.Values("WWW-Authenticate")) != 0 {
					t.Fatalf("challenge on success: %v", r.header.Values("WWW-Authenticate"))
				}
				return
			}
			expectError(t, r, c.status, fx.ErrorCodes.Unauthenticated, c.reason)
			if !strings.Contains(r.msg, c.msg) {
				t.Fatalf("message %q lacks %q", r.msg, c.msg)
			}
			ch := r.header.Values("WWW-Authenticate")
			if len(ch) == 0 {
				t.Fatal("401 without WWW-Authenticate")
			}
			all := strings.Join(ch, "\n")
			if !strings.Contains(all, `realm="api"`) {
				t.Fatalf("challenge %q lacks the realm", all)
			}
			if c.oauth == "-" {
				if strings.Contains(all, "error=") {
					t.Fatalf("challenge for missing credentials carries an error: %q", all)
				}
				if len(ch) != 2 || !strings.HasPrefix(ch[0], "Bearer ") || !strings.HasPrefix(ch[1], "APIKey ") {
					t.Fatalf("want one challenge per scheme, got %q", ch)
				}
			} else if !strings.Contains(all, `error="`+c.oauth+`"`) {
				t.Fatalf("challenge %q lacks error=%q", all, c.oauth)
			}
		})
	}
}

func TestAuthPrincipal(t *testing.T) {
	v, err := jwt.NewVerifier(jwt.Config{
		Algorithms:       []string{"HS256"},
		Key:              jwtkit.JWTSecret,
		PermissionsClaim: "scope",
		RolesClaim:       "realm_access.roles",
		TenantClaim:      "org",
		Now:              func() time.Time { return jwtkit.FixedNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	app := authApp(t, middleware.AuthConfig{Bearer: v})
	tok := jwtkit.Sign(jwttest.Claims{
		"sub":          "alice",
		"scope":        "reports:read reports:write",
		"realm_access": map[string]any{"roles": []any{"admin", 7, "ops"}},
		"org":          "acme",
	}, nil)
	r := do(t, app, "GET", "/me", map[string]string{"Authorization": "Bearer " + tok})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	want := `{"permissions":["reports:read","reports:write"],"principal_tenant":"acme","roles":["admin","ops"],"scheme":"Bearer","sub":"alice"}`
	if r.raw != want {
		t.Fatalf("got  %s\nwant %s", r.raw, want)
	}
}

func TestAuthAPIKeyPrincipal(t *testing.T) {
	app := authApp(t, middleware.AuthConfig{APIKeys: apiKeys(t), APIKeyHeader: "X-Key"})
	r := do(t, app, "GET", "/me", map[string]string{"X-Key": readerKey})
	if r.status != 200 || r.body["sub"] != "svc-reader" || r.body["scheme"] != middleware.SchemeAPIKey {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	// Bearer is not configured: the Authorization header is ignored.
	r = do(t, app, "GET", "/me", map[string]string{"Authorization": "Bearer x"})
	expectError(t, r, 401, fx.ErrorCodes.Unauthenticated, "missing_credentials")
	if ch := r.header.Values("WWW-Authenticate"); len(ch) != 1 || ch[0] != `APIKey realm="api", header="X-Key"` {
		t.Fatalf("challenge %q", ch)
	}
}

func TestAuthOptional(t *testing.T) {
	app := authApp(t, middleware.AuthConfig{Bearer: jwtkit.HSVerifier(), Optional: true})
	r := do(t, app, "GET", "/me", nil)
	if r.status != 200 || r.raw != "{}" {
		t.Fatalf("anonymous request: %d %s", r.status, r.raw)
	}
	// Bad credentials are still refused.
	r = do(t, app, "GET", "/me", map[string]string{"Authorization": "Bearer " + jwtkit.Sign(nil, jwtkit.OtherKey)})
	expectError(t, r, 401, fx.ErrorCodes.Unauthenticated, "invalid_credentials")
}

func TestAuthHeadersOverTheLimit(t *testing.T) {
	app := authApp(t, middleware.AuthConfig{Bearer: jwtkit.HSVerifier()})
	r := do(t, app, "GET", "/me", map[string]string{"Authorization": "Bearer " + strings.Repeat("a", 16<<10)})
	expectError(t, r, 431, fx.ErrorCodes.HeadersTooLarge, "")
}

func TestAuthCustomVerifier(t *testing.T) {
	down := fx.NewError(503, "APP_IDP_DOWN", "Identity provider unavailable")
	v := middleware.VerifierFunc(func(c *fx.Ctx, tok string) (*middleware.Principal, error) {
		switch tok {
		case "good":
			return &middleware.Principal{Subject: "bob", Scheme: middleware.SchemeBearer}, nil
		case "old":
			return nil, errors.Join(errors.New("session 42 ended"), middleware.ErrExpired)
		case "down":
			return nil, down
		case "nil":
			return nil, nil
		}
		return nil, errors.New("no such session")
	})
	app := authApp(t, middleware.AuthConfig{Bearer: v}, quiet)
	h := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	if r := do(t, app, "GET", "/me", h("good")); r.status != 200 || r.body["sub"] != "bob" {
		t.Fatalf("%d %s", r.status, r.raw)
	}
	expectError(t, do(t, app, "GET", "/me", h("old")), 401, fx.ErrorCodes.Unauthenticated, "expired")
	expectError(t, do(t, app, "GET", "/me", h("other")), 401, fx.ErrorCodes.Unauthenticated, "invalid_credentials")
	if r := do(t, app, "GET", "/me", h("down")); r.status != 503 || r.code != "APP_IDP_DOWN" {
		t.Fatalf("an *fx.Error from the verifier must pass through: %d %s", r.status, r.raw)
	}
	if r := do(t, app, "GET", "/me", h("nil")); r.status != 500 || r.code != fx.ErrorCodes.InternalError {
		t.Fatalf("(nil, nil) from the verifier: %d %s", r.status, r.raw)
	}
}

func TestAuthHookSeesSharedError(t *testing.T) {
	var seen any
	app := fx.New()
	app.Use(middleware.Auth(middleware.AuthConfig{Bearer: jwtkit.HSVerifier()}))
	app.OnError(func(c *fx.Ctx, err any) bool { seen = err; return false })
	app.Get("/me", whoami)
	r := do(t, app, "GET", "/me", map[string]string{"Authorization": "Bearer " + jwtkit.Sign(jwttest.Claims{"exp": jwtkit.FixedNow.Add(-time.Hour).Unix()}, nil)})
	expectError(t, r, 401, fx.ErrorCodes.Unauthenticated, "expired")
	fe, ok := seen.(*fx.Error)
	if !ok || fe.Details.(middleware.FailureDetails).Reason != middleware.ReasonExpired {
		t.Fatalf("hook saw %#v", seen)
	}
	if r.header.Get("WWW-Authenticate") == "" {
		t.Fatal("the challenge must survive a hook that declines")
	}
}

func TestAuthConfigPanics(t *testing.T) {
	for name, cfg := range map[string]middleware.AuthConfig{
		"no verifier":    {},
		"bad header":     {APIKeys: apiKeys(t), APIKeyHeader: "X Key"},
		"quote in realm": {Bearer: jwtkit.HSVerifier(), Realm: `a"b`},
		"NUL in realm":   {Bearer: jwtkit.HSVerifier(), Realm: "a\x00b"},
		"DEL in realm":   {Bearer: jwtkit.HSVerifier(), Realm: "a\x7fb"},
	} {
		t.Run(name, func(t *testing.T) { expectPanic(t, func() { middleware.Auth(cfg) }) })
	}
}

func TestNewAPIKeysRefuses(t *testing.T) {
	for name, keys := range map[string]map[string]middleware.Principal{
		"empty":     {},
		"short key": {"short": {Subject: "x"}},
		"space":     {"ak_live 0123456789abcdef": {Subject: "x"}},
		"non-ASCII": {"ak_live_0123456789abcdé": {Subject: "x"}},
	} {
		if _, err := middleware.NewAPIKeys(keys); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "0123456789") {
			t.Errorf("%s: the error echoes the key: %v", name, err)
		}
	}
}

func TestAPIKeysVerifyDirect(t *testing.T) {
	ks := apiKeys(t)
	p, err := ks.Verify(nil, adminKey)
	if err != nil || p.Subject != "svc-admin" || p.Scheme != middleware.SchemeAPIKey || !p.HasRole("admin") {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := ks.Verify(nil, readerKey+"x"); !errors.Is(err, middleware.ErrInvalidCredential) {
		t.Fatalf("err %v", err)
	}
}

// b64 is base64url without padding, for hand-built tokens.
func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestAuthHandBuiltNoneVariants(t *testing.T) {
	app := authApp(t, middleware.AuthConfig{Bearer: jwtkit.HSVerifier()})
	payload := b64(`{"sub":"root","iss":"` + jwtkit.Issuer + `","aud":"` + jwtkit.Audience + `","exp":9999999999}`)
	for _, hdr := range []string{`{"alg":"none"}`, `{"alg":"None"}`, `{"alg":"NONE"}`, `{"alg":""}`, `{}`, `{"alg":"HS256 "}`} {
		for _, sig := range []string{"", "e30"} {
			tok := b64(hdr) + "." + payload + "." + sig
			r := do(t, app, "GET", "/me", map[string]string{"Authorization": "Bearer " + tok})
			if r.status != http.StatusUnauthorized || r.code != fx.ErrorCodes.Unauthenticated {
				t.Fatalf("header %s sig %q: %d %s", hdr, sig, r.status, r.raw)
			}
		}
	}
}

// TestAuthRepeatedCredentialHeader: two Authorization lines, or two API
// key lines, are refused on both listeners with 401 FX_UNAUTHENTICATED
// (reason multiple_credentials, challenge error="invalid_request"), even
// when the first would verify and even with Optional; never is the first
// one silently used. One line of each kind still authenticates.
func TestAuthRepeatedCredentialHeader(t *testing.T) {
	valid := jwtkit.Sign(nil, nil)
	for _, optional := range []bool{false, true} {
		app := authApp(t, middleware.AuthConfig{Bearer: jwtkit.HSVerifier(), APIKeys: apiKeys(t), Optional: optional})
		for _, tc := range []struct {
			lines            []string
			challenge, msgOf string
		}{
			{[]string{"Authorization", "Bearer " + valid, "Authorization", "Bearer " + jwtkit.Sign(nil, jwtkit.OtherKey)}, "Bearer", "Authorization"},
			{[]string{"Authorization", "Bearer " + valid, "Authorization", "Bearer " + valid}, "Bearer", "Authorization"},
			{[]string{"X-API-Key", adminKey, "X-API-Key", readerKey}, "APIKey", "API key"},
		} {
			for listener, r := range doRepeated(t, app, "/me", tc.lines...) {
				if r.status != 401 || r.code != fx.ErrorCodes.Unauthenticated || r.reason != middleware.ReasonMultipleCredentials ||
					r.msg != "More than one "+tc.msgOf+" header was sent: send exactly one" {
					t.Errorf("%s, optional %t, %s twice: %d %s", listener, optional, tc.msgOf, r.status, r.raw)
				}
				if ch := r.header.Get("WWW-Authenticate"); !containsAll(ch, tc.challenge+` realm="api"`, `error="invalid_request"`) {
					t.Errorf("%s, %s twice: challenge %q", listener, tc.msgOf, ch)
				}
			}
		}
		for listener, r := range doRepeated(t, app, "/me", "Authorization", "Bearer "+valid) {
			if r.status != 200 {
				t.Errorf("%s, one Authorization: %d %s", listener, r.status, r.raw)
			}
		}
	}
	// The refusal's status and code are declared: the OpenAPI document
	// lists 401 FX_UNAUTHENTICATED for every guarded route.
	if !declares(middleware.Auth(middleware.AuthConfig{Bearer: jwtkit.HSVerifier()}), 401, fx.ErrorCodes.Unauthenticated) {
		t.Error("Auth does not declare 401 FX_UNAUTHENTICATED")
	}
}

// TestAuthDeclaresSecurity: Auth declares one security scheme per
// credential it accepts (bearer tokens with the format their verifier
// states through BearerFormatter — JWT for package middleware/jwt's —, the
// API key in its configured header), and whether anonymous requests get
// through; RequireRoles cancels that.
func TestAuthDeclaresSecurity(t *testing.T) {
	jwtBearer := fx.SecuritySchemeDoc{Name: middleware.BearerSchemeName, Type: "http", Scheme: "bearer", BearerFormat: "JWT"}
	bearer := fx.SecuritySchemeDoc{Name: middleware.BearerSchemeName, Type: "http", Scheme: "bearer"}
	paseto := fx.SecuritySchemeDoc{Name: middleware.BearerSchemeName, Type: "http", Scheme: "bearer", BearerFormat: "PASETO"}
	key := fx.SecuritySchemeDoc{Name: middleware.APIKeySchemeName, Type: "apiKey", In: "header", Param: "X-Org-Key"}
	custom := middleware.VerifierFunc(func(*fx.Ctx, string) (*middleware.Principal, error) { return nil, middleware.ErrInvalidCredential })
	for name, c := range map[string]struct {
		cfg  middleware.AuthConfig
		want []fx.SecuritySchemeDoc
	}{
		"JWT and API key": {middleware.AuthConfig{Bearer: jwtkit.HSVerifier(), APIKeys: apiKeys(t), APIKeyHeader: "X-Org-Key", Optional: true}, []fx.SecuritySchemeDoc{jwtBearer, key}},
		"opaque bearer":   {middleware.AuthConfig{Bearer: custom}, []fx.SecuritySchemeDoc{bearer}},
		"stated format":   {middleware.AuthConfig{Bearer: formatted{custom, "PASETO"}}, []fx.SecuritySchemeDoc{paseto}},
		"empty format":    {middleware.AuthConfig{Bearer: formatted{custom, ""}}, []fx.SecuritySchemeDoc{bearer}},
	} {
		d := fx.DeclarationOf(middleware.Auth(c.cfg))
		got := d.Security
		for i := range got {
			if got[i].Description == "" {
				t.Errorf("%s: scheme %s has no description", name, got[i].Name)
			}
			got[i].Description = ""
		}
		if !slices.Equal(got, c.want) || d.Anonymous != c.cfg.Optional || d.RequiresIdentity {
			t.Errorf("%s: %+v, want %+v (Anonymous %v)", name, d, c.want, c.cfg.Optional)
		}
	}
	for _, mw := range []fx.Middleware{middleware.RequireRoles(), middleware.RequirePermissions("x")} {
		if d := fx.DeclarationOf(mw); !d.RequiresIdentity || len(d.Security) != 0 {
			t.Errorf("Require*: %+v", d)
		}
	}
}

// formatted is a custom Verifier stating its bearer format.
type formatted struct {
	middleware.Verifier
	format string
}

func (f formatted) BearerFormat() string { return f.format }
