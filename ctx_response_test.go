package fx_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
)

func TestCookieReadIsCopy(t *testing.T) {
	app := quietFor(t)
	var kept []string
	app.Get("/", func(c *fx.Ctx) error {
		kept = append(kept, c.Cookie("sid"), c.Cookie("absent"))
		return c.NoContent(204)
	})
	do(t, app, "GET", "/", "", "Cookie", "a=1; sid=first; b=2")
	do(t, app, "GET", "/", "", "Cookie", "sid=XXXXX")
	if kept[0] != "first" || kept[1] != "" || kept[2] != "XXXXX" {
		t.Fatalf("cookies = %q (a kept value must not change with later requests)", kept)
	}
}

func TestSetCookieSecureDefaults(t *testing.T) {
	app := quietFor(t)
	app.Get("/", func(c *fx.Ctx) error {
		return c.SetCookie(fx.Cookie{Name: "sid", Value: "abc"})
	})
	r := do(t, app, "GET", "/", "")
	sc := r.header.Get("Set-Cookie")
	for _, want := range []string{"sid=abc", "path=/", "HttpOnly", "secure", "SameSite=Lax"} {
		if !strings.Contains(strings.ToLower(sc), strings.ToLower(want)) {
			t.Errorf("Set-Cookie %q lacks %q", sc, want)
		}
	}
	if strings.Contains(strings.ToLower(sc), "max-age") || strings.Contains(strings.ToLower(sc), "expires") {
		t.Errorf("Set-Cookie %q: a session cookie has no Max-Age or Expires", sc)
	}
}

func TestSetCookieOptOutsAndAttributes(t *testing.T) {
	app := quietFor(t)
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	app.Get("/", func(c *fx.Ctx) error {
		if err := c.SetCookie(fx.Cookie{Name: "theme", Value: "dark", AllowScript: true, Insecure: true,
			SameSite: fx.SameSiteStrict, Path: "/app", Domain: "example.com", MaxAge: 3600}); err != nil {
			return err
		}
		if err := c.SetCookie(fx.Cookie{Name: "x", Value: "1", SameSite: fx.SameSiteNone, Expires: exp, Partitioned: true}); err != nil {
			return err
		}
		return c.NoContent(204)
	})
	r := do(t, app, "GET", "/", "")
	cookies := (&http.Response{Header: r.header}).Cookies()
	if len(cookies) != 2 {
		t.Fatalf("cookies = %v", r.header.Values("Set-Cookie"))
	}
	byName := map[string]*http.Cookie{}
	for _, ck := range cookies {
		byName[ck.Name] = ck
	}
	th := byName["theme"]
	if th == nil || th.HttpOnly || th.Secure || th.SameSite != http.SameSiteStrictMode ||
		th.Path != "/app" || th.Domain != "example.com" || th.MaxAge != 3600 || th.Value != "dark" {
		t.Errorf("theme = %+v", th)
	}
	x := byName["x"]
	if x == nil || !x.HttpOnly || !x.Secure || x.SameSite != http.SameSiteNoneMode || !x.Expires.Equal(exp) || !x.Partitioned {
		t.Errorf("x = %+v", x)
	}
}

func TestSetCookieRefusesUnsafe(t *testing.T) {
	bad := []fx.Cookie{
		{Name: "", Value: "v"},
		{Name: "a b", Value: "v"},
		{Name: "a;b", Value: "v"},
		{Name: "a", Value: "v;Domain=evil.com"},
		{Name: "a", Value: "v\r\nSet-Cookie: admin=1"},
		{Name: "a", Value: "with space"},
		{Name: "a", Value: `"quoted"`},
		{Name: "a", Value: "é"},
		{Name: "a", Value: "v", Path: "/;HttpOnly=0"},
		{Name: "a", Value: "v", Domain: "x.com\n"},
		{Name: "a", Value: "v", SameSite: fx.SameSiteNone, Insecure: true},
		{Name: "a", Value: "v", SameSite: 7},
	}
	for _, ck := range bad {
		app, logs := newLogged()
		app.Get("/", func(c *fx.Ctx) error { return c.SetCookie(ck) })
		r := do(t, app, "GET", "/", "")
		mustEnvelope(t, r, 500, fx.ErrorCodes.InternalError)
		if sc := r.header.Values("Set-Cookie"); len(sc) != 0 {
			t.Errorf("%+v: Set-Cookie written: %q", ck, sc)
		}
		if !strings.Contains(logs.String(), "SetCookie") {
			t.Errorf("%+v: the reason is not logged: %s", ck, logs)
		}
		app.Shutdown()
	}
}

func TestClearCookie(t *testing.T) {
	app := quietFor(t)
	app.Get("/", func(c *fx.Ctx) error { return c.ClearCookie("sid") })
	r := do(t, app, "GET", "/", "")
	sc := r.header.Get("Set-Cookie")
	if !strings.HasPrefix(sc, "sid=;") || !strings.Contains(sc, "max-age=0") || !strings.Contains(sc, "path=/") {
		t.Fatalf("Set-Cookie = %q", sc)
	}
}

func TestRedirect(t *testing.T) {
	app := quietFor(t)
	app.Get("/r", func(c *fx.Ctx) error {
		c.SetHeader("X-Kept", "1")
		return c.Redirect(303, c.Query("to"))
	})
	for _, loc := range []string{"/login?next=%2Fa", "../up", "https://example.com/x"} {
		req := "/r?to=" + strings.ReplaceAll(strings.ReplaceAll(loc, "%", "%25"), "?", "%3F")
		req = strings.ReplaceAll(req, "&", "%26")
		r := do(t, app, "GET", req, "", "Host", "evil.example")
		if r.status != 303 || r.header.Get("Location") != loc || len(r.body) != 0 || r.header.Get("X-Kept") != "1" {
			t.Errorf("%q: status %d Location %q body %q", loc, r.status, r.header.Get("Location"), r.body)
		}
	}
}

func TestRedirectRefusesBadStatusAndLocation(t *testing.T) {
	cases := []struct {
		status int
		loc    string
	}{
		{200, "/a"}, {304, "/a"}, {300, "/a"}, {404, "/a"}, {302, ""},
		{302, "/a\r\nSet-Cookie: x=1"}, {302, "/a\nb"}, {302, "/a\x00"}, {302, "/a\x7f"},
	}
	app := quietFor(t)
	var i int
	app.Get("/", func(c *fx.Ctx) error { return c.Redirect(cases[i].status, cases[i].loc) })
	for i = range cases {
		r := do(t, app, "GET", "/", "")
		mustEnvelope(t, r, 500, fx.ErrorCodes.InternalError)
		if l := r.header.Get("Location"); l != "" {
			t.Errorf("%+v: Location %q written", cases[i], l)
		}
	}
}

func TestAddHeader(t *testing.T) {
	app := quietFor(t)
	app.Get("/", func(c *fx.Ctx) error {
		c.AddHeader("Link", "</a>; rel=preload")
		c.AddHeader("Link", "</b>; rel=preload")
		c.SetHeader("Vary", "Origin")
		c.AddHeader("Vary", "Accept-Encoding")
		return c.NoContent(204)
	})
	r := do(t, app, "GET", "/", "")
	if got := r.header.Values("Link"); len(got) != 2 || got[0] != "</a>; rel=preload" || got[1] != "</b>; rel=preload" {
		t.Errorf("Link = %q", got)
	}
	if got := r.header.Values("Vary"); len(got) != 2 {
		t.Errorf("Vary = %q", got)
	}
}
