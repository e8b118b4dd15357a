package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
)

// logRecords decodes the JSON log lines in buf.
func logRecords(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for line := range strings.Lines(buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// curlArgs splits a curl line of the index into its words, honouring the
// single quotes the index uses.
func curlArgs(t *testing.T, line string) []string {
	t.Helper()
	var args []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args
}

// do sends the request a curl line of the index describes.
func do(t *testing.T, c *fxtest.Client, line string) *fxtest.Response {
	t.Helper()
	args := curlArgs(t, line)
	if len(args) < 3 || args[0] != "curl" || args[1] != "-i" {
		t.Fatalf("not a curl -i line: %q", line)
	}
	method, headers, body, url := "GET", [][2]string{}, "", ""
	for i := 2; i < len(args); i++ {
		switch args[i] {
		case "-X":
			i++
			method = args[i]
		case "-H":
			i++
			name, value, _ := strings.Cut(args[i], ": ")
			headers = append(headers, [2]string{name, value})
		case "-d":
			i++
			body = args[i]
		default:
			url = args[i]
		}
	}
	path, ok := strings.CutPrefix(url, "http://example.com")
	if !ok {
		t.Fatalf("curl line %q does not target the request's host", line)
	}
	r := c.Request(method, path).Host("example.com")
	ct := ""
	for _, h := range headers {
		if h[0] == "Content-Type" {
			ct = h[1]
			continue
		}
		r.Header(h[0], h[1])
	}
	if body != "" || ct != "" {
		r.Body(ct, []byte(body))
	}
	return r.Do()
}

// entry is an element of the index's "try" list.
type entry struct {
	Route, Code, Shows, Curl string
	Status                   int
}

// TestIndexEveryCurlLine fetches GET /, runs every curl line it lists and
// checks the status and code it promises, the access log line of each
// request, and that every route of the App is in the index; the index
// exercises every response the document declares (RequireFullCoverage).
func TestIndexEveryCurlLine(t *testing.T) {
	var logs bytes.Buffer
	app := newApp(fx.Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	c := fxtest.New(t, app, fxtest.RequireFullCoverage())

	var index struct {
		Try []entry
	}
	resp := c.Get("/").Host("example.com").Do().AssertStatus(200)
	resp.Decode(&index)
	if !strings.HasPrefix(string(resp.Body), "{\n  \"name\"") {
		t.Errorf("the index is not indented JSON: %.80q", resp.Body)
	}
	if len(index.Try) == 0 {
		t.Fatal("the index lists nothing")
	}
	listed := map[string]bool{"GET /": true}
	for _, e := range index.Try {
		listed[e.Route] = true
		r := do(t, c, e.Curl)
		if e.Code == "" {
			r.AssertStatus(e.Status)
			switch e.Route {
			case "GET /openapi.json":
				var doc struct {
					OpenAPI string
					Paths   map[string]map[string]any
				}
				r.Decode(&doc)
				if !strings.HasPrefix(doc.OpenAPI, "3.1") || doc.Paths["/users/{id}"]["get"] == nil || doc.Paths["/orders"]["post"] == nil {
					t.Errorf("GET /openapi.json is not the document of the demo's routes: %.300s", r.Body)
				}
			case "GET /docs":
				r.AssertHeader("Content-Type", "text/html; charset=utf-8")
				if !strings.Contains(string(r.Body), "/docs/redoc.standalone.js") {
					t.Errorf("GET /docs does not load its script: %.300s", r.Body)
				}
			}
			continue
		}
		env := r.AssertError(e.Status, e.Code).Envelope()
		switch e.Status {
		case 422:
			if len(env.Issues) < 3 {
				t.Errorf("%s: %d issues, want several: %s", e.Curl, len(env.Issues), r.Body)
			}
		case 401:
			r.AssertHeader("WWW-Authenticate", `APIKey realm="api", header="X-API-Key"`)
		case 404:
			if e.Route != "" && len(env.Details) == 0 {
				t.Errorf("%s: a 404 without details: %s", e.Curl, r.Body)
			}
		}
	}
	if !listed[""] {
		t.Error("the index has no request that matches no route")
	}
	routes, err := app.Routes()
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range routes {
		if rt.Path == "/docs/redoc.standalone.js" {
			continue // the script /docs loads, not a page to try
		}
		if k := rt.Method + " " + rt.Path; !listed[k] {
			t.Errorf("route %s is not in the index", k)
		}
	}

	// The access log has one line per request: the index, then each entry.
	var paths []string
	for _, rec := range logRecords(t, &logs) {
		if rec["msg"] == "request" {
			paths = append(paths, rec["path"].(string))
		}
	}
	want := []string{"/"}
	for _, e := range index.Try {
		url := curlArgs(t, e.Curl)[len(curlArgs(t, e.Curl))-1]
		path, _, _ := strings.Cut(strings.TrimPrefix(url, "http://example.com"), "?")
		want = append(want, path)
	}
	if !slices.Equal(paths, want) {
		t.Errorf("access log paths %q, want %q", paths, want)
	}
}

// TestIndexHostIsSafe: a Host header that is not a plain host[:port]
// never reaches the curl lines.
func TestIndexHostIsSafe(t *testing.T) {
	c := fxtest.New(t, newApp(fx.Config{Logger: slog.New(slog.DiscardHandler)}))
	var index struct{ Try []entry }
	c.Get("/").Host("x$(id)").Do().AssertStatus(200).Decode(&index)
	for _, e := range index.Try {
		if !strings.Contains(e.Curl, "'http://"+defaultAddr+"/") {
			t.Errorf("curl line %q does not fall back to %s", e.Curl, defaultAddr)
		}
	}
}

// TestPanicStack: in development mode the panic's stack is logged as an
// array of frames starting at the handler that panicked, and the 500
// carries the panic's text; in production the client gets the fixed
// message and the stack is one string.
func TestPanicStack(t *testing.T) {
	for _, dev := range []bool{true, false} {
		var logs bytes.Buffer
		c := fxtest.New(t, newApp(fx.Config{Development: dev, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}))
		msg := "Internal server error"
		if dev {
			msg = "something broke"
		}
		if env := c.Get("/panic").Do().AssertError(500, "FX_INTERNAL_ERROR").Envelope(); env.Message != msg {
			t.Errorf("dev=%v: message %q, want %q", dev, env.Message, msg)
		}
		var stack any
		for _, rec := range logRecords(t, &logs) {
			if rec["msg"] == "fx: request failed" {
				stack = rec["stack"]
			}
		}
		switch s := stack.(type) {
		case []any:
			first, _ := s[0].(string)
			if !dev || !strings.Contains(first, ".newApp.func") || !strings.Contains(first, "examples/hello/main.go:") {
				t.Errorf("dev=%v: stack frames start with %q", dev, first)
			}
		case string:
			if dev || !strings.HasPrefix(s, "goroutine ") {
				t.Errorf("dev=%v: stack is the string %.80q", dev, s)
			}
		default:
			t.Errorf("dev=%v: no stack logged: %s", dev, logs.String())
		}
	}
}

// TestDocument: the demo serves its document; with FX_OPENAPI_OUT set
// (.ci/run) it is written there, for the lint and the generated clients.
func TestDocument(t *testing.T) {
	r := fxtest.New(t, newApp(fx.Config{Logger: slog.New(slog.DiscardHandler)})).Get("/openapi.json").Do().AssertStatus(200)
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	r.Decode(&doc)
	for _, p := range []string{"/hello", "/users/{id}", "/orders"} {
		if _, ok := doc.Paths[p]; !ok {
			t.Errorf("the document has no %s", p)
		}
	}
	if dir := os.Getenv("FX_OPENAPI_OUT"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "examples-hello.json"), r.Body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
