package wasm_test

//go:generate sh testdata/gen.sh

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/wasm"
)

// testCache is shared by every Module in the tests: the Go guest compiles
// once per machine instead of once per test.
var testCache wazero.CompilationCache

func TestMain(m *testing.M) {
	dir := filepath.Join(os.TempDir(), "fx-wasm-test-cache")
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		c = wazero.NewCompilationCache()
	}
	testCache = c
	os.Exit(m.Run())
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".wasm"))
	if err != nil {
		t.Fatalf("fixture %s: %v (regenerate with: go generate ./wasm)", name, err)
	}
	return b
}

func newApp(t testing.TB) (*fx.App, *kittest.LogBuffer) {
	t.Helper()
	logs := &kittest.LogBuffer{}
	app := fx.New(fx.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	t.Cleanup(func() { app.Shutdown() })
	return app, logs
}

// mount serves fixture at "POST /" and boots the app.
func mount(t testing.TB, name string, cfg wasm.Config) (*fx.App, *wasm.Module, *kittest.LogBuffer) {
	t.Helper()
	app, logs := newApp(t)
	if cfg.Cache == nil {
		cfg.Cache = testCache
	}
	m := wasm.Mount(app, "POST", "/", fixture(t, name), cfg)
	if err := app.Boot(); err != nil {
		t.Fatalf("boot: %v", err)
	}
	return app, m, logs
}

type result struct {
	status int
	header http.Header
	body   []byte
}

func do(t testing.TB, app *fx.App, method, target string, body []byte, hdr ...string) result {
	t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	resp, err := app.Test(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return result{resp.StatusCode, resp.Header, b}
}

// wantEnvelope checks an error response: the envelope of status and code
// (fxtest.CheckEnvelope), the fixed message, no details, and that none
// of the leak strings reached the client.
func wantEnvelope(t testing.TB, r result, status int, code, message string, leaks ...string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	env, err := fxtest.CheckEnvelope(r.status, r.header, r.body, nil)
	if err != nil {
		t.Fatal(err)
	}
	if env.Code != code || env.Message != message || env.Details != nil {
		t.Errorf("envelope %s, want code %s message %q", r.body, code, message)
	}
	for _, l := range leaks {
		if l != "" && bytes.Contains(r.body, []byte(l)) {
			t.Errorf("response leaks %q: %s", l, r.body)
		}
	}
}

func want502(t testing.TB, r result, leaks ...string) {
	t.Helper()
	wantEnvelope(t, r, 502, fx.ErrorCodes.WasmError, "WASM guest failed", leaks...)
}
