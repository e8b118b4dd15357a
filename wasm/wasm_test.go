package wasm_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/wasm"
)

func TestOK(t *testing.T) {
	app, m, _ := mount(t, "ok", wasm.Config{})
	for i := range 3 {
		r := do(t, app, "POST", "/", []byte("x"))
		if r.status != 200 || string(r.body) != "hello from wat" {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
		if ct := r.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if got := r.header.Values("X-Guest"); strings.Join(got, ",") != "wat,ok" {
			t.Errorf("X-Guest %q, want [wat ok]", got)
		}
	}
	s := m.Stats()
	if s.Created != 1 || s.Live != 1 || s.Idle != 1 || s.Calls != 3 || s.Failures != 0 {
		t.Errorf("stats %+v: want one instance reused for 3 calls", s)
	}
}

// TestGuestFailures: every failing fixture answers 502 FX_WASM_ERROR, the
// reason is logged, never sent, and the instance is discarded.
func TestGuestFailures(t *testing.T) {
	cases := []struct {
		fixture string
		log     string // expected in the log
	}{
		{"trap", "unreachable"},
		{"badjson", "invalid response: invalid JSON"},
		{"badstatus", `\"status\" 700 is not an integer in 200..599`},
		{"loop", "timed out after 100ms"},
		{"badptr", "outside memory"},
		{"exit", "guest exited with code 3"},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			app, m, logs := mount(t, tc.fixture, wasm.Config{Timeout: 100 * time.Millisecond})
			for i := range 2 {
				start := time.Now()
				r := do(t, app, "POST", "/", nil)
				want502(t, r, tc.log, "unreachable", "wasm")
				if tc.fixture == "loop" && time.Since(start) > 2*time.Second {
					t.Errorf("timeout took %v", time.Since(start))
				}
				_ = i
			}
			if !strings.Contains(logs.String(), tc.log) {
				t.Errorf("log lacks %q:\n%s", tc.log, logs)
			}
			if !strings.Contains(logs.String(), "wasm: guest failed; instance discarded") {
				t.Errorf("log lacks the failure line:\n%s", logs)
			}
			s := m.Stats()
			if s.Discarded != 2 || s.Failures != 2 || s.Created != 2 || s.Live != 0 {
				t.Errorf("stats %+v: want each failed instance discarded and a new one per request", s)
			}
		})
	}
}

// TestResponseValidation sends response documents through the mirror
// guest, which answers the request body verbatim.
func TestResponseValidation(t *testing.T) {
	app, m, logs := mount(t, "mirror", wasm.Config{MaxResponseBytes: 200})
	ok := []struct{ doc, body string }{
		{`{"status":200}`, ""},
		{` {"status":599,"body":"x"} ` + "\n", "x"},
		{`{"body":"héllo \u0000","status":201}`, "héllo \x00"},
		{`{"status":200,"bodyBase64":"AP8BgA=="}`, "\x00\xff\x01\x80"},
		{`{"status":200,"headers":{},"body":""}`, ""},
		{`{"status":200,"headers":{"X-A":"1","x-b":["2","3"],"Set-Cookie":["a=1","b=2"]}}`, ""},
	}
	for _, tc := range ok {
		r := do(t, app, "POST", "/", []byte(tc.doc))
		if r.status < 200 || r.status > 599 || r.status == 502 || string(r.body) != tc.body {
			t.Errorf("%s: %d %q, want success with body %q\nlog: %s", tc.doc, r.status, r.body, tc.body, logs)
		}
	}
	r := do(t, app, "POST", "/", []byte(`{"status":200,"headers":{"X-A":"1","x-b":["2","3"],"Set-Cookie":["a=1","b=2"]}}`))
	if r.header.Get("X-A") != "1" || strings.Join(r.header.Values("X-B"), ",") != "2,3" || len(r.header.Values("Set-Cookie")) != 2 {
		t.Errorf("headers %v", r.header)
	}

	bad := []struct{ doc, log string }{
		{``, "empty"},
		{`null`, "not a JSON object"},
		{`[]`, "not a JSON object"},
		{`"x"`, "not a JSON object"},
		{`{"status":200`, "invalid JSON"},
		{`{"status":200}{}`, "trailing data"},
		{`{"status":200} x`, "trailing data"},
		{`{"status":200,"extra":1}`, `unknown field \"extra\"`},
		{`{"status":200,"status":201}`, "duplicate field"},
		{`{"body":"x"}`, `missing field \"status\"`},
		{`{"status":199}`, "200..599"},
		{`{"status":600}`, "200..599"},
		{`{"status":200.5}`, "200..599"},
		{`{"status":2e2}`, "200..599"},
		{`{"status":"200"}`, "not an integer"},
		{`{"status":null}`, "not an integer"},
		{`{"status":200,"body":1}`, "not a string"},
		{`{"status":200,"body":"a","bodyBase64":"YQ=="}`, "more than one"},
		{`{"status":200,"bodyBase64":"!!"}`, "not standard base64"},
		{`{"status":200,"headers":null}`, "not an object"},
		{`{"status":200,"headers":{"X":1}}`, "not a string or array"},
		{`{"status":200,"headers":{"X":[1]}}`, "not a string"},
		{`{"status":200,"headers":{"X":[]}}`, "empty array"},
		{`{"status":200,"headers":{"X":{}}}`, "an object"},
		{`{"status":200,"headers":{"X A":"1"}}`, "not an HTTP token"},
		{`{"status":200,"headers":{"":"1"}}`, "not an HTTP token"},
		{`{"status":200,"headers":{"X":"a\r\nSet-Cookie: x=1"}}`, "control character"},
		{`{"status":200,"headers":{"X":"a\u0000"}}`, "control character"},
		{`{"status":200,"headers":{"X":["ok","a\n"]}}`, "control character"},
		{`{"status":200,"headers":{"X":"1","x":"2"}}`, "duplicate header"},
		{`{"status":200,"headers":{"Connection":"close"}}`, "may not be set"},
		{`{"status":200,"headers":{"Transfer-Encoding":"chunked"}}`, "may not be set"},
		{`{"status":200,"headers":{"content-length":"5"}}`, "may not be set"},
		{`{"status":200,"headers":{"Upgrade":"h2c"}}`, "may not be set"},
		{`{"status":200,"body":"` + strings.Repeat("a", 200) + `"}`, "over MaxResponseBytes"},
	}
	for _, tc := range bad {
		r := do(t, app, "POST", "/", []byte(tc.doc))
		if r.status != 502 {
			t.Errorf("%q: status %d, want 502", tc.doc, r.status)
			continue
		}
		want502(t, r, tc.log)
		if !strings.Contains(logs.String(), tc.log) {
			t.Errorf("%q: log lacks %q", tc.doc, tc.log)
		}
	}
	if s := m.Stats(); s.Discarded != uint64(len(bad)) {
		t.Errorf("discarded %d instances, want %d", s.Discarded, len(bad))
	}
	// A healthy request after all that is served.
	if r := do(t, app, "POST", "/", []byte(`{"status":200,"body":"fine"}`)); r.status != 200 || string(r.body) != "fine" {
		t.Errorf("after failures: %d %s", r.status, r.body)
	}
}

func TestBootFailures(t *testing.T) {
	cases := []struct{ fixture, msg string }{
		{"nohandle", `does not export "fx_handle"`},
		{"badsig", `exports "fx_handle" with the wrong signature`},
		{"bigmem", "raise Config.MemoryLimit"},
		{"command", "is a WASI command"},
		{"badimport", "imports env.now"},
		{"abi2", "speaks ABI version 2"},
		{"inittrap", "failed its first instantiation"},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			app, _ := newApp(t)
			wasm.Mount(app, "GET", "/", fixture(t, tc.fixture))
			err := app.Boot()
			if err == nil || !errors.Is(err, wasm.ErrInvalidModule) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Boot() = %v, want ErrInvalidModule with %q", err, tc.msg)
			}
			if _, err := wasm.Compile(fixture(t, tc.fixture)); !errors.Is(err, wasm.ErrInvalidModule) {
				t.Errorf("Compile() = %v, want ErrInvalidModule", err)
			}
		})
	}
	t.Run("garbage", func(t *testing.T) {
		_, err := wasm.Compile([]byte("not wasm"), wasm.Config{Name: "junk"})
		if !errors.Is(err, wasm.ErrInvalidModule) || !strings.Contains(err.Error(), `"junk" does not compile`) {
			t.Fatalf("Compile = %v", err)
		}
	})
	t.Run("memory limit configurable", func(t *testing.T) {
		m, err := wasm.Compile(fixture(t, "bigmem"), wasm.Config{MemoryLimit: 32 << 20})
		if err != nil {
			t.Fatalf("bigmem under a 32 MiB limit: %v", err)
		}
		m.Close()
	})
}

func TestMemoryGrowth(t *testing.T) {
	// 4 MiB limit, 2 pages initial, +1 MiB per call: three calls fit, the
	// fourth traps; the next request gets a fresh instance.
	app, m, logs := mount(t, "grow", wasm.Config{MemoryLimit: 4 << 20, RecycleMemory: -1})
	var got []int
	for range 5 {
		got = append(got, do(t, app, "POST", "/", nil).status)
	}
	if fmt.Sprint(got) != "[200 200 200 502 200]" {
		t.Fatalf("statuses %v, want [200 200 200 502 200]\n%s", got, logs)
	}
	if s := m.Stats(); s.Discarded != 1 || s.Created != 2 {
		t.Errorf("stats %+v", s)
	}

	// With recycling past 2 MiB the limit is never reached.
	app, m, _ = mount(t, "grow", wasm.Config{MemoryLimit: 4 << 20, RecycleMemory: 2 << 20})
	for i := range 10 {
		if r := do(t, app, "POST", "/", nil); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	if s := m.Stats(); s.Recycled < 4 || s.Failures != 0 {
		t.Errorf("stats %+v: want recycling, no failure", s)
	}
}

func TestRecycleAfterCalls(t *testing.T) {
	app, m, _ := mount(t, "ok", wasm.Config{MaxCalls: 3})
	for range 10 {
		if r := do(t, app, "POST", "/", nil); r.status != 200 {
			t.Fatal(r.status)
		}
	}
	if s := m.Stats(); s.Recycled != 3 || s.Created != 4 || s.Live != 1 {
		t.Errorf("stats %+v: want recycled after 3, 6, 9 calls", s)
	}
}

// TestPoolBound: requests beyond MaxInstances wait QueueTimeout, then get
// an enveloped 503; the pool never grows past its bound.
func TestPoolBound(t *testing.T) {
	app, m, _ := mount(t, "mirror", wasm.Config{
		MaxInstances: 2, Timeout: time.Second, QueueTimeout: 50 * time.Millisecond,
	})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); do(t, app, "POST", "/", []byte("~loop")) }()
	}
	// Wait until both instances are stuck in the loop.
	for deadline := time.Now().Add(2 * time.Second); m.Stats().Calls < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the looping requests never reached the guest")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	r := do(t, app, "POST", "/", []byte(`{"status":200}`))
	waited := time.Since(start)
	wantEnvelope(t, r, 503, fx.ErrorCodes.ServiceUnavailable, "No WASM instance available")
	if r.header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	if waited < 40*time.Millisecond || waited > 900*time.Millisecond {
		t.Errorf("waited %v, want about QueueTimeout (50ms)", waited)
	}
	if s := m.Stats(); s.Live > 2 {
		t.Errorf("live %d > MaxInstances", s.Live)
	}
	wg.Wait()
	if r := do(t, app, "POST", "/", []byte(`{"status":200}`)); r.status != 200 {
		t.Errorf("after the timeouts: %d", r.status)
	}
	if s := m.Stats(); s.Rejected != 1 || s.Discarded != 2 {
		t.Errorf("stats %+v", s)
	}
}

// TestConcurrentMixed interleaves failing and healthy requests on one
// module: no healthy request may ever see a 502, every failing one must.
func TestConcurrentMixed(t *testing.T) {
	app, m, _ := mount(t, "mirror", wasm.Config{MaxInstances: 4, Timeout: 200 * time.Millisecond, QueueTimeout: 5 * time.Second})
	const workers, perWorker = 8, 40
	var healthy502, failingOK, total atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				var body string
				failing := true
				switch (w + i) % 5 {
				case 0:
					body = "!trap"
				case 1:
					body = `{"status":200,"body":"x"} trailing`
				case 2:
					if i%10 == 0 {
						body = "~loop"
					} else {
						body = `{"status":700}`
					}
				default:
					failing = false
					body = fmt.Sprintf(`{"status":200,"body":"w%d-%d"}`, w, i)
				}
				r := do(t, app, "POST", "/", []byte(body))
				total.Add(1)
				switch {
				case !failing && (r.status != 200 || string(r.body) != fmt.Sprintf("w%d-%d", w, i)):
					healthy502.Add(1)
					t.Errorf("healthy request got %d %s", r.status, r.body)
				case failing && r.status != 502:
					failingOK.Add(1)
					t.Errorf("failing request %q got %d", body, r.status)
				}
			}
		}()
	}
	wg.Wait()
	s := m.Stats()
	if s.Live > 4 {
		t.Errorf("live %d > 4", s.Live)
	}
	if s.Discarded != s.Failures || s.Rejected != 0 || s.Calls != uint64(total.Load()) {
		t.Errorf("stats %+v after %d requests", s, total.Load())
	}
}

func TestShutdownClosesInstances(t *testing.T) {
	app, m, _ := mount(t, "ok", wasm.Config{Prewarm: 3, MaxInstances: 4})
	if s := m.Stats(); s.Live != 3 || s.Idle != 3 {
		t.Fatalf("after prewarm: %+v", s)
	}
	do(t, app, "POST", "/", nil)
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); s.Live != 0 || s.Idle != 0 {
		t.Errorf("after Shutdown: %+v", s)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCompileAndHandler(t *testing.T) {
	m, err := wasm.Compile(fixture(t, "ok"), wasm.Config{Name: "ok", Cache: testCache})
	if err != nil {
		t.Fatal(err)
	}
	app, _ := newApp(t)
	app.Register(m.Plugin())
	app.Get("/a", m.Handler())
	app.Get("/b", m.Handler())
	if r := do(t, app, "GET", "/b", nil); r.status != 200 {
		t.Fatal(r.status)
	}
	app.Shutdown()
	if s := m.Stats(); s.Live != 0 {
		t.Errorf("plugin did not close the module on Shutdown: %+v", s)
	}
}

func TestHandlerWithoutInit(t *testing.T) {
	m := wasm.New(fixture(t, "ok"))
	app, logs := newApp(t)
	app.Get("/", m.Handler())
	want502(t, do(t, app, "GET", "/", nil))
	if !strings.Contains(logs.String(), "module not initialised") {
		t.Errorf("log: %s", logs)
	}
	m.Close()
	if err := m.Init(); err == nil {
		t.Error("Init after Close succeeded")
	}
}

// TestHookSeesGuestError: the error hook receives a *wasm.GuestError that
// carries the cause and unwraps to the 502 *fx.Error.
func TestHookSeesGuestError(t *testing.T) {
	app, _ := newApp(t)
	var seen atomic.Value
	app.OnError(func(c *fx.Ctx, err any) bool { seen.Store(err); return false })
	wasm.Mount(app, "POST", "/", fixture(t, "trap"))
	want502(t, do(t, app, "POST", "/", nil))
	ge, ok := seen.Load().(*wasm.GuestError)
	if !ok {
		t.Fatalf("hook saw %T", seen.Load())
	}
	var fe *fx.Error
	if !errors.As(ge, &fe) || fe.Code != fx.ErrorCodes.WasmError || ge.Module != "POST /" || !strings.Contains(ge.Error(), "unreachable") {
		t.Errorf("GuestError %v / %v", ge, fe)
	}
}

// TestLargeRequest: a body larger than the initial buffer makes the host
// call fx_alloc again; the mirror answers it back.
func TestLargeRequest(t *testing.T) {
	app, _, _ := mount(t, "mirror", wasm.Config{MaxResponseBytes: 1 << 20})
	big := `{"status":200,"body":"` + strings.Repeat("z", 100<<10) + `"}`
	for range 2 {
		r := do(t, app, "POST", "/", []byte(big))
		if r.status != 200 || len(r.body) != 100<<10 {
			t.Fatalf("%d, %d bytes", r.status, len(r.body))
		}
	}
	// Bigger than the memory limit: refused before the guest is called.
	app, _, logs := mount(t, "mirror", wasm.Config{MemoryLimit: 1 << 20})
	want502(t, do(t, app, "POST", "/", make([]byte, 2<<20)))
	if !strings.Contains(logs.String(), "does not fit the memory limit") {
		t.Errorf("log: %s", logs)
	}
}

// TestABIExample serves the WAT guest printed in ABI.md, which must equal
// testdata/minimal.wat.
func TestABIExample(t *testing.T) {
	doc, err := os.ReadFile("ABI.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/minimal.wat")
	if err != nil {
		t.Fatal(err)
	}
	_, fromDoc, _ := strings.Cut(string(doc), "```wat\n")
	fromDoc, _, _ = strings.Cut(fromDoc, "```")
	_, fromFile, _ := strings.Cut(string(src), "\n")
	if fromDoc != fromFile {
		t.Fatalf("ABI.md's example and testdata/minimal.wat differ:\n%s\n---\n%s", fromDoc, fromFile)
	}
	app, _, _ := mount(t, "minimal", wasm.Config{})
	if r := do(t, app, "POST", "/", nil); r.status != 200 || string(r.body) != "hi" {
		t.Fatalf("%d %s", r.status, r.body)
	}
}

// TestResponseHeadersOverMiddleware pins how a guest's headers combine
// with headers middleware set before (ABI.md section 4).
func TestResponseHeadersOverMiddleware(t *testing.T) {
	app, _ := newApp(t)
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("X-A", "mw")
		c.SetHeader("X-Keep", "k")
		c.SetHeader("Set-Cookie", "mw=1")
		c.SetHeader("Content-Type", "application/json")
		return next()
	})
	wasm.Mount(app, "POST", "/", fixture(t, "mirror"), wasm.Config{Cache: testCache})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	r := do(t, app, "POST", "/", []byte(`{"status":200,"body":"x"}`))
	if r.header.Get("Content-Type") != "application/json" || r.header.Get("X-A") != "mw" {
		t.Errorf("middleware headers lost without guest headers: %v", r.header)
	}
	r = do(t, app, "POST", "/", []byte(`{"status":200,"headers":{"x-a":["1","2"],"Set-Cookie":["a=1","b=2"],"Content-Type":["a/b","c/d"]}}`))
	for name, want := range map[string]string{"X-A": "1,2", "X-Keep": "k", "Set-Cookie": "mw=1,a=1,b=2", "Content-Type": "c/d"} {
		if got := strings.Join(r.header.Values(name), ","); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// TestCloseDuringCalls: Close while every instance is stuck in a call and
// another request waits for one. The calls are interrupted at once (502),
// the waiter gets 503, no instance outlives Close, later requests get 503.
func TestCloseDuringCalls(t *testing.T) {
	app, m, _ := mount(t, "mirror", wasm.Config{MaxInstances: 2, Timeout: 10 * time.Second, QueueTimeout: 10 * time.Second})
	statuses := make(chan int, 3)
	for range 3 {
		go func() { statuses <- do(t, app, "POST", "/", []byte("~loop")).status }()
	}
	for deadline := time.Now().Add(5 * time.Second); m.Stats().Calls < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the looping requests never reached the guest")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the third request queue
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[int]int{}
	for range 3 {
		select {
		case s := <-statuses:
			got[s]++
		case <-time.After(5 * time.Second):
			t.Fatalf("requests still running 5s after Close (got %v)", got)
		}
	}
	if got[502] != 2 || got[503] != 1 {
		t.Errorf("statuses %v, want two 502 and one 503", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("calls ended %v after Close", d)
	}
	if s := m.Stats(); s.Live != 0 || s.Idle != 0 || s.Discarded != 2 {
		t.Errorf("stats %+v", s)
	}
	if r := do(t, app, "POST", "/", []byte(`{"status":200}`)); r.status != 503 {
		t.Errorf("after Close: %d", r.status)
	}
}

// TestRequestBufferGrowthFitsLimit: the host grows the request buffer
// geometrically, but never asks for more than the memory limit allows
// when the request itself fits: a 500 KiB then a 600 KiB request both
// fit a 1 MiB guest.
func TestRequestBufferGrowthFitsLimit(t *testing.T) {
	app, m, logs := mount(t, "mirror", wasm.Config{MemoryLimit: 1 << 20, MaxResponseBytes: 1 << 20, RecycleMemory: -1})
	for _, n := range []int{500 << 10, 600 << 10} {
		doc := `{"status":200,"body":"` + strings.Repeat("z", n-30) + `"}`
		if r := do(t, app, "POST", "/", []byte(doc)); r.status != 200 || len(r.body) != n-30 {
			t.Fatalf("%d-byte request: %d, %d bytes\n%s", len(doc), r.status, len(r.body), logs)
		}
	}
	if s := m.Stats(); s.Failures != 0 || s.Created != 1 {
		t.Errorf("stats %+v", s)
	}
}

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
