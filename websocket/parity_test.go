package websocket_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/nethttp"
	"github.com/fxhq/fx/websocket"
)

// longCode is an error code of 124 bytes, two-byte runes after "APP_":
// as a close reason it would make a 126-byte close payload.
var longCode = "APP_" + strings.Repeat("é", 60)

// parityHandler reads until the peer's message names an outcome; a
// read's failure is returned as it is, as handlers commonly do.
func parityHandler(c *websocket.Conn) error {
	for {
		typ, p, err := c.ReadMessage()
		if err != nil {
			return err
		}
		switch string(p) {
		case "forbid":
			return fx.NewCatalogError(fx.ErrorCodes.Forbidden, "no")
		case "panic":
			panic("boom")
		case "long":
			return fx.NewError(403, longCode, "a long code")
		}
		if err := c.WriteMessage(typ, p); err != nil {
			return nil
		}
	}
}

// parityObserved is what the App's observer saw of one request.
type parityObserved struct {
	status  int
	code    string
	wsClose any
}

// parityTransport is one transport serving the parity App.
type parityTransport struct {
	addr string
	seen chan parityObserved
	logs *kittest.LogBuffer
}

// parityApp is the App both transports serve: a WebSocket route on GET
// and, to test the method check, on POST; one with subprotocols.
func parityApp() (*fx.App, chan parityObserved, *kittest.LogBuffer) {
	logs := &kittest.LogBuffer{}
	app := fx.New(fx.Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	seen := make(chan parityObserved, 4)
	app.OnResponse(func(c *fx.Ctx) {
		o := parityObserved{status: c.Status(), code: c.ErrorCode()}
		for _, a := range c.LogAttrs() {
			if a.Key == "ws_close_code" {
				o.wsClose = a.Value.Any()
			}
		}
		seen <- o
	})
	app.Get("/ws", websocket.New(parityHandler))
	app.Post("/ws", websocket.New(parityHandler))
	app.Get("/sub", websocket.New(parityHandler, websocket.Config{Subprotocols: []string{"a", "b"}}))
	return app, seen, logs
}

// parityTransports serves one parity App on fasthttp (fxtest.Serve) and
// another through the nethttp adapter (net/http's server).
func parityTransports(t *testing.T) map[string]*parityTransport {
	app, seen, logs := parityApp()
	fast := &parityTransport{addr: fxtest.Serve(t, app), seen: seen, logs: logs}
	app2, seen2, logs2 := parityApp()
	srv := httptest.NewServer(nethttp.Handler(app2))
	t.Cleanup(func() {
		_ = app2.Shutdown()
		srv.Close()
	})
	return map[string]*parityTransport{
		"fasthttp": fast,
		"nethttp":  {addr: strings.TrimPrefix(srv.URL, "http://"), seen: seen2, logs: logs2},
	}
}

// parityCase is one handshake and, when it is upgraded, what the client
// sends and the close it must get.
type parityCase struct {
	name                string
	method, path, proto string            // default GET /ws HTTP/1.1
	hdr                 map[string]string // over handshake(); "" deletes; {addr} is the server's
	status              int
	code                string // the refusal's code, or the code observers see after a 101
	sub                 string // the subprotocol the 101 names
	frames              [][]byte
	close               int    // the close code the server sends, and ws_close_code the observers see
	reason              string // its reason (not checked for 1002: the detail of the protocol error)
	logged              bool   // logged as a server failure
}

// A WebSocket route answers the same on both transports: every refusal
// before the upgrade (a POST or an HTTP/1.0 handshake is 400, not 500),
// the subprotocol in the order of Config.Subprotocols, and after the
// upgrade the close frame, what the observers see (the error code of a
// 4403 and of a panic's 1011) and what is logged. A client's protocol
// error (a reserved bit, a close frame of one byte) is closed with 1002,
// observed as the client's FX_BAD_REQUEST with the code on the wire, and
// not logged as a server failure; a close reason is cut to fit the
// 125-byte control frame at a UTF-8 boundary.
func TestBothTransportsAnswerAlike(t *testing.T) {
	rsv1 := frame(0x1, []byte("hi"))
	rsv1[0] |= 0x40
	cases := []parityCase{
		{name: "not a handshake", hdr: map[string]string{"Upgrade": "", "Connection": ""}, status: 426, code: "FX_UPGRADE_REQUIRED"},
		{name: "POST handshake", method: "POST", status: 400, code: "FX_BAD_REQUEST"},
		{name: "HTTP/1.0 handshake", proto: "HTTP/1.0", status: 400, code: "FX_BAD_REQUEST"},
		{name: "version 8", hdr: map[string]string{"Sec-WebSocket-Version": "8"}, status: 400, code: "FX_BAD_REQUEST"},
		{name: "foreign Origin", hdr: map[string]string{"Origin": "http://evil.example"}, status: 403, code: "FX_FORBIDDEN"},
		{name: "https Origin on plain HTTP", hdr: map[string]string{"Origin": "https://{addr}"}, status: 403, code: "FX_FORBIDDEN"},
		{name: "own Origin", hdr: map[string]string{"Origin": "http://{addr}"}, status: 101,
			frames: [][]byte{closeFrame(1000)}, close: 1000},
		{name: "subprotocol by the config's preference", path: "/sub", hdr: map[string]string{"Sec-WebSocket-Protocol": "b, a"},
			status: 101, sub: "a", frames: [][]byte{closeFrame(1000)}, close: 1000},
		{name: "error outcome", status: 101, frames: [][]byte{frame(0x1, []byte("forbid"))},
			close: 4403, reason: "FX_FORBIDDEN", code: "FX_FORBIDDEN"},
		{name: "panic", status: 101, frames: [][]byte{frame(0x1, []byte("panic"))},
			close: 1011, reason: "FX_INTERNAL_ERROR", code: "FX_INTERNAL_ERROR", logged: true},
		{name: "RSV1 set", status: 101, frames: [][]byte{rsv1}, close: 1002, code: "FX_BAD_REQUEST"},
		{name: "unmasked frame", status: 101, frames: [][]byte{{0x81, 0x02, 'h', 'i'}}, close: 1002, code: "FX_BAD_REQUEST"},
		{name: "close frame of one byte", status: 101, frames: [][]byte{frame(0x8, []byte{0x03})}, close: 1002, code: "FX_BAD_REQUEST"},
		{name: "close reason over 123 bytes", status: 101, frames: [][]byte{frame(0x1, []byte("long"))},
			close: 4403, reason: "APP_" + strings.Repeat("é", 59), code: longCode},
	}
	transports := parityTransports(t)
	got := map[string]map[string]string{}
	for _, name := range []string{"fasthttp", "nethttp"} {
		tr := transports[name]
		got[name] = map[string]string{}
		for _, tc := range cases {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				got[name][tc.name] = tr.run(t, tc)
			})
		}
	}
	for _, tc := range cases {
		if f, n := got["fasthttp"][tc.name], got["nethttp"][tc.name]; f != n {
			t.Errorf("%s: fasthttp %s; nethttp %s", tc.name, f, n)
		}
	}
}

// run sends tc's handshake (and frames) to tr and checks the answer; it
// returns a summary of what it saw, to compare the transports.
func (tr *parityTransport) run(t *testing.T, tc parityCase) string {
	t.Helper()
	failures := func() int { return len(tr.logs.Lines(`"msg":"fx: request failed"`)) }
	before := failures()
	hdr := handshake()
	for k, v := range tc.hdr {
		if v == "" {
			delete(hdr, k)
		} else {
			hdr[k] = strings.ReplaceAll(v, "{addr}", tr.addr)
		}
	}
	method, path, proto := tc.method, tc.path, tc.proto
	if method == "" {
		method = "GET"
	}
	if path == "" {
		path = "/ws"
	}
	if proto == "" {
		proto = "HTTP/1.1"
	}
	var req strings.Builder
	req.WriteString(method + " " + path + " " + proto + "\r\nHost: " + tr.addr + "\r\n")
	for k, v := range hdr {
		req.WriteString(k + ": " + v + "\r\n")
	}
	if method == "POST" {
		req.WriteString("Content-Length: 0\r\n")
	}
	req.WriteString("\r\n")
	nc, err := net.DialTimeout("tcp", tr.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := nc.Write([]byte(req.String())); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if resp.StatusCode != tc.status {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d %s; want %d", resp.StatusCode, b, tc.status)
	}
	summary := resp.Status
	if tc.status != 101 {
		var env struct {
			Error struct{ Code string } `json:"error"`
		}
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &env); err != nil || env.Error.Code != tc.code {
			t.Errorf("body %s; want the %s envelope", b, tc.code)
		}
		o := kittest.Within(t, tr.seen, "the refusal's observation")
		if o.status != tc.status || o.code != tc.code {
			t.Errorf("observed %d %q; want %d %q", o.status, o.code, tc.status, tc.code)
		}
		return summary + " " + env.Error.Code
	}
	if s := resp.Header.Get("Sec-WebSocket-Protocol"); s != tc.sub {
		t.Errorf("subprotocol %q; want %q", s, tc.sub)
	}
	rc := &rawConn{Conn: nc, br: br}
	for _, f := range tc.frames {
		if _, err := nc.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	code, reason, n := 0, "", 0
	for {
		op, p, err := rc.next()
		if err != nil {
			t.Fatalf("no close frame: %v", err)
		}
		if op != 0x8 {
			continue
		}
		n = len(p)
		if n >= 2 {
			code, reason = int(binary.BigEndian.Uint16(p)), string(p[2:])
		}
		_, _ = nc.Write(closeFrame(code))
		break
	}
	if code != tc.close || tc.close != 1002 && reason != tc.reason {
		t.Errorf("close %d %q; want %d %q", code, reason, tc.close, tc.reason)
	}
	if n > 125 || !utf8.ValidString(reason) {
		t.Errorf("close payload of %d bytes, reason %q; want at most 125 bytes of UTF-8", n, reason)
	}
	o := kittest.Within(t, tr.seen, "the connection's observation")
	if o.status != 101 || o.code != tc.code || o.wsClose != int64(tc.close) {
		t.Errorf("observed %d %q ws_close_code %v; want 101 %q %d", o.status, o.code, o.wsClose, tc.code, tc.close)
	}
	if logged := failures() > before; logged != tc.logged {
		t.Errorf("logged as a server failure: %v; want %v (%q)", logged, tc.logged, tr.logs.Lines(`"level":"ERROR"`))
	}
	return fmt.Sprintf("%s %q close %d %q observed %q %v", summary, resp.Header.Get("Sec-WebSocket-Protocol"), code, reason, o.code, o.wsClose)
}

// Shutdown closes an open connection with 1001 on both transports, and
// returns once its handler has returned; through nethttp the request's
// ServeHTTP returns with the connection.
func TestShutdownSends1001OnBothTransports(t *testing.T) {
	for _, name := range []string{"fasthttp", "nethttp"} {
		t.Run(name, func(t *testing.T) {
			app := fx.New()
			app.Get("/ws", websocket.New(parityHandler, websocket.Config{CloseTimeout: time.Second}))
			var addr string
			served := make(chan struct{})
			if name == "fasthttp" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				go func() { _ = app.Serve(ln); close(served) }()
				addr = ln.Addr().String()
			} else {
				h := nethttp.Handler(app)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(w, r)
					close(served) // the one request: its ServeHTTP returned
				}))
				defer srv.Close()
				addr = strings.TrimPrefix(srv.URL, "http://")
			}
			c, err := rawDial(addr, "/ws")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.send("hi")
			if _, p, err := c.next(); err != nil || string(p) != "hi" {
				t.Fatalf("echo: %q %v", p, err)
			}
			shut := make(chan error, 1)
			go func() { shut <- app.Shutdown() }()
			if code, err := c.awaitClose(); err != nil || code != 1001 {
				t.Fatalf("close %d, %v; want 1001", code, err)
			}
			if err := kittest.Within(t, shut, "Shutdown"); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			kittest.Within(t, served, "the server's (or the request's) end")
		})
	}
}
