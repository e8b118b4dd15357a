package websocket_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/middleware"
	"github.com/fxhq/fx/middleware/ratelimit"
	"github.com/fxhq/fx/nethttp"
	"github.com/fxhq/fx/websocket"
	gws "github.com/gorilla/websocket"
)

// echo sends every message back until the peer sends "bye" (a normal
// close, 1000).
var echo = echoUntil("bye", nil)

// echoUntil is a handler that sends every message back as it came until
// the peer sends last, then returns end.
func echoUntil(last string, end error) func(c *websocket.Conn) error {
	return func(c *websocket.Conn) error {
		for {
			typ, p, err := c.ReadMessage()
			if err != nil {
				return nil // the peer left
			}
			if string(p) == last {
				return end
			}
			if err := c.WriteMessage(typ, p); err != nil {
				return nil
			}
		}
	}
}

// Before the upgrade: what is not a handshake is 426 with Upgrade:
// websocket, a malformed one 400, a foreign Origin 403, each an envelope.
func TestRefusalsBeforeTheUpgradeAreEnvelopes(t *testing.T) {
	s := serve(t, func(app *fx.App) {
		app.Get("/ws", websocket.New(echo))
		app.Get("/open", websocket.New(echo, websocket.Config{Origins: []string{"https://app.example"}}))
	})
	status, hdr, body := s.get(t, "/ws", nil)
	if status != 426 || hdr.Get("Upgrade") != "websocket" || !strings.Contains(body, `"code":"FX_UPGRADE_REQUIRED"`) {
		t.Errorf("plain GET: %d Upgrade=%q %s; want 426 FX_UPGRADE_REQUIRED with Upgrade: websocket", status, hdr.Get("Upgrade"), body)
	}
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Errorf("426 Content-Type %q", ct)
	}
	bad := []struct {
		name string
		edit func(h map[string]string)
	}{
		{"version 8", func(h map[string]string) { h["Sec-WebSocket-Version"] = "8" }},
		{"no key", func(h map[string]string) { delete(h, "Sec-WebSocket-Key") }},
		{"short key", func(h map[string]string) { h["Sec-WebSocket-Key"] = "c2hvcnQ=" }},
		{"key not base64", func(h map[string]string) { h["Sec-WebSocket-Key"] = "!!!!!!!!!!!!!!!!!!!!!!!!" }},
	}
	for _, b := range bad {
		h := handshake()
		b.edit(h)
		status, _, body := s.get(t, "/ws", h)
		if status != 400 || !strings.Contains(body, `"code":"FX_BAD_REQUEST"`) {
			t.Errorf("%s: %d %s; want 400 FX_BAD_REQUEST", b.name, status, body)
		}
	}
	// Cross-site WebSocket hijacking: a page of another site.
	h := handshake()
	h["Origin"] = "https://evil.example"
	if status, _, body := s.get(t, "/ws", h); status != 403 || !strings.Contains(body, `"code":"FX_FORBIDDEN"`) {
		t.Errorf("foreign Origin: %d %s; want 403 FX_FORBIDDEN", status, body)
	}
	// The request's own host is allowed by default.
	c := s.dial(t, "/ws", http.Header{"Origin": {"http://" + s.addr}})
	c.Close()
	// Config.Origins replaces the default.
	h["Origin"] = "http://" + s.addr
	if status, _, _ := s.get(t, "/open", h); status != 403 {
		t.Errorf("own host on a route whose Origins do not list it: %d; want 403", status)
	}
	c = s.dial(t, "/open", http.Header{"Origin": {"https://APP.example"}})
	c.Close()
}

// Middleware runs before the upgrade and its refusals are envelopes; the
// principal and tenant it resolved stay readable on the Conn.
func TestMiddlewareRunsBeforeTheUpgrade(t *testing.T) {
	keys, err := middleware.NewAPIKeys(map[string]middleware.Principal{"k-ada-0123456789abcdef": {Subject: "ada"}})
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, func(app *fx.App) {
		app.Use(middleware.CORS(middleware.CORSConfig{AllowOrigins: []string{"https://app.example"}}))
		g := app.Group("/t")
		g.Use(middleware.Auth(middleware.AuthConfig{APIKeys: keys}))
		g.Use(middleware.Tenant(middleware.TenantConfig{Required: true}))
		g.Use(ratelimit.New(ratelimit.Config{Limit: ratelimit.Limit{Requests: 1, Period: time.Minute}}))
		g.Get("/ws", websocket.New(func(c *websocket.Conn) error {
			p, _ := middleware.PrincipalFrom(c.Ctx())
			tenant, _ := middleware.TenantFrom(c.Ctx())
			return c.WriteMessage(websocket.TextMessage, []byte(p.Subject+"@"+tenant))
		}, websocket.Config{Origins: []string{"https://app.example"}}))
	})
	h := handshake()
	if status, _, body := s.get(t, "/t/ws", h); status != 401 || !strings.Contains(body, "FX_UNAUTHENTICATED") {
		t.Errorf("no key: %d %s; want 401 FX_UNAUTHENTICATED", status, body)
	}
	h["X-API-Key"] = "k-ada-0123456789abcdef"
	if status, _, body := s.get(t, "/t/ws", h); status != 400 || !strings.Contains(body, "FX_TENANT_REQUIRED") {
		t.Errorf("no tenant: %d %s; want 400 FX_TENANT_REQUIRED", status, body)
	}
	hdr := http.Header{"X-Api-Key": {"k-ada-0123456789abcdef"}, "X-Tenant-Id": {"acme"}, "Origin": {"https://app.example"}}
	c := s.dial(t, "/t/ws", hdr)
	_, p, err := c.ReadMessage()
	if err != nil || string(p) != "ada@acme" {
		t.Fatalf("principal and tenant on the Conn: %q, %v; want ada@acme", p, err)
	}
	if code, _ := closeOf(t, c); code != 1000 {
		t.Errorf("close %d; want 1000", code)
	}
	// The rate limit counts the upgrade as a request: the second is 429.
	status, hd, body := s.get(t, "/t/ws", map[string]string{"X-API-Key": "k-ada-0123456789abcdef", "X-Tenant-ID": "acme",
		"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
	if status != 429 || !strings.Contains(body, "FX_RATE_LIMITED") || hd.Get("Retry-After") == "" {
		t.Errorf("second upgrade: %d %s; want 429 FX_RATE_LIMITED", status, body)
	}
}

// After the upgrade, the handler's outcome is the close frame.
func TestOutcomeIsTheCloseFrame(t *testing.T) {
	errSlow := fx.NewError(429, "APP_SLOW_DOWN", "slow down")
	s := serve(t, func(app *fx.App) {
		app.Get("/nil", websocket.New(func(c *websocket.Conn) error { return nil }))
		app.Get("/err", websocket.New(func(c *websocket.Conn) error { return errSlow }))
		app.Get("/forbidden", websocket.New(func(c *websocket.Conn) error {
			return fx.NewCatalogError(fx.ErrorCodes.Forbidden, "no")
		}))
		app.Get("/plain", websocket.New(func(c *websocket.Conn) error { return errors.New("database down") }))
		app.Get("/panic", websocket.New(func(c *websocket.Conn) error { panic("boom") }))
		app.Get("/echo", websocket.New(echo, websocket.Config{ReadLimit: 16}))
	})
	cases := []struct {
		path   string
		code   int
		reason string
	}{
		{"/nil", 1000, ""},
		{"/err", 4429, "APP_SLOW_DOWN"},
		{"/forbidden", 4403, "FX_FORBIDDEN"},
		{"/plain", 1011, "FX_INTERNAL_ERROR"},
		{"/panic", 1011, "FX_INTERNAL_ERROR"},
	}
	for _, tc := range cases {
		c := s.dial(t, tc.path, nil)
		code, reason := closeOf(t, c)
		if code != tc.code || reason != tc.reason {
			t.Errorf("%s: close %d %q; want %d %q", tc.path, code, reason, tc.code, tc.reason)
		}
	}
	// A panic and a plain error are logged like a 5xx; an *fx.Error under
	// 500 is not.
	deadline := time.Now().Add(5 * time.Second)
	for len(s.logs.Lines(`"msg":"fx: request failed"`)) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	lines := s.logs.Lines(`"msg":"fx: request failed"`)
	if len(lines) != 2 || !strings.Contains(strings.Join(lines, ""), "boom") ||
		!strings.Contains(strings.Join(lines, ""), "database down") || !strings.Contains(lines[0], `"level":"ERROR"`) {
		t.Errorf("failure log lines: %q", lines)
	}
	// Over the read limit: 1009.
	c := s.dial(t, "/echo", nil)
	if err := c.WriteMessage(gws.TextMessage, []byte(strings.Repeat("x", 17))); err != nil {
		t.Fatal(err)
	}
	if code, _ := closeOf(t, c); code != 1009 {
		t.Errorf("over the read limit: close %d; want 1009", code)
	}
	// Invalid UTF-8 in a text message: 1007.
	c = s.dial(t, "/echo", nil)
	if err := c.WriteMessage(gws.TextMessage, []byte{0xff, 0xfe}); err != nil {
		t.Fatal(err)
	}
	if code, _ := closeOf(t, c); code != 1007 {
		t.Errorf("invalid UTF-8: close %d; want 1007", code)
	}
	// Echo works, binary included, and the last message before "bye" is
	// delivered before the close frame.
	c = s.dial(t, "/echo", nil)
	for _, m := range []struct {
		typ int
		p   string
	}{{gws.TextMessage, "héllo"}, {gws.BinaryMessage, "\x00\x01"}} {
		if err := c.WriteMessage(m.typ, []byte(m.p)); err != nil {
			t.Fatal(err)
		}
		typ, p, err := c.ReadMessage()
		if err != nil || typ != m.typ || string(p) != m.p {
			t.Fatalf("echo: %d %q %v", typ, p, err)
		}
	}
	_ = c.WriteMessage(gws.TextMessage, []byte("bye"))
	if code, _ := closeOf(t, c); code != 1000 {
		t.Errorf("after bye: close %d; want 1000", code)
	}
}

// The peer's close ends the handler's read with a *CloseError carrying
// the peer's code.
func TestPeerCloseEndsTheRead(t *testing.T) {
	got := make(chan error, 1)
	s := serve(t, func(app *fx.App) {
		app.Get("/ws", websocket.New(func(c *websocket.Conn) error {
			_, _, err := c.ReadMessage()
			got <- err
			return nil
		}))
	})
	c := s.dial(t, "/ws", nil)
	_ = c.WriteMessage(gws.CloseMessage, gws.FormatCloseMessage(4100, "done"))
	select {
	case err := <-got:
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != 4100 || ce.Text != "done" {
			t.Errorf("read after the peer's close: %v; want a CloseError 4100 done", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's read did not end")
	}
}

// Frames a client sends right behind its handshake, before the 101
// comes back, reach the handler whole and in order: the server's read
// buffer already holds them when the connection is handed over, and
// the handler reads them first (one larger than the connection's read
// buffer among them).
func TestFramesSentWithTheHandshakeAreRead(t *testing.T) {
	s := serve(t, func(app *fx.App) {
		app.Get("/ws", websocket.New(echo))
	})
	msgs := []string{"one", strings.Repeat("x", 3000), "three"}
	var frames [][]byte
	for _, m := range msgs {
		frames = append(frames, frame(0x1, []byte(m)))
	}
	c, err := rawDial(s.addr, "/ws", frames...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, want := range msgs {
		op, p, err := c.next()
		if err != nil || op != 0x1 || string(p) != want {
			t.Fatalf("echo: op %d, %d bytes %.20q, %v; want the text %.20q (%d bytes)", op, len(p), p, err, want, len(want))
		}
	}
}

// Under the nethttp adapter the connection is hijacked through
// http.Hijacker and the contract holds; where the ResponseWriter cannot
// be hijacked, the answer is a clear envelope.
func TestNetHTTPAdapter(t *testing.T) {
	app := fx.New()
	app.Get("/ws", websocket.New(func(c *websocket.Conn) error {
		t, p, err := c.ReadMessage()
		if err != nil {
			return nil
		}
		if err := c.WriteMessage(t, p); err != nil {
			return nil
		}
		return fx.NewCatalogError(fx.ErrorCodes.Forbidden, "enough")
	}))
	h := nethttp.Handler(app)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer app.Shutdown()
	addr := strings.TrimPrefix(srv.URL, "http://")
	c, _, err := gws.DefaultDialer.Dial("ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatalf("dial through nethttp: %v", err)
	}
	defer c.Close()
	_ = c.WriteMessage(gws.TextMessage, []byte("hi"))
	if _, p, err := c.ReadMessage(); err != nil || string(p) != "hi" {
		t.Fatalf("echo through nethttp: %q %v", p, err)
	}
	if code, reason := closeOf(t, c); code != 4403 || reason != "FX_FORBIDDEN" {
		t.Errorf("close through nethttp: %d %q; want 4403 FX_FORBIDDEN", code, reason)
	}
	s := &served{addr: addr}
	if status, hdr, body := s.get(t, "/ws", nil); status != 426 || hdr.Get("Upgrade") != "websocket" || !strings.Contains(body, "FX_UPGRADE_REQUIRED") {
		t.Errorf("plain GET through nethttp: %d %q %s", status, hdr.Get("Upgrade"), body)
	}
	hidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(struct{ http.ResponseWriter }{w}, r) // no http.Hijacker
	}))
	defer hidden.Close()
	s = &served{addr: strings.TrimPrefix(hidden.URL, "http://")}
	if status, _, body := s.get(t, "/ws", handshake()); status != 500 || !strings.Contains(body, `"code":"FX_NODE_INTERNAL_ERROR"`) || !strings.Contains(body, "Hijacker") {
		t.Errorf("unhijackable writer: %d %s; want the 500 envelope saying why", status, body)
	}
}

// The default Origin check compares the Origin with the request's own
// Host header, which the client chooses: a page under a DNS name rebound
// to the server (Host: evil.example, Origin: http://evil.example) passes
// it. Config.Origins does not look at the Host header and refuses it.
func TestDefaultOriginCheckTrustsTheHostHeader(t *testing.T) {
	s := serve(t, func(app *fx.App) {
		app.Get("/ws", websocket.New(echo))
		app.Get("/listed", websocket.New(echo, websocket.Config{Origins: []string{"https://app.example"}}))
	})
	rebound := func(path string) int {
		req, _ := http.NewRequest("GET", "http://"+s.addr+path, nil)
		req.Host = "evil.example"
		for k, v := range handshake() {
			req.Header.Set(k, v)
		}
		req.Header.Set("Origin", "http://evil.example")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := rebound("/ws"); status != 101 {
		t.Errorf("rebound name, default check: %d; want 101 (the documented weakness)", status)
	}
	if status := rebound("/listed"); status != 403 {
		t.Errorf("rebound name, Config.Origins: %d; want 403", status)
	}
}
