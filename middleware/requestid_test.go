package middleware_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
)

// ridApp is an App with RequestID whose handler answers its ID; its logger
// writes JSON records into the returned buffer.
func ridApp(t *testing.T, cfg middleware.RequestIDConfig) (*fx.App, *syncBuffer) {
	t.Helper()
	app, logs := loggedApp(t, fx.Config{})
	app.Use(middleware.RequestID(cfg))
	app.Get("/id", func(c *fx.Ctx) error {
		id, ok := middleware.RequestIDFrom(c)
		if !ok {
			return c.JSON(500, "RequestIDFrom reports no ID under RequestID")
		}
		return c.JSON(200, map[string]string{"id": id})
	})
	app.Get("/fail", func(c *fx.Ctx) error { return errors.New("db down") })
	app.Get("/panic", func(c *fx.Ctx) error { panic("boom") })
	return app, logs
}

func TestRequestIDKeepsASafeIncomingID(t *testing.T) {
	app, _ := ridApp(t, middleware.RequestIDConfig{})
	for _, id := range []string{
		"3f2c9a1e-7b4d-4c8e-9f10-2a3b4c5d6e7f",                    // UUID
		"01ARZ3NDEKTSV4RRFFQ69G5FAV",                              // ULID
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // traceparent
		strings.Repeat("a", middleware.MaxRequestIDLength),
		"a",
	} {
		r := do(t, app, "GET", "/id", map[string]string{"X-Request-ID": id})
		if r.body["id"] != id || r.header.Get("X-Request-ID") != id {
			t.Errorf("incoming %q: handler saw %v, response header %q", id, r.body["id"], r.header.Get("X-Request-ID"))
		}
	}
}

func TestRequestIDReplacesAnUnsafeIncomingID(t *testing.T) {
	app, _ := ridApp(t, middleware.RequestIDConfig{})
	for _, id := range []string{
		"has space", `quo"te`, "it's", `back\slash`, "a,b", "a;b", "<script>", "tick`",
		"caf\u00e9", "tab\there", strings.Repeat("a", middleware.MaxRequestIDLength+1),
	} {
		r := do(t, app, "GET", "/id", map[string]string{"X-Request-ID": id})
		got, _ := r.body["id"].(string)
		if got == id || !middleware.ValidRequestID(got) || len(got) != 20 || r.header.Get("X-Request-ID") != got {
			t.Errorf("incoming %q: got ID %q, header %q; want a fresh generated ID", id, got, r.header.Get("X-Request-ID"))
		}
	}
	// No header at all: generated too.
	if r := do(t, app, "GET", "/id", nil); len(r.body["id"].(string)) != 20 {
		t.Errorf("no incoming ID: got %v", r.body["id"])
	}
}

func TestRequestIDIgnoreIncoming(t *testing.T) {
	app, _ := ridApp(t, middleware.RequestIDConfig{Header: "X-Correlation-ID", IgnoreIncoming: true})
	r := do(t, app, "GET", "/id", map[string]string{"X-Correlation-ID": "client-chosen"})
	if id := r.body["id"]; id == "client-chosen" || r.header.Get("X-Correlation-ID") != id {
		t.Errorf("got %v, header %q", id, r.header.Get("X-Correlation-ID"))
	}
}

// Generated IDs are unique across goroutines (100k IDs from 8 at once).
func TestRequestIDUniqueUnderConcurrency(t *testing.T) {
	const workers, per = 8, 100_000 / 8
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				ids[w] = append(ids[w], middleware.NewRequestID())
			}
		}()
	}
	wg.Wait()
	seen := make(map[string]bool, workers*per)
	for _, list := range ids {
		for _, id := range list {
			if seen[id] {
				t.Fatalf("duplicate ID %q", id)
			}
			if !middleware.ValidRequestID(id) || len(id) != 20 {
				t.Fatalf("generated ID %q is not a valid 20-character ID", id)
			}
			seen[id] = true
		}
	}
	if len(seen) != workers*per {
		t.Fatalf("%d IDs, want %d", len(seen), workers*per)
	}
}

// The ID is on every response, failures included: the 404, a 500
// envelope, a panic's 500.
func TestRequestIDOnErrorResponses(t *testing.T) {
	app, _ := ridApp(t, middleware.RequestIDConfig{})
	for _, tc := range []struct {
		target string
		status int
		code   string
	}{
		{"/nope", 404, fx.ErrorCodes.NotFound},
		{"/fail", 500, fx.ErrorCodes.InternalError},
		{"/panic", 500, fx.ErrorCodes.InternalError},
	} {
		r := do(t, app, "GET", tc.target, map[string]string{"X-Request-ID": "rid-" + tc.target[1:]})
		expectError(t, r, tc.status, tc.code, "")
		if got := r.header.Get("X-Request-ID"); got != "rid-"+tc.target[1:] {
			t.Errorf("%s: X-Request-ID %q", tc.target, got)
		}
	}
}

// The boundary's 5xx log line carries the request ID (through the
// request's log attributes).
func TestRequestIDOnTheBoundaryLogLine(t *testing.T) {
	app, logs := ridApp(t, middleware.RequestIDConfig{})
	do(t, app, "GET", "/fail", map[string]string{"X-Request-ID": "rid-logged"})
	r := do(t, app, "GET", "/panic", nil)
	generated := r.header.Get("X-Request-ID")
	var failed, panicked bool
	for _, rec := range logs.Records(t) {
		if rec["msg"] != "fx: request failed" {
			continue
		}
		switch rec["request_id"] {
		case "rid-logged":
			failed = rec["error"] == "db down"
		case generated:
			panicked = rec["panic"] == "boom"
		}
	}
	if !failed || !panicked {
		t.Errorf("request_id missing from the boundary's lines (error %v, panic %v): %v", failed, panicked, logs.Records(t))
	}
}

func TestValidRequestID(t *testing.T) {
	if middleware.ValidRequestID("") || !middleware.ValidRequestID("a-b_c.d~e:f/g+h=i@j") {
		t.Error("ValidRequestID disagrees with its documented alphabet")
	}
}

// TestRequestIDFromWithoutRequestID: a request RequestID did not run for
// has no ID, and RequestIDFrom says so rather than answering "".
func TestRequestIDFromWithoutRequestID(t *testing.T) {
	app := fx.New()
	app.Get("/id", func(c *fx.Ctx) error {
		if id, ok := middleware.RequestIDFrom(c); ok || id != "" {
			return c.JSON(500, map[string]any{"id": id, "ok": ok})
		}
		return c.JSON(200, map[string]string{})
	})
	if r := do(t, app, "GET", "/id", nil); r.status != 200 {
		t.Fatalf("without RequestID: %d %s", r.status, r.raw)
	}
}
