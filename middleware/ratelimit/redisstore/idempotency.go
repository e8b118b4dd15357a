package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fxhq/fx/middleware/idempotency"
	"github.com/redis/go-redis/v9"
)

// DefaultIdempotencyPrefix is IdempotencyConfig.Prefix's default.
const DefaultIdempotencyPrefix = "fx:idempotency:"

// IdempotencyConfig configures NewIdempotency.
type IdempotencyConfig struct {
	// Prefix starts every key the store writes. Default "fx:idempotency:".
	Prefix string
}

// IdempotencyStore is an idempotency.Store on Redis, so that a retry
// landing on any instance of an app finds the first attempt's claim or
// response. It is safe for concurrent use.
//
// Each key is one Redis string, Prefix + the scoped key, holding either a
// claim (the fencing token and the request's fingerprint, with a TTL of
// Config.LockTimeout) or the completed response (the fingerprint, status,
// stored headers and body, with a TTL of Config.Lifetime):
//
//   - Claim is one script: SET key claim NX PX lock, and when the key
//     exists, its value in the same step. The token is 64 random bits, so
//     a claim that expired (its instance died mid-request) is taken over
//     by the next Claim with a token the dead instance never held.
//   - Complete is one script: it stores the response and so ends the claim,
//     only if the key still holds the caller's token (ErrFenced
//     otherwise). A request that outlived its lock can never overwrite the
//     claim or the response of the request that took over.
//   - Release deletes the claim under the same check.
//
// One key per call, so it works on Redis Cluster. Requires Redis 2.6.12 or
// later (SET with NX and PX inside a script).
//
// Cost: one round trip per Claim and per Complete or Release (two per
// request that runs its handler, one per replay or refusal), and the
// response body sent to Redis once. The client must respect the
// deadline New gives each call (Config.StoreTimeout, 100 ms by default):
// create it with ContextTimeoutEnabled: true, or a hung Redis holds a
// request for the client's ReadTimeout instead.
type IdempotencyStore struct {
	client redis.Scripter
	prefix string
}

// NewIdempotency returns an IdempotencyStore that runs its scripts through
// client (a *redis.Client, *redis.ClusterClient, *redis.Ring or any other
// redis.Scripter). The store does not close the client.
func NewIdempotency(client redis.Scripter, cfg IdempotencyConfig) *IdempotencyStore {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultIdempotencyPrefix
	}
	return &IdempotencyStore{client: client, prefix: cfg.Prefix}
}

// The stored values: a claim is 'C', the token (8 bytes, big-endian) and
// the fingerprint; a completed response is 'R', the fingerprint, the
// status (2 bytes), the number of headers and each header's name and
// value (uvarint lengths), then the body.
const (
	claimTag    = 'C'
	responseTag = 'R'
	claimLen    = 1 + 8 + len(idempotency.Fingerprint{})
)

var (
	// claimScript: ARGV[1] the claim, ARGV[2] the lock in ms. Answers 1
	// when claimed, else the value that holds the key.
	claimScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return redis.call('GET', KEYS[1])
`)
	// completeScript: ARGV[1] the claim's first 9 bytes (tag and token),
	// ARGV[2] the response after its fingerprint, ARGV[3] the lifetime in
	// ms. The fingerprint is the claim's own. 1 when stored, 0 when the
	// token no longer holds the key.
	completeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, 9) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], 'R' .. string.sub(v, 10) .. ARGV[2], 'PX', ARGV[3])
return 1
`)
	// releaseScript: ARGV[1] as for completeScript. 1 when deleted, 0 when
	// the token no longer holds the key.
	releaseScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v or string.sub(v, 1, 9) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`)
	getScript = redis.NewScript(`return redis.call('GET', KEYS[1]) or 0`)
)

// Claim implements idempotency.Store.
func (s *IdempotencyStore) Claim(ctx context.Context, key string, fp idempotency.Fingerprint, lock time.Duration) (uint64, idempotency.Record, error) {
	token := rand.Uint64() | 1 // never 0, which means "not claimed"
	v := make([]byte, 0, claimLen)
	v = append(v, claimTag)
	v = binary.BigEndian.AppendUint64(v, token)
	v = append(v, fp[:]...)
	res, err := claimScript.Run(ctx, s.client, []string{s.prefix + key}, v, millis(lock)).Result()
	if err != nil {
		return 0, idempotency.Record{}, fmt.Errorf("redisstore: claim: %w", err)
	}
	switch res := res.(type) {
	case int64:
		return token, idempotency.Record{}, nil
	case string:
		rec, err := decodeRecord(res)
		return 0, rec, err
	}
	return 0, idempotency.Record{}, fmt.Errorf("redisstore: claim answered %T", res)
}

// Complete implements idempotency.Store.
func (s *IdempotencyStore) Complete(ctx context.Context, key string, token uint64, resp idempotency.Response, lifetime time.Duration) error {
	return s.fenced(ctx, completeScript, key, token, encodeResponse(resp), millis(lifetime))
}

// Release implements idempotency.Store.
func (s *IdempotencyStore) Release(ctx context.Context, key string, token uint64) error {
	return s.fenced(ctx, releaseScript, key, token)
}

// Get implements idempotency.Store.
func (s *IdempotencyStore) Get(ctx context.Context, key string) (idempotency.Record, bool, error) {
	res, err := getScript.Run(ctx, s.client, []string{s.prefix + key}).Result()
	if err != nil {
		return idempotency.Record{}, false, fmt.Errorf("redisstore: get: %w", err)
	}
	v, ok := res.(string)
	if !ok {
		return idempotency.Record{}, false, nil
	}
	rec, err := decodeRecord(v)
	return rec, err == nil, err
}

// fenced runs script (completeScript or releaseScript) for token.
func (s *IdempotencyStore) fenced(ctx context.Context, script *redis.Script, key string, token uint64, args ...any) error {
	head := binary.BigEndian.AppendUint64([]byte{claimTag}, token)
	n, err := script.Run(ctx, s.client, []string{s.prefix + key}, append([]any{head}, args...)...).Int()
	if err != nil {
		return fmt.Errorf("redisstore: %w", err)
	}
	if n != 1 {
		return idempotency.ErrFenced
	}
	return nil
}

// millis is d in whole milliseconds, at least 1 (PX 0 is an error).
func millis(d time.Duration) int64 {
	return max(int64((d+time.Millisecond-1)/time.Millisecond), 1)
}

// encodeResponse is the stored form of resp after the tag and fingerprint
// (which completeScript copies from the claim).
func encodeResponse(resp idempotency.Response) []byte {
	n := 2 + binary.MaxVarintLen64 + len(resp.Body)
	for _, h := range resp.Header {
		n += 2*binary.MaxVarintLen64 + len(h.Name) + len(h.Value)
	}
	b := make([]byte, 0, n)
	b = binary.BigEndian.AppendUint16(b, uint16(resp.Status))
	b = binary.AppendUvarint(b, uint64(len(resp.Header)))
	for _, h := range resp.Header {
		b = binary.AppendUvarint(b, uint64(len(h.Name)))
		b = append(b, h.Name...)
		b = binary.AppendUvarint(b, uint64(len(h.Value)))
		b = append(b, h.Value...)
	}
	return append(b, resp.Body...)
}

var errCorrupt = errors.New("redisstore: stored idempotency record is malformed")

// decodeRecord reads a stored value: a claim or a completed response.
func decodeRecord(v string) (idempotency.Record, error) {
	var rec idempotency.Record
	switch {
	case len(v) == claimLen && v[0] == claimTag:
		rec.State = idempotency.InFlight
		copy(rec.Fingerprint[:], v[9:])
		return rec, nil
	case len(v) >= 1+len(rec.Fingerprint)+2 && v[0] == responseTag:
	default:
		return rec, errCorrupt
	}
	rec.State = idempotency.Completed
	b := []byte(v[1:])
	b = b[copy(rec.Fingerprint[:], b):]
	rec.Response.Status = int(binary.BigEndian.Uint16(b))
	b = b[2:]
	count, k := binary.Uvarint(b)
	if k <= 0 || count > uint64(len(b)) {
		return rec, errCorrupt
	}
	b = b[k:]
	field := func() (string, bool) {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return "", false
		}
		s := string(b[k : k+int(l)])
		b = b[k+int(l):]
		return s, true
	}
	for range count {
		name, ok1 := field()
		value, ok2 := field()
		if !ok1 || !ok2 {
			return rec, errCorrupt
		}
		rec.Response.Header = append(rec.Response.Header, idempotency.Header{Name: name, Value: value})
	}
	rec.Response.Body = b
	return rec, nil
}

var _ idempotency.Store = (*IdempotencyStore)(nil)
