package bench

import (
	"bytes"
	"sync"
	"unicode/utf8"
	"unsafe"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

// NewRaw is the floor: a hand-written fasthttp handler with a switch for a
// router, a deferred recover, success bodies marshalled per request with
// goccy/go-json (the encoder fx uses) straight into the response buffer,
// and every error envelope appended by hand. Nothing is precomputed that
// the frameworks compute per request.
func NewRaw(middleware int) Impl {
	h := fasthttp.RequestHandler(rawServe)
	for range middleware {
		h = rawPassThrough(h)
	}
	return Impl{FastHTTP: h}
}

func rawPassThrough(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) { next(ctx) }
}

func rawServe(ctx *fasthttp.RequestCtx) {
	defer func() {
		if r := recover(); r != nil {
			rawError(ctx, 500, CodeInternal, InternalMessage, nil)
		}
	}()
	path := ctx.Path()
	switch string(ctx.Method()) {
	case fasthttp.MethodGet:
		switch {
		case string(path) == "/hello":
			rawJSON(ctx, 200, Hello{Message: HelloMessage})
			return
		case bytes.HasPrefix(path, []byte("/users/")) && len(path) > len("/users/") &&
			bytes.IndexByte(path[len("/users/"):], '/') < 0:
			id := path[len("/users/"):]
			if string(id) == MissingUserID {
				rawError(ctx, 404, CodeUserNotFound, UserNotFoundMsg, rawUserDetails)
				return
			}
			rawJSON(ctx, 200, NewUser(string(id)))
			return
		case string(path) == "/error":
			rawError(ctx, 404, CodeUserNotFound, UserNotFoundMsg, rawUserDetails)
			return
		case string(path) == "/panic":
			panic(ErrBoom)
		}
	case fasthttp.MethodPost:
		if string(path) == "/orders" {
			rawOrders(ctx)
			return
		}
	}
	rawNotFound(ctx)
}

func rawOrders(ctx *fasthttp.RequestCtx) {
	var o Order
	if err := json.Unmarshal(ctx.PostBody(), &o); err != nil {
		rawIssues(ctx, []Issue{{"body", []string{}, MsgBadJSON}})
		return
	}
	if issues := CheckOrder(&o); len(issues) > 0 {
		rawIssues(ctx, issues)
		return
	}
	rawJSON(ctx, 201, &o)
}

// rawEncoder is a pooled go-json encoder appending to a response body.
type rawEncoder struct {
	resp *fasthttp.Response
	enc  *json.Encoder
}

func (e *rawEncoder) Write(p []byte) (int, error) {
	n := len(p)
	if n > 0 && p[n-1] == '\n' {
		p = p[:n-1]
	}
	e.resp.AppendBody(p)
	return n, nil
}

var rawEncoders = sync.Pool{New: func() any {
	e := &rawEncoder{}
	e.enc = json.NewEncoder(e)
	e.enc.SetEscapeHTML(false)
	return e
}}

func rawJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	e := rawEncoders.Get().(*rawEncoder)
	e.resp = &ctx.Response
	ctx.Response.ResetBody()
	if err := e.enc.Encode(v); err != nil {
		e.resp = nil
		rawEncoders.Put(e)
		rawError(ctx, 500, CodeInternal, InternalMessage, nil)
		return
	}
	e.resp = nil
	rawEncoders.Put(e)
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
}

// rawUserDetails is the details object of APP_USER_NOT_FOUND; like the
// frameworks, the floor marshals it per request.
var rawUserDetails any = &UserNotFoundDetails{Resource: "user", ID: MissingUserID}

// rawError writes the envelope by hand; details, when not nil, is
// marshalled with the pooled go-json encoder.
func rawError(ctx *fasthttp.RequestCtx, status int, code, msg string, details any) {
	ctx.Response.ResetBody()
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	b := ctx.Response.SwapBody(nil)[:0]
	b = append(b, `{"error":{"code":`...)
	b = appendJSONString(b, code)
	b = append(b, `,"message":`...)
	b = appendJSONString(b, msg)
	if details != nil {
		b = append(b, `,"details":`...)
		ctx.Response.SwapBody(b)
		e := rawEncoders.Get().(*rawEncoder)
		e.resp = &ctx.Response
		err := e.enc.Encode(details)
		e.resp = nil
		rawEncoders.Put(e)
		if err != nil {
			rawError(ctx, 500, CodeInternal, InternalMessage, nil)
			return
		}
		b = ctx.Response.SwapBody(nil)
	}
	b = append(b, "}}"...)
	ctx.Response.SwapBody(b)
}

func rawNotFound(ctx *fasthttp.RequestCtx) {
	ctx.Response.ResetBody()
	ctx.SetStatusCode(404)
	ctx.SetContentType("application/json")
	b := ctx.Response.SwapBody(nil)[:0]
	b = append(b, `{"error":{"code":"FX_NOT_FOUND","message":"Route `...)
	b = appendJSONInner(b, b2s(ctx.Method()))
	b = append(b, ' ')
	b = appendJSONInner(b, b2s(ctx.URI().PathOriginal()))
	b = append(b, ` not found"}}`...)
	ctx.Response.SwapBody(b)
}

func rawIssues(ctx *fasthttp.RequestCtx, issues []Issue) {
	ctx.Response.ResetBody()
	ctx.SetStatusCode(422)
	ctx.SetContentType("application/json")
	b := ctx.Response.SwapBody(nil)[:0]
	b = append(b, `{"error":{"code":"FX_VALIDATION_ERROR","message":"Request validation failed","details":{"issues":[`...)
	for i, is := range issues {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"location":`...)
		b = appendJSONString(b, is.Location)
		b = append(b, `,"path":[`...)
		for j, p := range is.Path {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, p)
		}
		b = append(b, `],"message":`...)
		b = appendJSONString(b, is.Message)
		b = append(b, '}')
	}
	b = append(b, "]}}}"...)
	ctx.Response.SwapBody(b)
}

func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendJSONInner(dst, s)
	return append(dst, '"')
}

// appendJSONInner escapes s for the inside of a JSON string: quotes,
// backslashes and control characters are escaped, invalid UTF-8 becomes
// U+FFFD, so the body stays valid JSON whatever the request path holds.
func appendJSONInner(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

// b2s views b as a string without copying, for the escaper only.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
