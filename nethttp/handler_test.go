package nethttp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/nethttp"
	"github.com/valyala/fasthttp"
)

// hookChan is an error hook that hands every raw value to a channel.
func hookChan(app *fx.App) <-chan any {
	ch := make(chan any, 16)
	app.OnError(func(c *fx.Ctx, err any) bool {
		ch <- err
		return false
	})
	return ch
}

func quietApp(cfg ...fx.Config) *fx.App {
	var c fx.Config
	if len(cfg) > 0 {
		c = cfg[0]
	}
	c.Logger = slog.New(slog.DiscardHandler)
	return fx.New(c)
}

// stillAlive checks that srv's App still answers GET / with "alive"
// after what a test did to it.
func stillAlive(t *testing.T, srv *httptest.Server, after string) {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatalf("%s: %v", after, err)
	}
	if body := readAll(t, resp); body != "alive" {
		t.Fatalf("%s: %q", after, body)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// seen is what the translation handler observed of its request.
type seen struct {
	method, href, path, proto, host string
	multi                           []string
	cookieA, cookieB                string
	userAgent, contentType          string
	body                            string
	contentLength                   int
	remote, local                   string
	isTLS                           bool
	alpn                            string
}

func translationApp(t *testing.T) (*fx.App, <-chan seen) {
	app := quietApp()
	ch := make(chan seen, 1)
	app.Handle("PATCH", "/things/:id", func(c *fx.Ctx) error {
		rc := c.RequestCtx()
		s := seen{
			method:        c.Method(),
			href:          c.Href(),
			path:          c.Path(),
			proto:         string(rc.Request.Header.Protocol()),
			host:          c.Host(),
			cookieA:       string(rc.Request.Header.Cookie("a")),
			cookieB:       string(rc.Request.Header.Cookie("b")),
			userAgent:     string(rc.UserAgent()),
			contentType:   string(rc.Request.Header.ContentType()),
			body:          string(c.Body()),
			contentLength: rc.Request.Header.ContentLength(),
			remote:        rc.RemoteAddr().String(),
			local:         rc.LocalAddr().String(),
			isTLS:         rc.IsTLS(),
		}
		for _, v := range rc.Request.Header.PeekAll("X-Multi") {
			s.multi = append(s.multi, string(v))
		}
		if st := rc.TLSConnectionState(); st != nil {
			s.alpn = st.NegotiatedProtocol
		}
		ch <- s
		rh := &rc.Response.Header
		rh.Add("X-Out", "1")
		rh.Add("X-Out", "2")
		rh.Add("Set-Cookie", "sid=xyz; Path=/; HttpOnly")
		rh.Add("Set-Cookie", "lang=en; Path=/")
		return c.JSON(202, map[string]string{"id": c.Param("id")})
	})
	return app, ch
}

// localAddrConn records the client side address of each connection.
func recordingClient(base *http.Client) (*http.Client, func() string) {
	var mu sync.Mutex
	var last string
	tr := base.Transport.(*http.Transport).Clone()
	dial := (&net.Dialer{}).DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err == nil {
			mu.Lock()
			last = c.LocalAddr().String()
			mu.Unlock()
		}
		return c, err
	}
	if base.Transport.(*http.Transport).TLSClientConfig != nil {
		tr.DialTLSContext = nil
	}
	return &http.Client{Transport: tr}, func() string { mu.Lock(); defer mu.Unlock(); return last }
}

func checkTranslation(t *testing.T, srvURL string, client *http.Client, clientAddr func() string, ch <-chan seen, wantProto, wantScheme string) {
	t.Helper()
	// A body of unknown length (chunked on HTTP/1.1, DATA frames on h2).
	body := io.MultiReader(strings.NewReader(`{"a":`), strings.NewReader(`1}`))
	req, _ := http.NewRequest("PATCH", srvURL+"/things/42?x=1&x=2", body)
	req.Header.Add("X-Multi", "one")
	req.Header.Add("X-Multi", "two")
	req.Header.Set("User-Agent", "fx-test/1")
	req.Header.Set("Content-Type", "application/json")
	req.AddCookie(&http.Cookie{Name: "a", Value: "1"})
	req.AddCookie(&http.Cookie{Name: "b", Value: "2"})
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, resp)
	s := kittest.Within(t, ch, "the handler")

	host := strings.TrimPrefix(strings.TrimPrefix(srvURL, "http://"), "https://")
	if s.method != "PATCH" || s.path != "/things/42" || s.href != wantScheme+"://"+host+"/things/42?x=1&x=2" || s.host != host {
		t.Errorf("request line: %+v", s)
	}
	if s.proto != wantProto {
		t.Errorf("protocol %q, want %q", s.proto, wantProto)
	}
	if strings.Join(s.multi, ",") != "one,two" {
		t.Errorf("multi-valued header: %q", s.multi)
	}
	if s.cookieA != "1" || s.cookieB != "2" || s.userAgent != "fx-test/1" || s.contentType != "application/json" {
		t.Errorf("special headers: %+v", s)
	}
	if s.body != `{"a":1}` || s.contentLength != 7 {
		t.Errorf("body %q, length %d", s.body, s.contentLength)
	}
	if s.local != host {
		t.Errorf("local address %q, want %q", s.local, host)
	}
	if s.remote != clientAddr() {
		t.Errorf("remote address %q, want the client's %q", s.remote, clientAddr())
	}
	if s.isTLS != (wantScheme == "https") {
		t.Errorf("IsTLS = %v", s.isTLS)
	}
	if wantProto == "HTTP/2.0" && s.alpn != "h2" {
		t.Errorf("TLS state ALPN %q, want h2", s.alpn)
	}

	if resp.StatusCode != 202 || got != `{"id":"42"}` || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("response: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	if v := resp.Header.Values("X-Out"); strings.Join(v, ",") != "1,2" {
		t.Errorf("multi-valued response header: %q", v)
	}
	cookies := resp.Cookies()
	if len(cookies) != 2 || cookies[0].Name != "sid" || cookies[0].Value != "xyz" || !cookies[0].HttpOnly || cookies[1].Name != "lang" {
		t.Errorf("cookies: %v", cookies)
	}
	if resp.Proto != wantProto {
		t.Errorf("response protocol %q", resp.Proto)
	}
}

func TestTranslationHTTP1(t *testing.T) {
	app, ch := translationApp(t)
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	client, addr := recordingClient(srv.Client())
	checkTranslation(t, srv.URL, client, addr, ch, "HTTP/1.1", "http")
}

func TestTranslationHTTP2OverTLS(t *testing.T) {
	app, ch := translationApp(t)
	srv := httptest.NewUnstartedServer(nethttp.Handler(app))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	client, addr := recordingClient(srv.Client())
	client.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	checkTranslation(t, srv.URL, client, addr, ch, "HTTP/2.0", "https")
}

// TestHTTP2Failures: the error paths over h2 — the 404 envelope, the 413
// of a streamed body over the limit, and the server still serving after.
func TestHTTP2Failures(t *testing.T) {
	app := quietApp(fx.Config{BodyLimit: 1024})
	hook := hookChan(app)
	app.Post("/up", func(c *fx.Ctx) error { return c.String(200, "got it") })
	srv := httptest.NewUnstartedServer(nethttp.Handler(app))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	client := srv.Client()

	resp, err := client.Get(srv.URL + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.ProtoMajor != 2 || resp.StatusCode != 404 ||
		body != `{"error":{"code":"FX_NOT_FOUND","message":"Route GET /nope not found"}}` {
		t.Fatalf("404 over h2: %s %d %q", resp.Proto, resp.StatusCode, body)
	}
	kittest.Within(t, hook, "the hook on 404")

	big := io.MultiReader(bytes.NewReader(make([]byte, 1000)), bytes.NewReader(make([]byte, 1000)))
	resp, err = client.Post(srv.URL+"/up", "application/octet-stream", big)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != 413 ||
		body != `{"error":{"code":"FX_PAYLOAD_TOO_LARGE","message":"The request body is larger than the server accepts"}}` {
		t.Fatalf("413 over h2: %d %q", resp.StatusCode, body)
	}
	if err := kittest.Within(t, hook, "the hook on 413"); err.(*fx.Error).Code != fx.ErrorCodes.PayloadTooLarge {
		t.Errorf("hook saw %v", err)
	}
	resp, err = client.Post(srv.URL+"/up", "text/plain", strings.NewReader("small"))
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != 200 || body != "got it" {
		t.Fatalf("after the 413: %d %q", resp.StatusCode, body)
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestBodyLimit(t *testing.T) {
	app := quietApp(fx.Config{BodyLimit: 100})
	called := 0
	app.Post("/", func(c *fx.Ctx) error { called++; return c.String(200, string(c.Body())) })
	h := nethttp.Handler(app)
	tooLarge := `{"error":{"code":"FX_PAYLOAD_TOO_LARGE","message":"The request body is larger than the server accepts"}}`

	t.Run("declared length over the limit is not read", func(t *testing.T) {
		body := &countingReader{r: bytes.NewReader(make([]byte, 5000))}
		req := httptest.NewRequest("POST", "/", body)
		req.ContentLength = 5000
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 413 || w.Body.String() != tooLarge || body.n != 0 {
			t.Fatalf("%d %q, read %d bytes", w.Code, w.Body, body.n)
		}
	})
	t.Run("unknown length is read up to limit+1", func(t *testing.T) {
		body := &countingReader{r: bytes.NewReader(make([]byte, 5000))}
		req := httptest.NewRequest("POST", "/", io.NopCloser(body))
		req.ContentLength = -1
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 413 || w.Body.String() != tooLarge || body.n > 101 {
			t.Fatalf("%d %q, read %d bytes", w.Code, w.Body, body.n)
		}
	})
	t.Run("exactly the limit passes", func(t *testing.T) {
		payload := strings.Repeat("x", 100)
		req := httptest.NewRequest("POST", "/", io.NopCloser(strings.NewReader(payload)))
		req.ContentLength = -1
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 || w.Body.String() != payload {
			t.Fatalf("%d %q", w.Code, w.Body)
		}
	})
	if called != 1 {
		t.Errorf("handler ran %d times, want only for the body within the limit", called)
	}
}

var errMidway = errors.New("disk on fire")

// failingBody yields some bytes, then fails.
type failingBody struct{ sent bool }

func (f *failingBody) Read(p []byte) (int, error) {
	if !f.sent {
		f.sent = true
		return copy(p, `{"partial":`), nil
	}
	return 0, errMidway
}

// TestBodyReadFailsMidway, through the handler directly: the client gets
// the 500 FX_NODE_INTERNAL_ERROR envelope and the hook the *AdapterError
// carrying the cause.
func TestBodyReadFailsMidway(t *testing.T) {
	app := quietApp()
	hook := hookChan(app)
	ran := false
	app.Post("/", func(c *fx.Ctx) error { ran = true; return nil })
	w := httptest.NewRecorder()
	nethttp.Handler(app).ServeHTTP(w, httptest.NewRequest("POST", "/", io.NopCloser(&failingBody{})))

	want := `{"error":{"code":"FX_NODE_INTERNAL_ERROR","message":"The request body could not be read"}}`
	if w.Code != 500 || w.Body.String() != want || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%d %q %q", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	if ran {
		t.Error("the handler ran on a body that could not be read")
	}
	raw := kittest.Within(t, hook, "the hook")
	ae, ok := raw.(*nethttp.AdapterError)
	if !ok || ae.Op != nethttp.OpReadBody || !errors.Is(ae, errMidway) {
		t.Fatalf("hook saw %T %v", raw, raw)
	}
	var fe *fx.Error
	if !errors.As(ae, &fe) || fe.Code != fx.ErrorCodes.NodeInternalError {
		t.Errorf("errors.As found %v", fe)
	}
}

// TestBodyReadFailsMidwayRealClient: an http.Client whose body reader
// fails after the first bytes aborts the request; the server sees a body
// it cannot read, reports it to the boundary, and keeps serving.
func TestBodyReadFailsMidwayRealClient(t *testing.T) {
	app := quietApp()
	hook := hookChan(app)
	app.Post("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "alive") })
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()

	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"partial":`)) // fails only once the server has stopped reading
		pw.CloseWithError(errMidway)
	}()
	req, _ := http.NewRequest("POST", srv.URL+"/", pr)
	if resp, err := srv.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the client sent a broken body and got %d", resp.StatusCode)
	}
	raw := kittest.Within(t, hook, "the hook")
	if ae, ok := raw.(*nethttp.AdapterError); !ok || ae.Op != nethttp.OpReadBody {
		t.Fatalf("hook saw %T %v", raw, raw)
	}
	stillAlive(t, srv, "after the broken upload")
}

// TestClientDisconnect: a handler bounded by nethttp.Context stops when
// the client goes away, on HTTP/1.1 and on HTTP/2.
func TestClientDisconnect(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		name := "HTTP/1.1"
		if h2 {
			name = "HTTP/2"
		}
		t.Run(name, func(t *testing.T) {
			app := quietApp()
			started := make(chan struct{})
			stopped := make(chan error, 1)
			app.Get("/slow", func(c *fx.Ctx) error {
				close(started)
				ctx := nethttp.Context(c)
				<-ctx.Done() // stands for a database call honouring ctx
				stopped <- ctx.Err()
				return ctx.Err()
			})
			app.Get("/", func(c *fx.Ctx) error { return c.String(200, "alive") })
			srv := httptest.NewUnstartedServer(nethttp.Handler(app))
			if h2 {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()

			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/slow", nil)
			done := make(chan error, 1)
			go func() {
				resp, err := srv.Client().Do(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			kittest.Within(t, started, "the handler to start")
			cancel()
			if err := kittest.Within(t, stopped, "the handler to see the client leave"); !errors.Is(err, context.Canceled) {
				t.Errorf("handler context ended with %v", err)
			}
			if err := kittest.Within(t, done, "the client"); !errors.Is(err, context.Canceled) {
				t.Errorf("client: %v", err)
			}
			stillAlive(t, srv, "after the disconnect")
		})
	}
}

// TestShutdownEndsTheRequestContext: the App's shutdown ends c.Context()
// of a request in flight under this adapter too, where its parent is the
// *http.Request's context, which the App does not own.
func TestShutdownEndsTheRequestContext(t *testing.T) {
	app := quietApp()
	started := make(chan struct{})
	stopped := make(chan error, 1)
	app.Get("/slow", func(c *fx.Ctx) error {
		close(started)
		select {
		case <-c.Context().Done():
			stopped <- c.Context().Err()
		case <-time.After(10 * time.Second):
			stopped <- errors.New("c.Context() did not end")
		}
		return c.String(200, "ended")
	})
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	done := make(chan error, 1)
	go func() {
		resp, err := srv.Client().Get(srv.URL + "/slow")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	kittest.Within(t, started, "the handler to start")
	if err := app.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := kittest.Within(t, stopped, "the handler to see the shutdown"); !errors.Is(err, context.Canceled) {
		t.Errorf("handler context: %v, want it canceled by the shutdown", err)
	}
	if err := kittest.Within(t, done, "the client"); err != nil {
		t.Errorf("client: %v", err)
	}
}

// TestGoneBeforeDispatch: a request whose client is already gone is not
// run.
func TestGoneBeforeDispatch(t *testing.T) {
	app := quietApp()
	ran := false
	app.Get("/", func(c *fx.Ctx) error { ran = true; return nil })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := httptest.NewRecorder()
	nethttp.Handler(app).ServeHTTP(w, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	if ran {
		t.Error("the handler ran for a client that had gone")
	}
}

// TestContextOnFasthttp: Context falls back to c.Context() off the
// adapter, and Request is nil there.
func TestContextOnFasthttp(t *testing.T) {
	app := quietApp()
	app.Get("/", func(c *fx.Ctx) error {
		if nethttp.Request(c) != nil {
			return errors.New("Request is not nil on fasthttp")
		}
		if nethttp.Context(c) != c.Context() {
			return errors.New("Context is not c.Context() on fasthttp")
		}
		return c.String(200, "ok")
	})
	resp, err := app.Test(httptest.NewRequest("GET", "/", nil))
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); body != "ok" {
		t.Fatal(body)
	}
}

// panickyBody panics on Read: a net/http middleware in front of the
// adapter could hand it such a body.
type panickyBody struct{}

var errPanicValue = errors.New("reader exploded")

func (panickyBody) Read([]byte) (int, error) { panic(errPanicValue) }

// TestAdapterPanic: a panic inside the adapter (here while reading the
// body) answers 500 FX_NODE_INTERNAL_ERROR over a real server, the hook
// sees the raw value inside the *AdapterError, and the server lives on.
func TestAdapterPanic(t *testing.T) {
	app := quietApp()
	hook := hookChan(app)
	app.Post("/", func(c *fx.Ctx) error { return c.String(200, "ok") })
	inner := nethttp.Handler(app)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Outer", "kept")
		if r.Header.Get("X-Explode") != "" {
			r.Body = io.NopCloser(panickyBody{})
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()

	req, _ := http.NewRequest("POST", srv.URL+"/", strings.NewReader("x"))
	req.Header.Set("X-Explode", "1")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"error":{"code":"FX_NODE_INTERNAL_ERROR","message":"The request could not be served"}}`
	if body := readAll(t, resp); resp.StatusCode != 500 || body != want || resp.Header.Get("X-Outer") != "kept" {
		t.Fatalf("%d %q %v", resp.StatusCode, body, resp.Header)
	}
	raw := kittest.Within(t, hook, "the hook")
	ae, ok := raw.(*nethttp.AdapterError)
	var pe *fx.PanicError
	if !ok || ae.Op != nethttp.OpServe || !errors.As(ae.Err, &pe) || pe.Value != errPanicValue {
		t.Fatalf("hook saw %T %v", raw, raw)
	}
	resp, err = srv.Client().Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); body != "ok" {
		t.Fatalf("after the panic: %q", body)
	}
}

// panickyWriter panics on the first body write, after the status went out.
type panickyWriter struct{ *httptest.ResponseRecorder }

func (panickyWriter) Write([]byte) (int, error) { panic("writer exploded") }

// TestPanicAfterCommit: once the status is sent the adapter cannot send an
// envelope; it aborts the response (http.ErrAbortHandler, which net/http
// handles quietly) and the hook still sees the failure.
func TestPanicAfterCommit(t *testing.T) {
	app := quietApp()
	hook := hookChan(app)
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "body") })
	w := panickyWriter{httptest.NewRecorder()}
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("ServeHTTP ended with %v, want http.ErrAbortHandler", p)
			}
		}()
		nethttp.Handler(app).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	}()
	raw := kittest.Within(t, hook, "the hook")
	var pe *fx.PanicError
	if ae, ok := raw.(*nethttp.AdapterError); !ok || !errors.As(ae, &pe) || pe.Value != "writer exploded" {
		t.Fatalf("hook saw %T %v", raw, raw)
	}
}

// streamPanic panics in the middle of a streamed response body.
type streamPanic struct{ n int }

func (s *streamPanic) Read(p []byte) (int, error) {
	if s.n > 0 {
		panic("stream exploded")
	}
	s.n++
	return copy(p, "first chunk"), nil
}

// TestStreamPanicRealServer: a response stream that panics half-way breaks
// the response the client reads (no silent truncation), and the server
// keeps serving.
func TestStreamPanicRealServer(t *testing.T) {
	app := quietApp()
	hook := hookChan(app)
	app.Get("/stream", func(c *fx.Ctx) error {
		c.RequestCtx().SetBodyStream(&streamPanic{}, -1)
		return nil
	})
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "alive") })
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/stream")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("the client read a complete response from a stream that panicked")
	}
	kittest.Within(t, hook, "the hook")
	stillAlive(t, srv, "after the broken stream")
}

// TestStreamedResponse: SetBodyStreamWriter output reaches the client
// chunk by chunk (each write is flushed): the handler waits for the client
// to have read the first chunk before it writes the second.
func TestStreamedResponse(t *testing.T) {
	app := quietApp()
	gotFirst := make(chan struct{})
	app.Get("/events", func(c *fx.Ctx) error {
		c.RequestCtx().SetContentType("text/event-stream")
		c.RequestCtx().SetBodyStreamWriter(func(w *bufio.Writer) {
			// Write errors mean the client left; the test then fails on its side.
			_, _ = w.WriteString("data: one\n\n")
			_ = w.Flush()
			select {
			case <-gotFirst:
			case <-time.After(10 * time.Second):
			}
			_, _ = w.WriteString("data: two\n\n")
		})
		return nil
	})
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "data: one\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(gotFirst)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ndata: two\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

// TestUntranslatableStatus: a status net/http cannot send as final (1xx)
// is a translation failure: 500 FX_NODE_INTERNAL_ERROR.
func TestUntranslatableStatus(t *testing.T) {
	app := quietApp()
	hook := hookChan(app)
	app.Get("/", func(c *fx.Ctx) error {
		c.SetHeader("X-Request-Id", "r1")
		return c.NoContent(150)
	})
	w := httptest.NewRecorder()
	nethttp.Handler(app).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	want := `{"error":{"code":"FX_NODE_INTERNAL_ERROR","message":"The response could not be sent"}}`
	if w.Code != 500 || w.Body.String() != want {
		t.Fatalf("%d %q", w.Code, w.Body)
	}
	if ae, ok := kittest.Within(t, hook, "the hook").(*nethttp.AdapterError); !ok || ae.Op != nethttp.OpWriteResponse {
		t.Fatalf("hook saw %v", ae)
	}
}

// TestServerHeaderAndHEAD: Config.ServerHeader is sent as fasthttp sends
// it, and HEAD gets the GET's Content-Length with no body.
func TestServerHeaderAndHEAD(t *testing.T) {
	app := quietApp(fx.Config{ServerHeader: "fx-test"})
	app.Get("/", func(c *fx.Ctx) error { return c.String(200, "12345") })
	w := httptest.NewRecorder()
	nethttp.Handler(app).ServeHTTP(w, httptest.NewRequest("HEAD", "/", nil))
	if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") != "5" || w.Header().Get("Server") != "fx-test" {
		t.Fatalf("%d %q %v", w.Code, w.Body, w.Header())
	}
}

// TestFailedBoot: an App whose boot failed answers its 500 through the
// adapter too.
func TestFailedBoot(t *testing.T) {
	app := quietApp()
	app.Route(fx.Route{Method: "GET", Path: "/x"})
	w := httptest.NewRecorder()
	nethttp.Handler(app).ServeHTTP(w, httptest.NewRequest("GET", "/x", nil))
	if w.Code != 500 || !strings.Contains(w.Body.String(), fx.ErrorCodes.RouteHandlerRequired) {
		t.Fatalf("%d %q", w.Code, w.Body)
	}
}

// Config.Compression under the adapter: the compressed body, its
// Content-Encoding, Content-Length and Vary reach the http.ResponseWriter,
// error envelopes included.
func TestCompressionThroughAdapter(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler), Compression: &fx.CompressionConfig{}})
	page := strings.Repeat(`{"id":1,"name":"a name","tags":["x","y"]},`, 100)
	app.Get("/page", func(c *fx.Ctx) error { return c.Send(200, "application/json", []byte(page)) })
	h := nethttp.Handler(app)
	long := "/nope/" + strings.Repeat("segment/", 150)
	for _, tc := range []struct {
		path, want string
		status     int
	}{
		{"/page", page, 200},
		{long, `{"error":{"code":"FX_NOT_FOUND","message":"Route GET ` + long + ` not found"}}`, 404},
	} {
		req := httptest.NewRequest("GET", tc.path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		res := rec.Result()
		b, _ := io.ReadAll(res.Body)
		if rec.Code != tc.status || res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" ||
			res.Header.Get("Content-Length") != strconv.Itoa(len(b)) {
			t.Fatalf("%.20s: %d %v (%d bytes)", tc.path, rec.Code, res.Header, len(b))
		}
		if got, err := fasthttp.AppendGunzipBytes(nil, b); err != nil || string(got) != tc.want {
			t.Errorf("%.20s: decodes to %.60q (%v), want %.60q", tc.path, got, err, tc.want)
		}
	}
}

// bothListeners serves app on fasthttp's listener (App.Serve on a loopback
// port) and on net/http's (an httptest.Server over Handler), and returns
// the base URL of each by listener name. Both are shut down with the test.
func bothListeners(t *testing.T, app *fx.App) map[string]string {
	t.Helper()
	addr := fxtest.Serve(t, app)
	std := httptest.NewServer(nethttp.Handler(app))
	t.Cleanup(std.Close)
	return map[string]string{"fasthttp": "http://" + addr, "nethttp": std.URL}
}

// envelopeCode returns the code of an error envelope body, or "" when
// the body is not exactly one (fxtest.CheckEnvelopeBody).
func envelopeCode(body string) string {
	env, _ := fxtest.CheckEnvelopeBody([]byte(body))
	return env.Code
}

// send posts body with contentType to url and returns the status and body.
func send(t *testing.T, url, contentType string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, readAll(t, resp)
}

// TestHeaderNameNotATokenOnNetHTTP: on the net/http listener a field name
// that is not a token ("X A: a") is refused by net/http itself, with 400
// and a closed connection, before fx sees the request (so the reply is
// net/http's plain text, not an envelope); the fasthttp listener's own
// refusal is pinned by the root package's TestFramingFieldNameBytes.
func TestHeaderNameNotATokenOnNetHTTP(t *testing.T) {
	app := quietApp()
	ran := false
	app.Get("/next", func(c *fx.Ctx) error { ran = true; return c.String(200, "next") })
	srv := httptest.NewServer(nethttp.Handler(app))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second)) // a bound, not an assertion
	_, _ = io.WriteString(conn, "GET /next HTTP/1.1\r\nHost: a\r\nX A: a\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || !resp.Close || ran {
		t.Fatalf("%d (close %v), handler ran %v: want net/http's 400 and a closed connection", resp.StatusCode, resp.Close, ran)
	}
}

// formOf builds a multipart form of n fields and returns its Content-Type
// and body.
func formOf(t *testing.T, n int) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for i := range n {
		if err := w.WriteField("f"+strconv.Itoa(i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.FormDataContentType(), buf.Bytes()
}

// formApp serves POST /ignore, which never reads its form, and POST /read,
// which answers the number of fields of its form (or the refusal).
func formApp(maxParts int) *fx.App {
	app := quietApp(fx.Config{MultipartMaxParts: maxParts})
	app.Post("/ignore", func(c *fx.Ctx) error { return c.String(200, "ran") })
	app.Post("/read", func(c *fx.Ctx) error {
		f, err := c.MultipartForm()
		if err != nil {
			return err
		}
		return c.String(200, strconv.Itoa(len(f.Value)))
	})
	return app
}

// TestMultipartPartLimitOnBothListeners: a form is parsed only when a
// handler reads it, and Config.MultipartMaxParts is then the only limit
// on its parts, the same on fasthttp's listener and on net/http's.
// mime/multipart's own cap of 1000 parts no longer decides: a route that
// never reads its form runs whatever the form holds, and MultipartMaxParts
// 5000 admits 2,000 parts.
func TestMultipartPartLimitOnBothListeners(t *testing.T) {
	t.Parallel() // its own Apps and servers; overlaps the tests that wait
	for _, tc := range []struct {
		maxParts, parts int
		route           string
		status          int
		want            string // the body on 200, the envelope's code otherwise
	}{
		{0, 1001, "/ignore", 200, "ran"},
		{0, 1001, "/read", 413, fx.ErrorCodes.PayloadTooLarge},
		{0, 1000, "/read", 200, "1000"},
		{5000, 2000, "/read", 200, "2000"},
		{5000, 2000, "/ignore", 200, "ran"},
		{5000, 5001, "/read", 413, fx.ErrorCodes.PayloadTooLarge},
		{1500, 1500, "/read", 200, "1500"},
		{1500, 1501, "/read", 413, fx.ErrorCodes.PayloadTooLarge},
	} {
		ct, body := formOf(t, tc.parts)
		for listener, base := range bothListeners(t, formApp(tc.maxParts)) {
			status, got := send(t, base+tc.route, ct, body)
			if tc.status != 200 {
				got = envelopeCode(got)
			}
			if status != tc.status || got != tc.want {
				t.Errorf("%s, MultipartMaxParts %d, %d parts to %s: %d %q, want %d %q",
					listener, tc.maxParts, tc.parts, tc.route, status, got, tc.status, tc.want)
			}
		}
	}
}

// Ctx.Stream and Ctx.SSE work under the adapter: the stream is copied to
// the http.ResponseWriter, flushed as written.
func TestStreamAndSSEThroughAdapter(t *testing.T) {
	app := fx.New()
	app.Get("/stream", func(c *fx.Ctx) error {
		return c.Stream("text/plain", func(w *bufio.Writer) error {
			w.WriteString("a")
			if err := w.Flush(); err != nil {
				return err
			}
			w.WriteString("b")
			return nil
		})
	})
	app.Get("/sse", func(c *fx.Ctx) error {
		return c.SSE(func(e *fx.EventWriter) error { return e.Send(fx.Event{Data: "hi"}) })
	})
	srv := httptest.NewServer(nethttp.Handler(app))
	defer srv.Close()
	for path, want := range map[string]string{"/stream": "ab", "/sse": "data: hi\n\n"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != want {
			t.Errorf("%s: %q %v", path, b, err)
		}
	}
}

type probeKey struct{}

// middleware.Timeout under the adapter: the deadline is set on a context
// derived from the *http.Request's (its values are visible), a handler that
// honours it gets the 504 envelope, and a client that goes away before the
// deadline still cancels it (context.Canceled, not a 504).
func TestTimeoutThroughAdapter(t *testing.T) {
	app := fx.New(fx.Config{Logger: slog.New(slog.DiscardHandler)})
	app.Use(middleware.Timeout(50 * time.Millisecond))
	gotCause := make(chan error, 1)
	app.Get("/q", func(c *fx.Ctx) error {
		if c.Context().Value(probeKey{}) != "from net/http" {
			return errors.New("c.Context() does not derive from the request's context")
		}
		<-c.Context().Done()
		gotCause <- c.Context().Err()
		return c.Context().Err()
	})
	h := nethttp.Handler(app)

	req := httptest.NewRequest("GET", "/q", nil)
	req = req.WithContext(context.WithValue(req.Context(), probeKey{}, "from net/http"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	want := `{"error":{"code":"FX_TIMEOUT","message":"The request was not handled in time"}}`
	if rec.Code != 504 || string(body) != want {
		t.Fatalf("got %d %q, want 504 %s", rec.Code, body, want)
	}
	if err := <-gotCause; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the handler saw %v, want DeadlineExceeded", err)
	}

	// The client leaves after 5ms: the request's context ends first.
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), probeKey{}, "from net/http"))
	time.AfterFunc(5*time.Millisecond, cancel)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/q", nil).WithContext(ctx))
	if err := <-gotCause; !errors.Is(err, context.Canceled) {
		t.Errorf("after the client left the handler saw %v, want Canceled", err)
	}
}
