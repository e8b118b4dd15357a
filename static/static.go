// Package static serves the files of a directory (or an fs.FS) behind
// ordinary fx routes, so the App's middleware runs around them and every
// refusal is an envelope:
//
//	static.Mount(app, "/assets", "./public", static.Config{MaxAge: time.Hour})
//	h, err := static.Handler("./public") // for a route of your own
//
// Files are served by fasthttp.FS.
//
// What fasthttp.FS does (v1.77.0): it caches open files and keeps files of
// up to 8 KiB in memory (CacheDuration), answers Range requests for one
// range (206), sends Last-Modified and a weak ETag built from the
// modification time and size, and answers If-None-Match and
// If-Modified-Since with 304. What fx adds or changes:
//
//   - Confinement. Files are opened through an os.Root on the root
//     directory, so no path (and no symbolic link inside root) reaches a
//     file outside it; on top of that the router has already normalised
//     the path and refused encoded slashes, backslashes and double encoding
//     with 400 FX_BAD_REQUEST, and io/fs refuses ".." elements.
//   - Envelopes instead of fasthttp's text bodies: a missing file, a
//     directory without an index file and a non-GET/HEAD method are 404
//     FX_NOT_FOUND with the same message as an unmatched route (a client
//     cannot tell a missing file from a missing route, nor probe for
//     directories); a NUL byte in the path is 400 FX_BAD_REQUEST; a file
//     that cannot be read is the 500 envelope (logged).
//   - An unsatisfiable Range (bytes=1000- on a 10-byte file) is answered
//     with the whole file, 200, as RFC 9110 section 14.2 permits (a server
//     MAY ignore Range): fasthttp would answer 416 with a text body, and
//     the catalog has no 416 code. Clients treat a 200 to a range request
//     as "range ignored".
//   - Headers set by middleware before next() (request IDs, CORS) are kept
//     on every answer: fasthttp resets the response for a 304 and for its
//     errors, which would drop them (a cross-origin conditional GET would
//     then fail CORS on its 304).
//   - Dotfiles and dot-directories (.env, .git/) are 404 unless
//     Config.Dotfiles is set; .well-known is always served.
//   - Only regular files (and directories, for their index) are opened: a
//     FIFO, socket or device file in the root is 404 like a missing file.
//     Files of the root directory are opened with O_NONBLOCK and checked
//     with fstat before fasthttp reads them, so a FIFO never blocks the
//     request (opening one for reading waits for a writer, forever); for
//     Config.FS, fs.Stat is asked first.
//   - No directory listings, ever, and no writes: fasthttp.FS with
//     Compress on a directory writes compressed copies next to the files
//     and deletes "stale" ones; fx hands fasthttp a read-only io/fs view,
//     so compressed copies made on the fly stay in memory.
//   - A directory requested without its trailing slash is redirected (302)
//     to the path with it, under the route's prefix (fasthttp would
//     redirect to the path inside root).
//
// Cost: the route, the chain, fasthttp.FS and a copy of the response
// header (restored when fasthttp reset it); fx allocates nothing. For a
// 13-byte file on a shared 2-core machine (medians of
// BenchmarkStaticSmallFile and BenchmarkStaticFasthttpFS): fasthttp.FS
// called directly 0.29 µs; Handler on a route without parameters
// 0.50 µs, 0 allocations; a Mount 0.84 µs and 3 allocations, which
// are fasthttp/router's copy of the catch-all value. Each mount holds
// one descriptor for its root and runs fasthttp's cache cleaner (one
// goroutine).
package static

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fxhq/fx"
	"github.com/fxhq/fx/internal/vary"
	"github.com/valyala/fasthttp"
)

// Config configures a static file mount. The zero value serves
// index.html for directories, without compression and without
// Cache-Control.
type Config struct {
	// FS serves files from this file system (an embed.FS, os.DirFS, a
	// fs.Sub of either) instead of the root directory, which is then
	// ignored. Files of an embed.FS have no modification time, so they get
	// no ETag and no Last-Modified (fasthttp sends none for them).
	FS fs.FS

	// IndexNames are the files tried, in order, for a path ending in '/'.
	// Default ["index.html"]. A directory with none of them is 404.
	IndexNames []string

	// Compress serves a precompressed sibling when the client accepts its
	// encoding: app.js.br (brotli), app.js.zst (zstd) or app.js.gz (gzip),
	// preferred in that order, with Content-Encoding and Vary:
	// Accept-Encoding. A compressible file (under 8 MiB) without a sibling
	// is compressed on the fly into memory and cached like any file. Range
	// requests are always served from the uncompressed file. Default
	// false: files are sent as they are.
	Compress bool

	// MaxAge, when positive, sends Cache-Control: public, max-age=<seconds>
	// with every file (and every 304).
	MaxAge time.Duration

	// CacheDuration is how long fasthttp keeps an unused file open (or in
	// memory) before checking the disk again: a changed file is seen after
	// at most this long. Default fasthttp.FSHandlerCacheDuration (10s).
	CacheDuration time.Duration

	// Dotfiles serves files and directories whose name starts with '.'.
	// Default false: a path with such a segment anywhere (/.env,
	// /.git/config, /img/.DS_Store) is 404 FX_NOT_FOUND, the answer of a
	// missing file, before the file system is asked; they are most often
	// secrets or repository metadata copied into the root by accident.
	// ".well-known" (RFC 8615: security.txt, ACME challenges) is served
	// either way, though a dotfile inside it is not.
	Dotfiles bool
}

// appOf returns the App r registers on: Mount mounts on *fx.App and
// *fx.Group, and panics on any other fx.Router, which has no App to
// report to.
func appOf(r fx.Router) *fx.App {
	switch r := r.(type) {
	case *fx.App:
		return r
	case *fx.Group:
		return r.App()
	}
	panic(fmt.Sprintf("static.Mount: %T is neither an *fx.App nor an *fx.Group", r))
}

// Mount serves the files under the directory root at prefix on r: GET
// (and HEAD) prefix + "/*filepath" serves root/filepath, and prefix + "/"
// the root's index file. On a Group, prefix is under the group's prefix
// and the group's middleware runs around it. A root that cannot be opened
// is a configuration error reported by Boot (FX_INTERNAL_ERROR naming the
// mount and the root). The prefix itself, without a trailing slash, is not
// routed. The root directory is closed by the App's Shutdown. See Config
// and the package documentation for the behaviour and its cost.
func Mount(r fx.Router, prefix, root string, cfg ...Config) {
	app := appOf(r)
	prefix = strings.TrimRight(prefix, "/")
	h, closer, err := newStatic(root, cfg)
	if err != nil {
		e := fx.NewCatalogError(fx.ErrorCodes.InternalError, fmt.Sprintf("static.Mount %q: %v", prefix+"/", err))
		// The plugin only carries the error to Boot; the number keeps two
		// failed mounts from clashing on the plugin's name.
		name := "static.Mount #" + strconv.FormatUint(failedMounts.Add(1), 10) + " " + prefix + "/"
		app.Register(fx.Plugin{Name: name, Setup: func(*fx.App) error { return e }})
		return
	}
	if closer != nil {
		app.OnShutdown(closer)
	}
	r.Route(fx.Route{Method: fasthttp.MethodGet, Path: prefix + "/*filepath", Handler: h})
}

// failedMounts numbers the failed mounts (see Mount).
var failedMounts atomic.Uint64

// Handler returns a handler serving the files under the directory root
// (or cfg.FS), for routes Mount does not cover: a route contract with its
// own middleware, a single file (app.Get("/favicon.ico", h) serves
// root/favicon.ico). The file is the route's final catch-all parameter
// (app.Get("/assets/*f", h) serves root/<f>), or the whole request path
// for a route without one. It serves GET and HEAD; any other method is
// 404 FX_NOT_FOUND. It fails when root cannot be opened. The root
// directory stays open for the life of the process.
func Handler(root string, cfg ...Config) (fx.Handler, error) {
	h, _, err := newStatic(root, cfg)
	return h, err
}

// staticFileKey is the RequestCtx user value through which the handler
// hands the route's catch-all value to the path rewrite of fasthttp.FS.
type staticFileKey struct{}

// staticScratch is a pooled copy of the response header, and a buffer.
type staticScratch struct {
	hdr fasthttp.ResponseHeader
	buf []byte
}

var staticScratchPool = sync.Pool{New: func() any { return new(staticScratch) }}

type staticServer struct {
	fsh          fasthttp.RequestHandler
	compress     bool
	dotfiles     bool // Config.Dotfiles
	cacheControl string
}

func newStatic(root string, cfgs []Config) (fx.Handler, func() error, error) {
	var cfg Config
	if len(cfgs) > 0 {
		cfg = cfgs[0]
	}
	fsys := fs.FS(regularFS{cfg.FS, nil})
	var closer func() error
	if cfg.FS == nil {
		r, err := os.OpenRoot(root)
		if err != nil {
			return nil, nil, err
		}
		fsys, closer = regularFS{r.FS(), r}, r.Close
	}
	index := cfg.IndexNames
	if index == nil {
		index = []string{"index.html"}
	}
	ffs := &fasthttp.FS{
		// An io/fs view, never the OS directory itself: fasthttp only
		// writes (and deletes) compressed copies on an OS root.
		FS:            fsys,
		IndexNames:    append([]string(nil), index...),
		PathRewrite:   staticPath,
		PathNotFound:  func(*fasthttp.RequestCtx) {}, // status 404 is set; the envelope is written by fx
		CacheDuration: cfg.CacheDuration,

		AcceptByteRange: true,
		GenerateETag:    true,

		Compress:       cfg.Compress,
		CompressBrotli: true,
		CompressZstd:   true,
		CompressedFileSuffixes: map[string]string{
			"br": ".br", "zstd": ".zst", "gzip": ".gz",
		},
	}
	s := &staticServer{fsh: ffs.NewRequestHandler(), compress: cfg.Compress, dotfiles: cfg.Dotfiles}
	if cfg.MaxAge > 0 {
		s.cacheControl = "public, max-age=" + strconv.FormatInt(int64(cfg.MaxAge/time.Second), 10)
	}
	return s.serve, closer, nil
}

// staticPath is the PathRewrite of the mount: the catch-all value the
// handler stored (as a suffix of the normalised request path, with its
// leading '/': no copy), or the whole path for a route without one.
func staticPath(rc *fasthttp.RequestCtx) []byte {
	p := rc.Path()
	v, ok := rc.UserValue(staticFileKey{}).(string)
	if !ok {
		return p
	}
	if v == "" {
		return slash
	}
	if n := len(p) - len(v); n >= 1 && p[n-1] == '/' && string(p[n:]) == v {
		return p[n-1:]
	}
	return append([]byte{'/'}, v...) // not reached: the router's value is a suffix of the path
}

var slash = []byte("/")

// catchAll returns the name of the final catch-all parameter of the
// route pattern (fx syntax, as c.Route returns it), or "".
func catchAll(pattern string) string {
	i := strings.LastIndexByte(pattern, '/')
	if i < 0 || i+1 >= len(pattern) || pattern[i+1] != '*' {
		return ""
	}
	return pattern[i+2:]
}

func (s *staticServer) serve(c *fx.Ctx) error {
	rc := c.RequestCtx()
	if !rc.IsGet() && !rc.IsHead() {
		return fx.NotFound(c)
	}
	if name := catchAll(c.Route()); name != "" {
		// The router stores a parameter's value as a user value under the
		// parameter's name. The value is already boxed there: storing the
		// same interface again does not allocate.
		rc.SetUserValue(staticFileKey{}, rc.UserValue(name))
	}
	if !s.dotfiles && hasDotSegment(staticPath(rc)) {
		return fx.NotFound(c)
	}
	sc := staticScratchPool.Get().(*staticScratch)
	defer staticScratchPool.Put(sc)
	resp := &rc.Response
	resp.Header.CopyTo(&sc.hdr) // fasthttp resets the response on 304 and on errors

	s.fsh(rc)
	st := resp.StatusCode()
	switch st {
	case fasthttp.StatusOK, fasthttp.StatusPartialContent:
		s.decorate(resp, sc)
		return nil
	case fasthttp.StatusNotModified:
		// fasthttp's 304 carries its ETag (and a Vary that decorate adds
		// back): put it on top of the headers the response had before.
		sc.buf = append(sc.buf[:0], resp.Header.Peek(fasthttp.HeaderETag)...)
		sc.hdr.CopyTo(&resp.Header)
		resp.ResetBody()
		resp.SetStatusCode(fasthttp.StatusNotModified)
		if len(sc.buf) > 0 {
			resp.Header.SetBytesV(fasthttp.HeaderETag, sc.buf)
		}
		s.decorate(resp, sc)
		return nil
	case fasthttp.StatusFound:
		// A directory without its trailing slash: fasthttp redirected to
		// the path inside root; redirect to the request path + "/". The
		// path is decoded: it is escaped again, so that "a b" or "100%"
		// round-trip and no control byte reaches the header.
		loc := append(appendEscapedPath(sc.buf[:0], rc.Path()), '/')
		if q := rc.URI().QueryString(); len(q) > 0 {
			loc = append(append(loc, '?'), q...)
		}
		sc.buf = loc
		sc.hdr.CopyTo(&resp.Header)
		resp.ResetBody()
		resp.SetStatusCode(fasthttp.StatusFound)
		resp.Header.SetBytesV(fasthttp.HeaderLocation, loc)
		return nil
	case fasthttp.StatusRequestedRangeNotSatisfiable:
		// Ignore the Range (RFC 9110 section 14.2) and send the whole file.
		sc.hdr.CopyTo(&resp.Header)
		resp.ResetBody()
		rc.Request.Header.Del(fasthttp.HeaderRange)
		return s.serve(c)
	}
	sc.hdr.CopyTo(&resp.Header) // fasthttp's error reset the headers
	resp.ResetBody()
	switch st {
	case fasthttp.StatusNotFound, fasthttp.StatusForbidden:
		// Missing file, directory without index, a path fasthttp refuses
		// to open (403).
		return fx.NotFound(c)
	case fasthttp.StatusBadRequest:
		return fx.NewCatalogError(fx.ErrorCodes.BadRequest, "The request path holds a NUL byte")
	default:
		return fmt.Errorf("static: file %s: fasthttp.FS answered %d", rc.Path(), st)
	}
}

// hasDotSegment reports whether the path p has a segment that starts with
// '.', other than ".well-known". The router has already resolved "." and
// ".." segments and decoded %2e, so p is the name fasthttp would open.
// One pass over p, no allocation.
func hasDotSegment(p []byte) bool {
	for i := 0; i+1 < len(p); i++ {
		if p[i] != '/' || p[i+1] != '.' {
			continue
		}
		seg := p[i+1:]
		if j := bytes.IndexByte(seg, '/'); j >= 0 {
			seg = seg[:j]
		}
		if string(seg) != ".well-known" {
			return true
		}
	}
	return false
}

// decorate adds the mount's headers to a file response (200, 206, 304).
func (s *staticServer) decorate(resp *fasthttp.Response, sc *staticScratch) {
	if s.cacheControl != "" {
		resp.Header.Set(fasthttp.HeaderCacheControl, s.cacheControl)
	}
	if s.compress {
		// Also on the uncompressed answer: a shared cache must not hand it
		// to clients that accept an encoding (or the reverse).
		vary.AddAcceptEncoding(&resp.Header, &sc.buf)
	}
}

// appendEscapedPath appends the decoded path p percent-encoded for a URL:
// every byte but the unreserved and sub-delimiter characters, ':', '@' and
// '/' (RFC 3986 pchar) is escaped, '%' included.
func appendEscapedPath(dst, p []byte) []byte {
	for _, b := range p {
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9',
			strings.IndexByte("-._~!$&'()*+,;=:@/", b) >= 0:
			dst = append(dst, b)
		default:
			dst = append(dst, '%', "0123456789ABCDEF"[b>>4], "0123456789ABCDEF"[b&15])
		}
	}
	return dst
}
