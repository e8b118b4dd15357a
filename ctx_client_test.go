package fx_test

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// clientIPOf serves one GET / from peer with the given header lines
// (name, value pairs; a name may repeat) and returns c.ClientAddr() as a
// string, "" when it is the zero Addr.
func clientIPOf(t *testing.T, cfg fx.Config, peer string, hdr ...string) string {
	t.Helper()
	app := quiet(cfg)
	var got string
	app.Get("/", func(c *fx.Ctx) error {
		if a := c.ClientAddr(); a.IsValid() {
			got = a.String()
		}
		return c.NoContent(204)
	})
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort(peer)
	var req fasthttp.Request
	req.SetRequestURI("/")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	var rc fasthttp.RequestCtx
	rc.Init(&req, net.TCPAddrFromAddrPort(ap), nil)
	app.Handler()(&rc)
	if rc.Response.StatusCode() != 204 {
		t.Fatalf("status %d: %s", rc.Response.StatusCode(), rc.Response.Body())
	}
	return got
}

func TestClientIPNoTrustedProxiesIgnoresHeaders(t *testing.T) {
	got := clientIPOf(t, fx.Config{}, "198.51.100.9:4000",
		"X-Forwarded-For", "1.2.3.4", "Forwarded", "for=5.6.7.8", "X-Real-IP", "9.9.9.9")
	if got != "198.51.100.9" {
		t.Fatalf("ClientAddr = %q, want the peer: headers must not be trusted by default", got)
	}
}

func TestClientIPUntrustedPeerIgnoresHeaders(t *testing.T) {
	cfg := fx.Config{TrustedProxies: []string{"10.0.0.0/8"}}
	// A client connecting directly (not through the proxy) claims an address.
	got := clientIPOf(t, cfg, "203.0.113.5:1234", "X-Forwarded-For", "10.0.0.1, 1.2.3.4")
	if got != "203.0.113.5" {
		t.Fatalf("ClientAddr = %q, want the untrusted peer", got)
	}
}

// clientIPCase is a request from a trusted proxy at 10.0.0.2 with the
// headers hdr (name, value, ...), and the ClientIP it must give.
type clientIPCase struct {
	name string
	hdr  []string
	want string
}

// clientIPCases runs each case under cfg as a subtest.
func clientIPCases(t *testing.T, cfg fx.Config, cases []clientIPCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := clientIPOf(t, cfg, "10.0.0.2:80", tc.hdr...); got != tc.want {
				t.Fatalf("ClientIP = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClientIPXForwardedFor(t *testing.T) {
	cfg := fx.Config{TrustedProxies: []string{"10.0.0.0/8", "192.0.2.1"}}
	cases := []clientIPCase{
		{"one proxy", []string{"X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		// The client wrote 6.6.6.6 itself; the proxy appended the real peer.
		{"spoofed prefix", []string{"X-Forwarded-For", "6.6.6.6, 203.0.113.7"}, "203.0.113.7"},
		{"spoof in first line", []string{"X-Forwarded-For", "6.6.6.6", "X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
		{"chain of trusted", []string{"X-Forwarded-For", "6.6.6.6, 203.0.113.7, 192.0.2.1, 10.1.1.1"}, "203.0.113.7"},
		{"all trusted", []string{"X-Forwarded-For", "10.2.2.2, 10.3.3.3"}, "10.2.2.2"},
		{"no header", nil, "10.0.0.2"},
		{"empty elements", []string{"X-Forwarded-For", " , 203.0.113.7 ,, "}, "203.0.113.7"},
		{"port", []string{"X-Forwarded-For", "203.0.113.7:5555"}, "203.0.113.7"},
		{"ipv6", []string{"X-Forwarded-For", "2001:db8::1"}, "2001:db8::1"},
		{"ipv6 brackets port", []string{"X-Forwarded-For", "[2001:db8::1]:443"}, "2001:db8::1"},
		{"mapped", []string{"X-Forwarded-For", "::ffff:203.0.113.7"}, "203.0.113.7"},
		// Garbage appended by the trusted proxy: the proxy is the nearest known hop.
		{"unknown", []string{"X-Forwarded-For", "1.1.1.1, unknown"}, "10.0.0.2"},
		{"garbage", []string{"X-Forwarded-For", "1.1.1.1, 203.0.113.7<script>"}, "10.0.0.2"},
		{"zone", []string{"X-Forwarded-For", "fe80::1%eth0"}, "10.0.0.2"},
		{"v6 port without brackets", []string{"X-Forwarded-For", "2001:db8::1:443x"}, "10.0.0.2"},
		// Garbage left of the client is never read.
		{"garbage left", []string{"X-Forwarded-For", "not-an-ip, 203.0.113.7"}, "203.0.113.7"},
		// Forwarded is not the configured header: a client's Forwarded is ignored.
		{"forwarded ignored", []string{"Forwarded", "for=6.6.6.6", "X-Forwarded-For", "203.0.113.7"}, "203.0.113.7"},
	}
	clientIPCases(t, cfg, cases)
}

func TestClientIPForwarded(t *testing.T) {
	cfg := fx.Config{TrustedProxies: []string{"10.0.0.0/8", "2001:db8:ffff::/48"}, ClientIPHeader: "Forwarded"}
	cases := []clientIPCase{
		{"simple", []string{"Forwarded", "for=203.0.113.7"}, "203.0.113.7"},
		{"params", []string{"Forwarded", "for=203.0.113.7;proto=https;by=10.0.0.1"}, "203.0.113.7"},
		{"case", []string{"Forwarded", "For=203.0.113.7"}, "203.0.113.7"},
		{"quoted", []string{"Forwarded", `for="203.0.113.7"`}, "203.0.113.7"},
		{"quoted v6 port", []string{"Forwarded", `for="[2001:db8:cafe::17]:4711"`}, "2001:db8:cafe::17"},
		{"v4 port", []string{"Forwarded", `for="203.0.113.7:80"`}, "203.0.113.7"},
		{"spoofed left", []string{"Forwarded", "for=6.6.6.6, for=203.0.113.7"}, "203.0.113.7"},
		{"two lines", []string{"Forwarded", "for=6.6.6.6", "Forwarded", "for=203.0.113.7;proto=http"}, "203.0.113.7"},
		{"trusted chain", []string{"Forwarded", `for=203.0.113.7, for="[2001:db8:ffff::1]", for=10.9.9.9`}, "203.0.113.7"},
		{"comma in quotes", []string{"Forwarded", `for="6.6.6.6, for=1.1.1.1", for=203.0.113.7`}, "203.0.113.7"},
		{"unknown", []string{"Forwarded", "for=6.6.6.6, for=unknown"}, "10.0.0.2"},
		{"obfuscated", []string{"Forwarded", "for=_hidden"}, "10.0.0.2"},
		{"obfuscated port", []string{"Forwarded", `for="203.0.113.7:_p1"`}, "203.0.113.7"},
		{"no for", []string{"Forwarded", "for=6.6.6.6, proto=https"}, "10.0.0.2"},
		{"two for", []string{"Forwarded", "for=203.0.113.7;for=6.6.6.6"}, "10.0.0.2"},
		{"unbracketed v6", []string{"Forwarded", `for="2001:db8::5"`}, "2001:db8::5"},
		{"malformed pair", []string{"Forwarded", "for=6.6.6.6, for"}, "10.0.0.2"},
		{"junk after value", []string{"Forwarded", `for="203.0.113.7"x`}, "10.0.0.2"},
		// An unterminated quote by the client cannot swallow the proxy's entry
		// on another line; on the same line it makes the proxy's entry unusable.
		{"open quote other line", []string{"Forwarded", `for="6.6.6.6`, "Forwarded", "for=203.0.113.7"}, "203.0.113.7"},
		{"open quote same line", []string{"Forwarded", `for="6.6.6.6, for=203.0.113.7`}, "10.0.0.2"},
		{"xff ignored", []string{"X-Forwarded-For", "6.6.6.6", "Forwarded", "for=203.0.113.7"}, "203.0.113.7"},
		{"xff only", []string{"X-Forwarded-For", "6.6.6.6"}, "10.0.0.2"},
	}
	clientIPCases(t, cfg, cases)
}

func TestClientIPIPv6Peer(t *testing.T) {
	cfg := fx.Config{TrustedProxies: []string{"::1"}}
	if got := clientIPOf(t, cfg, "[::1]:80", "X-Forwarded-For", "2001:db8::9"); got != "2001:db8::9" {
		t.Fatalf("ClientAddr = %q", got)
	}
	if got := clientIPOf(t, cfg, "[::ffff:10.0.0.1]:80", "X-Forwarded-For", "2001:db8::9"); got != "10.0.0.1" {
		t.Fatalf("ClientAddr = %q, want the unmapped untrusted peer", got)
	}
}

// More hops than ClientAddr keeps: only the rightmost 16 are read, so a
// long header of trusted-looking padding ends at the 16th.
func TestClientIPLongChain(t *testing.T) {
	cfg := fx.Config{TrustedProxies: []string{"10.0.0.0/8"}}
	hops := []string{"203.0.113.7"}
	for range 40 {
		hops = append(hops, "10.0.0.3")
	}
	if got := clientIPOf(t, cfg, "10.0.0.2:80", "X-Forwarded-For", strings.Join(hops, ",")); got != "10.0.0.3" {
		t.Fatalf("ClientAddr = %q", got)
	}
}

func TestClientIPInvalidTrustedProxyFailsBoot(t *testing.T) {
	app := quiet(fx.Config{TrustedProxies: []string{"10.0.0.0/8", "10.0.0.0/33", "proxy.local"}})
	app.Get("/", func(c *fx.Ctx) error { return nil })
	err := app.Boot()
	var fe *fx.Error
	if err == nil || !errors.As(err, &fe) || fe.Code != fx.ErrorCodes.InternalError {
		t.Fatalf("Boot = %v, want FX_INTERNAL_ERROR config errors", err)
	}
	for _, s := range []string{"10.0.0.0/33", "proxy.local"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Boot error %q does not name %q", err, s)
		}
	}
	if strings.Contains(err.Error(), `"10.0.0.0/8"`) {
		t.Errorf("Boot error names the valid entry: %v", err)
	}
}

func BenchmarkClientAddr(b *testing.B) {
	app := quiet(fx.Config{TrustedProxies: []string{"10.0.0.0/8"}})
	var sink netip.Addr
	app.Get("/", func(c *fx.Ctx) error { sink = c.ClientAddr(); return nil })
	h := app.Handler()
	var req fasthttp.Request
	req.SetRequestURI("/")
	req.Header.Add("X-Forwarded-For", "6.6.6.6, 203.0.113.7, 10.1.1.1")
	var rc fasthttp.RequestCtx
	rc.Init(&req, net.TCPAddrFromAddrPort(netip.MustParseAddrPort("10.0.0.2:80")), nil)
	b.ReportAllocs()
	for b.Loop() {
		h(&rc)
	}
	if sink.String() != "203.0.113.7" {
		b.Fatal(sink)
	}
}
