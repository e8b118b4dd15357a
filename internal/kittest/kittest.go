// Package kittest holds the test helpers shared by the kit packages'
// tests (health, static, middleware, middleware/jwt): they check the wire
// envelope (through fxtest.CheckEnvelope), drive an App's handler
// directly, without a server, loop benchmarks over it, read its logs,
// wait for a state another goroutine reaches (Within, Eventually), and
// follow the processes of the deploy tests (Linux); PrintTB stands for a
// test's t in runnable examples, RecordTB for one whose failures a test
// reads (an assertion shown to fail); SettledHeap measures the live heap
// after the collector has emptied the pools; ServeForClients serves an example to
// the generated clients' tests; GrammarChecks counts how often a route
// checks a body's grammar. The JWT fixtures live in jwtkit, so that
// kittest links no JWT library and nested modules can use it. Only tests
// import it.
package kittest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/valyala/fasthttp"
)

// CheckEnvelope checks that a response is exactly the error envelope of
// code, sent with status, in the wire format fxtest.CheckEnvelope checks
// (the one check of it: content type, shape, catalog status), and returns
// it decoded. code is a catalog code, or an application's code expected
// with status; "" accepts any catalog code. A body that is not an
// envelope fails the test at once; a wrong status or code is reported.
func CheckEnvelope(t testing.TB, status int, header http.Header, body []byte, code string) fxtest.Envelope {
	t.Helper()
	var appCodes map[string]int
	if _, catalog := fx.ErrorStatus[code]; !catalog && code != "" {
		appCodes = map[string]int{code: status}
	}
	env, err := fxtest.CheckEnvelope(status, header, body, appCodes)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if code != "" && env.Code != code {
		t.Errorf("code = %q, want %q (body %q)", env.Code, code, body)
	}
	return env
}

// RequestCtx returns a RequestCtx for method and path, initialised as
// fasthttp's server would, for calling a handler directly.
func RequestCtx(method, path string) *fasthttp.RequestCtx {
	var rc fasthttp.RequestCtx
	rc.Init(new(fasthttp.Request), nil, nil)
	rc.Request.Header.SetMethod(method)
	rc.Request.SetRequestURI(path)
	return &rc
}

// Bench runs h on method and path b.N times, in process, after checking
// once that it answers status; allocations are reported.
func Bench(b *testing.B, h fasthttp.RequestHandler, method, path string, status int) {
	b.Helper()
	BenchCtx(b, h, RequestCtx(method, path), status)
}

// BenchCtx is Bench on a request the caller built (RequestCtx, then
// headers or a body): rc is served b.N times, its request kept, its
// response and user values reset between runs.
func BenchCtx(b *testing.B, h fasthttp.RequestHandler, rc *fasthttp.RequestCtx, status int) {
	b.Helper()
	h(rc)
	if rc.Response.StatusCode() != status {
		b.Fatalf("status %d, want %d: %s", rc.Response.StatusCode(), status, rc.Response.Body())
	}
	b.ReportAllocs()
	for b.Loop() {
		rc.Response.Reset()
		rc.ResetUserValues() // as fasthttp's server does after each request
		h(rc)
	}
}

// BenchEach is BenchCtx on a request that changes between runs: each
// (when not nil) edits rc before every run, i counting from 0 (a fresh
// idempotency key, a URI a server would parse afresh), its cost in the
// figure; every response must have status. Allocations are reported.
func BenchEach(b *testing.B, h fasthttp.RequestHandler, rc *fasthttp.RequestCtx, status int, each func(rc *fasthttp.RequestCtx, i int)) {
	b.Helper()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		rc.Response.Reset()
		rc.ResetUserValues() // as fasthttp's server does after each request
		if each != nil {
			each(rc, i)
		}
		h(rc)
		if rc.Response.StatusCode() != status {
			b.Fatalf("status %d, want %d: %s", rc.Response.StatusCode(), status, rc.Response.Body())
		}
	}
}

// BenchPost runs h on POST uri with body (application/json) b.N times,
// in process, the request rebuilt each time as a new one is (the cost of
// setting it is in the figure); every response must have status.
// Allocations are reported.
func BenchPost(b *testing.B, h fasthttp.RequestHandler, uri, body string, status int) {
	b.Helper()
	var rc fasthttp.RequestCtx
	b.ReportAllocs()
	for b.Loop() {
		rc.Request.Reset()
		rc.Response.Reset()
		rc.ResetUserValues()
		rc.Request.Header.SetMethod("POST")
		rc.Request.SetRequestURI(uri)
		rc.Request.Header.SetContentType("application/json")
		rc.Request.SetBodyString(body)
		h(&rc)
		if rc.Response.StatusCode() != status {
			b.Fatalf("status %d, want %d: %s", rc.Response.StatusCode(), status, rc.Response.Body())
		}
	}
}

// BenchParallel is Bench under b.RunParallel: each goroutine serves its
// own RequestCtx for method and path, which setup (when not nil) completes
// first (headers, a per-goroutine key); every response must have status.
// Allocations are reported.
func BenchParallel(b *testing.B, h fasthttp.RequestHandler, method, path string, status int, setup func(*fasthttp.RequestCtx)) {
	b.Helper()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rc := RequestCtx(method, path)
		if setup != nil {
			setup(rc)
		}
		for pb.Next() {
			rc.Response.Reset()
			rc.ResetUserValues() // as fasthttp's server does after each request
			h(rc)
			if rc.Response.StatusCode() != status {
				b.Fatalf("status %d, want %d: %s", rc.Response.StatusCode(), status, rc.Response.Body())
			}
		}
	})
}

// LogBuffer is the io.Writer of a slog handler whose output a test reads
// while the App writes (it is safe for concurrent use).
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Reset drops what was written so far, its memory included.
func (l *LogBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = bytes.Buffer{}
}

// Lines returns the lines written so far that hold sub.
func (l *LogBuffer) Lines(sub string) []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

// Records decodes the JSON records written so far (LogRecords).
func (l *LogBuffer) Records(t testing.TB) []map[string]any {
	t.Helper()
	return LogRecords(t, l.String())
}

// LogRecords decodes text, the output of a slog JSON handler, into its
// records (one a line), failing the test at a line that is not JSON.
func LogRecords(t testing.TB, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// Within returns the value ch delivers, failing the test with what when
// none comes within 10 s: a bound on a test whose behaviour under test is
// broken (a hang), not a timing assertion.
func Within[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("gave up waiting: %s", what)
		panic("unreachable")
	}
}

// Eventually polls cond every 5 ms until it holds, failing the test with
// what when it does not within 5 s: for a state another goroutine
// reaches after the test's last step (an observer run after the
// connection closed, a file removed after the response), a bound on a
// broken behaviour, not a timing assertion.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5s: %s", what)
		}
	}
}
