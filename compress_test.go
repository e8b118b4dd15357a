package fx_test

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/fxhq/fx"
	_ "github.com/fxhq/fx/compression/brotli" // this test binary offers every coding
	_ "github.com/fxhq/fx/compression/zstd"
	"github.com/valyala/fasthttp"
)

// jsonBody is a JSON body of about n bytes that compresses like real API
// output: repeated keys, varied values.
func jsonBody(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := []byte(`{"items":[`)
	for i := 0; len(b) < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":%d,"name":"user-%d","email":"u%d@example.com","score":%.3f,"active":%t}`,
			i, r.IntN(100000), r.IntN(100000), r.Float64()*100, r.IntN(2) == 0)
	}
	return append(b, "]}"...)
}

// compressedApp is an App with Config.Compression set to cfg, serving
// GET /json (a JSON body of the size in ?n=) and whatever routes add.
func compressedApp(t *testing.T, cfg fx.CompressionConfig, routes ...func(*fx.App)) *fx.App {
	t.Helper()
	app := quiet(fx.Config{Compression: &cfg})
	app.Get("/json", func(c *fx.Ctx) error {
		n, _ := strconv.Atoi(c.Query("n"))
		return c.Send(200, "application/json", jsonBody(n))
	})
	for _, r := range routes {
		r(app)
	}
	if err := app.Boot(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Shutdown() })
	return app
}

// fetch sends method target with the Accept-Encoding values given (each
// its own header line) and returns the response with its body as sent.
func fetch(t *testing.T, app *fx.App, method, target string, acceptEncoding ...string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for _, v := range acceptEncoding {
		req.Header.Add("Accept-Encoding", v)
	}
	resp, err := app.Test(req) // reads the raw response: nothing is decompressed for us
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	b := make([]byte, 0, 1024)
	buf := bufio.NewReader(resp.Body)
	for {
		c, err := buf.ReadByte()
		if err != nil {
			break
		}
		b = append(b, c)
	}
	if method != "HEAD" && resp.ContentLength >= 0 && int(resp.ContentLength) != len(b) {
		t.Errorf("%s %s: Content-Length %d, body %d bytes", method, target, resp.ContentLength, len(b))
	}
	return resp, b
}

// decode undoes the response's Content-Encoding.
func decode(t *testing.T, resp *http.Response, b []byte) []byte {
	t.Helper()
	var out []byte
	var err error
	switch ce := resp.Header.Get("Content-Encoding"); ce {
	case "":
		return b
	case "gzip":
		out, err = fasthttp.AppendGunzipBytes(nil, b)
	case "br":
		out, err = fasthttp.AppendUnbrotliBytes(nil, b)
	case "zstd":
		out, err = fasthttp.AppendUnzstdBytes(nil, b)
	default:
		t.Fatalf("unexpected Content-Encoding %q", ce)
	}
	if err != nil {
		t.Fatalf("%s body does not decode: %v", resp.Header.Get("Content-Encoding"), err)
	}
	return out
}

func varies(resp *http.Response) bool {
	for _, v := range resp.Header.Values("Vary") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "Accept-Encoding") {
				return true
			}
		}
	}
	return false
}

// TestCompressionNegotiation: the coding is chosen from Accept-Encoding's
// q-values, ties going to the server's order (zstd, br, gzip by default);
// the body decodes to exactly what the handler wrote, Content-Length is
// the encoded length, and Vary names Accept-Encoding whatever was chosen.
func TestCompressionNegotiation(t *testing.T) {
	app := compressedApp(t, fx.CompressionConfig{})
	want := jsonBody(16 << 10)
	for _, tc := range []struct {
		accept []string
		want   string // Content-Encoding; "" = identity
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"gzip"}, "gzip"},
		{[]string{"gzip, br"}, "br"},
		{[]string{"gzip, deflate, br, zstd"}, "zstd"},
		{[]string{"gzip;q=0.5, br;q=0.8"}, "br"},
		{[]string{"gzip;q=1.0, br;q=0.8"}, "gzip"},
		{[]string{"zstd;q=0.1, gzip;q=0.2"}, "gzip"},
		{[]string{"*"}, "zstd"},
		{[]string{"*;q=0"}, ""},
		{[]string{"br;q=0, *"}, "zstd"},
		{[]string{"br;q=0, zstd;q=0, *"}, "gzip"},
		{[]string{"gzip;q=0"}, ""},
		{[]string{"identity"}, ""},
		{[]string{"gzip;q=0.5, identity"}, ""},
		{[]string{"gzip, identity;q=0.5"}, "gzip"},
		{[]string{"gzip;q=0.5, *;q=0.7"}, "zstd"},
		{[]string{"GZIP"}, "gzip"},
		{[]string{"x-gzip"}, "gzip"},
		{[]string{" gzip ; q=0.5 , zstd ; Q=0.6 "}, "zstd"},
		{[]string{"gzip;level=9;q=0.5, br;q=0.4"}, "gzip"},
		{[]string{"gzip;q=1.5"}, ""},    // malformed q: element ignored
		{[]string{"gzip;q=0.0001"}, ""}, // four decimals
		{[]string{"gzip;q=.5"}, ""},
		{[]string{"gzip;q=", "br;q=0.1"}, "br"},
		{[]string{"deflate, compress"}, ""},
		{[]string{"zstd;q=0, zstd"}, ""},     // the first element naming a coding counts
		{[]string{"br;q=0", "gzip"}, "gzip"}, // two header lines, one list
		{[]string{",,gzip,,"}, "gzip"},
	} {
		resp, b := fetch(t, app, "GET", "/json?n=16384", tc.accept...)
		if got := resp.Header.Get("Content-Encoding"); got != tc.want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", tc.accept, got, tc.want)
			continue
		}
		if string(decode(t, resp, b)) != string(want) {
			t.Errorf("Accept-Encoding %q: the body does not decode to the handler's", tc.accept)
		}
		if tc.want != "" && len(b) >= len(want)/3 {
			t.Errorf("Accept-Encoding %q: %s sent %d of %d bytes", tc.accept, tc.want, len(b), len(want))
		}
		if !varies(resp) {
			t.Errorf("Accept-Encoding %q: Vary %q lacks Accept-Encoding", tc.accept, resp.Header.Values("Vary"))
		}
	}
}

// TestCompressionOrderAndLevels: Encodings decides ties and limits what
// is offered; levels are applied (best compresses no worse than fastest).
func TestCompressionOrderAndLevels(t *testing.T) {
	t.Parallel()
	gzipFirst := compressedApp(t, fx.CompressionConfig{Encodings: []string{"gzip", "br"}})
	for accept, want := range map[string]string{"*": "gzip", "zstd": "", "br, gzip": "gzip", "br": "br"} {
		if resp, _ := fetch(t, gzipFirst, "GET", "/json?n=4096", accept); resp.Header.Get("Content-Encoding") != want {
			t.Errorf("Encodings [gzip br], Accept-Encoding %q: %q, want %q", accept, resp.Header.Get("Content-Encoding"), want)
		}
	}
	size := func(cfg fx.CompressionConfig, enc string) int {
		_, b := fetch(t, compressedApp(t, cfg), "GET", "/json?n=65536", enc)
		return len(b)
	}
	for _, tc := range []struct {
		enc        string
		fast, best fx.CompressionConfig
	}{
		{"gzip", fx.CompressionConfig{GzipLevel: 1}, fx.CompressionConfig{GzipLevel: 9}},
		{"br", fx.CompressionConfig{BrotliLevel: 1}, fx.CompressionConfig{BrotliLevel: 11}},
		{"zstd", fx.CompressionConfig{ZstdLevel: 1}, fx.CompressionConfig{ZstdLevel: 4}},
	} {
		if f, b := size(tc.fast, tc.enc), size(tc.best, tc.enc); b >= f {
			t.Errorf("%s: best level %d bytes, fastest %d", tc.enc, b, f)
		}
	}
}

// TestCompressionMinSize: bodies under MinSize are sent as written,
// without Vary (the answer does not depend on Accept-Encoding).
func TestCompressionMinSize(t *testing.T) {
	text := func(n int) func(*fx.App) {
		return func(app *fx.App) {
			app.Get("/t"+strconv.Itoa(n), func(c *fx.Ctx) error { return c.String(200, strings.Repeat("a", n)) })
		}
	}
	def := compressedApp(t, fx.CompressionConfig{}, text(1023), text(1024))
	if resp, b := fetch(t, def, "GET", "/t1023", "gzip"); resp.Header.Get("Content-Encoding") != "" || len(b) != 1023 || varies(resp) {
		t.Errorf("1023 bytes: %q, %d bytes, Vary %q", resp.Header.Get("Content-Encoding"), len(b), resp.Header.Values("Vary"))
	}
	if resp, _ := fetch(t, def, "GET", "/t1024", "gzip"); resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("1024 bytes (the default minimum): %q, want gzip", resp.Header.Get("Content-Encoding"))
	}
	small := compressedApp(t, fx.CompressionConfig{MinSize: 100}, text(99), text(100))
	if resp, _ := fetch(t, small, "GET", "/t99", "gzip"); resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("MinSize 100, 99 bytes: %q", resp.Header.Get("Content-Encoding"))
	}
	if resp, b := fetch(t, small, "GET", "/t100", "gzip"); resp.Header.Get("Content-Encoding") != "gzip" ||
		string(decode(t, resp, b)) != strings.Repeat("a", 100) {
		t.Errorf("MinSize 100, 100 bytes: %q", resp.Header.Get("Content-Encoding"))
	}
}

// TestCompressionSkipTypes: compressed media are sent as written (without
// Vary), +json/+xml types are text even under a skipped top-level type,
// text/event-stream never compresses, and a SkipTypes list replaces the
// default.
func TestCompressionSkipTypes(t *testing.T) {
	body := jsonBody(8 << 10)
	typed := func(app *fx.App) {
		app.Get("/typed", func(c *fx.Ctx) error { return c.Send(200, c.Query("ct"), body) })
	}
	def := compressedApp(t, fx.CompressionConfig{}, typed)
	custom := compressedApp(t, fx.CompressionConfig{SkipTypes: []string{"text/csv", "application/problem+json"}}, typed)
	for _, tc := range []struct {
		app        *fx.App
		ct         string
		compressed bool
	}{
		{def, "image/png", false},
		{def, "Image/PNG; foo=bar", false},
		{def, "video/mp4", false},
		{def, "application/zip", false},
		{def, "application/octet-stream", false},
		{def, "font/woff2", false},
		{def, "text/event-stream", false},
		{def, "image/svg+xml", true},
		{def, "application/problem+json", true},
		{def, "text/html; charset=utf-8", true},
		{def, "text/csv", true},
		{def, "application/wasm", true},
		{custom, "text/csv", false},
		{custom, "application/problem+json", false},
		{custom, "image/png", true},
		{custom, "text/event-stream", false},
	} {
		resp, b := fetch(t, tc.app, "GET", "/typed?ct="+url.QueryEscape(tc.ct), "gzip")
		got := resp.Header.Get("Content-Encoding") == "gzip"
		if got != tc.compressed || varies(resp) != tc.compressed {
			t.Errorf("%q (default list: %t): compressed %t, Vary %q; want %t", tc.ct, tc.app == def, got, resp.Header.Values("Vary"), tc.compressed)
		}
		if string(decode(t, resp, b)) != string(body) {
			t.Errorf("%q: body changed", tc.ct)
		}
	}
}

// TestCompressionLeavesAlone: 204, 304, 206, a body already
// encoded, Cache-Control: no-transform, streams and incompressible bodies
// are sent as the handler wrote them.
func TestCompressionLeavesAlone(t *testing.T) {
	big := jsonBody(8 << 10)
	noise := make([]byte, 8<<10)
	rand.NewChaCha8([32]byte{1}).Read(noise)
	app := compressedApp(t, fx.CompressionConfig{}, func(app *fx.App) {
		app.Get("/status/:code", func(c *fx.Ctx) error {
			code, _ := strconv.Atoi(c.Param("code"))
			if code == 206 {
				c.SetHeader("Content-Range", "bytes 0-8191/20000")
			}
			return c.Send(code, "application/json", big)
		})
		app.Get("/encoded", func(c *fx.Ctx) error {
			c.SetHeader("Content-Encoding", "gzip")
			return c.Send(200, "application/json", fasthttp.AppendGzipBytes(nil, big))
		})
		app.Get("/no-transform", func(c *fx.Ctx) error {
			c.SetHeader("Cache-Control", "public, No-Transform")
			return c.Send(200, "application/json", big)
		})
		app.Get("/stream", func(c *fx.Ctx) error {
			return c.Stream("text/plain", func(w *bufio.Writer) error { _, err := w.Write(big); return err })
		})
		app.Get("/noise", func(c *fx.Ctx) error { return c.Send(200, "text/plain", noise) })
	})
	for _, path := range []string{"/status/204", "/status/304", "/status/206", "/encoded", "/no-transform", "/stream", "/noise"} {
		resp, b := fetch(t, app, "GET", path, "gzip")
		ce := resp.Header.Get("Content-Encoding")
		switch path {
		case "/encoded":
			if ce != "gzip" || string(decode(t, resp, b)) != string(big) || varies(resp) {
				t.Errorf("%s: encoded twice or changed (%q, Vary %q)", path, ce, resp.Header.Values("Vary"))
			}
		case "/noise":
			// Compressible by type, so the answer varies; gzip would grow it.
			if ce != "" || string(b) != string(noise) || !varies(resp) {
				t.Errorf("%s: %q, %d bytes, Vary %q", path, ce, len(b), resp.Header.Values("Vary"))
			}
		default:
			if ce != "" {
				t.Errorf("%s: Content-Encoding %q", path, ce)
			}
		}
	}
}

// TestCompressionHeadMatchesGet: a HEAD response carries the headers of
// the GET it stands for (RFC 9110 section 9.3.2): the same Vary:
// Accept-Encoding, Content-Encoding, Content-Length and ETag, whatever
// coding is negotiated, and no body.
func TestCompressionHeadMatchesGet(t *testing.T) {
	app := compressedApp(t, fx.CompressionConfig{}, func(app *fx.App) {
		app.Get("/etag", func(c *fx.Ctx) error {
			c.SetHeader("ETag", `"v1"`)
			return c.Send(200, "application/json", jsonBody(4096))
		})
	})
	for _, path := range []string{"/json?n=8192", "/etag", "/json?n=10"} {
		for _, accept := range []string{"gzip", "br", "zstd", "identity"} {
			get, _ := fetch(t, app, "GET", path, accept)
			head, b := fetch(t, app, "HEAD", path, accept)
			for _, k := range []string{"Vary", "Content-Encoding", "Content-Length", "ETag"} {
				if g, h := get.Header.Get(k), head.Header.Get(k); g != h {
					t.Errorf("%s, Accept-Encoding %s: %s %q on GET, %q on HEAD", path, accept, k, g, h)
				}
			}
			if len(b) != 0 {
				t.Errorf("%s, Accept-Encoding %s: HEAD has %d body bytes", path, accept, len(b))
			}
		}
	}
	if get, _ := fetch(t, app, "GET", "/json?n=8192", "gzip"); !varies(get) || get.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("GET: Vary %q, Content-Encoding %q", get.Header.Values("Vary"), get.Header.Get("Content-Encoding"))
	}
}

// TestCompressionVaryAndETag: Accept-Encoding is merged into a Vary that
// is already there (never twice, never beside "*"), and a strong ETag
// becomes weak when the body is compressed.
func TestCompressionVaryAndETag(t *testing.T) {
	app := compressedApp(t, fx.CompressionConfig{}, func(app *fx.App) {
		app.Get("/vary", func(c *fx.Ctx) error {
			if v := c.Query("v"); v != "" {
				c.SetHeader("Vary", v)
			}
			if e := c.Query("etag"); e != "" {
				c.SetHeader("ETag", e)
			}
			return c.Send(200, "application/json", jsonBody(4096))
		})
	})
	for v, want := range map[string]string{
		"":                 "Accept-Encoding",
		"Origin":           "Origin, Accept-Encoding",
		"accept-encoding":  "accept-encoding",
		"Origin, *":        "Origin, *",
		"Accept-Encoding ": "Accept-Encoding",
	} {
		resp, _ := fetch(t, app, "GET", "/vary?v="+url.QueryEscape(v), "gzip")
		if got := strings.Join(resp.Header.Values("Vary"), "|"); got != want {
			t.Errorf("Vary %q: sent %q, want %q", v, got, want)
		}
	}
	for etag, want := range map[string]string{`"abc"`: `W/"abc"`, `W/"abc"`: `W/"abc"`} {
		resp, _ := fetch(t, app, "GET", "/vary?etag="+url.QueryEscape(etag), "br")
		if got := resp.Header.Get("ETag"); got != want {
			t.Errorf("ETag %s: sent %s, want %s", etag, got, want)
		}
	}
	if resp, _ := fetch(t, app, "GET", "/vary?etag=%22abc%22"); resp.Header.Get("ETag") != `"abc"` {
		t.Errorf("uncompressed: ETag %s changed", resp.Header.Get("ETag"))
	}
}

// TestCompressionErrorEnvelopes: envelopes are written by the boundary
// after the middleware has unwound, and are compressed all the same: the
// 404 (written without a Ctx, and through middleware), a 500 with details,
// the production 500 of a panic (a prebuilt body, shared by every
// request: it must come out unchanged) and a large 422, each decoding to
// exactly the envelope an uncompressed client gets.
func TestCompressionErrorEnvelopes(t *testing.T) {
	issues := make([]fx.ValidationIssue, 40)
	for i := range issues {
		issues[i] = fx.ValidationIssue{Location: "body", Path: []string{"items", strconv.Itoa(i), "name"}, Message: "Expected a non-empty string"}
	}
	failing := make([]string, 100)
	for i := range failing {
		failing[i] = "replica-" + strconv.Itoa(i)
	}
	routes := func(app *fx.App) {
		app.Get("/panic", func(c *fx.Ctx) error { panic("boom") })
		app.Get("/invalid", func(c *fx.Ctx) error { return fx.NewValidationError(issues) })
		app.Get("/down", func(c *fx.Ctx) error {
			return fx.NewError(500, "APP_DB_DOWN", "No database replica answered", map[string]any{"replicas": failing})
		})
	}
	plainApp := compressedApp(t, fx.CompressionConfig{}, routes)
	withMW := compressedApp(t, fx.CompressionConfig{}, routes, func(app *fx.App) {
		app.Use(func(c *fx.Ctx, next fx.Next) error { return next() })
	})
	tiny := compressedApp(t, fx.CompressionConfig{MinSize: 1}, routes)
	long := "/nope/" + strings.Repeat("segment/", 150) // a 404 over 1 KiB
	all := []string{"gzip", "br", "zstd"}
	for _, tc := range []struct {
		app    *fx.App
		path   string
		status int
		code   string
		encs   []string
	}{
		{plainApp, long, 404, fx.ErrorCodes.NotFound, all},
		{withMW, long, 404, fx.ErrorCodes.NotFound, all},
		{plainApp, "/down", 500, "APP_DB_DOWN", all},
		{withMW, "/invalid", 422, fx.ErrorCodes.ValidationError, all},
		// 73 bytes: only brotli makes it smaller; the others send it as is.
		{tiny, "/panic", 500, fx.ErrorCodes.InternalError, []string{"br"}},
		{tiny, "/nope", 404, fx.ErrorCodes.NotFound, []string{"br"}},
	} {
		plain, want := fetch(t, tc.app, "GET", tc.path)
		if plain.StatusCode != tc.status || plain.Header.Get("Content-Encoding") != "" {
			t.Fatalf("%s uncompressed: %d %q", tc.path, plain.StatusCode, plain.Header.Get("Content-Encoding"))
		}
		checkEnvelopeBody(t, want, tc.code)
		for _, enc := range tc.encs {
			resp, b := fetch(t, tc.app, "GET", tc.path, enc)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Encoding") != enc ||
				resp.Header.Get("Content-Type") != "application/json" || !varies(resp) {
				t.Errorf("%.20s %s: %d %q %q Vary %q", tc.path, enc, resp.StatusCode, resp.Header.Get("Content-Encoding"),
					resp.Header.Get("Content-Type"), resp.Header.Values("Vary"))
				continue
			}
			if got := decode(t, resp, b); string(got) != string(want) {
				t.Errorf("%.20s %s: decodes to %q, want %q", tc.path, enc, got, want)
			}
		}
	}
	if _, b := fetch(t, tiny, "GET", "/panic"); string(b) != `{"error":{"code":"FX_INTERNAL_ERROR","message":"Internal server error"}}` {
		t.Errorf("the prebuilt 500 body changed: %q", b)
	}
}

// TestCompressionConfigErrors: every invalid entry is a Boot error naming
// it, joined with the others.
func TestCompressionConfigErrors(t *testing.T) {
	app := quiet(fx.Config{Compression: &fx.CompressionConfig{
		Encodings: []string{"gzip", "deflate", "GZIP"},
		MinSize:   -1,
		GzipLevel: 10, BrotliLevel: -1, ZstdLevel: 5,
		SkipTypes: []string{"image/", "text/html; charset=utf-8"},
	}})
	err := app.Boot()
	if err == nil {
		t.Fatal("Boot accepted an invalid Config.Compression")
	}
	for _, want := range []string{`unknown encoding "deflate"`, `encoding "GZIP" listed twice`, "MinSize -1", "GzipLevel 10",
		"BrotliLevel -1", "ZstdLevel 5", `SkipTypes entry "text/html; charset=utf-8"`} {
		if !strings.Contains(err.Error(), "Config.Compression: "+want) {
			t.Errorf("Boot error lacks %q:\n%v", want, err)
		}
	}
	var fe *fx.Error
	if !errors.As(err, &fe) || fe.Code != fx.ErrorCodes.InternalError {
		t.Errorf("not an FX_INTERNAL_ERROR *fx.Error: %v", err)
	}
	empty := quiet(fx.Config{Compression: &fx.CompressionConfig{Encodings: []string{}}})
	if err := empty.Boot(); err == nil || !strings.Contains(err.Error(), "Encodings is empty") {
		t.Errorf("empty Encodings: %v", err)
	}
}

// TestCompressionOff: without Config.Compression nothing is compressed.
func TestCompressionOff(t *testing.T) {
	app := quiet()
	app.Get("/json", func(c *fx.Ctx) error { return c.Send(200, "application/json", jsonBody(8192)) })
	t.Cleanup(func() { app.Shutdown() })
	if resp, _ := fetch(t, app, "GET", "/json", "gzip, br, zstd"); resp.Header.Get("Content-Encoding") != "" || varies(resp) {
		t.Errorf("compressed without Config.Compression: %v", resp.Header)
	}
}

// breachSecret is the CSRF token the BREACH page holds; breachRight
// guesses it, breachWrong is a guess of the same length that shares no
// character with it.
const (
	breachSecret = "7Hq2Zt9LmX4pWc8RvN3k"
	breachRight  = breachSecret
	breachWrong  = "Bd5YgS1eJu6oTa0Qi2Fx"
)

// breachPage is a page that holds the secret and reflects q next to it.
func breachPage(c *fx.Ctx) error {
	return c.Send(200, "text/html; charset=utf-8",
		[]byte(`<!doctype html><html><head><title>Search</title></head><body><form method="post" action="/search">`+
			`<input type="hidden" name="csrf_token" value="`+breachSecret+`"></form>`+
			`<p>You searched for: `+c.Query("q")+`</p></body></html>`))
}

// breachApp serves breachPage compressed (MinSize 64, so that the small
// page qualifies) at /page and behind each opt-out.
func breachApp(t *testing.T, cfg fx.CompressionConfig) *fx.App {
	cfg.MinSize = 64
	return compressedApp(t, cfg, func(app *fx.App) {
		app.Get("/page", breachPage)
		app.Get("/reads-cookie", func(c *fx.Ctx) error { _ = c.Cookie("session"); return breachPage(c) })
		app.Get("/no-compress", func(c *fx.Ctx) error { c.NoCompress(); return breachPage(c) })
		app.Route(fx.Route{Method: "GET", Path: "/route-opt-out", Middleware: []fx.Middleware{noCompression}, Handler: breachPage})
		app.Get("/no-transform", func(c *fx.Ctx) error {
			c.SetHeader("Cache-Control", "private, no-transform")
			return breachPage(c)
		})
	})
}

// breachSizes returns the body sizes on the wire for the right and the
// wrong guess, and the Content-Encoding of the right one.
func breachSizes(t *testing.T, app *fx.App, path, coding string, header ...string) (right, wrong int, ce string) {
	t.Helper()
	size := func(guess string) (int, string) {
		req := httptest.NewRequest("GET", path+"?q="+url.QueryEscape(guess), nil)
		req.Header.Set("Accept-Encoding", coding)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return int(resp.ContentLength), resp.Header.Get("Content-Encoding")
	}
	right, ce = size(breachRight)
	wrong, _ = size(breachWrong)
	return right, wrong, ce
}

// noCompression opts a route out of compression from its middleware.
func noCompression(c *fx.Ctx, next fx.Next) error {
	c.NoCompress()
	return next()
}

// TestCompressionBREACH measures the BREACH signal: compressed, the page
// is shorter when the reflected guess matches the secret, with every
// coding; each opt-out (Ctx.NoCompress in the handler or in the route's middleware,
// Cache-Control: no-transform, SkipCredentialed with a Cookie or an
// Authorization header) sends it uncompressed, and both guesses then give
// the same length.
func TestCompressionBREACH(t *testing.T) {
	app := breachApp(t, fx.CompressionConfig{})
	for _, coding := range []string{"gzip", "br", "zstd"} {
		right, wrong, ce := breachSizes(t, app, "/page", coding)
		t.Logf("%s: right guess %d bytes, wrong guess %d bytes", coding, right, wrong)
		if ce != coding || right >= wrong {
			t.Errorf("%s: %q, right guess %d bytes, wrong %d: want compressed and shorter", coding, ce, right, wrong)
		}
		for _, path := range []string{"/no-compress", "/route-opt-out", "/no-transform"} {
			if right, wrong, ce := breachSizes(t, app, path, coding); ce != "" || right != wrong {
				t.Errorf("%s %s: %q, right guess %d bytes, wrong %d: want identity, equal", coding, path, ce, right, wrong)
			}
		}
	}
	t.Logf("uncompressed: %d bytes", func() int { r, _, _ := breachSizes(t, app, "/no-compress", "gzip"); return r }())

	skip := breachApp(t, fx.CompressionConfig{SkipCredentialed: true})
	for _, cred := range [][]string{{"Cookie", "session=s1"}, {"Authorization", "Bearer abc"}} {
		for _, path := range []string{"/page", "/reads-cookie"} {
			if right, wrong, ce := breachSizes(t, skip, path, "gzip", cred...); ce != "" || right != wrong {
				t.Errorf("SkipCredentialed, %s %s: %q, right guess %d bytes, wrong %d: want identity, equal", path, cred[0], ce, right, wrong)
			}
		}
	}
	if _, _, ce := breachSizes(t, skip, "/page", "gzip"); ce != "gzip" {
		t.Errorf("SkipCredentialed, no credentials: Content-Encoding %q, want gzip", ce)
	}
}
