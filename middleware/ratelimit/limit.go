package ratelimit

import (
	"errors"
	"fmt"
	"time"
)

// Rate limiting: GCRA (the generic cell rate algorithm, the virtual
// scheduling form of a token bucket). Each key has one number, its
// theoretical arrival time (TAT): the instant at which its bucket would be
// full again. A request at now is allowed when
//
//	max(TAT, now) + T - B*T <= now        (T = Period/Requests, B = Burst)
//
// and then moves TAT to max(TAT, now) + T. Nothing else is stored, no
// timer runs, and the answer is exact: B requests at once, then one every
// T, never more. A key whose TAT has passed is the same as a key never seen,
// which is what lets stores forget it (the memory store evicts it first,
// the Redis store gives it a TTL ending at its TAT).

// Limit is a rate-limit policy: Requests per Period sustained, with bursts
// of up to Burst requests at once.
//
// Over any stretch of time d, a key gets at most Burst + Requests*d/Period
// requests; a client that sends steadily gets Requests per Period exactly.
type Limit struct {
	// Name identifies the policy in the RateLimit and RateLimit-Policy
	// headers and separates its keys from other policies' in a shared
	// store: two rate limits (New) sharing a Store need different Names, or they
	// count in the same buckets. Default "default". Printable ASCII
	// without '"' and '\'.
	Name string
	// Requests is the quota: how many requests a key may make per Period
	// (the "q" of RateLimit-Policy). Required, at least 1.
	Requests int
	// Period is the time window of the quota (the "w" of
	// RateLimit-Policy): a whole number of seconds, at least one second
	// (the header draft has no sub-second windows). Period/Requests must
	// be at least one microsecond (the Redis store's resolution).
	Period time.Duration
	// Burst is how many requests a key that was idle may send at once.
	// Default Requests: a fresh key may spend its whole quota at once, then
	// it gets one request every Period/Requests.
	Burst int
}

// interval returns T, the time one request costs (the emission interval),
// and the tolerance B*T, both in nanoseconds.
func (l Limit) interval() (t, tau int64) {
	t = int64(l.Period) / int64(l.Requests)
	return t, t * int64(l.Burst)
}

// Interval returns the time one request costs, Period/Requests, rounded
// down to the nanosecond: a key regains one request per Interval. Stores
// other than the in-memory one use it (with Burst) to run the algorithm.
func (l Limit) Interval() time.Duration { t, _ := l.interval(); return time.Duration(t) }

// Validate returns l with its defaults filled (Name "default", Burst
// Requests), or an error listing every problem. New and the stores
// call it; a Store receives only validated limits from New.
func (l Limit) Validate() (Limit, error) {
	if l.Name == "" {
		l.Name = "default"
	}
	if l.Burst == 0 {
		l.Burst = l.Requests
	}
	var errs []error
	if !isSFString(l.Name) {
		errs = append(errs, errors.New("Limit.Name must be printable ASCII without '\"' or '\\'"))
	}
	if l.Requests < 1 {
		errs = append(errs, fmt.Errorf("Limit.Requests is %d; it must be at least 1", l.Requests))
	}
	if l.Period < time.Second || l.Period%time.Second != 0 {
		errs = append(errs, fmt.Errorf("Limit.Period is %v; it must be a whole number of seconds, at least 1s", l.Period))
	}
	if l.Burst < 1 {
		errs = append(errs, fmt.Errorf("Limit.Burst is %d; it must be at least 1", l.Burst))
	}
	if len(errs) == 0 {
		t := int64(l.Period) / int64(l.Requests)
		switch {
		case t < int64(time.Microsecond):
			errs = append(errs, fmt.Errorf("Limit: Period/Requests is %v; it must be at least 1µs", time.Duration(t)))
		case int64(l.Burst) > (1<<62)/t:
			errs = append(errs, errors.New("Limit: Burst*Period/Requests overflows"))
		}
	}
	return l, errors.Join(errs...)
}

// isSFString reports whether s can be the content of a structured-field
// String (RFC 8941 §3.3.3) without escapes: printable ASCII but '"' and
// '\'.
func isSFString(s string) bool {
	for i := 0; i < len(s); i++ {
		if ch := s[i]; ch < 0x20 || ch > 0x7e || ch == '"' || ch == '\\' {
			return false
		}
	}
	return true
}
