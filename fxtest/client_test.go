package fxtest_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/validate"
)

// record runs fn with a t that records its failures (kittest.RecordTB),
// and returns what it recorded; what fn passed to Cleanup runs when t
// ends.
func record(t *testing.T, fn func(tb testing.TB)) *kittest.RecordTB {
	t.Helper()
	rec := &kittest.RecordTB{TB: t}
	t.Cleanup(rec.End)
	rec.Run(fn)
	return rec
}

// mustFail checks that fn reported at least one failure, each containing
// every fragment in want (at least one of them containing all).
func mustFail(t *testing.T, name string, fn func(tb testing.TB), want ...string) *kittest.RecordTB {
	t.Helper()
	rec := record(t, fn)
	if !rec.Failed() {
		t.Errorf("%s: no failure reported", name)
		return rec
	}
	all := strings.Join(rec.Errors(), "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("%s: failure message lacks %q:\n%s", name, w, all)
		}
	}
	return rec
}

// mustPass checks that fn reported nothing.
func mustPass(t *testing.T, name string, fn func(tb testing.TB)) {
	t.Helper()
	if rec := record(t, fn); rec.Failed() {
		t.Errorf("%s: unexpected failures:\n%s", name, strings.Join(rec.Errors(), "\n"))
	}
}

func quietApp() *fx.App { return fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)}) }

// testApp has a route for each kind of response the assertions look at.
func testApp() *fx.App {
	app := quietApp()
	app.Handle("*", "/echo", func(c *fx.Ctx) error {
		rc := c.RequestCtx()
		hdr := map[string]string{}
		for k, v := range rc.Request.Header.All() {
			hdr[string(k)] = string(v)
		}
		return c.JSON(200, map[string]any{
			"method": c.Method(),
			"path":   c.Path(),
			"query":  string(rc.QueryArgs().QueryString()),
			"header": hdr,
			"body":   string(rc.PostBody()),
		})
	})
	app.Get("/users/:id", func(c *fx.Ctx) error {
		if c.Param("id") != "1" {
			return fx.NewError(404, "APP_USER_NOT_FOUND", "User not found", map[string]string{"id": c.Param("id")})
		}
		c.SetHeader("X-User", "1")
		return c.JSON(200, map[string]any{"id": "1", "name": "Ada", "tags": []string{"a", "b"}})
	})
	app.Get("/text", func(c *fx.Ctx) error { return c.String(200, "plain text") })
	app.Route(fx.Route{
		Method: "POST", Path: "/orders",
		Body: validate.Object(validate.Fields{
			"customer": validate.String().MinLen(1),
			"items": validate.Array(validate.Object(validate.Fields{
				"sku": validate.String(),
				"qty": validate.Integer().Min(1),
			})),
		}),
		Handler: func(c *fx.Ctx) error { return c.JSON(201, map[string]bool{"ok": true}) },
	})
	return app
}

func TestRequestBuilder(t *testing.T) {
	c := fxtest.New(t, testApp())
	var got struct {
		Method, Path, Query, Body string
		Header                    map[string]string
	}
	c.Post("/echo?a=1").Query("q", "x y").Query("q", "&").Header("X-Test", "v").Host("api.example").
		JSON(map[string]int{"n": 1}).Do().AssertStatus(200).Decode(&got)
	if got.Method != "POST" || got.Path != "/echo" || got.Query != "a=1&q=x+y&q=%26" || got.Body != `{"n":1}` {
		t.Errorf("request seen by the handler: %+v", got)
	}
	if got.Header["X-Test"] != "v" || got.Header["Content-Type"] != "application/json" || got.Header["Host"] != "api.example" {
		t.Errorf("headers seen by the handler: %v", got.Header)
	}
	c.Get("/echo").Bearer("tok").Do().AssertJSON(200, `{"method":"GET","path":"/echo","query":"","body":"",
		"header":{"Host":"example.com","Authorization":"Bearer tok"}}`)
	// A request the builder cannot write as written is refused, not sent.
	rec := record(t, func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/echo").Header("X", "a\r\nInjected: 1").Do()
	})
	if !rec.Ended() || !strings.Contains(strings.Join(rec.Errors(), ""), "cannot be sent") {
		t.Errorf("header with CRLF: %v %q", rec.Ended(), rec.Errors())
	}
}

func TestResponse(t *testing.T) {
	c := fxtest.New(t, testApp())
	r := c.Get("/users/1").Do()
	if r.Status != 200 || r.Header().Get("X-User") != "1" || r.Header().Get("Content-Length") == "" || !strings.Contains(string(r.Body), "Ada") {
		t.Errorf("%d %v %s", r.Status, r.Header(), r.Body)
	}
	env := c.Get("/users/7").Do().Envelope()
	if env.Code != "APP_USER_NOT_FOUND" || env.Message != "User not found" || string(env.Details) != `{"id":"7"}` {
		t.Errorf("envelope %+v", env)
	}
	// HEAD: no body read.
	if r := c.Head("/users/1").Do(); r.Status != 200 || len(r.Body) != 0 {
		t.Errorf("HEAD: %d %q", r.Status, r.Body)
	}
	// A chunked (streamed) body is read whole.
	stream := quietApp()
	stream.Get("/s", func(c *fx.Ctx) error {
		c.RequestCtx().SetBodyStreamWriter(func(w *bufio.Writer) {
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.Flush()
			}
		})
		return nil
	})
	if r := fxtest.New(t, stream).Get("/s").Do(); r.Body == nil || string(r.Body) != "part0;part1;part2;" || r.Header().Get("Transfer-Encoding") != "chunked" {
		t.Errorf("streamed: %q %v", r.Body, r.Header())
	}
	// Transport errors come back as responses: the real server parsed them.
	small := fx.New(fx.Config{BodyLimit: 8, Logger: slog.New(slog.DiscardHandler)})
	small.Post("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	fxtest.New(t, small).Post("/").Body("text/plain", []byte("0123456789")).Do().
		AssertError(413, fx.ErrorCodes.PayloadTooLarge)
}

func TestAssertStatusAndHeader(t *testing.T) {
	mustPass(t, "status and header", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertStatus(200).AssertHeader("x-user", "1").AssertHeader("X-Absent", "")
	})
	mustFail(t, "status", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertStatus(201)
	}, "GET /users/1", "status 200, want 201", `"name":"Ada"`)
	mustFail(t, "header value", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertHeader("X-User", "2")
	}, `header X-User: "1", want "2"`, `"name":"Ada"`)
	mustFail(t, "header absent", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertHeader("X-Other", "v")
	}, "header X-Other absent")
	mustFail(t, "header present", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertHeader("X-User", "")
	}, "want none")
}

func TestAssertError(t *testing.T) {
	mustPass(t, "app error", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/7").Do().AssertError(404, "APP_USER_NOT_FOUND")
	})
	mustPass(t, "unmatched route", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/nope").Do().AssertError(404, fx.ErrorCodes.NotFound)
	})
	mustFail(t, "wrong code", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/nope").Do().AssertError(404, "APP_USER_NOT_FOUND")
	}, "error code FX_NOT_FOUND, want APP_USER_NOT_FOUND", "Route GET /nope not found")
	mustFail(t, "wrong status", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/7").Do().AssertError(400, "APP_USER_NOT_FOUND")
	}, "status 404, want 400")
	mustFail(t, "success", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertError(404, "APP_USER_NOT_FOUND")
	}, "not an error envelope", `"name":"Ada"`)
	mustFail(t, "not JSON", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/text").Do().AssertError(200, "X")
	}, "Content-Type", "not JSON", "plain text")
	mustFail(t, "Envelope of a success", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().Envelope()
	}, "not an error envelope")
}

// order is the body of POST /orders with three issues: customer empty,
// items[1].qty 0, items[2].sku missing.
var badOrder = map[string]any{
	"customer": "",
	"items":    []any{map[string]any{"sku": "a", "qty": 1}, map[string]any{"sku": "b", "qty": 0}, map[string]any{"qty": 2}},
}

func TestAssertIssues(t *testing.T) {
	post := func(tb testing.TB) *fxtest.Response {
		return fxtest.New(tb, testApp()).Post("/orders").JSON(badOrder).Do()
	}
	all := []fxtest.Issue{
		{Location: "body", Path: "items.2.sku"}, // order does not matter
		{Location: "body", Path: "customer"},
		{Location: "body", Path: "items.1.qty"},
	}
	mustPass(t, "exact set", func(tb testing.TB) { post(tb).AssertIssues(all...) })
	env := post(t).Envelope()
	if len(env.Issues) != 3 || env.Issues[0].Message == "" {
		t.Fatalf("issues %+v", env.Issues)
	}
	withMsg := env.Issues[0]
	mustPass(t, "with a message", func(tb testing.TB) { post(tb).AssertIssuesInclude(withMsg) })
	mustFail(t, "wrong message", func(tb testing.TB) {
		post(tb).AssertIssuesInclude(fxtest.Issue{Location: withMsg.Location, Path: withMsg.Path, Message: "other"})
	}, "missing: body:"+withMsg.Path+" (other)")
	mustFail(t, "an issue too few", func(tb testing.TB) { post(tb).AssertIssues(all[:2]...) },
		"unexpected: body:items.1.qty", `"FX_VALIDATION_ERROR"`)
	mustPass(t, "subset", func(tb testing.TB) { post(tb).AssertIssuesInclude(all[:2]...) })
	mustFail(t, "an issue too many", func(tb testing.TB) {
		post(tb).AssertIssues(append(all, fxtest.Issue{Location: "query", Path: "page"})...)
	}, "missing: query:page")
	mustFail(t, "twice the same", func(tb testing.TB) {
		post(tb).AssertIssuesInclude(fxtest.Issue{Location: "body", Path: "customer"}, fxtest.Issue{Location: "body", Path: "customer"})
	}, "missing: body:customer")
	mustFail(t, "not a validation error", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/7").Do().AssertIssues()
	}, "status 404, want 422", "want FX_VALIDATION_ERROR")
	mustPass(t, "valid order", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Post("/orders").JSON(map[string]any{"customer": "c", "items": []any{}}).Do().AssertJSON(201, `{"ok":true}`)
	})
}

func TestAssertJSON(t *testing.T) {
	type user struct {
		ID   string   `json:"id"`
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	mustPass(t, "struct", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertJSON(200, user{"1", "Ada", []string{"a", "b"}})
	})
	mustPass(t, "text, other key order", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertJSON(200, `{"tags":["a","b"], "name":"Ada","id":"1"}`)
	})
	rec := mustFail(t, "different", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertJSON(200, user{"1", "Bob", []string{"a", "b"}})
	}, `-   "name": "Bob",`, `+   "name": "Ada",`, `    "id": "1",`)
	if len(rec.Errors()) != 1 {
		t.Errorf("one mismatch, %d failures", len(rec.Errors()))
	}
	mustFail(t, "status", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/users/1").Do().AssertJSON(201, user{"1", "Ada", []string{"a", "b"}})
	}, "status 200, want 201")
	mustFail(t, "not JSON", func(tb testing.TB) {
		fxtest.New(tb, testApp()).Get("/text").Do().AssertJSON(200, "{}")
	}, "the body is not JSON", "plain text")
}

func TestDecodeAndDoFatal(t *testing.T) {
	rec := record(t, func(tb testing.TB) {
		var v map[string]any
		fxtest.New(tb, testApp()).Get("/text").Do().Decode(&v)
		tb.Errorf("not reached")
	})
	if !rec.Ended() || len(rec.Errors()) != 1 || !strings.Contains(rec.Errors()[0], "plain text") {
		t.Errorf("Decode of a text body: fatal %v, %q", rec.Ended(), rec.Errors())
	}
	app := testApp()
	fxtest.New(t, app)
	app.Shutdown()
	rec = record(t, func(tb testing.TB) { fxtest.New(tb, app).Get("/users/1").Do() })
	if !rec.Ended() || !strings.Contains(strings.Join(rec.Errors(), "\n"), "shut down") {
		t.Errorf("Do after Shutdown: fatal %v, %q", rec.Ended(), rec.Errors())
	}
}

// New tears the App down through t.Cleanup: once its test has ended, an
// App serves nothing more. (That the shutdown after in-memory requests is
// quick, without fasthttp's 100 ms tick, is the root package's
// TestShutdownAfterTestDoesNotPoll.)
func TestTeardown(t *testing.T) {
	var apps []*fx.App
	for i := range 50 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			app := testApp()
			apps = append(apps, app)
			fxtest.New(t, app).Get("/users/1").Do().AssertStatus(200)
		})
	}
	for _, app := range apps { // Cleanup shut them all down
		if _, err := app.Test(mustRequest("GET", "/users/1")); err == nil {
			t.Fatal("an App is still serving after its test ended")
		}
	}
}

func mustRequest(method, target string) *http.Request {
	r, err := http.NewRequest(method, "http://example.com"+target, nil)
	if err != nil {
		panic(err)
	}
	return r
}

// The client is safe for concurrent use.
func TestConcurrent(t *testing.T) {
	c := fxtest.New(t, testApp())
	var wg sync.WaitGroup
	ids := make([]string, 16)
	for i := range ids {
		wg.Go(func() {
			var v struct{ Query string }
			_ = json.Unmarshal(c.Get("/echo").Query("i", fmt.Sprint(i)).Do().Body, &v) // checked below
			ids[i] = v.Query
		})
	}
	wg.Wait()
	sort.Strings(ids)
	if ids[0] != "i=0" || ids[15] != "i=9" {
		t.Errorf("%v", ids)
	}
}

// Header adds a line per call (a name set twice is sent twice); SetHeader
// replaces every earlier line of that name, whatever its case.
func TestHeaderAddsSetHeaderReplaces(t *testing.T) {
	app := fx.New()
	app.Get("/h", func(c *fx.Ctx) error {
		var vals []string
		for k, v := range c.RequestCtx().Request.Header.All() {
			if strings.EqualFold(string(k), "X-Test") {
				vals = append(vals, string(v))
			}
		}
		return c.String(200, strings.Join(vals, ","))
	})
	c := fxtest.New(t, app, fxtest.Lenient())
	if got := string(c.Get("/h").Header("X-Test", "a").Header("X-Test", "b").Do().Body); got != "a,b" {
		t.Errorf("Header twice: the handler saw %q, want a,b", got)
	}
	if got := string(c.Get("/h").Header("X-Test", "a").Header("Other", "o").SetHeader("x-test", "b").Do().Body); got != "b" {
		t.Errorf("Header then SetHeader: the handler saw %q, want b", got)
	}
}
