package fx_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/valyala/fasthttp"
)

// result is a response: read back by do, read off the wire (rawExchange,
// roundTripRaw) or parsed from a server's output (parseWire).
type result struct {
	status int
	header http.Header
	body   []byte
	close  bool // Connection: close (net/http moves it out of header)
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
	return doReq(t, app, req)
}

// doReq sends req through app.Test and reads the response.
func doReq(t testing.TB, app *fx.App, req *http.Request) result {
	t.Helper()
	resp, err := app.Test(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return result{status: resp.StatusCode, header: resp.Header, body: b, close: resp.Close}
}

// mustEnvelope checks that r was sent with status and is exactly the
// error envelope of code ("": any catalog code) in the wire format
// fxtest.CheckEnvelope checks (content type, shape, the code's catalog
// status, a production 500 that says nothing more), and returns it. A code
// outside the catalog is the application's, expected with status.
func mustEnvelope(t testing.TB, r result, status int, code string) fxtest.Envelope {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %d, want %d (body %q)", r.status, status, r.body)
	}
	return kittest.CheckEnvelope(t, status, r.header, r.body, code)
}

// checkEnvelopeBody checks that body is an error envelope of code ("": any
// code) with fxtest.CheckEnvelopeBody, and returns it.
func checkEnvelopeBody(t testing.TB, body []byte, code string) fxtest.Envelope {
	t.Helper()
	e, err := fxtest.CheckEnvelopeBody(body)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if code != "" && e.Code != code {
		t.Errorf("code = %q, want %q (body %q)", e.Code, code, body)
	}
	return e
}

// logBuffer is a slog handler target that tests can read concurrently.
type logBuffer = kittest.LogBuffer

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

// quiet returns an App whose logger discards everything but stays enabled
// at every level, so the logging paths (stack capture included) run.
func quiet(cfg ...fx.Config) *fx.App {
	var c fx.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	c.Logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return fx.New(c)
}

// quietFor is quiet's App for one test: it is shut down when the test
// ends.
func quietFor(t testing.TB, cfg ...fx.Config) *fx.App {
	app := quiet(cfg...)
	t.Cleanup(func() { app.Shutdown() })
	return app
}

// stuckRoute registers GET /stuck, whose handler closes the returned
// channel when a request enters it, then waits until the test ends: a
// request in flight that outlives any shutdown bound.
func stuckRoute(t testing.TB, app *fx.App) <-chan struct{} {
	entered := make(chan struct{})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	app.Get("/stuck", func(c *fx.Ctx) error {
		close(entered)
		<-release
		return nil
	})
	return entered
}

// onShutdownRan registers an OnShutdown function that returns err, and
// returns the check the shutdown tests assert with: has it run by now?
func onShutdownRan(app *fx.App, err error) func() bool {
	ran := make(chan struct{})
	app.OnShutdown(func() error { close(ran); return err })
	return func() bool {
		select {
		case <-ran:
			return true
		default:
			return false
		}
	}
}

// shutdownOver calls app.ShutdownWithContext with a context that is
// already over, so it must not wait for the requests in flight: the error
// it returns must wrap context.Canceled. It returns that error.
func shutdownOver(t testing.TB, app *fx.App) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := app.ShutdownWithContext(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ShutdownWithContext with its context over = %v, want context.Canceled", err)
	}
	return err
}

// failingListener is a loopback listener whose Accept fails at once with
// err, a permanent error.
type failingListener struct {
	net.Listener
	err error
}

func (l failingListener) Accept() (net.Conn, error) { return nil, l.err }

// brokenListener returns an App with one route and the OnShutdown check of
// onShutdownRan, and a listener whose Accept fails: serving fails on its
// own, before any request.
func brokenListener(t testing.TB) (*fx.App, func() bool, failingListener) {
	app := quiet()
	ran := onShutdownRan(app, nil)
	app.Get("/", func(c *fx.Ctx) error { return nil })
	return app, ran, failingListener{listenLoopback(t), errors.New("accept: listener broke")}
}

// bootErrors boots app, which must fail with the errors.Join of its
// configuration errors, and returns them: each must be an *fx.Error.
func bootErrors(t testing.TB, app *fx.App) []*fx.Error {
	t.Helper()
	err := app.Boot()
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("Boot = %v (%T), want the errors.Join of the configuration errors", err, err)
	}
	var out []*fx.Error
	for _, e := range joined.Unwrap() {
		var fe *fx.Error
		if !errors.As(e, &fe) {
			t.Fatalf("joined error %v is not an *fx.Error", e)
		}
		out = append(out, fe)
	}
	return out
}

// serveRaw runs one request with raw method and path bytes through h.
func serveRaw(h fasthttp.RequestHandler, method, path string) *fasthttp.RequestCtx {
	rc := kittest.RequestCtx(method, path)
	h(rc)
	return rc
}

// getAsync GETs url on a goroutine and delivers the body, or "error: "
// and the error, on the returned channel. timeout bounds the exchange (0:
// none, as http.Get).
func getAsync(url string, timeout time.Duration) <-chan string {
	got := make(chan string, 1)
	go func() {
		client := &http.Client{Timeout: timeout}
		resp, err := client.Get(url)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(b)
	}()
	return got
}

// listenLoopback opens a listener on a free loopback port, closed when
// the test ends (Serve and Shutdown may have closed it first), for a test
// that drives Serve itself; fxtest.Serve is the one-call form,
// kittest.Within the bound on waiting for Serve's result.
func listenLoopback(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// child is this test binary run again as a process of its own, running
// one test function that acts as a program when its environment asks it
// to (TestRunHelperProcess, TestChildServer). Its standard output and
// error are read as one stream of lines, all kept.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	exited chan struct{} // closed once it exited and its output is read

	mu   sync.Mutex
	out  []string      // its output so far, line by line
	more chan struct{} // closed (and replaced) when a line comes
	next int           // the first line waitLine has not looked at
}

// startChild runs the test named test in a child process, with env added
// to its environment. Its standard input stays open while the test runs
// (a child may exit when it closes, as it does if the test binary dies);
// when the test ends the child is killed if it still runs, and its
// output logged if the test failed.
func startChild(t *testing.T, test string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	c := &child{t: t, cmd: cmd, exited: make(chan struct{}), more: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			c.mu.Lock()
			c.out = append(c.out, sc.Text())
			close(c.more)
			c.more = make(chan struct{})
			c.mu.Unlock()
		}
		pr.Close()
		_ = cmd.Wait() // its status is read through wait
		close(c.exited)
	}()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill() // no-op once it exited
		<-c.exited
		if t.Failed() {
			t.Logf("child output:\n%s", c.output())
		}
	})
	return c
}

// waitLine returns the child's first line containing s that an earlier
// waitLine has not passed; it fails the test if the child exits without
// one or after 30 s.
func (c *child) waitLine(s string) string {
	c.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		for c.next < len(c.out) {
			line := c.out[c.next]
			c.next++
			if strings.Contains(line, s) {
				c.mu.Unlock()
				return line
			}
		}
		more := c.more
		c.mu.Unlock()
		select {
		case <-more:
		case <-c.exited:
			c.mu.Lock()
			done := c.next == len(c.out)
			c.mu.Unlock()
			if done {
				c.t.Fatalf("the child exited without a line containing %q", s)
			}
		case <-timeout:
			c.t.Fatalf("no line containing %q from the child within 30 s", s)
		}
	}
}

// wait waits (at most 15 s) for the child to exit and returns its exit
// status; its whole output is then read.
func (c *child) wait() int {
	c.t.Helper()
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		c.t.Fatal("the child did not exit within 15 s")
	}
	return c.cmd.ProcessState.ExitCode()
}

// index is the position of the child's first output line containing s,
// or -1.
func (c *child) index(s string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, line := range c.out {
		if strings.Contains(line, s) {
			return i
		}
	}
	return -1
}

// output returns the child's output so far.
func (c *child) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.out, "\n")
}

// serveOn serves app on ln on a goroutine and returns the channel its
// Serve's result arrives on.
func serveOn(app *fx.App, ln net.Listener) <-chan error {
	served := make(chan error, 1)
	go func() { served <- app.Serve(ln) }()
	return served
}

// fuzzItem is the body type of the fuzz and reliability apps.
type fuzzItem struct {
	Name   string            `json:"name"`
	Qty    int               `json:"qty"`
	Tags   []string          `json:"tags"`
	Attrs  map[string]string `json:"attrs"`
	Nested *struct {
		OK    bool    `json:"ok"`
		Score float64 `json:"score"`
	} `json:"nested"`
}

var fuzzAppCodes = map[string]int{"APP_NOPE": 409, "APP_TEAPOT": 418}

var (
	errNope  = fx.NewError(409, "APP_NOPE", "Nope", map[string]any{"why": "because"})
	errRelMW = errors.New("middleware failure (internal text)")
)

// fuzzApp is an App with one route per kind of outcome: success with
// params, a decoded body, *fx.Error, a plain error, a panic, a catch-all,
// and middleware that fails on request.
func fuzzApp() *fx.App {
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		switch c.Header("X-Fail") {
		case "mw":
			return errRelMW
		case "panic":
			panic("middleware panic")
		}
		return next()
	})
	app.Get("/users/:id", func(c *fx.Ctx) error {
		return c.JSON(200, map[string]string{"id": c.Param("id"), "q": c.Query("q")})
	})
	app.Get("/files/*rest", func(c *fx.Ctx) error { return c.JSON(200, map[string]string{"rest": c.Param("rest")}) })
	app.Post("/items", func(c *fx.Ctx) error {
		it, err := fx.JSONBody[fuzzItem](c)
		if err != nil {
			return err
		}
		return c.JSON(201, it)
	})
	app.Get("/nope", func(c *fx.Ctx) error { return errNope })
	app.Get("/teapot", func(c *fx.Ctx) error {
		return fx.NewError(418, "APP_TEAPOT", c.Query("msg"), map[string]string{"q": c.Query("d")})
	})
	app.Get("/fail", func(c *fx.Ctx) error { return errors.New("db password=hunter2 at /srv/app/db.go:12") })
	app.Get("/panic", func(c *fx.Ctx) error { panic(c.Query("v")) })
	app.Put("/echo", func(c *fx.Ctx) error { return c.Send(200, "application/octet-stream", c.Body()) })
	return app
}

var fuzzAppOnce = sync.OnceValue(fuzzApp)

// badJSON is a details value whose MarshalJSON misbehaves.
type badJSON struct {
	Mode string
}

func (b badJSON) MarshalJSON() ([]byte, error) {
	switch b.Mode {
	case "panic":
		panic("MarshalJSON panicked (internal text)")
	case "error":
		return nil, errors.New("MarshalJSON failed (internal text)")
	case "invalid":
		return []byte(`{"unterminated`), nil
	}
	return []byte(`"ok"`), nil
}

type cyclicDetails struct {
	Name string
	Next *cyclicDetails
}

// leakMarkers are strings that betray internals in a response body.
var leakMarkers = []string{
	"goroutine", "panic:", ".go:", "/usr/", "/root/", "/home/", "/tmp/", "/srv/", "runtime.",
	"fx_test", "fuzzItem", "badJSON", "cyclicDetails", "*fx.", "fx.Ctx", "main.", "[]string", "map[",
	"struct {", "interface {", "reflect.", "json:", "go-json", "encoding/json", "hunter2", "internal text",
	"chan int", "func()", "unsupported type", "unsupported value", "Go value", "Go struct",
}

// leakyText returns the first internal marker found in s, or "".
func leakyText(s string) string {
	for _, m := range leakMarkers {
		if strings.Contains(s, m) {
			return m
		}
	}
	return ""
}
