package idempotency

import (
	"github.com/fxhq/fx"
	"github.com/valyala/fasthttp"
)

// capture copies what is stored of resp: status, the chosen header
// fields that are present (Content-Encoding too when present) and the
// body.
func capture(status int, resp *fasthttp.Response, names []string) Response {
	out := Response{Status: status, Body: append([]byte(nil), resp.Body()...)}
	for _, name := range names {
		if v := resp.Header.Peek(name); len(v) > 0 {
			out.Header = append(out.Header, Header{Name: name, Value: string(v)})
		}
	}
	if v := resp.Header.Peek(fasthttp.HeaderContentEncoding); len(v) > 0 {
		out.Header = append(out.Header, Header{Name: fasthttp.HeaderContentEncoding, Value: string(v)})
	}
	return out
}

// replay writes a stored response, marked with Idempotent-Replayed: true.
// Headers already set by earlier middleware stay; the stored ones replace
// fields of the same name.
func replay(c *fx.Ctx, r *Response) {
	resp := &c.RequestCtx().Response
	resp.SetStatusCode(r.Status)
	for _, h := range r.Header {
		resp.Header.Set(h.Name, h.Value)
	}
	resp.Header.Set(HeaderReplayed, "true")
	resp.SetBody(r.Body)
}
