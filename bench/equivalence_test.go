package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// equivCase is a request and the answer every implementation must give.
type equivCase struct {
	name, method, path, body string
	status                   int
	want                     string // JSON, compared after decoding
	// anyMessage: issue messages are the decoder's own words and are not
	// compared (the structure is).
	anyMessage bool
}

// knownDifferences are cases a framework answers differently by design of
// its router; the test skips them, saying why.
var knownDifferences = map[string]string{
	"echo-v4/not-found-deep": "Echo's router lets a trailing :id match \"42/orders\" when no route matches the whole path",
	"echo-v5/not-found-deep": "Echo v5's router keeps this: a leaf :id takes the rest of the path, \"42/orders\"",
}

var equivCases = []equivCase{
	{"hello", "GET", "/hello", "", 200, `{"message":"Hello, World!"}`, false},
	{"user-ok", "GET", "/users/42", "", 200, `{"id":"42","name":"User 42"}`, false},
	{"user-error", "GET", "/users/missing", "", 404,
		`{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"resource":"user","id":"missing"}}}`, false},
	{"error-var", "GET", "/error", "", 404,
		`{"error":{"code":"APP_USER_NOT_FOUND","message":"User not found","details":{"resource":"user","id":"missing"}}}`, false},
	{"panic", "GET", "/panic", "", 500, `{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}`, false},
	{"not-found", "GET", "/nope", "", 404, `{"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}`, false},
	{"not-found-deep", "GET", "/users/42/orders", "", 404,
		`{"error":{"code":"FX_NOT_FOUND","message":"Route GET /users/42/orders not found"}}`, false},
	{"wrong-method", "DELETE", "/hello", "", 404, `{"error":{"code":"FX_NOT_FOUND","message":"Route DELETE /hello not found"}}`, false},
	{"orders-422", "POST", "/orders", InvalidOrder, 422, `{"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[
		{"location":"body","path":["email"],"message":"Must be a valid email address"},
		{"location":"body","path":["item"],"message":"Required"},
		{"location":"body","path":["quantity"],"message":"Must be at least 1"}]}}}`, false},
	{"orders-bad-json", "POST", "/orders", `{"item":`, 422, `{"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[
		{"location":"body","path":[],"message":"(any)"}]}}}`, true},
	{"orders-ok", "POST", "/orders", ValidOrder, 201, `{"item":"book","quantity":2,"email":"ada@example.com"}`, false},
}

// TestEquivalence checks, in process (the benchmarks' harness), that every
// implementation, with and without the middleware chain, answers every
// case with the expected status, a JSON content type and an equivalent
// body; so all of them answer alike.
func TestEquivalence(t *testing.T) {
	for _, fw := range Frameworks {
		for _, mw := range []int{0, MiddlewareChain} {
			impl := fw.New(mw)
			for _, tc := range equivCases {
				t.Run(fmt.Sprintf("%s/mw%d/%s", fw.Name, mw, tc.name), func(t *testing.T) {
					skipKnown(t, fw.Name, tc.name)
					r := newRunner(t, impl, tc.method, tc.path, tc.body)
					r.do()
					check(t, tc, r.status(), r.contentType(), r.body())
				})
			}
		}
	}
}

// TestEquivalenceOverHTTP checks the same over a real loopback socket,
// through each framework's own server (Impl.Serve, as cmd/server and
// load.sh use it).
func TestEquivalenceOverHTTP(t *testing.T) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, fw := range Frameworks {
		t.Run(fw.Name, func(t *testing.T) {
			base := serveLoopback(t, fw.New(0))
			for _, tc := range equivCases {
				req, err := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
				if err != nil {
					t.Fatal(err)
				}
				if tc.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				t.Run(tc.name, func(t *testing.T) {
					skipKnown(t, fw.Name, tc.name)
					check(t, tc, resp.StatusCode, resp.Header.Get("Content-Type"), body)
				})
			}
		})
	}
}

func check(t *testing.T, tc equivCase, status int, ctype string, body []byte) {
	t.Helper()
	if status != tc.status {
		t.Errorf("status %d, want %d (body %s)", status, tc.status, body)
	}
	if !strings.HasPrefix(ctype, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ctype)
	}
	var got, want any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("body is not JSON: %v: %q", err, body)
	}
	if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if tc.anyMessage {
		blankIssueMessages(got)
		blankIssueMessages(want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("body\n got %s\nwant %s", body, tc.want)
	}
}

func skipKnown(t *testing.T, framework, tc string) {
	t.Helper()
	if why, ok := knownDifferences[framework+"/"+tc]; ok {
		t.Skip(why)
	}
}

// blankIssueMessages empties error.details.issues[*].message in a decoded
// envelope.
func blankIssueMessages(v any) {
	env, _ := v.(map[string]any)
	e, _ := env["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	issues, _ := d["issues"].([]any)
	for _, is := range issues {
		if m, ok := is.(map[string]any); ok {
			m["message"] = ""
		}
	}
}
