package fx_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// result is a response read back by do.
type result struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request through app.Test.
func do(t testing.TB, app *fx.App, method, target string, body string, hdr ...string) result {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := app.Test(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{status: resp.StatusCode, header: resp.Header, body: b}
}

// envelope is the decoded wire envelope; Details stays raw so tests can
// tell "absent" from "null".
type envelope struct {
	Error struct {
		Code    string          `json:"code"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

// mustEnvelope checks that r is an error envelope with the given status and
// code: application/json, valid UTF-8 JSON, exactly the keys of the wire
// format, and details absent or neither null nor {}.
func mustEnvelope(t testing.TB, r result, status int, code string) envelope {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %d, want %d (body %q)", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	return checkEnvelopeBody(t, r.body, code)
}

func checkEnvelopeBody(t testing.TB, body []byte, code string) envelope {
	t.Helper()
	var env envelope
	if !utf8.Valid(body) || !json.Valid(body) {
		t.Fatalf("body is not valid UTF-8 JSON: %q", body)
	}
	// Exactly {"error":{...}} with code, message and optional details.
	var outer map[string]map[string]json.RawMessage
	if err := json.Unmarshal(body, &outer); err != nil {
		t.Fatalf("body %q is not an envelope: %v", body, err)
	}
	if len(outer) != 1 || outer["error"] == nil {
		t.Fatalf("body %q: want one top-level key \"error\"", body)
	}
	for k := range outer["error"] {
		if k != "code" && k != "message" && k != "details" {
			t.Errorf("body %q: unexpected key %q", body, k)
		}
	}
	if _, ok := outer["error"]["message"]; !ok {
		t.Errorf("body %q: no message", body)
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatal(err)
	}
	if d := string(env.Error.Details); d == "null" || d == "{}" {
		t.Errorf("body %q: details must be absent, not %s", body, d)
	}
	if code != "" && env.Error.Code != code {
		t.Errorf("code = %q, want %q (body %q)", env.Error.Code, code, body)
	}
	return env
}

// logBuffer is a slog handler target that tests can read concurrently.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// records returns the JSON log records written so far.
func (l *logBuffer) records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
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

// newLogged returns an App whose logger writes JSON records into the
// returned buffer.
func newLogged(cfg ...fx.Config) (*fx.App, *logBuffer) {
	lb := &logBuffer{}
	var c fx.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	c.Logger = slog.New(slog.NewJSONHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return fx.New(c), lb
}

// quiet returns an App whose logger discards everything.
func quiet(cfg ...fx.Config) *fx.App {
	var c fx.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return fx.New(c)
}

// newRequestCtx returns a RequestCtx initialised as fasthttp's server
// would (so Done, Value and friends work), for driving a handler directly.
func newRequestCtx() *fasthttp.RequestCtx {
	var rc fasthttp.RequestCtx
	var req fasthttp.Request
	rc.Init(&req, nil, nil)
	return &rc
}
