package middleware_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/nethttp"
)

// doRepeated sends GET target with the header lines given (name, value,
// name, value, ...: a name may repeat) to app on both listeners — the
// fasthttp server (app.Test) and the standard library's through
// nethttp.Handler — and returns each decoded answer.
func doRepeated(t *testing.T, app *fx.App, target string, lines ...string) map[string]result {
	t.Helper()
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	out := map[string]result{}
	for _, listener := range []string{"fasthttp", "net/http"} {
		req := httptest.NewRequest("GET", target, nil)
		if listener == "net/http" {
			req, _ = http.NewRequest("GET", srv.URL+target, nil)
		}
		for i := 0; i+1 < len(lines); i += 2 {
			req.Header.Add(lines[i], lines[i+1])
		}
		var resp *http.Response
		var err error
		if listener == "fasthttp" {
			resp, err = app.Test(req)
		} else {
			resp, err = http.DefaultClient.Do(req)
		}
		if err != nil {
			t.Fatalf("%s: %v", listener, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := result{status: resp.StatusCode, header: resp.Header, raw: string(b)}
		var env struct {
			Error struct {
				Code, Message string
				Details       struct{ Reason string }
			}
		}
		if json.Unmarshal(b, &env) == nil {
			r.code, r.msg, r.reason = env.Error.Code, env.Error.Message, env.Error.Details.Reason
		}
		out[listener] = r
	}
	return out
}

// TestAuthRepeatedCredentialHeader: two Authorization lines, or two API
// key lines, are refused on both listeners with 401 FX_UNAUTHENTICATED
// (reason multiple_credentials, challenge error="invalid_request"), even
// when the first would verify and even with Optional; never is the first
// one silently used. One line of each kind still authenticates.
func TestAuthRepeatedCredentialHeader(t *testing.T) {
	valid := kittest.Sign(nil, nil)
	for _, optional := range []bool{false, true} {
		app := authApp(t, middleware.AuthConfig{Bearer: kittest.HSVerifier(), APIKeys: apiKeys(t), Optional: optional})
		for _, tc := range []struct {
			lines            []string
			challenge, msgOf string
		}{
			{[]string{"Authorization", "Bearer " + valid, "Authorization", "Bearer " + kittest.Sign(nil, kittest.OtherKey)}, "Bearer", "Authorization"},
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
	if !declares(middleware.Auth(middleware.AuthConfig{Bearer: kittest.HSVerifier()}), 401, fx.ErrorCodes.Unauthenticated) {
		t.Error("Auth does not declare 401 FX_UNAUTHENTICATED")
	}
}

// TestCORSRepeatedOrigin: two Origin lines (on an actual request or a
// preflight) are refused on both listeners with 400 FX_BAD_REQUEST
// (reason repeated_origin) and no Access-Control-Allow-Origin, even when
// the first origin is allowed; the refusal is declared.
func TestCORSRepeatedOrigin(t *testing.T) {
	cors := middleware.CORS(middleware.CORSConfig{AllowOrigins: []string{appOrigin}, AllowCredentials: true})
	app := fx.New()
	app.Use(cors)
	app.Get("/r", func(c *fx.Ctx) error { return c.String(200, "ok") })
	for _, lines := range [][]string{
		{"Origin", appOrigin, "Origin", "https://evil.example"},
		{"Origin", appOrigin, "Origin", appOrigin},
	} {
		for listener, r := range doRepeated(t, app, "/r", lines...) {
			if r.status != 400 || r.code != fx.ErrorCodes.BadRequest || r.reason != middleware.ReasonRepeatedOrigin ||
				r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("%s, %q: %d %v %s", listener, lines, r.status, corsHeaders(r.header), r.raw)
			}
		}
	}
	for listener, r := range doRepeated(t, app, "/r", "Origin", appOrigin) {
		if r.status != 200 || r.header.Get("Access-Control-Allow-Origin") != appOrigin {
			t.Errorf("%s, one Origin: %d %v", listener, r.status, corsHeaders(r.header))
		}
	}
	if !declares(cors, 400, fx.ErrorCodes.BadRequest) {
		t.Error("CORS does not declare 400 FX_BAD_REQUEST")
	}
}

// declares reports whether mw declared status and code (fx.Declare).
func declares(mw fx.Middleware, status int, code string) bool {
	for _, e := range fx.Declared(mw) {
		if e.Status == status && e.Code == code {
			return true
		}
	}
	return false
}

// containsAll reports whether s contains every one of parts.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
