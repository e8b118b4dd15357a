package static_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/fxtest"
	"github.com/fxhq/fx/internal/kittest"
	"github.com/fxhq/fx/nethttp"
	"github.com/fxhq/fx/static"
	"github.com/valyala/fasthttp"
)

const secretText = "TOP SECRET, outside the static root"

// staticTree builds, in a temporary directory,
//
//	secret.txt                 (next to the root: must never be served)
//	public/hello.txt
//	public/index.html
//	public/docs/index.html
//	public/a b%/index.html      (a name that must be escaped in a URL)
//	public/empty/              (no index file)
//	public/app.js, app.js.br, app.js.gz
//	public/style.css           (compressible, no compressed sibling)
//	public/big.bin             (20 KiB: streamed, not held in memory)
//	public/link.txt -> ../secret.txt
//
// and returns the path of public.
func staticTree(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "public")
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("secret.txt", []byte(secretText))
	write("public/hello.txt", []byte("hello, world\n"))
	write("public/index.html", []byte("<h1>root</h1>"))
	write("public/docs/index.html", []byte("<h1>docs</h1>"))
	write("public/a b%/index.html", []byte("<h1>spaced</h1>"))
	if err := os.MkdirAll(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	js := []byte(strings.Repeat("console.log('fx');\n", 100))
	write("public/app.js", js)
	write("public/app.js.br", []byte("BROTLI-BYTES"))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(js)
	zw.Close()
	write("public/app.js.gz", gz.Bytes())
	write("public/style.css", []byte(strings.Repeat("body { margin: 0 }\n", 200)))
	write("public/big.bin", bytes.Repeat([]byte("0123456789abcdef"), 1280))
	if err := os.Symlink(filepath.Join("..", "secret.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	return root
}

func staticApp(t *testing.T, cfg ...static.Config) *fx.App {
	t.Helper()
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("X-Request-ID", "req-1") // before next: must survive every answer
		return next()
	})
	static.Mount(app, "/static", staticTree(t), cfg...)
	t.Cleanup(func() { app.Shutdown() })
	return app
}

func TestStaticServesFiles(t *testing.T) {
	app := staticApp(t, static.Config{MaxAge: 3600e9})
	c := fxtest.New(t, app)
	r := c.Get("/static/hello.txt").Do()
	if r.Status != 200 || string(r.Body) != "hello, world\n" {
		t.Fatalf("%d %q", r.Status, r.Body)
	}
	for k, want := range map[string]string{
		"Content-Type":  "text/plain; charset=utf-8",
		"Accept-Ranges": "bytes",
		"Cache-Control": "public, max-age=3600",
		"X-Request-ID":  "req-1",
	} {
		if got := r.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	etag := r.Header().Get("ETag")
	if !strings.HasPrefix(etag, `W/"`) || r.Header().Get("Last-Modified") == "" {
		t.Errorf("ETag %q, Last-Modified %q", etag, r.Header().Get("Last-Modified"))
	}

	// HEAD: headers, no body.
	if r := c.Head("/static/hello.txt").Do(); r.Status != 200 || len(r.Body) != 0 || r.Header().Get("Content-Length") != "13" {
		t.Errorf("HEAD: %d %q %v", r.Status, r.Body, r.Header())
	}

	// A big file (streamed from disk).
	if r := c.Get("/static/big.bin").Do(); r.Status != 200 || len(r.Body) != 20480 {
		t.Errorf("big: %d, %d bytes", r.Status, len(r.Body))
	}

	// If-None-Match: 304 with the ETag, keeping the middleware's header
	// (fasthttp resets the response for a 304) and Cache-Control.
	r = c.Get("/static/hello.txt").Header("If-None-Match", etag).Do()
	if r.Status != 304 || len(r.Body) != 0 || r.Header().Get("ETag") != etag ||
		r.Header().Get("X-Request-ID") != "req-1" || r.Header().Get("Cache-Control") != "public, max-age=3600" {
		t.Errorf("304: %d %q %v", r.Status, r.Body, r.Header())
	}
	if r := c.Get("/static/hello.txt").Header("If-None-Match", `W/"other"`).Do(); r.Status != 200 {
		t.Errorf("stale ETag: %d", r.Status)
	}
}

func TestStaticIndexAndDirectories(t *testing.T) {
	app := staticApp(t)
	c := fxtest.New(t, app)
	for _, tc := range []struct{ path, body string }{
		{"/static/", "<h1>root</h1>"},
		{"/static/docs/", "<h1>docs</h1>"},
	} {
		if r := c.Get(tc.path).Do(); r.Status != 200 || string(r.Body) != tc.body {
			t.Errorf("%s: %d %q", tc.path, r.Status, r.Body)
		}
	}
	// A directory without its slash is redirected under the prefix.
	r := c.Get("/static/docs?x=1").Do()
	if r.Status != 302 || r.Header().Get("Location") != "/static/docs/?x=1" || r.Header().Get("X-Request-ID") != "req-1" {
		t.Errorf("redirect: %d %v", r.Status, r.Header())
	}
	// The redirect escapes the decoded path again, and the client lands on
	// the index.
	r = c.Get("/static/a%20b%25").Do()
	if r.Status != 302 || r.Header().Get("Location") != "/static/a%20b%25/" {
		t.Errorf("escaped redirect: %d %q", r.Status, r.Header().Get("Location"))
	}
	if r := c.Get(r.Header().Get("Location")).Do(); r.Status != 200 || string(r.Body) != "<h1>spaced</h1>" {
		t.Errorf("after the redirect: %d %q", r.Status, r.Body)
	}
	// Missing files and a directory without index: the 404 envelope of an
	// unmatched route (no listing, nothing to tell them apart), with the
	// middleware's headers.
	for _, p := range []string{"/static/missing.txt", "/static/empty/", "/static/docs/nope/", "/static/hello.txt/x"} {
		r := c.Get(p).Do()
		env := r.AssertError(404, fx.ErrorCodes.NotFound).Envelope()
		if env.Message != "Route GET "+p+" not found" {
			t.Errorf("%s: message %q", p, env.Message)
		}
		if r.Header().Get("X-Request-ID") != "req-1" {
			t.Errorf("%s: middleware header lost", p)
		}
	}
	// Other methods are not routed.
	c.Post("/static/hello.txt").Body("text/plain", []byte("x")).Do().AssertError(404, fx.ErrorCodes.NotFound)
}

func TestStaticRanges(t *testing.T) {
	app := staticApp(t)
	c := fxtest.New(t, app)
	r := c.Get("/static/hello.txt").Header("Range", "bytes=0-4").Do()
	if r.Status != 206 || string(r.Body) != "hello" || r.Header().Get("Content-Range") != "bytes 0-4/13" {
		t.Errorf("range: %d %q %v", r.Status, r.Body, r.Header())
	}
	r = c.Get("/static/big.bin").Header("Range", "bytes=20470-").Do()
	if r.Status != 206 || string(r.Body) != "6789abcdef" {
		t.Errorf("big range: %d %q", r.Status, r.Body)
	}
	// Unsatisfiable: the whole file, 200 (RFC 9110 14.2: Range may be
	// ignored), never fasthttp's text 416.
	for _, rg := range []string{"bytes=1000-", "bytes=5-2", "bytes=-0"} {
		r := c.Get("/static/hello.txt").Header("Range", rg).Do()
		if r.Status != 200 || string(r.Body) != "hello, world\n" || r.Header().Get("X-Request-ID") != "req-1" {
			t.Errorf("%s: %d %q %v", rg, r.Status, r.Body, r.Header())
		}
	}
}

func TestStaticPrecompressed(t *testing.T) {
	app := staticApp(t, static.Config{Compress: true})
	c := fxtest.New(t, app)
	for _, tc := range []struct{ accept, encoding, body string }{
		{"br, gzip", "br", "BROTLI-BYTES"},
		{"gzip", "gzip", ""}, // checked by decoding below
		{"br;q=0, gzip", "gzip", ""},
		{"", "", strings.Repeat("console.log('fx');\n", 100)},
	} {
		accept := tc.accept
		if accept == "" {
			accept = "identity"
		}
		r := c.Get("/static/app.js").Header("Accept-Encoding", accept).Do()
		if r.Status != 200 || r.Header().Get("Content-Encoding") != tc.encoding {
			t.Errorf("%q: %d, Content-Encoding %q", tc.accept, r.Status, r.Header().Get("Content-Encoding"))
			continue
		}
		if ct := r.Header().Get("Content-Type"); !strings.Contains(ct, "javascript") {
			t.Errorf("%q: Content-Type %q", tc.accept, ct)
		}
		if v := r.Header().Get("Vary"); v != "Accept-Encoding" {
			t.Errorf("%q: Vary %q", tc.accept, v)
		}
		if tc.encoding == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(r.Body))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			_, _ = out.ReadFrom(zr)
			if out.String() != strings.Repeat("console.log('fx');\n", 100) {
				t.Errorf("gzip body decodes to %q", out.String())
			}
		} else if string(r.Body) != tc.body {
			t.Errorf("%q: body %q", tc.accept, r.Body)
		}
	}
	// A compressible file without a sibling is compressed in memory (and
	// nothing is written next to it).
	r := c.Get("/static/style.css").Header("Accept-Encoding", "gzip").Do()
	if r.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("on the fly: Content-Encoding %q", r.Header().Get("Content-Encoding"))
	} else if zr, err := gzip.NewReader(bytes.NewReader(r.Body)); err != nil {
		t.Error(err)
	} else {
		var out bytes.Buffer
		_, _ = out.ReadFrom(zr)
		if out.String() != strings.Repeat("body { margin: 0 }\n", 200) {
			t.Errorf("on the fly: decodes to %q", out.String())
		}
	}

	// Range requests are served from the plain file.
	r = c.Get("/static/app.js").Header("Accept-Encoding", "br").Header("Range", "bytes=0-6").Do()
	if r.Status != 206 || string(r.Body) != "console" || r.Header().Get("Content-Encoding") != "" {
		t.Errorf("range: %d %q %v", r.Status, r.Body, r.Header())
	}
	// Without Compress, the siblings are ignored.
	plain := fxtest.New(t, staticApp(t))
	if r := plain.Get("/static/app.js").Header("Accept-Encoding", "br").Do(); r.Header().Get("Content-Encoding") != "" {
		t.Errorf("Compress off: Content-Encoding %q", r.Header().Get("Content-Encoding"))
	}
}

// A Vary set by middleware (CORS varies on Origin) is kept and extended,
// on the 200 and on the 304 that fasthttp builds from a reset response.
func TestStaticVaryKeepsMiddlewareValue(t *testing.T) {
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		c.SetHeader("Vary", "Origin")
		c.SetHeader("Access-Control-Allow-Origin", "https://a.example")
		return next()
	})
	static.Mount(app, "/s", staticTree(t), static.Config{Compress: true})
	c := fxtest.New(t, app) // shuts app down when the test ends
	vary := func(r *fxtest.Response) string { return strings.ReplaceAll(r.Header().Get("Vary"), " ", "") }
	r := c.Get("/s/app.js").Header("Accept-Encoding", "br").Do()
	if r.Status != 200 || vary(r) != "Origin,Accept-Encoding" {
		t.Fatalf("200: %d Vary %q", r.Status, r.Header().Get("Vary"))
	}
	r = c.Get("/s/app.js").Header("Accept-Encoding", "br").Header("If-None-Match", r.Header().Get("ETag")).Do()
	if r.Status != 304 || vary(r) != "Origin,Accept-Encoding" ||
		r.Header().Get("Access-Control-Allow-Origin") != "https://a.example" {
		t.Errorf("304: %d %v", r.Status, r.Header())
	}
}

// Traversal: every attempt to reach secret.txt, next to the root, gets a
// 400 or 404 envelope, and the secret never appears, on the wire (raw
// request lines through the App's server, no client-side cleaning: fxtest
// writes the target as given). link.txt is a symbolic link
// inside the root that points at the secret: the os.Root refuses it.
func TestStaticNoTraversal(t *testing.T) {
	app := staticApp(t)
	c := fxtest.New(t, app)
	for _, target := range []string{
		"/static/../secret.txt",
		"/static/%2e%2e/secret.txt",
		"/static/%2E%2E/secret.txt",
		"/static/.%2e/secret.txt",
		"/static/..%2fsecret.txt",
		"/static/..%2Fsecret.txt",
		"/static/%2e%2e%2fsecret.txt",
		"/static/%252e%252e/secret.txt",
		"/static/%252e%252e%252fsecret.txt",
		`/static/..\secret.txt`,
		"/static/..%5csecret.txt",
		"/static/..%5Csecret.txt",
		"/static/docs/../../secret.txt",
		"/static/docs/%2e%2e/%2e%2e/secret.txt",
		"/static//../secret.txt",
		"/static/link.txt",
		"/static/link.txt/",
		"/static/%00../secret.txt",
		"/static/hello.txt%00",
		"/static/" + strings.Repeat("../", 20) + "etc/passwd",
		"/static/..;/secret.txt",
		"/static/%c0%ae%c0%ae/secret.txt",
		"/static/secret.txt",
	} {
		r := c.Get(target).Do()
		status, hdr, body := r.Status, r.Header(), string(r.Body)
		if strings.Contains(body, "TOP SECRET") {
			t.Errorf("GET %s: served the secret (%d)", target, status)
			continue
		}
		if status != 400 && status != 404 {
			t.Errorf("GET %s: status %d, want 400 or 404: %s", target, status, body)
			continue
		}
		if hdr.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: Content-Type %q: %s", target, hdr.Get("Content-Type"), body)
		}
		want := fx.ErrorCodes.NotFound
		if status == 400 {
			want = fx.ErrorCodes.BadRequest
		}
		kittest.CheckEnvelope(t, status, hdr, []byte(body), want)
	}
	// The files inside the root are still served on the same server.
	if r := c.Get("/static/%68ello.txt").Do(); r.Status != 200 || string(r.Body) != "hello, world\n" {
		t.Errorf("encoded name: %d %q", r.Status, r.Body)
	}
}

// Static routes are ordinary routes: middleware runs around them (and may
// refuse), groups prefix them and their middleware runs too.
func TestStaticIsARoute(t *testing.T) {
	root := staticTree(t)
	app := quiet()
	app.Use(func(c *fx.Ctx, next fx.Next) error {
		if strings.HasSuffix(c.Path(), "/docs/") {
			return fx.NewError(403, fx.ErrorCodes.Forbidden, "no docs")
		}
		return next()
	})
	g := app.Group("/v1")
	static.Mount(g, "/files/", root)
	c := fxtest.New(t, app) // shuts app down when the test ends

	if r := c.Get("/v1/files/hello.txt").Do(); r.Status != 200 {
		t.Errorf("group: %d %s", r.Status, r.Body)
	}
	c.Get("/v1/files/docs/").Do().AssertError(403, fx.ErrorCodes.Forbidden)
}

func TestStaticHandlerAndFS(t *testing.T) {
	root := staticTree(t)
	h, err := static.Handler(root)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := static.Handler("", static.Config{FS: fstest.MapFS{
		"a/b.txt": {Data: []byte("from memory")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	app := quiet()
	app.Get("/hello.txt", h)    // no catch-all: the whole path
	app.Get("/raw/*rest", h)    // any catch-all name
	app.Get("/mem/*file", mem)  // an fs.FS
	app.Handle("POST", "/p", h) // not GET or HEAD: 404
	c := fxtest.New(t, app)     // shuts app down when the test ends

	for _, tc := range []struct{ path, body string }{
		{"/hello.txt", "hello, world\n"},
		{"/raw/hello.txt", "hello, world\n"},
		{"/mem/a/b.txt", "from memory"},
	} {
		if r := c.Get(tc.path).Do(); r.Status != 200 || string(r.Body) != tc.body {
			t.Errorf("%s: %d %q", tc.path, r.Status, r.Body)
		}
	}
	c.Get("/mem/a/c.txt").Do().AssertError(404, fx.ErrorCodes.NotFound)
	c.Post("/p").Body("text/plain", []byte("x")).Do().AssertError(404, fx.ErrorCodes.NotFound)

	if _, err := static.Handler(filepath.Join(root, "no-such-dir")); err == nil {
		t.Error("StaticHandler: missing root accepted")
	}
}

// Under the net/http adapter the same mount serves small files, streamed
// big ones, ranges and the 404 envelope.
func TestStaticOverNethttp(t *testing.T) {
	app := staticApp(t)
	srv := httptest.NewServer(nethttp.Handler(app))
	t.Cleanup(srv.Close)
	get := func(path string, hdr ...string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if resp, b := get("/static/hello.txt"); resp.StatusCode != 200 || string(b) != "hello, world\n" {
		t.Errorf("small: %d %q", resp.StatusCode, b)
	}
	if resp, b := get("/static/big.bin"); resp.StatusCode != 200 || len(b) != 20480 {
		t.Errorf("big: %d, %d bytes", resp.StatusCode, len(b))
	}
	if resp, b := get("/static/hello.txt", "Range", "bytes=7-11"); resp.StatusCode != 206 || string(b) != "world" {
		t.Errorf("range: %d %q", resp.StatusCode, b)
	}
	resp, b := get("/static/missing.txt")
	kittest.CheckEnvelope(t, resp.StatusCode, resp.Header, b, fx.ErrorCodes.NotFound)
	if resp.StatusCode != 404 || resp.Header.Get("X-Request-ID") != "req-1" {
		t.Errorf("missing: %d %v", resp.StatusCode, resp.Header)
	}
}

// A mount at "/" serves the root's index and files, and nothing above it;
// compressing on the fly writes nothing into the root (fasthttp.FS on an
// OS directory would write style.css.gz there).
func TestStaticAtRoot(t *testing.T) {
	root := staticTree(t)
	before, _ := os.ReadDir(root)
	app := quiet()
	static.Mount(app, "/", root, static.Config{Compress: true})
	c := fxtest.New(t, app) // shuts app down when the test ends
	if r := c.Get("/").Do(); r.Status != 200 || string(r.Body) != "<h1>root</h1>" {
		t.Errorf("/: %d %q", r.Status, r.Body)
	}
	if r := c.Get("/hello.txt").Do(); r.Status != 200 {
		t.Errorf("/hello.txt: %d", r.Status)
	}
	for _, p := range []string{"/../secret.txt", "/%2e%2e/secret.txt", "/secret.txt"} {
		c.Get(p).Do().AssertError(404, fx.ErrorCodes.NotFound)
	}
	if r := c.Get("/style.css").Header("Accept-Encoding", "gzip").Do(); r.Header().Get("Content-Encoding") != "gzip" {
		t.Errorf("style.css not compressed: %v", r.Header())
	}
	if after, _ := os.ReadDir(root); len(after) != len(before) {
		t.Errorf("the root had %d entries, now %d", len(before), len(after))
	}
}

// A root that cannot be opened is a configuration error reported by Boot.
func TestStaticBadRootFailsBoot(t *testing.T) {
	app := quiet()
	static.Mount(app, "/assets", filepath.Join(t.TempDir(), "missing"))
	err := app.Boot()
	if err == nil || !strings.Contains(err.Error(), `static.Mount "/assets/"`) {
		t.Fatalf("Boot: %v", err)
	}

	// Of two failed mounts under the same prefix (in two groups), Boot
	// reports the first one's root (a failed setup ends it), not a
	// duplicate plugin name.
	app = quiet()
	static.Mount(app.Group("/a"), "/files", filepath.Join(t.TempDir(), "one"))
	static.Mount(app.Group("/b"), "/files", filepath.Join(t.TempDir(), "two"))
	err = app.Boot()
	if err == nil || !strings.Contains(err.Error(), "one: ") || strings.Contains(err.Error(), "twice") {
		t.Fatalf("Boot: %v", err)
	}
}

// BenchmarkStaticSmallFile: GET of a 13-byte file through an App route
// (routing, chain, fasthttp.FS, the header copy). "mount" is app.Static
// (a catch-all route: fasthttp/router copies the parameter value, its 3
// allocations), "file" a StaticHandler on a route without parameters.
// Compare BenchmarkStaticFasthttpFS, the same fasthttp.FS called directly.
func BenchmarkStaticSmallFile(b *testing.B) {
	root := staticTree(b)
	b.Run("mount", func(b *testing.B) {
		app := fx.New(fx.Config{Logger: silentLogger})
		static.Mount(app, "/static", root)
		kittest.Bench(b, app.Handler(), "GET", "/static/hello.txt", 200)
	})
	b.Run("file", func(b *testing.B) {
		h, err := static.Handler(root)
		if err != nil {
			b.Fatal(err)
		}
		app := fx.New(fx.Config{Logger: silentLogger})
		app.Get("/hello.txt", h)
		kittest.Bench(b, app.Handler(), "GET", "/hello.txt", 200)
	})
}

func BenchmarkStaticFasthttpFS(b *testing.B) {
	fsys := &fasthttp.FS{
		Root:            staticTree(b),
		PathRewrite:     fasthttp.NewPathPrefixStripper(len("/static")),
		AcceptByteRange: true,
		GenerateETag:    true,
	}
	kittest.Bench(b, fsys.NewRequestHandler(), "GET", "/static/hello.txt", 200)
}

// TestStaticHidesDotfiles: a path with a segment starting with '.'
// (.env, .git/config, a .git directory, a dotfile deeper down, however
// the dot is encoded) is 404 FX_NOT_FOUND by default, the answer of a
// missing file; .well-known (RFC 8615) is served. StaticConfig.Dotfiles
// serves them all.
func TestStaticHidesDotfiles(t *testing.T) {
	root := t.TempDir()
	for name, data := range map[string]string{
		".env": "DB_PASSWORD=hunter2", ".git/config": "[core]", "sub/.hidden": "h", "sub/ok.txt": "ok",
		".well-known/security.txt": "Contact: mailto:sec@example.com", ".well-known/.private": "p",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hidden := []string{"/s/.env", "/s/.git/config", "/s/.git/", "/s/.git", "/s/sub/.hidden", "/s/%2eenv", "/s/sub/%2Ehidden", "/s/.well-known/.private"}
	for _, allow := range []bool{false, true} {
		app := quiet()
		static.Mount(app, "/s", root, static.Config{Dotfiles: allow})
		c := fxtest.New(t, app) // shuts app down when the test ends
		for _, path := range hidden {
			r := c.Get(path).Do()
			switch {
			case !allow:
				kittest.CheckEnvelope(t, r.Status, r.Header(), r.Body, fx.ErrorCodes.NotFound)
				if r.Status != 404 || strings.Contains(string(r.Body), "hunter2") {
					t.Errorf("%s: %d %q", path, r.Status, r.Body)
				}
			case path == "/s/.git/":
				if r.Status != 404 { // a directory without index: 404 either way
					t.Errorf("Dotfiles, %s: %d", path, r.Status)
				}
			case path == "/s/.git":
				if r.Status != 302 {
					t.Errorf("Dotfiles, %s: %d", path, r.Status)
				}
			case r.Status != 200:
				t.Errorf("Dotfiles, %s: %d %q", path, r.Status, r.Body)
			}
		}
		for _, path := range []string{"/s/.well-known/security.txt", "/s/sub/ok.txt"} {
			if r := c.Get(path).Do(); r.Status != 200 {
				t.Errorf("Dotfiles %t, %s: %d %q", allow, path, r.Status, r.Body)
			}
		}
	}
}

// TestStaticHeadVary: with Compress, HEAD carries the Vary (and the
// Content-Encoding) of the GET it stands for, for a precompressed file, a
// file compressed on the fly and the identity answer alike.
func TestStaticHeadVary(t *testing.T) {
	app := staticApp(t, static.Config{Compress: true})
	c := fxtest.New(t, app)
	for _, path := range []string{"/static/app.js", "/static/style.css", "/static/hello.txt"} {
		for _, accept := range []string{"br", "gzip", "identity"} {
			get := c.Get(path).Header("Accept-Encoding", accept).Do()
			head := c.Head(path).Header("Accept-Encoding", accept).Do()
			for _, k := range []string{"Vary", "Content-Encoding", "Content-Type"} {
				if g, h := get.Header().Get(k), head.Header().Get(k); g != h {
					t.Errorf("%s, Accept-Encoding %s: %s %q on GET, %q on HEAD", path, accept, k, g, h)
				}
			}
			if get.Header().Get("Vary") != "Accept-Encoding" || head.Status != 200 || len(head.Body) != 0 {
				t.Errorf("%s, Accept-Encoding %s: GET Vary %q, HEAD %d with %d body bytes", path, accept, get.Header().Get("Vary"), head.Status, len(head.Body))
			}
		}
	}
}

// otherRouter is an fx.Router with no App behind it.
type otherRouter struct{}

func (otherRouter) Route(fx.Route) {}

// Mount takes an *fx.App or an *fx.Group, whose App closes the root at
// Shutdown and reports a bad root at Boot; any other fx.Router is refused.
func TestMountNeedsAnAppOrGroup(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "static_test.otherRouter") {
			t.Fatalf("Mount(otherRouter) recovered %v, want a panic naming the type", r)
		}
	}()
	static.Mount(otherRouter{}, "/files", t.TempDir())
}
