// Package vary edits the Vary response header for the packages that
// choose a representation by Accept-Encoding: the core's response
// compression (Config.Compression) and package static's precompressed
// files.
package vary

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// AddAcceptEncoding adds Accept-Encoding to the Vary header, keeping
// what middleware put there (CORS varies on Origin); a Vary that already
// names it, or is "*", is left alone. buf is scratch space kept by the
// caller: no allocation once it has grown.
func AddAcceptEncoding(h *fasthttp.ResponseHeader, buf *[]byte) {
	v := h.Peek(fasthttp.HeaderVary)
	if len(v) == 0 {
		h.Set(fasthttp.HeaderVary, fasthttp.HeaderAcceptEncoding)
		return
	}
	for rest := v; len(rest) > 0; {
		var tok []byte
		tok, rest, _ = bytes.Cut(rest, []byte{','})
		tok = bytes.TrimSpace(tok)
		if bytes.EqualFold(tok, acceptEncoding) || len(tok) == 1 && tok[0] == '*' {
			return
		}
	}
	*buf = append(append(append((*buf)[:0], v...), ", "...), acceptEncoding...)
	h.SetBytesV(fasthttp.HeaderVary, *buf)
}

var acceptEncoding = []byte(fasthttp.HeaderAcceptEncoding)
