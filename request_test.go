package fx_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fxhq/fx"
)

func TestMiddlewareThatSwallowsAnError(t *testing.T) {
	// What is true: a middleware that calls next and drops its error owns
	// the response. fx does not resurrect the error; the client gets what
	// was written (here nothing: 200 with an empty body, or the handler's
	// partial write), never a half envelope or a non-JSON error body.
	app := quiet()
	var seen atomic.Value
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		err := next()
		if err != nil {
			seen.Store(fmt.Sprintf("%T", err))
		}
		if c.Header("X-Recover") == "json" {
			return c.JSON(503, map[string]string{"status": "degraded"})
		}
		return nil // swallowed
	})
	app.Get("/fail", func(c *fx.Ctx) error { return errors.New("swallowed (internal text)") })
	app.Get("/panic", func(c *fx.Ctx) error { panic("swallowed panic (internal text)") })
	app.Get("/partial", func(c *fx.Ctx) error {
		_ = c.JSON(200, map[string]int{"n": 1})
		return errNope
	})

	for _, p := range []string{"/fail", "/panic"} {
		w := do(t, app, "GET", p, "")
		if w.status != 200 || len(w.body) != 0 {
			t.Fatalf("%s: swallowed error gave %d %q, want 200 and no body", p, w.status, w.body)
		}
	}
	if got := seen.Load(); got != "*fx.PanicError" {
		t.Fatalf("middleware saw %v for a panic, want *fx.PanicError", got)
	}
	w := do(t, app, "GET", "/partial", "")
	if w.status != 200 || string(w.body) != `{"n":1}` {
		t.Fatalf("partial: %d %q", w.status, w.body)
	}
	w = do(t, app, "GET", "/fail", "", "X-Recover", "json")
	if w.status != 503 || string(w.body) != `{"status":"degraded"}` {
		t.Fatalf("middleware's own answer lost: %d %q", w.status, w.body)
	}
}

type requestKey struct{}

// TestConcurrentRequestsKeepTheirOwnData hammers one App from many
// goroutines over mixed routes; every response must carry its own
// request's data (a pooled Ctx or buffer reused too early would show
// another request's id). Run it with -race.
func TestConcurrentRequestsKeepTheirOwnData(t *testing.T) {
	t.Parallel()
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		id := c.Header("X-Id")
		c.SetValue(requestKey{}, id)
		c.SetHeader("X-Echo-Id", id)
		return next()
	})
	app.OnError(func(c *fx.Ctx, err any) bool {
		if fe, ok := err.(*fx.Error); ok && fe.Code == "APP_HOOKED" {
			return c.JSON(fe.Status, map[string]any{"hooked": c.Value(requestKey{}), "path": c.Path()}) == nil
		}
		return false
	})
	app.Get("/p/:id", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]any{"id": c.Param("id"), "q": c.Query("q"), "v": c.Value(requestKey{})})
	})
	app.Post("/b/:id", func(c *fx.Ctx) error {
		it, err := fx.JSONBody[fuzzItem](c)
		if err != nil {
			return err
		}
		return c.JSON(200, map[string]any{"id": c.Param("id"), "name": it.Name, "v": c.Value(requestKey{})})
	})
	app.Get("/e/:id", func(c *fx.Ctx) error {
		return fx.NewError(409, "APP_CONFLICT", "conflict "+c.Param("id"), map[string]any{"id": c.Param("id")})
	})
	app.Get("/x/:id", func(c *fx.Ctx) error {
		panic(fx.NewError(418, "APP_TEAPOT", "teapot "+c.Param("id")))
	})
	app.Get("/h/:id", func(c *fx.Ctx) error { return fx.NewError(400, "APP_HOOKED", "h") })
	app.Get("/ctx/:id", func(c *fx.Ctx) error {
		ctx := c.Context()
		c.SetValue("k", c.Param("id"))
		if ctx.Err() != nil {
			return errors.New("context done while the handler runs")
		}
		return c.JSON(200, map[string]any{"id": c.Value("k")})
	})

	workers, per := 16, 150
	if testing.Short() {
		per = 30
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				id := fmt.Sprintf("g%d-r%d-%s", g, i, strings.Repeat("x", (g*7+i)%40))
				if err := hammerOne(app, i%6, id); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func hammerOne(app *fx.App, kind int, id string) error {
	var req *http.Request
	var want func(status int, body map[string]any) bool
	switch kind {
	case 0:
		req = httptest.NewRequest("GET", "/p/"+id+"?q="+id, nil)
		want = func(s int, b map[string]any) bool { return s == 200 && b["id"] == id && b["q"] == id && b["v"] == id }
	case 1:
		req = httptest.NewRequest("POST", "/b/"+id, strings.NewReader(`{"name":"`+id+`"}`))
		want = func(s int, b map[string]any) bool {
			return s == 200 && b["id"] == id && b["name"] == id && b["v"] == id
		}
	case 2:
		req = httptest.NewRequest("GET", "/e/"+id, nil)
		want = func(s int, b map[string]any) bool {
			e, _ := b["error"].(map[string]any)
			d, _ := e["details"].(map[string]any)
			return s == 409 && e["message"] == "conflict "+id && d["id"] == id
		}
	case 3:
		req = httptest.NewRequest("GET", "/x/"+id, nil)
		want = func(s int, b map[string]any) bool {
			e, _ := b["error"].(map[string]any)
			return s == 418 && e["message"] == "teapot "+id
		}
	case 4:
		req = httptest.NewRequest("GET", "/h/"+id, nil)
		want = func(s int, b map[string]any) bool { return s == 400 && b["hooked"] == id && b["path"] == "/h/"+id }
	default:
		req = httptest.NewRequest("GET", "/ctx/"+id, nil)
		want = func(s int, b map[string]any) bool { return s == 200 && b["id"] == id }
	}
	req.Header.Set("X-Id", id)
	resp, err := app.Test(req)
	if err != nil {
		return err
	}
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return fmt.Errorf("%s %s: not JSON: %q", req.Method, req.URL, raw)
	}
	if !want(resp.StatusCode, body) || resp.Header.Get("X-Echo-Id") != id {
		return fmt.Errorf("%s %s (id %s): got %d %q, X-Echo-Id %q: another request's data?",
			req.Method, req.URL, id, resp.StatusCode, raw, resp.Header.Get("X-Echo-Id"))
	}
	return nil
}

// A second next() returns FX_NEXT_CALLED_MULTIPLE_TIMES and never
// re-runs the inner chain; unhandled, the request ends in that 500.
func TestSecondNextCall(t *testing.T) {
	var handlerRuns, innerRuns int
	var second error
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		if err := next(); err != nil {
			return err
		}
		second = next()
		return second
	})
	app.Use(func(c *fx.Ctx, next fx.Next) error { innerRuns++; return next() })
	app.Get("/", func(c *fx.Ctx) error { handlerRuns++; return c.JSON(200, "ok") })
	r := do(t, app, "GET", "/", "")
	env := mustEnvelope(t, r, 500, fx.ErrorCodes.NextCalledMultipleTimes)
	if env.Message == "" {
		t.Error("empty message")
	}
	if handlerRuns != 1 || innerRuns != 1 {
		t.Errorf("inner chain ran %d/%d times, want 1/1", innerRuns, handlerRuns)
	}
	var fe *fx.Error
	if !errors.As(second, &fe) || fe.Code != fx.ErrorCodes.NextCalledMultipleTimes || fe.Status != 500 {
		t.Errorf("second next() = %v", second)
	}
	// The guard is per request: a fresh request runs the chain again.
	handlerRuns = 0
	do(t, app, "GET", "/", "")
	if handlerRuns != 1 {
		t.Errorf("next request ran the handler %d times", handlerRuns)
	}
}

// The next() guard holds when the second call is in an inner middleware
// and when the middleware handles the guard error itself.
func TestGuardHandledByMiddleware(t *testing.T) {
	var runs int
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error { return next() })
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		_ = next()
		if err := next(); err != nil {
			return c.JSON(200, map[string]string{"guard": err.(*fx.Error).Code})
		}
		return nil
	})
	app.Get("/", func(c *fx.Ctx) error { runs++; return nil })
	r := do(t, app, "GET", "/", "")
	if r.status != 200 || string(r.body) != `{"guard":"FX_NEXT_CALLED_MULTIPLE_TIMES"}` || runs != 1 {
		t.Fatalf("got %d %q, handler ran %d times", r.status, r.body, runs)
	}
}

// Middleware can catch an inner panic or error via next() and answer with
// its own response, e.g. 429 with Retry-After.
func TestMiddlewareCatchesInnerFailure(t *testing.T) {
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		err := next()
		var pe *fx.PanicError
		var fe *fx.Error
		switch {
		case errors.As(err, &pe) && pe.Value == "rate":
			c.SetHeader("Retry-After", "30")
			return fx.NewError(429, "APP_RATE_LIMITED", "slow down")
		case errors.As(err, &fe) && fe.Code == "APP_RATE":
			c.SetHeader("Retry-After", "5")
			return c.JSON(429, map[string]string{"retry": "later"})
		}
		return err
	})
	app.Get("/panic", func(c *fx.Ctx) error { panic("rate") })
	app.Get("/error", func(c *fx.Ctx) error { return fx.NewError(400, "APP_RATE", "x") })
	r := do(t, app, "GET", "/panic", "")
	mustEnvelope(t, r, 429, "APP_RATE_LIMITED")
	if r.header.Get("Retry-After") != "30" {
		t.Errorf("Retry-After = %q", r.header.Get("Retry-After"))
	}
	r = do(t, app, "GET", "/error", "")
	if r.status != 429 || string(r.body) != `{"retry":"later"}` || r.header.Get("Retry-After") != "5" {
		t.Errorf("got %d %q %v", r.status, r.body, r.header)
	}
}
