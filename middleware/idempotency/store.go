package idempotency

import (
	"context"
	"errors"
	"time"
)

// Fingerprint identifies what a request asked for: the SHA-256 of its
// method, route pattern, path, query string and body (see New). A key
// reused with another fingerprint is refused with 422
// FX_IDEMPOTENCY_KEY_REUSED.
type Fingerprint [32]byte

// Header is one stored response header field.
type Header struct {
	Name, Value string
}

// Response is a stored response: what a retry gets replayed.
type Response struct {
	Status int
	Header []Header // the fields Config.Headers chose, in that order
	Body   []byte
}

// State is what a Record holds.
type State uint8

const (
	// InFlight: a request claimed the key and has not finished.
	InFlight State = iota + 1
	// Completed: the request finished and its response is stored.
	Completed
)

// Record is the state of one key in a Store.
type Record struct {
	State       State
	Fingerprint Fingerprint
	// Response is the stored response when State is Completed.
	Response Response
}

// ErrFenced is returned by Complete and Release when the caller no longer
// holds the claim: it expired (the request outlived Config.LockTimeout)
// and another request may have claimed the key since. The late finisher's
// response is then not stored, and nothing it would write can overwrite
// the newer claim's.
var ErrFenced = errors.New("idempotency: the claim is no longer held (it expired or was taken over)")

// ErrStoreFull is returned by Claim when a bounded store has no room: every
// entry it holds is a live claim of a request still running.
var ErrStoreFull = errors.New("idempotency: the store is full of requests in flight")

// Store keeps idempotency keys for New. Keys are opaque strings (the scope
// and the client's key); a Store must treat them as binary, and may keep
// them: New never reuses a key's memory. Every method
// is safe for concurrent use, and a Store shared by several app instances
// (the Redis store) must make Claim atomic across all of them.
//
// The protocol is a lease with a fencing token:
//
//   - Claim atomically takes key for fp when nobody holds it (no record, or
//     an InFlight record whose lock expired, or a Completed one past its
//     lifetime) and returns a non-zero token; the record is InFlight for
//     lock. Otherwise it returns token 0 and the record that holds the key.
//   - Complete stores resp for lifetime and ends the claim, only if token
//     still holds it (ErrFenced otherwise): one atomic step, so a response
//     is never stored by a request whose claim was taken over.
//   - Release deletes the claim, only if token still holds it (ErrFenced
//     otherwise), so a retry can run the handler again.
//   - Get reads a key without changing it (false when absent or expired).
//
// Tokens are unique per claim of a key (never reused for that key while a
// record of it may exist). An error other than ErrFenced means the store
// could not answer (Redis is down); Config.FailOpen decides what a request
// gets then. ctx bounds the call (New gives each call Config.StoreTimeout).
type Store interface {
	Claim(ctx context.Context, key string, fp Fingerprint, lock time.Duration) (token uint64, held Record, err error)
	Complete(ctx context.Context, key string, token uint64, resp Response, lifetime time.Duration) error
	Release(ctx context.Context, key string, token uint64) error
	Get(ctx context.Context, key string) (Record, bool, error)
}
