package wasm_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/wasm"
)

var (
	goGuestOnce sync.Once
	goGuestBin  []byte
	goGuestErr  string
)

// goGuest builds testdata/goguest with the wasip1 reactor flags, once per
// test binary. It skips the test (with the reason) only when the toolchain
// cannot build it.
func goGuest(t testing.TB) []byte {
	t.Helper()
	goGuestOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			goGuestErr = "no go toolchain on PATH: " + err.Error()
			return
		}
		out := filepath.Join(os.TempDir(), "fx-wasm-test-goguest.wasm")
		cmd := exec.Command(goBin, "build", "-buildmode=c-shared", "-o", out, "./testdata/goguest")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if msg, err := cmd.CombinedOutput(); err != nil {
			goGuestErr = "the toolchain cannot build a wasip1 reactor (" + err.Error() + "): " + string(msg)
			return
		}
		goGuestBin, err = os.ReadFile(out)
		if err != nil {
			goGuestErr = err.Error()
		}
	})
	if goGuestBin == nil {
		t.Skip("skipping the Go guest: " + goGuestErr)
	}
	return goGuestBin
}

func goApp(t testing.TB, cfg wasm.Config) (*fx.App, *wasm.Module, *kittest.LogBuffer) {
	t.Helper()
	app, logs := newApp(t)
	cfg.Cache = testCache
	m := wasm.New(goGuest(t), cfg)
	app.Register(m.Plugin())
	app.Post("/users/:id/echo", m.Handler())
	app.Get("/*cmd", m.Handler())
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	return app, m, logs
}

func TestGoGuest(t *testing.T) {
	app, m, logs := goApp(t, wasm.Config{Timeout: time.Second})

	t.Run("echo is binary-safe", func(t *testing.T) {
		body := []byte("\x00\xff binary \r\n\x00 body")
		r := do(t, app, "POST", "/users/42/echo?a=1&b=%00x", body, "X-Foo", "one", "X-Foo", "two")
		if r.status != 201 || !bytes.Equal(r.body, body) {
			t.Fatalf("%d %q", r.status, r.body)
		}
		for k, v := range map[string]string{
			"X-Method": "POST", "X-Path": "/users/42/echo", "X-Query": "a=1&b=%00x",
			"X-Foo": "one|two", "X-Id": "42", "Content-Type": "application/octet-stream",
		} {
			if got := r.header.Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
	})

	t.Run("hello", func(t *testing.T) {
		if r := do(t, app, "GET", "/hello", nil); r.status != 200 || string(r.body) != "hello from go" {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})

	// Every failure is a 502 with the reason in the log only, and the next
	// request is served by a fresh instance (its call counter restarts).
	failures := []struct{ cmd, log string }{
		{"panic", "boom from the guest"},
		{"nil", "nil pointer dereference"},
		{"exit", "guest exited with code 3"},
		{"loop", "timed out"},
		{"badheader", `header \"Connection\" may not be set`},
		{"stderr", "written to stderr"},
	}
	for _, tc := range failures {
		t.Run(tc.cmd, func(t *testing.T) {
			before := m.Stats()
			want502(t, do(t, app, "GET", "/"+tc.cmd, nil), tc.log, "boom", "panic", "goroutine")
			if !strings.Contains(logs.String(), tc.log) {
				t.Errorf("log lacks %q:\n%s", tc.log, logs)
			}
			r := do(t, app, "POST", "/users/1/echo", nil)
			if r.status != 201 || r.header.Get("X-Calls") != "1" {
				t.Errorf("after %s: %d, X-Calls %q (want a fresh instance)", tc.cmd, r.status, r.header.Get("X-Calls"))
			}
			if s := m.Stats(); s.Discarded != before.Discarded+1 {
				t.Errorf("discarded %d -> %d", before.Discarded, s.Discarded)
			}
		})
	}
}

// TestGoGuestOOM: a guest that allocates past the memory limit dies "out of
// memory" (a trap). It has its own generous timeout: growing memory is
// slow under the race detector (~2.5 s to reach 16 MiB there, 50 ms
// without).
func TestGoGuestOOM(t *testing.T) {
	app, m, logs := goApp(t, wasm.Config{Timeout: 20 * time.Second})
	want502(t, do(t, app, "GET", "/oom", nil), "out of memory")
	if !strings.Contains(logs.String(), "fatal error: out of memory") {
		t.Errorf("log lacks the Go runtime's message:\n%s", logs)
	}
	if r := do(t, app, "POST", "/users/1/echo", nil); r.status != 201 || r.header.Get("X-Calls") != "1" {
		t.Errorf("after oom: %d X-Calls %q", r.status, r.header.Get("X-Calls"))
	}
	if s := m.Stats(); s.Discarded != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestGoGuestReuse: a healthy instance is reused (its state persists).
func TestGoGuestReuse(t *testing.T) {
	app, m, _ := goApp(t, wasm.Config{MaxInstances: 1})
	for i := 1; i <= 3; i++ {
		r := do(t, app, "POST", "/users/1/echo", nil)
		if got := r.header.Get("X-Calls"); got != string(rune('0'+i)) {
			t.Fatalf("call %d: X-Calls %q", i, got)
		}
	}
	if s := m.Stats(); s.Created != 1 {
		t.Errorf("created %d instances", s.Created)
	}
}
