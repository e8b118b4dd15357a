package fx_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
)

// Strings handed out by Ctx stay valid and unchanged after the request
// ends, even though fasthttp reuses its buffers for later requests with
// different bytes.
func TestCtxStringsSafeToKeep(t *testing.T) {
	type kept struct{ param, path, method, header, query, host, href, catch string }
	var all []kept
	app := quiet()
	h := func(c *fx.Ctx) error {
		k := kept{
			param: c.Param("id"), path: c.Path(), method: c.Method(),
			header: c.Header("X-Val"), query: c.Query("q"), host: c.Host(), href: c.Href(),
			catch: c.Param("rest"),
		}
		all = append(all, k)
		return c.NoContent(204)
	}
	app.Handle("GET", "/items/:id", h)
	app.Handle("PROPFIND", "/items/:id", h)
	app.Get("/files/*rest", h)

	// Drive the handler directly, reusing one RequestCtx, the way fasthttp
	// reuses its buffers between requests on a connection.
	handler := app.Handler()
	const n = 200
	want := func(i int) kept {
		id := fmt.Sprintf("id%03d-%s", i, strings.Repeat(string(rune('a'+i%26)), i%7))
		m := "GET"
		if i%3 == 0 {
			m = "PROPFIND"
		}
		return kept{
			param: id, path: "/items/" + id, method: m, header: "hv-" + id, query: "qv-" + id,
			host: fmt.Sprintf("h%d.example", i), href: fmt.Sprintf("http://h%d.example/items/%s?q=qv-%s", i, id, id),
		}
	}
	rc := kittest.RequestCtx("GET", "/")
	for i := range n {
		w := want(i)
		rc.Request.Reset()
		rc.Response.Reset()
		rc.Request.Header.SetMethod(w.method)
		rc.Request.SetRequestURI("/items/" + w.param + "?q=" + w.query)
		rc.Request.Header.SetHost(w.host)
		rc.Request.Header.Set("X-Val", w.header)
		handler(rc)
		// A catch-all request in between, with other bytes.
		rc.Request.Reset()
		rc.Request.Header.SetMethod("GET")
		rc.Request.SetRequestURI("/files/" + strings.Repeat("Z", 40+i%13))
		rc.Request.Header.Set("X-Val", strings.Repeat("Q", 50))
		handler(rc)
	}
	if len(all) != 2*n {
		t.Fatalf("%d requests recorded", len(all))
	}
	for i := range n {
		got, w := all[2*i], want(i)
		w.catch = ""
		if got != w {
			t.Fatalf("request %d: kept %+v, want %+v", i, got, w)
		}
		if c := all[2*i+1].catch; c != strings.Repeat("Z", 40+i%13) {
			t.Fatalf("request %d: kept catch-all %q", i, c)
		}
	}
}

type ctxKey struct{}

func TestCtxValuesAndContext(t *testing.T) {
	var ctxs []context.Context
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		if c.Value(ctxKey{}) != nil {
			t.Error("value leaked from an earlier request")
		}
		c.SetValue(ctxKey{}, "user-1")
		c.SetValue(ctxKey{}, "user-2") // replaces
		return next()
	})
	app.Get("/", func(c *fx.Ctx) error {
		ctxs = append(ctxs, c.Context())
		if c.Context().Err() != nil {
			t.Error("context done during the request")
		}
		if c.App() == nil || c.RequestCtx() == nil {
			t.Error("App or RequestCtx nil")
		}
		return c.String(200, c.Value(ctxKey{}).(string))
	})
	for range 3 {
		if r := do(t, app, "GET", "/", ""); string(r.body) != "user-2" {
			t.Fatalf("body %q", r.body)
		}
	}
	for i, cx := range ctxs {
		if cx.Err() == nil {
			t.Errorf("context %d not cancelled after the request", i)
		}
	}
}

func TestCtxJSON(t *testing.T) {
	app := quiet()
	app.Get("/ok", func(c *fx.Ctx) error {
		_ = c.JSON(201, map[string]string{"first": "discarded"})
		return c.JSON(201, map[string]any{"html": "<b>&</b>", "n": 1})
	})
	app.Get("/bad", func(c *fx.Ctx) error {
		err := c.JSON(200, map[string]any{"ch": make(chan int)})
		if err == nil {
			t.Error("JSON of a channel returned nil")
		}
		return err
	})
	app.Get("/panicky", func(c *fx.Ctx) error { return c.JSON(200, badMarshaler{panics: true}) })
	r := do(t, app, "GET", "/ok", "")
	if r.status != 201 || r.header.Get("Content-Type") != "application/json" || string(r.body) != `{"html":"<b>&</b>","n":1}` {
		t.Errorf("%d %v %q", r.status, r.header, r.body)
	}
	mustEnvelope(t, do(t, app, "GET", "/bad", ""), 500, fx.ErrorCodes.InternalError)
	mustEnvelope(t, do(t, app, "GET", "/panicky", ""), 500, fx.ErrorCodes.InternalError)
	// The encoder still works after a panic.
	if r := do(t, app, "GET", "/ok", ""); string(r.body) != `{"html":"<b>&</b>","n":1}` {
		t.Errorf("after panic: %q", r.body)
	}
}

type item struct {
	Name  string `json:"name"`
	Price struct {
		Amount int `json:"amount"`
	} `json:"price"`
	Tags []string `json:"tags"`
}

// JSONBody: malformed JSON, a wrong type (with field path), trailing data
// and an empty body each give one body issue in a 422.
func TestJSONBody(t *testing.T) {
	app := quiet()
	app.Post("/", func(c *fx.Ctx) error {
		v, err := fx.JSONBody[item](c)
		if err != nil {
			return err
		}
		return c.JSON(200, v)
	})
	r := do(t, app, "POST", "/", `{"name":"pen","price":{"amount":3},"tags":["a"]}`, "Content-Type", "application/json")
	if r.status != 200 || string(r.body) != `{"name":"pen","price":{"amount":3},"tags":["a"]}` {
		t.Fatalf("%d %q", r.status, r.body)
	}
	cases := map[string]struct {
		body, ctype string
		path        []string
	}{
		"malformed":       {`{"name":`, "application/json", []string{}},
		"wrong type":      {`{"name":"pen","price":{"amount":"three"}}`, "application/json", []string{"price", "amount"}},
		"wrong top type":  {`[1,2]`, "application/json", []string{}},
		"trailing":        {`{"name":"pen"} {"x":1}`, "application/json", []string{}},
		"trailing junk":   {`{"name":"pen"}xyz`, "", []string{}},
		"empty":           {``, "application/json", []string{}},
		"whitespace only": {"  \n ", "application/json", []string{}},
		"not json type":   {`{"name":"pen"}`, "text/plain", []string{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var hdr []string
			if tc.ctype != "" {
				hdr = []string{"Content-Type", tc.ctype}
			}
			r := do(t, app, "POST", "/", tc.body, hdr...)
			env := mustEnvelope(t, r, 422, fx.ErrorCodes.ValidationError)
			if env.Message != "Request validation failed" {
				t.Errorf("message %q", env.Message)
			}
			var d struct {
				Issues []struct {
					Location string   `json:"location"`
					Path     []string `json:"path"`
					Message  string   `json:"message"`
				} `json:"issues"`
			}
			if err := json.Unmarshal(env.Details, &d); err != nil {
				t.Fatal(err)
			}
			if len(d.Issues) != 1 || d.Issues[0].Location != "body" || d.Issues[0].Message == "" {
				t.Fatalf("issues %s", env.Details)
			}
			if strings.Join(d.Issues[0].Path, ".") != strings.Join(tc.path, ".") || d.Issues[0].Path == nil {
				t.Errorf("path %q, want %q", d.Issues[0].Path, tc.path)
			}
			if strings.Contains(d.Issues[0].Message, "main.") || strings.Contains(d.Issues[0].Message, "fx_test") {
				t.Errorf("message names Go types: %q", d.Issues[0].Message)
			}
		})
	}
}

func TestHandlerOutlivesItsClient(t *testing.T) {
	// What is true: fasthttp does not watch the connection while the
	// handler runs, so c.Context() is NOT cancelled by a client
	// disconnecting; it is cancelled when the handler chain returns (so a
	// goroutine the handler started sees Done), or when the server shuts
	// down.
	app := quiet()
	entered := make(chan struct{})
	release := make(chan struct{})
	ctxs := make(chan context.Context, 1)
	doneDuring := make(chan bool, 1)
	app.Get("/slow", func(c *fx.Ctx) error {
		ctx := c.Context()
		ctxs <- ctx
		close(entered)
		<-release
		doneDuring <- ctx.Err() != nil
		return c.JSON(200, map[string]string{"late": "answer"})
	})
	app.Get("/ok", func(c *fx.Ctx) error { return c.JSON(200, "ok") })

	reqCtx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := app.Test(httptest.NewRequest("GET", "/slow", nil).WithContext(reqCtx))
		errc <- err
	}()
	<-entered
	cancel() // the client disconnects
	if err := <-errc; err == nil {
		t.Fatalf("the cancelled client got a response")
	}
	close(release)
	if <-doneDuring {
		t.Fatalf("c.Context() was cancelled by the disconnect; update the doc of Ctx.Context")
	}
	ctx := <-ctxs
	kittest.Within(t, ctx.Done(), "c.Context() not done after the handler returned")
	// The server is unharmed.
	if w := do(t, app, "GET", "/ok", ""); w.status != 200 {
		t.Fatalf("after a disconnect: %d %q", w.status, w.body)
	}
}

// TestSetDeadlineEarliestWins: a later deadline never extends an earlier
// one, an earlier one shortens it (also after Context was first called),
// and every context of the request ends with it.
func TestSetDeadlineEarliestWins(t *testing.T) {
	app := quietFor(t)
	base := time.Now().Add(time.Hour)
	var seen []time.Time
	var ctxs []context.Context
	record := func(c *fx.Ctx) {
		dl, _ := c.Context().Deadline()
		seen = append(seen, dl)
		ctxs = append(ctxs, c.Context())
	}
	app.Get("/first", func(c *fx.Ctx) error {
		c.SetDeadline(base)
		record(c)
		c.SetDeadline(base.Add(time.Minute)) // later: ignored
		record(c)
		c.SetDeadline(base.Add(-time.Minute)) // earlier: wins
		record(c)
		c.SetDeadline(time.Time{}) // zero: no deadline, not an expired one
		if c.Context().Err() != nil {
			return c.Context().Err()
		}
		return c.String(200, "ok")
	})
	app.Get("/after-context", func(c *fx.Ctx) error {
		record(c) // Context created before any deadline
		c.SetDeadline(base)
		record(c)
		return c.String(200, "ok")
	})
	app.Get("/pending", func(c *fx.Ctx) error {
		c.SetDeadline(base.Add(time.Minute)) // recorded: Context not created yet
		c.SetDeadline(base)
		c.SetDeadline(base.Add(2 * time.Minute))
		record(c)
		return c.String(200, "ok")
	})
	for _, p := range []string{"/first", "/after-context", "/pending"} {
		if r := do(t, app, "GET", p, ""); r.status != 200 {
			t.Fatalf("%s: %d %s", p, r.status, r.body)
		}
	}
	want := []time.Time{base, base, base.Add(-time.Minute), {}, base, base}
	for i := range want {
		if !seen[i].Equal(want[i]) {
			t.Errorf("deadline %d = %v, want %v", i, seen[i], want[i])
		}
	}
	for i, ctx := range ctxs {
		if ctx.Err() != context.Canceled {
			t.Errorf("context %d after the request: %v, want Canceled", i, ctx.Err())
		}
	}
}

// TestSetDeadlineEndsWithRequest: a deadline recorded by a handler that
// never asked for its context is not carried by the pooled Ctx into the
// next request.
func TestSetDeadlineEndsWithRequest(t *testing.T) {
	app := quietFor(t)
	app.Get("/set", func(c *fx.Ctx) error {
		c.SetDeadline(time.Now().Add(time.Hour))
		return c.String(200, "ok")
	})
	app.Get("/plain", func(c *fx.Ctx) error {
		if dl, ok := c.Context().Deadline(); ok {
			return fmt.Errorf("deadline %v carried over from another request", dl)
		}
		return c.String(200, "ok")
	})
	for range 20 { // sequential requests reuse the pooled Ctx
		for _, p := range []string{"/set", "/plain"} {
			if r := do(t, app, "GET", p, ""); r.status != 200 {
				t.Fatalf("%s: %d %s", p, r.status, r.body)
			}
		}
	}
}
