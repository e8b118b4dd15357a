package fx

import (
	"bytes"
	"strings"
	"sync"

	"github.com/fxhq/fx/internal/codecs"
	"github.com/fxhq/fx/internal/vary"
	"github.com/valyala/fasthttp"
)

// Response compression (Config.Compression). It is the last part of the
// step every request leaves through (App.finish, request.go), after the
// whole request has been served, error boundary included: error envelopes
// are written by the boundary after the middleware chain has unwound, so
// a compression middleware would never see them, and a large 422 is
// exactly what is worth compressing. It so covers every answer fx writes
// through a RequestCtx: 404s, refused paths, the router's redirects and
// OPTIONS answers, ServeError's and a failed boot's envelopes, and the
// transport errors (small envelopes, under the default minimum size). It
// does not cover the over-capacity 503, written on a refused connection
// before any request exists. OnResponse observers run earlier in that
// step, so they see the body as written, before compression.
//
// A response is compressed when all of these hold:
//
//   - the status is 2xx-5xx other than 204, 206 and 304 (no body, or a
//     range of the identity body). A HEAD response is compressed like
//     the GET it stands for (fasthttp then drops the body), so that its
//     Vary, Content-Encoding, Content-Length and ETag are the GET's, as
//     RFC 9110 section 9.3.2 asks;
//   - the body is not a stream (Ctx.Stream, Ctx.SSE, SetBodyStream, files
//     served by package static): those are sent as written, chunk by chunk;
//     compressing them would mean buffering them whole or flushing a
//     compressor per chunk. Package static compresses files itself
//     (static.Config.Compress);
//   - it has no Content-Encoding already, no Content-Range, and no
//     Cache-Control: no-transform;
//   - the handler or a middleware did not opt the request out
//     (Ctx.NoCompress), and, with SkipCredentialed, the
//     request carries no Cookie and no Authorization header;
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
// # Compression and secrets (BREACH)
//
// A compressed body's length depends on how much of it repeats. When a
// response reflects something the requester chose (a query parameter, a
// search term) next to a secret (a CSRF token, an API key, personal
// data), an attacker who can make a victim's browser send requests and
// can see their sizes on the wire learns, guess by guess, which reflected
// text matches the secret: a right guess compresses into a back-reference
// and makes the response shorter. TestCompressionBREACH measures it on a
// 232-byte page holding a 20-character CSRF token: compressed, it is 187
// bytes for the right guess and 204 for a wrong one of the same length
// with gzip, 126 against 140 with brotli, 179 against 198 with zstd.
// Compression cannot tell a secret from other bytes, so the defence is
// not to compress such responses:
//
//   - Ctx.NoCompress, in the handler or in a Route's or Group's
//     middleware, on a route whose responses mix secrets with reflected
//     input;
//   - Cache-Control: no-transform on the response (also a statement to
//     proxies, which must not compress it either);
//   - CompressionConfig.SkipCredentialed: no response to a request that
//     carries a Cookie or an Authorization header is compressed: those
//     are the responses that hold the victim's secrets, and the requests
//     a browser sends on an attacker's behalf carry cookies.
//
// Cost: a response that is not compressed pays a few field reads, about
// 10 ns and no allocation (BenchmarkCompressSkipped, against an App without
// Compression). A compressed one pays its encoder: see
// CompressionConfig. The encoders are fasthttp's (klauspost/compress for
// gzip and zstd, go-brrr for brotli), pooled per level and run on
// fasthttp's small worker pool, so the handler goroutine's stack stays
// small; the output buffer is swapped with the response's, so compressing
// costs about two small allocations (fasthttp's) and no body-sized one.
//
// # Codings linked on demand
//
// gzip is always there. zstd and brotli are linked into the program only
// when it imports github.com/fxhq/fx/compression/zstd or
// github.com/fxhq/fx/compression/brotli (for their side effect): their
// encoders weigh about 0.4 MB and 1.8 MB of binary, which a service that
// does not compress, or compresses with gzip only, should not carry
// (docs/performance.md, "Binary size"). The default Encodings is zstd, br,
// gzip restricted to the linked ones; an Encodings list naming a coding
// that is not linked fails Boot with a configuration error naming the
// package to import.

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
	// Known: "zstd", "br", "gzip"; "zstd" and "br" only in a program that
	// imports github.com/fxhq/fx/compression/zstd or .../brotli for its
	// side effect (their encoders are linked on demand: docs/middleware.md).
	// Default ["zstd", "br", "gzip"], keeping those linked: zstd
	// compresses JSON about as well as brotli at its default level and
	// costs less; gzip is what every client accepts.
	Encodings []string

	// MinSize is the smallest body compressed, in bytes; smaller bodies
	// are sent as they are (a compressed frame has its own overhead, and
	// the bytes saved do not pay for the work). Default 1 KiB (1024).
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

	// SkipCredentialed sends responses to requests that carry a Cookie or
	// an Authorization header as they are, uncompressed, so that their
	// length tells nothing about secrets they hold (BREACH; see
	// docs/security.md). Credentials in another header (an API key
	// header) are not recognised: opt those routes out with Ctx.NoCompress.
	// Cost: two header lookups per response that would be compressed.
	SkipCredentialed bool
}

// defaultCompressionMinSize is CompressionConfig.MinSize's default.
const defaultCompressionMinSize = 1024

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
	order            []contentCoding
	minSize          int
	skipCredentialed bool
	skip             [][]byte // lower case; a trailing '/' makes an entry a prefix
	levels           [numCodings]int
	encoders         [numCodings]codecs.Encoder // of the codings in order
}

// newCompressor checks and prepares cfg (Config.Compression) for Boot:
// nil without one; with errors worded by configError, as every config
// error is, for Boot to fail with.
func newCompressor(cfg *CompressionConfig) (*compressor, []error) {
	if cfg == nil {
		return nil, nil
	}
	const what = "Config.Compression"
	var errs []error
	z := &compressor{minSize: cfg.MinSize, skipCredentialed: cfg.SkipCredentialed}
	if z.minSize == 0 {
		z.minSize = defaultCompressionMinSize
	} else if z.minSize < 0 {
		errs = append(errs, configError(what, "MinSize %d is negative", cfg.MinSize))
	}
	names := cfg.Encodings
	if names == nil {
		for _, c := range []contentCoding{codingZstd, codingBrotli, codingGzip} {
			if encoderOf(c) != nil {
				names = append(names, string(codingNames[c]))
			}
		}
	}
	var seen [numCodings]bool
	for _, name := range names {
		c, ok := codingNamed(name)
		switch {
		case !ok:
			errs = append(errs, configError(what, "unknown encoding %q (known: zstd, br, gzip)", name))
		case encoderOf(c) == nil:
			errs = append(errs, configError(what, "encoding %q is not linked into this program: import _ %q", name, codingPackages[c]))
		case seen[c]:
			errs = append(errs, configError(what, "encoding %q listed twice", name))
		default:
			seen[c] = true
			z.order = append(z.order, c)
			z.encoders[c] = encoderOf(c)
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

// codingPackages are the packages whose import links a coding's encoder.
var codingPackages = [numCodings]string{
	codingZstd:   "github.com/fxhq/fx/compression/zstd",
	codingBrotli: "github.com/fxhq/fx/compression/brotli",
}

// encoderOf is c's encoder, nil when it is not linked (see "Codings
// linked on demand" above).
func encoderOf(c contentCoding) codecs.Encoder {
	switch c {
	case codingZstd:
		return codecs.Zstd
	case codingBrotli:
		return codecs.Brotli
	default:
		return fasthttp.AppendGzipBytesLevel
	}
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
	if resp.IsBodyStream() || rc.Hijacked() || resp.SkipBody {
		return
	}
	body := resp.Body()
	h := &resp.Header
	if len(body) < z.minSize || len(h.ContentEncoding()) > 0 ||
		len(h.Peek(fasthttp.HeaderContentRange)) > 0 || !z.compressible(h.ContentType()) ||
		hasToken(h.Peek(fasthttp.HeaderCacheControl), "no-transform") ||
		rc.UserValue(noCompressKey{}) != nil ||
		z.skipCredentialed && credentialed(&rc.Request.Header) {
		return
	}
	sc := compressScratchPool.Get().(*compressScratch)
	defer compressScratchPool.Put(sc)
	vary.AddAcceptEncoding(h, &sc.hdr)
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

// noCompressKey is the RequestCtx user value that Ctx.NoCompress sets.
type noCompressKey struct{}

// credentialed reports whether the request carries credentials a browser
// attaches on its own or a client sends with every call: a Cookie or an
// Authorization header.
// Cookies are read through the parsed list, which fasthttp keeps once a
// handler has read a cookie (Peek("Cookie") would then rebuild the header
// in a new buffer).
func credentialed(h *fasthttp.RequestHeader) bool {
	if len(h.Peek(fasthttp.HeaderAuthorization)) > 0 {
		return true
	}
	for range h.Cookies() {
		return true
	}
	return false
}

// encode appends src compressed with c, one of z.order (a linked coding),
// to dst.
func (z *compressor) encode(c contentCoding, dst, src []byte) []byte {
	return z.encoders[c](dst, src, z.levels[c])
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
		var item []byte
		item, v, _ = bytes.Cut(v, []byte{','})
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
