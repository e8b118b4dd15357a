package fxtest_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
)

// Serve serves over real TCP on loopback, and CheckEnvelope accepts what
// fx sends there: a 404 and an application error.
func TestServeAndCheckEnvelope(t *testing.T) {
	app := quietApp()
	app.Get("/teapot", func(c *fx.Ctx) error {
		return fx.NewError(418, "APP_TEAPOT", "I am a teapot", map[string]int{"cups": 2})
	})
	addr := fxtest.Serve(t, app)
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("Serve returned %q, want a loopback address", addr)
	}
	for path, want := range map[string]struct {
		status int
		code   string
	}{"/nope": {404, fx.ErrorCodes.NotFound}, "/teapot": {418, "APP_TEAPOT"}} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		env, err := fxtest.CheckEnvelope(resp.StatusCode, resp.Header, body, map[string]int{"APP_TEAPOT": 418})
		if err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if resp.StatusCode != want.status || env.Code != want.code {
			t.Errorf("%s: %d %s, want %d %s", path, resp.StatusCode, env.Code, want.status, want.code)
		}
	}
}

// A request still in its handler when the test ends fails the test once
// the bound has passed, instead of holding the test run until its
// timeout.
func TestServeShutdownIsBounded(t *testing.T) {
	defer fxtest.SetServeShutdownTimeout(200 * time.Millisecond)()
	entered, release := make(chan struct{}), make(chan struct{})
	app := quietApp()
	app.Get("/hold", func(c *fx.Ctx) error {
		close(entered)
		<-release // ignores c.Context(): a handler the shutdown must wait for
		return c.String(200, "late")
	})
	rec := &kittest.RecordTB{TB: t}
	var addr string
	rec.Run(func(tb testing.TB) { addr = fxtest.Serve(tb, app) })
	if rec.Failed() {
		t.Fatalf("Serve: %q", rec.Errors())
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	<-entered
	start := time.Now()
	rec.End() // the test ends: Serve's cleanup shuts the server down
	close(release)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("cleanup took %v with a 200ms bound", took)
	}
	if errs := rec.Errors(); len(errs) == 0 || !strings.Contains(errs[0], "is a connection still open?") {
		t.Fatalf("cleanup reported %q, want the bounded shutdown named", errs)
	}
}

// CheckEnvelope refuses every way a body can miss the wire format;
// CheckEnvelopeBody, every way but those of the status and headers.
func TestCheckEnvelopeRefuses(t *testing.T) {
	bodyIsFine := map[string]bool{"content type": true, "wrong status": true, "unknown code": true, "chatty 500": true}
	js := http.Header{"Content-Type": {"application/json"}}
	for name, c := range map[string]struct {
		status int
		header http.Header
		body   string
	}{
		"content type":  {404, http.Header{"Content-Type": {"text/plain"}}, `{"error":{"code":"FX_NOT_FOUND","message":"m"}}`},
		"not json":      {404, js, `{"error":`},
		"trailing":      {404, js, `{"error":{"code":"FX_NOT_FOUND","message":"m"}} {}`},
		"other key":     {404, js, `{"error":{"code":"FX_NOT_FOUND","message":"m"},"x":1}`},
		"extra field":   {404, js, `{"error":{"code":"FX_NOT_FOUND","message":"m","hint":"h"}}`},
		"null details":  {404, js, `{"error":{"code":"FX_NOT_FOUND","message":"m","details":null}}`},
		"empty details": {404, js, `{"error":{"code":"FX_NOT_FOUND","message":"m","details":{}}}`},
		"no message":    {404, js, `{"error":{"code":"FX_NOT_FOUND"}}`},
		"code not str":  {404, js, `{"error":{"code":1,"message":"m"}}`},
		"wrong status":  {400, js, `{"error":{"code":"FX_NOT_FOUND","message":"m"}}`},
		"unknown code":  {404, js, `{"error":{"code":"APP_X","message":"m"}}`},
		"chatty 500":    {500, js, `{"error":{"code":"FX_INTERNAL_ERROR","message":"boom: db down"}}`},
		"invalid utf-8": {404, js, "{\"error\":{\"code\":\"FX_NOT_FOUND\",\"message\":\"\xff\"}}"},
		"error not obj": {404, js, `{"error":"FX_NOT_FOUND"}`},
		"no error key":  {404, js, `{"code":"FX_NOT_FOUND","message":"m"}`},
	} {
		if _, err := fxtest.CheckEnvelope(c.status, c.header, []byte(c.body), nil); err == nil {
			t.Errorf("%s: CheckEnvelope accepted %q", name, c.body)
		}
		// The body alone: what is wrong with the body itself is refused.
		_, err := fxtest.CheckEnvelopeBody([]byte(c.body))
		if aboutTheBody := !bodyIsFine[name]; aboutTheBody != (err != nil) {
			t.Errorf("%s: CheckEnvelopeBody(%q) = %v", name, c.body, err)
		}
	}
	if env, err := fxtest.CheckEnvelopeBody([]byte(`{"error":{"code":"APP_X","message":"m","details":[1]}}`)); err != nil || env.Code != "APP_X" || string(env.Details) != "[1]" {
		t.Errorf("CheckEnvelopeBody: %+v, %v", env, err)
	}
	if _, err := fxtest.CheckEnvelope(500, js, []byte(`{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}`), nil); err != nil {
		t.Errorf("the production 500 was refused: %v", err)
	}
}
