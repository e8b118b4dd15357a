package fxotel

import "github.com/valyala/fasthttp"

// RequestHeaderCarrier adapts a fasthttp request header to
// propagation.TextMapCarrier, for extracting a trace context from a
// request fx serves and for injecting one into a request a handler sends
// with a fasthttp client:
//
//	req := fasthttp.AcquireRequest()
//	prop.Inject(c.Context(), (*fxotel.RequestHeaderCarrier)(&req.Header))
//
// Get copies the value (one allocation when the header is present); Set
// replaces the header.
type RequestHeaderCarrier fasthttp.RequestHeader

// Get returns the first value of key, or "".
func (h *RequestHeaderCarrier) Get(key string) string {
	v := (*fasthttp.RequestHeader)(h).Peek(key)
	if len(v) == 0 {
		return ""
	}
	return string(v)
}

// Set sets key to value, replacing any value it had.
func (h *RequestHeaderCarrier) Set(key, value string) {
	(*fasthttp.RequestHeader)(h).Set(key, value)
}

// Keys returns the names of the headers present.
func (h *RequestHeaderCarrier) Keys() []string {
	var keys []string
	for k := range (*fasthttp.RequestHeader)(h).All() {
		keys = append(keys, string(k))
	}
	return keys
}
