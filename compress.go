package fx

import (
	"bytes"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"
)

// Response compression (Config.Compression). It runs after the whole
// request has been served, error boundary included, as a wrapper around the
// App's booted handler (Boot installs it, compressed below): error
// envelopes are written by the boundary after the middleware chain has
// unwound, so a compression middleware would never see them, and a large
// 422 is exactly what is worth compressing. It also covers 404s, the
// router's redirects and OPTIONS answers. It does not cover what never
// reaches the handler: transport errors and connection-limit refusals
// (small envelopes, always under the minimum size). OnResponse observers
// run inside the handler, so they see the body as written, before
// compression.
//
// A response is compressed when all of these hold:
//
//   - the request is not HEAD, and the status is 2xx-5xx other than 204,
//     206 and 304 (no body, or a range of the identity body);
//   - the body is not a stream (Ctx.Stream, Ctx.SSE, SetBodyStream, files
//     served by Static): those are sent as written, chunk by chunk;
//     compressing them would mean buffering them whole or flushing a
//     compressor per chunk. Static compresses files itself
//     (StaticConfig.Compress);
//   - it has no Content-Encoding already, no Content-Range, and no
//     Cache-Control: no-transform;
//   - its media type is not text/event-stream and not in SkipTypes;
//   - the body is at least MinSize bytes.
//
// Then Vary: Accept-Encoding is added (merged into any Vary already there),
// because the answer now depends on that header, and the coding is chosen
// from Accept-Encoding (negotiateEncoding, compress_accept.go). When a
// coding is chosen and makes the body smaller, the body is replaced,
// Content-Encoding is set, Content-Length follows the new body (fasthttp
// sets it when writing), and a strong ETag becomes weak (W/"..."), since
// the compressed bytes are not the representation it was computed for.
//
// Cost: a response that is not compressed pays a few field reads, about
// 10 ns and no allocation (BenchmarkCompressSkipped, against an App without
// Compression). A compressed one pays its encoder: see
// CompressionConfig. The encoders are fasthttp's (klauspost/compress for
// gzip and zstd, go-brrr for brotli), pooled per level and run on
// fasthttp's small worker pool, so the handler goroutine's stack stays
// small; the output buffer is swapped with the response's, so compressing
// costs about two small allocations (fasthttp's) and no body-sized one.

// CompressionConfig configures response compression; set it as
// Config.Compression. The zero value compresses with the defaults below.
//
// Cost of a GET of a JSON body at the default levels, whole request
// (go test -run '^$' -bench Compress -benchmem .; best of 6 runs on a
// shared, loaded 2-core machine, so a fraction of this on a quiet one),
// and the size sent:
//
//	body              gzip 6    br 4      zstd 2
//	1 KiB, request    16 µs     27 µs     12 µs
//	16 KiB, per KiB   6.7 µs    8.1 µs    5.6 µs
//	128 KiB, per KiB  8.5 µs    10.6 µs   7.7 µs
//	size, 16 KiB      17.5 %    16.9 %    16.9 %
type CompressionConfig struct {
	// Encodings lists the content codings offered, in the server's order
	// of preference, which decides between codings the client gives the
	// same q-value ("br;q=0, *" picks the first listed other than br).
	// Known: "zstd", "br", "gzip". Default ["zstd", "br", "gzip"]: zstd
	// compresses JSON about as well as brotli at its default level and
	// costs less; gzip is what every client accepts.
	Encodings []string

	// MinSize is the smallest body compressed, in bytes; smaller bodies
	// are sent as they are (a compressed frame has its own overhead, and
	// the bytes saved do not pay for the work). Default
	// DefaultCompressionMinSize (1 KiB).
	MinSize int

	// SkipTypes are media types never compressed, because they are already
	// compressed: an entry ending in "/" is a whole top-level type
	// ("image/"), any other entry one type ("application/zip"). Matching
	// ignores case and parameters. A type with a +json or +xml suffix
	// ("image/svg+xml", "application/problem+json") is text and only
	// skipped when listed exactly. nil means DefaultCompressionSkipTypes();
	// a non-nil list replaces it (append to the default to extend it).
	// text/event-stream is never compressed, whatever this list holds.
	SkipTypes []string

	// GzipLevel is the gzip level, 1 (fastest) to 9 (smallest). Default 6.
	GzipLevel int
	// BrotliLevel is the brotli level, 1 to 11. Default 4, about gzip 6's
	// cost; above 6 it gets much slower for dynamic responses.
	BrotliLevel int
	// ZstdLevel is the zstd level in fasthttp's scale: 1 (fastest), 2
	// (default), 3 (better), 4 (best).
	ZstdLevel int
}

// DefaultCompressionMinSize is CompressionConfig.MinSize's default.
const DefaultCompressionMinSize = 1024

// DefaultCompressionSkipTypes returns the media types CompressionConfig
// skips by default: images, audio, video, compressed fonts, archives and
// compressed files, PDF, and application/octet-stream (opaque bytes, most
// often an archive or media). A new slice each call.
func DefaultCompressionSkipTypes() []string {
	return []string{
		"image/", "video/", "audio/",
		"font/woff", "font/woff2",
		"application/zip", "application/gzip", "application/x-gzip",
		"application/zstd", "application/x-bzip2", "application/x-xz",
		"application/x-7z-compressed", "application/vnd.rar", "application/x-rar-compressed",
		"application/pdf", "application/octet-stream",
	}
}

// contentCoding is one of the codings fx can produce.
type contentCoding uint8

const (
	codingZstd contentCoding = iota
	codingBrotli
	codingGzip
	numCodings
	codingIdentity = numCodings // no coding: the body as written
)

// codingNames are the Content-Encoding values (and Encodings entries).
var codingNames = [numCodings][]byte{
	codingZstd:   []byte("zstd"),
	codingBrotli: []byte("br"),
	codingGzip:   []byte("gzip"),
}

// compressor is a CompressionConfig checked and prepared at Boot.
type compressor struct {
	order   []contentCoding
	minSize int
	skip    [][]byte // lower case; a trailing '/' makes an entry a prefix
	levels  [numCodings]int
}

// compressionErrors reports what is wrong with Config.Compression, for
// Boot to fail with (configError, so it reads like every config error).
func (a *App) compressionErrors() []error {
	_, errs := newCompressor(a.cfg.Compression)
	return errs
}

// compressed wraps h with Config.Compression, or returns h when there is
// none (or it is invalid, and Boot has failed).
func (a *App) compressed(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	z, errs := newCompressor(a.cfg.Compression)
	if z == nil || len(errs) > 0 {
		return h
	}
	return func(rc *fasthttp.RequestCtx) {
		h(rc)
		z.apply(rc)
	}
}

func newCompressor(cfg *CompressionConfig) (*compressor, []error) {
	if cfg == nil {
		return nil, nil
	}
	const what = "Config.Compression"
	var errs []error
	z := &compressor{minSize: cfg.MinSize}
	if z.minSize == 0 {
		z.minSize = DefaultCompressionMinSize
	} else if z.minSize < 0 {
		errs = append(errs, configError(what, "MinSize %d is negative", cfg.MinSize))
	}
	names := cfg.Encodings
	if names == nil {
		names = []string{"zstd", "br", "gzip"}
	}
	var seen [numCodings]bool
	for _, name := range names {
		c, ok := codingNamed(name)
		switch {
		case !ok:
			errs = append(errs, configError(what, "unknown encoding %q (known: zstd, br, gzip)", name))
		case seen[c]:
			errs = append(errs, configError(what, "encoding %q listed twice", name))
		default:
			seen[c] = true
			z.order = append(z.order, c)
		}
	}
	if len(names) == 0 {
		errs = append(errs, configError(what, "Encodings is empty; leave it nil for the default"))
	}
	for _, l := range []struct {
		name          string
		c             contentCoding
		v, def, lo, h int
	}{
		{"GzipLevel", codingGzip, cfg.GzipLevel, fasthttp.CompressDefaultCompression, 1, 9},
		{"BrotliLevel", codingBrotli, cfg.BrotliLevel, fasthttp.CompressBrotliDefaultCompression, 1, 11},
		{"ZstdLevel", codingZstd, cfg.ZstdLevel, fasthttp.CompressZstdDefault, 1, 4},
	} {
		z.levels[l.c] = l.v
		if l.v == 0 {
			z.levels[l.c] = l.def
		} else if l.v < l.lo || l.v > l.h {
			errs = append(errs, configError(what, "%s %d is outside %d-%d", l.name, l.v, l.lo, l.h))
		}
	}
	skip := cfg.SkipTypes
	if skip == nil {
		skip = DefaultCompressionSkipTypes()
	}
	for _, t := range skip {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || strings.ContainsAny(t, " ;,") {
			errs = append(errs, configError(what, "SkipTypes entry %q is not a media type or a type/ prefix", t))
			continue
		}
		z.skip = append(z.skip, []byte(t))
	}
	return z, errs
}

// codingNamed maps an Encodings entry to its coding.
func codingNamed(name string) (contentCoding, bool) {
	for c := range numCodings {
		if strings.EqualFold(name, string(codingNames[c])) {
			return c, true
		}
	}
	return 0, false
}

// apply compresses rc's response when it qualifies (see the block comment
// at the top of this file).
func (z *compressor) apply(rc *fasthttp.RequestCtx) {
	resp := &rc.Response
	switch st := resp.StatusCode(); {
	case st < 200, st == fasthttp.StatusNoContent, st == fasthttp.StatusPartialContent, st == fasthttp.StatusNotModified:
		return
	}
	if resp.IsBodyStream() || rc.IsHead() || rc.Hijacked() || resp.SkipBody {
		return
	}
	body := resp.Body()
	h := &resp.Header
	if len(body) < z.minSize || len(h.ContentEncoding()) > 0 ||
		len(h.Peek(fasthttp.HeaderContentRange)) > 0 || !z.compressible(h.ContentType()) ||
		hasToken(h.Peek(fasthttp.HeaderCacheControl), "no-transform") {
		return
	}
	sc := compressScratchPool.Get().(*compressScratch)
	defer compressScratchPool.Put(sc)
	addVaryAcceptEncoding(h, &sc.hdr)
	c := negotiateEncoding(rc.Request.Header.PeekAll(fasthttp.HeaderAcceptEncoding), z.order)
	if c == codingIdentity {
		return
	}
	out := z.encode(c, sc.buf[:0], body)
	// An empty result means fasthttp's worker pool refused the work (it
	// does under extreme load, silently): send the body as it is.
	if len(out) == 0 || len(out) >= len(body) {
		sc.keep(out)
		return
	}
	sc.keep(resp.SwapBody(out)) // the response now owns out; its old buffer is ours
	h.SetContentEncodingBytes(codingNames[c])
	if etag := h.Peek(fasthttp.HeaderETag); len(etag) > 0 && !bytes.HasPrefix(etag, weakPrefix) {
		sc.hdr = append(append(sc.hdr[:0], weakPrefix...), etag...)
		h.SetBytesV(fasthttp.HeaderETag, sc.hdr)
	}
}

var weakPrefix = []byte("W/")

// encode appends src compressed with c to dst.
func (z *compressor) encode(c contentCoding, dst, src []byte) []byte {
	switch c {
	case codingZstd:
		return fasthttp.AppendZstdBytesLevel(dst, src, z.levels[c])
	case codingBrotli:
		return fasthttp.AppendBrotliBytesLevel(dst, src, z.levels[c])
	default:
		return fasthttp.AppendGzipBytesLevel(dst, src, z.levels[c])
	}
}

// compressible reports whether the media type of ct may be compressed.
func (z *compressor) compressible(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	mt := bytes.TrimSpace(ct)
	if bytes.EqualFold(mt, eventStream) {
		return false
	}
	text := hasSuffixFold(mt, "+json") || hasSuffixFold(mt, "+xml")
	for _, s := range z.skip {
		if s[len(s)-1] == '/' {
			if !text && len(mt) > len(s) && bytes.EqualFold(mt[:len(s)], s) {
				return false
			}
		} else if bytes.EqualFold(mt, s) {
			return false
		}
	}
	return true
}

var eventStream = []byte("text/event-stream")

func hasSuffixFold(b []byte, suffix string) bool {
	return len(b) >= len(suffix) && strings.EqualFold(b2s(b[len(b)-len(suffix):]), suffix)
}

// hasToken reports whether the comma-separated list v holds token
// (case-insensitive), as Cache-Control directives are written.
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		item := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			item, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if strings.EqualFold(b2s(bytes.TrimSpace(item)), token) {
			return true
		}
	}
	return false
}

// compressScratch is the pooled output buffer of one compression, and a
// small buffer for header values.
type compressScratch struct {
	buf, hdr []byte
}

// maxKeptCompressBuffer is the largest buffer kept in the pool: one large
// response must not pin its size in memory for good.
const maxKeptCompressBuffer = 256 << 10

func (s *compressScratch) keep(b []byte) {
	if cap(b) > maxKeptCompressBuffer {
		b = nil
	}
	s.buf = b[:0]
}

var compressScratchPool = sync.Pool{New: func() any { return new(compressScratch) }}
