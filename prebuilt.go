package fx

import (
	"maps"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// Prebuilt envelopes: an *Error kept in a package variable is sent many
// times with the same body, and encoding its details (a map or a struct,
// through go-json) is most of what such a response costs. Prebuild encodes
// the envelope once; the boundary sends those bytes for as long as the
// error still holds the values they were encoded from.

// Prebuild encodes e's envelope once and returns e, so that the error
// boundary sends the stored bytes instead of encoding e for every request:
//
//	var ErrUserNotFound = fx.NewError(404, "APP_USER_NOT_FOUND", "User not found",
//		map[string]string{"id": "missing"}).Prebuild()
//
// Everything else about the response is unchanged: the status is e.Status
// as sent now, and the error hook, OnResponse, logging, Development mode
// and the misuse checks (a status outside 400-599, an unknown FX_ code) see
// and do exactly what they do for any *Error. The stored bytes are used
// only when the boundary would write e's own Code, Message and Details, so
// never for the production rewrite of FX_INTERNAL_ERROR, and only for e
// itself returned (or panicked) as is; e wrapped by fmt.Errorf("%w") is
// encoded as usual.
//
// The rule for mutation: on every send the boundary checks that e.Code and
// e.Message are the strings encoded and that e.Details is the same value
// (the same map, pointer or boxed value: compared by identity, never with
// ==, so an uncomparable Details is fine); if any field was assigned since
// Prebuild, e is encoded as usual, so the envelope never disagrees with
// e's fields. What Prebuild freezes is the content behind Details: a
// change inside the map or struct that Details refers to, made after
// Prebuild, is not sent. Such a change would be a data race anyway, since
// a kept error is read by concurrent requests; to change the details,
// assign a new Details value or call Prebuild again.
//
// Details that go-json cannot encode (the fallback encoder is needed, or
// neither can encode them) are not prebuilt: the boundary keeps encoding
// and logging them per request. Prebuild on a nil *Error returns nil.
//
// Prebuild is for errors that live as long as the program: each prebuilt
// error is kept (with its bytes) until the program exits. Call it at
// package initialisation; it is safe for concurrent use, and it costs an
// encoding and a copy of the set of prebuilt errors (so n calls cost
// O(n²) map copies; nothing on the request path).
//
// Cost on the request path: a returned prebuilt error costs no allocation
// and no encoding; BenchmarkPrebuiltEnvelope compares it with a raw
// fasthttp handler writing the same bytes. Any *Error returned as is pays
// one lookup in the set of prebuilt errors (a few ns).
func (e *Error) Prebuild() *Error {
	if e == nil {
		return nil
	}
	body, err := appendEnvelope(nil, e.Code, e.Message, e.Details)
	if err != nil {
		return e
	}
	p := &prebuilt{code: e.Code, msg: e.Message, details: identityOf(e.Details), body: body}
	prebuildMu.Lock()
	defer prebuildMu.Unlock()
	m := make(map[*Error]*prebuilt)
	if old := prebuilts.Load(); old != nil {
		maps.Copy(m, *old)
	}
	m[e] = p
	prebuilts.Store(&m)
	return e
}

// prebuilt is an envelope encoded by Prebuild and the field values it was
// encoded from.
type prebuilt struct {
	code, msg string
	details   identity
	body      []byte
}

// identity is an interface value's two words (type and data pointer):
// equal identities mean the same dynamic type and the same map, pointer or
// boxed value. Comparing the words never panics, unlike == on interfaces
// holding maps or slices.
type identity struct{ typ, data unsafe.Pointer }

func identityOf(v any) identity { return *(*identity)(unsafe.Pointer(&v)) }

// prebuilts is the set of prebuilt errors, replaced as a whole (copy on
// write) by Prebuild so that the boundary reads it without a lock.
var (
	prebuildMu sync.Mutex
	prebuilts  atomic.Pointer[map[*Error]*prebuilt]
)

// prebuiltBody returns the stored envelope of raw when raw is a prebuilt
// *Error whose envelope is exactly what the boundary resolved (code, msg,
// details), or nil.
func prebuiltBody(raw any, code, msg string, details any) []byte {
	fe, ok := raw.(*Error)
	if !ok {
		return nil
	}
	m := prebuilts.Load()
	if m == nil {
		return nil
	}
	p := (*m)[fe]
	// code, msg and details are what the boundary resolved from fe's fields
	// now (msg is not fe.Message after the production rewrite of
	// FX_INTERNAL_ERROR): the stored bytes are used only if they encode
	// exactly those. Equal strings from the same constant compare by
	// pointer first (runtime memequal), so this costs a few ns.
	if p == nil || p.code != code || p.msg != msg || p.details != identityOf(details) {
		return nil
	}
	return p.body
}

// writePrebuilt is writeEnvelope for a stored envelope: SetBody copies the
// bytes into the response's own pooled body buffer (no allocation once the
// buffer has grown; a body stream is closed), so the response never
// aliases the shared bytes and whatever rewrites the body later (a
// compression wrapper) cannot corrupt them.
func writePrebuilt(resp *fasthttp.Response, status int, body []byte) {
	dropContentEncoding(resp)
	resp.SetStatusCode(status)
	resp.Header.SetContentTypeBytes(contentTypeJSON)
	resp.SetBody(body)
}
